"""What cited generation returns: the answer, its rendered content and seed 004's envelope."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from unicite.model import CitedAnswer, Source

__all__ = [
    "CitedGeneration",
    "GenerationFormat",
    "GenerationStats",
    "Retry",
    "Strategy",
]

GenerationFormat = Literal["markdown", "text", "html", "json", "yaml"]
"""What the model is asked to write."""

Strategy = Literal["auto", "native", "markers", "posthoc"]
"""How citations are obtained: the provider's own API, markers the model writes (validated and
retried), attribution of a clean answer, or the best the model can do."""


class GenerationStats(BaseModel):
    """How the answer was obtained (seed 004's ``stats``, with token counts when reported)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rounds: int = Field(ge=1)
    """Model calls made (the first one and every retry)."""
    validated: Literal["both", "citations", "schema", "none"] = "none"
    """What the final round passed: citations, the JSON Schema, both, or nothing checked."""
    citations: Literal["present", "missing", "not_required"] = "missing"
    """Whether the answer cites its sources (``not_required`` when citations were optional
    and none were made)."""
    bytes: int = Field(default=0, ge=0)
    """UTF-8 size of the content."""
    tokens_in: int | None = Field(default=None, ge=0)
    """Prompt tokens over all rounds, when the provider reports them."""
    tokens_out: int | None = Field(default=None, ge=0)
    """Completion tokens over all rounds, when the provider reports them."""


class CitedGeneration(BaseModel):
    """A generated answer whose citations were checked against the sources it was given.

    ``answer`` went through `unicite.cite`; ``content`` is the answer in ``format`` with its
    citations written in (markers, ``<sup>`` tags or the JSON/YAML ``_citations`` sidecar), the
    numbers being those of ``answer.sources`` (``[1]`` is ``answer.sources[0]``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    answer: CitedAnswer
    content: str
    format: GenerationFormat
    finished: bool
    """The answer meets the citation requirement (always True when citations are optional)."""
    retries: int = Field(ge=0)
    reason: str = ""
    """Why it is not finished; empty when it is. What each retry fixed is in the answer's
    ``diagnostics``."""
    stats: GenerationStats
    sources_used: list[Source] = Field(default_factory=list)
    """The sources the answer used: those it cites, and those the model declared with
    ``[[USAGE:…]]`` when citations were optional, in the answer's numbering order."""
    strategy: Literal["native", "markers", "posthoc"] = "markers"
    """The strategy that produced the answer."""
    document: Any = None
    """For ``json`` and ``yaml``: the document without its ``_citations`` sidecar."""

    def number(self, source: Source) -> int:
        """The number ``source`` has in `content` (its position in ``answer.sources``, from 1)."""
        for n, listed in enumerate(self.answer.sources, start=1):
            if listed.id == source.id:
                return n
        raise KeyError(source.id)

    def envelope(self) -> dict[str, Any]:
        """Seed 004's envelope, as plain data.

        Its keys are ``ok, content, format, finished, retries, reason, stats, sources_used``,
        each used source as ``{sid, url, title, text}`` under its number. ``ok`` is True: an
        answer was produced (a failed call raises instead); whether it meets the citation
        requirement is ``finished``.
        """
        stats = self.stats.model_dump(exclude_none=True)
        return {
            "ok": True,
            "content": self.content,
            "format": self.format,
            "finished": self.finished,
            "retries": self.retries,
            "reason": self.reason,
            "stats": stats,
            "sources_used": [
                {
                    "sid": self.number(source),
                    "url": source.url or "",
                    "title": source.title or "",
                    "text": source.snippet or source.content or "",
                }
                for source in self.sources_used
            ],
        }


@dataclass(frozen=True)
class Retry:
    """Yielded by `stream_cited` between rounds: the text shown so far is discarded.

    The round's answer failed validation (``reason``) and the model is asked again; what
    streams next is the new answer, from its start.
    """

    round: int
    """The round about to start (2 for the first retry)."""
    reason: str
