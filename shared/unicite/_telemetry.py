"""OpenTelemetry metrics and span attributes for every answer `cite` decides (``unicite[otel]``).

`record_answer` is called once per enabled `unicite.cite` call, with the cited answer. It emits
through the global meter provider (``opentelemetry.metrics.get_meter("unicite", version)``):
the instruments are created on the first call and kept. Created before the application sets its
meter provider, they are OpenTelemetry's proxy instruments, which start reporting once one is
set. It also writes a few attributes on the current span when that span is recording.

Instruments (every one counted per `cite` call, attribute ``unicite.provider``):

- ``citations.generated`` (``{citation}``): the citations of the cited answer, with
  ``unicite.origin`` (``native``, ``marker``, ``posthoc-lexical``...).
- ``citations.markers.injected`` (``{answer}``): answers with at least one citation whose
  marker is in the text (a ``marker_span``: a ``[n]`` read or added, a provider's inline link).
- ``citations.markers.missing`` (``{answer}``): answers with sources (given to `cite`, or
  read from the provider) whose text carries no inline marker, whether they cite anything or
  not: "metadata without markers" (renderers add the markers or list the sources after the
  text). Injected plus missing is the number of answers with sources.
- ``citations.markers.unresolved`` (``{answer}``): answers listing no source at all whose text
  (as `cite` read it) carries numbered markers (``[1]``, ``[[S:2]]``, ``<sup>3</sup>``,
  ``[^4]``, of the policy's ``markers`` style), "markers without metadata".
- ``citations.extraction.failures`` (``{answer}``): answers read from a provider response
  (`cite` extracted it, or was given a `CitedAnswer` naming its provider) whose reading left at
  least one diagnostic: part of the response was unreadable, dropped or corrected. With
  ``unicite.failure``: ``unreadable`` (nothing was read: no text, source or citation) or
  ``partial``.
- ``citations.grounding.without_citations`` (``{answer}``): answers that cite nothing although
  they are grounded: sources were given to `cite`, the provider returned sources, or its reader
  found that grounding ran (``extras["grounded_effective"]``: a web search or another search
  tool was called).
- ``citations.sources.per_answer`` (histogram, ``{source}``): how many sources each answer
  lists; its count is the number of `cite` calls recorded.

Attributes stay low-cardinality: the provider name (``none`` for plain text, ``other`` for a
name that does not look like one) and the citation origin. The model, whose versions are
unbounded, goes on the span only.

Without OpenTelemetry installed nothing is imported or emitted: the failed import is
remembered, so each later call costs one check. Nothing here ever raises into `cite`.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any

from unicite._marker_syntax import MARKER_RE, read_token
from unicite._segment import find_markers

if TYPE_CHECKING:
    from unicite.model import CitedAnswer

__all__ = ["record_answer"]

logger = logging.getLogger("unicite.telemetry")

METER_NAME = "unicite"
SOURCE_BUCKETS = (0, 1, 2, 3, 4, 5, 7, 10, 15, 20, 30, 50, 100)
"""Histogram bucket boundaries for sources per answer: answers list a handful of sources."""

_PROVIDER_RE = re.compile(r"[a-z0-9][a-z0-9_.\-]{0,31}")
_NUMBERED = frozenset(("brackets", "sids", "sup", "footnotes"))


class _Instruments:
    """The meter's instruments, created once."""

    def __init__(self, meter: Any, trace: Any) -> None:
        self.trace = trace
        self.generated = meter.create_counter(
            "citations.generated",
            unit="{citation}",
            description="Citations in the answers unicite.cite returned",
        )
        self.injected = meter.create_counter(
            "citations.markers.injected",
            unit="{answer}",
            description="Answers whose text carries an inline marker for a citation",
        )
        self.missing = meter.create_counter(
            "citations.markers.missing",
            unit="{answer}",
            description="Answers with sources but no inline marker (metadata without markers)",
        )
        self.unresolved = meter.create_counter(
            "citations.markers.unresolved",
            unit="{answer}",
            description="Answers with citation markers but no sources (markers without metadata)",
        )
        self.failures = meter.create_counter(
            "citations.extraction.failures",
            unit="{answer}",
            description="Answers whose provider response was partly or wholly unreadable",
        )
        self.ungrounded = meter.create_counter(
            "citations.grounding.without_citations",
            unit="{answer}",
            description="Grounded answers that cite nothing",
        )
        self.sources = meter.create_histogram(
            "citations.sources.per_answer",
            unit="{source}",
            description="Sources listed per answer",
            explicit_bucket_boundaries_advisory=SOURCE_BUCKETS,
        )


_lock = threading.Lock()
_instruments: _Instruments | None = None
_unavailable = False


def _load() -> _Instruments | None:
    """The instruments, created on first use; None when OpenTelemetry is not installed."""
    global _instruments, _unavailable
    with _lock:
        if _instruments is None and not _unavailable:
            try:
                from opentelemetry import metrics, trace
            except ImportError:
                _unavailable = True
                return None
            meter = metrics.get_meter(METER_NAME, _version())
            _instruments = _Instruments(meter, trace)
        return _instruments


def _version() -> str:
    """The version of unicite, for the meter's scope ("" when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("unicite")
    except PackageNotFoundError:
        return ""


def _provider_label(provider: str | None) -> str:
    """The provider as a metric attribute: its name, ``none``, or ``other`` if it is no name."""
    if provider is None:
        return "none"
    return provider if _PROVIDER_RE.fullmatch(provider) else "other"


def record_answer(
    answer: CitedAnswer,
    base: CitedAnswer,
    *,
    read: bool,
    grounded: bool,
    markers: str = "auto",
) -> None:
    """Count one cited answer and describe it on the current span; never raises.

    Args:
        answer: What `cite` returns.
        base: The answer `cite` started from (read from a provider response, or given).
        read: `cite` read `base` from a provider response itself.
        grounded: Sources were given to `cite` or came with the provider's answer.
        markers: The marker style `cite` read the text for (``"auto"``: every style).
    """
    if _unavailable:
        return
    instruments = _instruments
    try:
        instruments = instruments or _load()
        if instruments is None:
            return
        facts = _Facts(answer, base, read=read, grounded=grounded, markers=markers)
        facts.count(instruments)
    except Exception:
        logger.debug("citation metrics not recorded", exc_info=True)
        return
    try:
        span = instruments.trace.get_current_span()
        if span.is_recording():
            span.set_attributes(facts.span_attributes())
    except Exception:
        logger.debug("citation span attributes not set", exc_info=True)


def _unresolved_markers(text: str, style: str = "auto") -> int:
    """How many numbered citation markers of `text` (of `style`, or any) there are.

    Numbered markers are ``[1]``, ``[[S:2]]``, ``<sup>3</sup>`` and ``[^4]``, outside code
    and URLs; called for an answer without sources, none of them can be resolved.
    """
    if MARKER_RE.search(text) is None:
        return 0
    count = 0
    for start, end in find_markers(text):
        token = read_token(text, start, end)
        if token is not None and token.kind in _NUMBERED and style in ("auto", token.kind):
            count += 1
    return count


class _Facts:
    """What the instruments and the span say about one cited answer."""

    def __init__(
        self, answer: CitedAnswer, base: CitedAnswer, *, read: bool, grounded: bool, markers: str
    ) -> None:
        self.answer = answer
        self.provider = _provider_label(answer.provider)
        citations = answer.citations
        self.marked = any(c.marker_span is not None for c in citations)
        # As seed 002's handler counts: citation metadata (sources) and no marker in the text.
        self.missing = grounded and not self.marked
        self.unresolved = not answer.sources and _unresolved_markers(base.text, markers) > 0
        searched = base.extras.get("grounded_effective") is True
        self.ungrounded = (grounded or searched) and not citations
        self.failed = (read or base.provider is not None) and bool(base.diagnostics)
        nothing = not (base.text or base.sources or base.citations)
        self.failure = "unreadable" if nothing else "partial"

    def count(self, instruments: _Instruments) -> None:
        """Add this answer to the instruments."""
        attributes = {"unicite.provider": self.provider}
        origins = Counter(c.origin for c in self.answer.citations)
        for origin, count in sorted(origins.items()):
            instruments.generated.add(count, {**attributes, "unicite.origin": origin})
        if self.marked:
            instruments.injected.add(1, attributes)
        if self.missing:
            instruments.missing.add(1, attributes)
        if self.unresolved:
            instruments.unresolved.add(1, attributes)
        if self.failed:
            instruments.failures.add(1, {**attributes, "unicite.failure": self.failure})
        if self.ungrounded:
            instruments.ungrounded.add(1, attributes)
        instruments.sources.record(len(self.answer.sources), attributes)

    def span_attributes(self) -> dict[str, str | bool | int]:
        """The attributes the current span gets (the model only when the answer names it)."""
        described: dict[str, str | bool | int] = {
            "unicite.provider": self.provider,
            "unicite.citations": len(self.answer.citations),
            "unicite.sources": len(self.answer.sources),
            "unicite.markers.injected": self.marked,
            "unicite.markers.missing": self.missing,
            "unicite.markers.unresolved": self.unresolved,
            "unicite.grounding.without_citations": self.ungrounded,
            "unicite.extraction.failed": self.failed,
            "unicite.diagnostics": len(self.answer.diagnostics),
        }
        if self.answer.model:
            described["unicite.model"] = self.answer.model
        return described
