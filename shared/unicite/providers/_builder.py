"""`AnswerBuilder`: what every provider reader fills in, and the one place that builds answers.

Readers append text, add sources and declare citations by span; the builder keeps offsets
consistent, drops what cannot be valid (with a diagnostic), numbers sources in first-cited order
and, in strict mode, turns any diagnostic into a `CitationError`.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from unicite._data import Reader
from unicite._ids import citation_id
from unicite.exceptions import CitationError
from unicite.model import Citation, CitationOrigin, CitedAnswer, Location, Source
from unicite.sources import SourceLedger

__all__ = ["AnswerBuilder"]


class AnswerBuilder:
    """Accumulates one answer's text, sources and citations.

    It is the sink a provider reader reports to. `build` makes the `CitedAnswer`; a sink that
    only counts (the analytics row, `unicite.analytics`) subclasses it, sets `locates_claims`
    to False and reads the counts instead of building.
    """

    locates_claims: bool = True
    """Whether readers locate the claim each link or marker supports (the sentence before it).

    Where the claim only places a citation — it can neither drop it nor add a diagnostic — a
    reader reporting to a sink with this False cites the link or marker span itself, and skips
    the claim rule: the citation and source counts are the same either way.
    """

    def __init__(self, provider: str | None) -> None:
        self.provider = provider
        self.diagnostics: list[str] = []
        self.read = Reader(self.diagnostics)
        self.ledger = SourceLedger()
        self.extras: dict[str, Any] = {}
        self.model: str | None = None
        self._parts: list[str] = []
        self._starts: list[int] = []  # where each of _parts starts in the text
        self._length = 0
        self._text: str | None = ""
        self._citations: list[dict[str, Any]] = []
        self._in_order = True  # each citation declared sorts after those before it
        self._places: list[int] | None = None  # each declared citation's place in text order
        self.grounded = False
        """Set by readers when the response shows grounding or search ran."""

    # --- text -----------------------------------------------------------------------------

    def append_text(self, text: str) -> int:
        """Append answer text; return the str offset where it starts."""
        start = self._length
        if text:
            self._parts.append(text)
            self._starts.append(start)
            self._length += len(text)
            self._text = None
        return start

    @property
    def length(self) -> int:
        """Current length of the answer text."""
        return self._length

    @property
    def text(self) -> str:
        """The answer text so far."""
        if self._text is None:
            self._text = "".join(self._parts)
            self._parts = [self._text]
            self._starts = [0]
        return self._text

    def span_text(self, start: int, end: int) -> str:
        """``text[start:end]``, read from the appended piece holding it when there is one.

        Readers that cite each block as they append it, and stream readers that cite a few
        spans of a long text at a time, would otherwise join the whole text for every span:
        quadratic in the number of blocks or citations.
        """
        k = bisect.bisect_right(self._starts, start) - 1
        if k >= 0:
            base = self._starts[k]
            piece = self._parts[k]
            if end <= base + len(piece):
                return piece[start - base : end - base]
        return self.text[start:end]

    # --- sources and citations ------------------------------------------------------------

    def note(self, message: str) -> None:
        """Record a diagnostic."""
        self.diagnostics.append(message)

    def add_source(self, source: Source | Mapping[str, Any]) -> str:
        """Add (or merge) a source; return the id of the surviving entry."""
        return self.ledger.add(source)

    def cite(
        self,
        start: int,
        end: int,
        source_ids: list[str],
        *,
        quote: str | None = None,
        location: Location | None = None,
        origin: CitationOrigin = "native",
        confidence: float | None = None,
        marker_span: tuple[int, int] | None = None,
        extras: dict[str, Any] | None = None,
        raw: Any = None,
        where: str = "citation",
    ) -> bool:
        """Cite ``text[start:end]``; return False (with a diagnostic) when it cannot be valid."""
        if not 0 <= start <= end <= self._length:
            self.note(
                f"{where}: span {start}..{end} is outside the answer text (0..{self._length})"
            )
            return False
        known = [sid for sid in dict.fromkeys(source_ids) if sid in self.ledger]
        if not known:
            self.note(f"{where}: cites no known source")
            return False
        if marker_span is not None and not 0 <= marker_span[0] <= marker_span[1] <= self._length:
            self.note(f"{where}: marker span {marker_span} is outside the answer text")
            marker_span = None
        if confidence is not None and not 0.0 <= confidence <= 1.0:
            self.note(f"{where}: confidence {confidence} is outside [0, 1]; dropped")
            confidence = None
        if self._in_order and self._citations:
            last = self._citations[-1]
            self._in_order = (last["start"], last["end"]) <= (start, end)
        self._places = None
        self._citations.append(
            {
                "start": start,
                "end": end,
                "source_ids": known,
                "quote": quote,
                "location": location,
                "origin": origin,
                "confidence": confidence,
                "marker_span": marker_span,
                "extras": extras or {},
                "raw": raw,
            }
        )
        return True

    def cited_ids(self) -> set[str]:
        """The ids of the sources some declared citation names."""
        return {sid for citation in self._citations for sid in citation["source_ids"]}

    @property
    def declared(self) -> int:
        """How many citations were declared (by successful `cite` calls)."""
        return len(self._citations)

    def citations(self, *, after: int = 0) -> list[Citation]:
        """The citations declared so far, in text order, as `build` makes them.

        Cheaper than `build` when only the citations are needed: the text is not joined and
        the sources are not listed. ``after`` says how many citations of the answer come
        before these (a stream reader's scratch builder holds only those it has not announced
        yet): their ids count from there.
        """
        ordered = sorted(self._citations, key=lambda c: (c["start"], c["end"]))
        return [
            Citation.model_validate(
                {
                    "text": self.span_text(c["start"], c["end"]),
                    **c,
                    "id": citation_id(after + place),
                }
            )
            for place, c in enumerate(ordered)
        ]

    def made(self, n: int = -1) -> Citation:
        """The `n`-th citation declared (the last by default) as `build` makes it, id included.

        Its id comes from its place in text order among the citations declared so far: the
        finished answer gives it the same one unless a citation declared later sorts before
        it. Readers declare in text order, so stream readers announce citations with it early.
        """
        n = range(len(self._citations))[n]
        c = self._citations[n]
        text = self.span_text(c["start"], c["end"])
        return Citation.model_validate({"text": text, **c, "id": citation_id(self._place(n))})

    def _place(self, n: int) -> int:
        if self._in_order:
            return n
        if self._places is None:
            order = sorted(
                range(len(self._citations)),
                key=lambda k: (self._citations[k]["start"], self._citations[k]["end"]),
            )
            self._places = [0] * len(order)
            for place, k in enumerate(order):
                self._places[k] = place
        return self._places[n]

    # --- result ---------------------------------------------------------------------------

    def build(self, *, strict: bool = False) -> CitedAnswer:
        """The finished answer; sources numbered in first-cited order, uncited ones after."""
        text = self.text
        ledger_sources = self.ledger.sources
        self._citations.sort(key=lambda c: (c["start"], c["end"]))
        self._in_order, self._places = True, None
        order: dict[str, int] = {}
        for citation in self._citations:
            for sid in citation["source_ids"]:
                order.setdefault(sid, len(order))
        for source in ledger_sources:
            order.setdefault(source.id, len(order))
        sources = sorted(ledger_sources, key=lambda s: order[s.id])
        # Ids by place in text order, as the answer would give them: none is copied to get one.
        citations = [
            Citation.model_validate(
                {"text": text[c["start"] : c["end"]], **c, "id": citation_id(place)}
            )
            for place, c in enumerate(self._citations)
        ]
        if strict and self.diagnostics:
            raise CitationError(
                f"{self.provider or 'provider'} data is not clean: {self.diagnostics[0]}",
                provider=self.provider,
                diagnostics=self.diagnostics,
            )
        return CitedAnswer(
            text=text,
            sources=sources,
            citations=citations,
            provider=self.provider,
            model=self.model,
            diagnostics=list(self.diagnostics),
            extras=dict(self.extras),
        )
