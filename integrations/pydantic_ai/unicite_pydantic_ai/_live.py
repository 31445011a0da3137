"""Answer text shown while it streams, already as the cited answer will read.

Deltas go through a `unicite.MarkerStream` over the run's sources with the policy's marker
options: a marker is shown once complete, with its final (renumbered) number, and a marker
naming no source never appears. Joined, the deltas are the final answer's text.
"""

from __future__ import annotations

from collections.abc import Callable

from unicite import CitePolicy, MarkerStream

__all__ = ["LiveText"]


class LiveText:
    """The text of one streamed answer; the sources are looked up at its first delta."""

    def __init__(self, policy: CitePolicy, sources: Callable[[], object]) -> None:
        self._policy = policy
        self._sources = sources
        self._markers: MarkerStream | None = None
        self._started = False
        self._raw: list[str] = []
        self._shown: list[str] = []

    @property
    def raw(self) -> str:
        """The text as it arrived."""
        return "".join(self._raw)

    @property
    def shown(self) -> str:
        """The text shown so far."""
        return "".join(self._shown)

    def feed(self, delta: str) -> str:
        """Take the next delta; return the text now certain (possibly empty)."""
        if not delta:
            return ""
        self._raw.append(delta)
        if not self._started:
            self._started = True
            if self._policy.enabled:
                policy = self._policy
                self._markers = MarkerStream(
                    self._sources(),
                    style=policy.markers,
                    on_invalid=policy.on_invalid,
                    renumber=policy.renumber,
                    keep_unused=policy.sources == "all",
                )
        piece = self._markers.feed(delta) if self._markers is not None else delta
        if piece:
            self._shown.append(piece)
        return piece

    def close(self) -> str:
        """End the stream; return the text held back until now."""
        rest = self._markers.close() if self._markers is not None else ""
        if rest:
            self._shown.append(rest)
        return rest
