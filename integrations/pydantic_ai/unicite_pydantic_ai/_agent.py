"""`with_citations`: an agent whose runs carry their `CitedAnswer` as ``.citations``."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from pydantic_ai.agent import AbstractAgent, WrapperAgent

from unicite import CitedAnswer, CitePolicy, UsageError
from unicite_pydantic_ai._live import LiveText
from unicite_pydantic_ai._result import cite_result
from unicite_pydantic_ai._sources import shown_sources

__all__ = ["CitedAgent", "CitedAgentRun", "CitedStreamedRunResult", "with_citations"]

_log = logging.getLogger("unicite.pydantic_ai")

_CITING: ContextVar[bool] = ContextVar("unicite_pydantic_ai_citing", default=False)
"""Set while `run` / `run_stream` cite the run themselves, so `iter` under them does not."""


class _Citer:
    """Cites finished runs for one agent: never raises, never changes the run's result."""

    def __init__(
        self, policy: CitePolicy, on_citations: Callable[[CitedAnswer], object] | None
    ) -> None:
        self.policy = policy
        self.on_citations = on_citations

    def cite(self, result: Any, text: str | None = None) -> CitedAnswer:
        try:
            answer = cite_result(result, policy=self.policy)
        except Exception as err:
            output = getattr(result, "output", None)
            fallback = output if isinstance(output, str) else ""
            answer = CitedAnswer(text=fallback, diagnostics=[f"citing the run failed: {err!r}"])
        if text is not None and answer.text != text and self.policy.enabled:
            answer = answer.model_copy(
                update={
                    "diagnostics": [
                        *answer.diagnostics,
                        "the streamed text differs from the cited text (native citations "
                        "the stream could not show)",
                    ]
                }
            )
        self.deliver(answer)
        return answer

    def deliver(self, answer: CitedAnswer) -> None:
        if self.on_citations is None or not self.policy.enabled:
            return
        try:
            self.on_citations(answer)
        except Exception as err:
            _log.warning("on_citations raised %r; the run's result is unchanged", err)


class CitedStreamedRunResult:
    """A `StreamedRunResult` whose streamed text is the cited text, with ``.citations``.

    Everything else is the wrapped result's (``get_output``, ``all_messages``, ``usage``...).
    """

    def __init__(self, stream: Any, citer: _Citer) -> None:
        self._stream = stream
        self._citer = citer
        self._answer: CitedAnswer | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    @property
    def wrapped(self) -> Any:
        """The pydantic-ai `StreamedRunResult`."""
        return self._stream

    @property
    def citations(self) -> CitedAnswer | None:
        """The run's cited answer once the stream has finished, else None."""
        if self._answer is None and getattr(self._stream, "is_complete", False):
            self._answer = self._citer.cite(self._stream)
        return self._answer

    def _sources(self) -> object:
        """What the model was shown so far (nothing, when the messages cannot be read)."""
        try:
            return shown_sources(self._stream.all_messages(), [])
        except Exception:
            return []

    async def stream_text(
        self, *, delta: bool = False, debounce_by: float | None = 0.1
    ) -> AsyncIterator[str]:
        """The answer text as it streams, already with its final citation markers.

        Joined (``delta=True``) or last (``delta=False``), the text is ``citations.text``.
        """
        live = LiveText(self._citer.policy, self._sources)
        async for piece in self._stream.stream_text(delta=True, debounce_by=debounce_by):
            shown = live.feed(piece)
            if shown:
                yield shown if delta else live.shown
        rest = live.close()
        if rest:
            yield rest if delta else live.shown
        self._answer = self._citer.cite(self._stream, live.shown)


class CitedAgentRun:
    """An `AgentRun` with ``.citations`` once it has ended; everything else is the run's."""

    def __init__(self, run: Any, citer: _Citer) -> None:
        self._run = run
        self._citer = citer
        self._answer: CitedAnswer | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._run, name)

    def __aiter__(self) -> Any:
        return self._run.__aiter__()

    @property
    def wrapped(self) -> Any:
        """The pydantic-ai `AgentRun`."""
        return self._run

    @property
    def citations(self) -> CitedAnswer | None:
        """The run's cited answer once it has ended, else None."""
        if self._answer is None:
            result = self._run.result
            if result is not None:
                self._answer = self._citer.cite(result)
        return self._answer


class CitedAgent(WrapperAgent[Any, Any]):
    """The wrapped agent, whose run results carry ``.citations`` (a `unicite.CitedAnswer`).

    ``run`` / ``run_sync`` results get ``.citations``; ``run_stream`` yields a
    `CitedStreamedRunResult` whose ``stream_text`` shows the cited text live; ``iter`` yields a
    `CitedAgentRun`. The run's own output is never changed.
    """

    def __init__(
        self,
        wrapped: AbstractAgent[Any, Any],
        *,
        policy: CitePolicy,
        on_citations: Callable[[CitedAnswer], object] | None = None,
    ) -> None:
        super().__init__(wrapped)
        self._citer = _Citer(policy, on_citations)

    @property
    def policy(self) -> CitePolicy:
        """The citation policy every run is cited with."""
        return self._citer.policy

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        token = _CITING.set(True)
        try:
            result = await super().run(*args, **kwargs)
        finally:
            _CITING.reset(token)
        answer = self._citer.cite(result)
        try:
            result.citations = answer  # type: ignore[attr-defined]
        except Exception as err:  # a result class that takes no new attribute
            _log.warning("could not attach citations to %s: %r", type(result).__name__, err)
        return result

    @asynccontextmanager
    async def run_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        token = _CITING.set(True)
        try:
            async with super().run_stream(*args, **kwargs) as stream:
                yield CitedStreamedRunResult(stream, self._citer)
        finally:
            _CITING.reset(token)

    @asynccontextmanager
    async def iter(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        async with super().iter(*args, **kwargs) as run:
            yield run if _CITING.get() else CitedAgentRun(run, self._citer)


def with_citations(
    agent: AbstractAgent[Any, Any],
    *,
    policy: CitePolicy | None = None,
    on_citations: Callable[[CitedAnswer], object] | None = None,
    **options: Any,
) -> CitedAgent:
    """The same agent, whose runs carry their cited answer as ``.citations``.

    Every run is cited by `cite_result` (native citations, the tools' sources, ``[n]``
    markers validated and renumbered by `unicite.cite`). Streamed, ``stream_text()`` yields
    the cited text itself: what the user sees while it streams is the final text. A fault in
    citing becomes a diagnostic of ``.citations``; the run's result is never changed.

    Args:
        agent: A pydantic-ai agent (any `AbstractAgent`).
        policy: A `unicite.CitePolicy`; defaults to ``CitePolicy()``.
        on_citations: Called with each run's answer (what it raises is logged and ignored).
        **options: `unicite.CitePolicy` fields overriding ``policy``'s (``sources="all"``...).

    Raises:
        UsageError: `agent` is not an agent, or an option is invalid.
    """
    if not isinstance(agent, AbstractAgent):
        raise UsageError(f"with_citations takes a pydantic-ai agent, got {type(agent).__name__}")
    if policy is not None and not isinstance(policy, CitePolicy):
        raise UsageError(f"policy must be a CitePolicy, got {type(policy).__name__}")
    if on_citations is not None and not callable(on_citations):
        raise UsageError("on_citations must be callable")
    if isinstance(agent, CitedAgent):
        agent = agent.wrapped
    return CitedAgent(
        agent, policy=(policy or CitePolicy()).replace(**options), on_citations=on_citations
    )
