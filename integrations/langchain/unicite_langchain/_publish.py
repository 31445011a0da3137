"""Where a root run's cited answer goes: the recent answers, a custom event, a callback, a log.

The custom event ``unicite_citations`` is published through the run tree's own callback
handlers, so ``astream_events`` and any handler's ``on_custom_event`` see it before the root
run ends. A failing callback never reaches the chain.

The ``unicite_citations`` event
    Published once per cited answer: by `CitationCallbackHandler` when a root run ends, and by
    ``CitationMiddleware`` when an agent run ends. Its data is a dict with three keys:

    - ``"run_id"`` (``str | None``): the run the event is published in: the handler's root
      run; for the middleware, its ``after_agent`` step, a child of the agent's run (None
      outside a run).
    - ``"origin"`` (``str | None``): how the answer is cited: ``"native"`` when the provider
      cited, else the origin of its first citation (``"marker"``, ``"posthoc-lexical"``,
      ``"posthoc-llm"``, ...); None when nothing is cited.
    - ``"answer"`` (`unicite.CitedAnswer`): the cited answer. Its ``extras`` repeat the origin
      as ``"citation_origin"`` and the run id as ``"langchain_run_id"``; an answer a middleware
      cited also names it under ``"citation_middleware"``.

    It reaches every callback handler's ``on_custom_event(name, data, run_id=...)`` and
    ``astream_events`` (``{"event": "on_custom_event", "name": "unicite_citations", "data":
    {...}}``). Inside a LangGraph graph the middleware also writes ``{"unicite_citations":
    data}`` to the graph's ``"custom"`` stream (``graph.stream(..., stream_mode="custom")``).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, CallbackManager

from unicite import CitedAnswer
from unicite.exceptions import describe_error
from unicite_langchain._runs import Root

__all__ = ["CITATIONS_EVENT", "MIDDLEWARE_KEY", "Answers", "Publisher", "event_data"]

logger = logging.getLogger("unicite.langchain")

CITATIONS_EVENT = "unicite_citations"
"""Name of the LangChain custom event carrying a cited answer (see `astream_events`): its data
is ``{"run_id": str | None, "origin": str | None, "answer": CitedAnswer}``."""

MIDDLEWARE_KEY = "citation_middleware"
"""Key of a `CitedAnswer`'s ``extras`` naming the agent middleware that cited it."""


def event_data(run_id: UUID | str | None, answer: CitedAnswer) -> dict[str, object]:
    """The data of a ``unicite_citations`` event: ``{"run_id", "origin", "answer"}``."""
    return {
        "run_id": None if run_id is None else str(run_id),
        "origin": answer.extras.get("citation_origin"),
        "answer": answer,
    }


def _listens(handler: BaseCallbackHandler) -> bool:
    """Whether a handler wants the event: citation handlers take only a middleware's."""
    return not handler.ignore_custom_event and not getattr(handler, "relays_middleware", False)


class Answers(Mapping[UUID, CitedAnswer]):
    """The answers of recent root runs by run id (a `UUID` or its string form)."""

    def __init__(self, answers: dict[UUID, CitedAnswer]) -> None:
        self._answers = answers

    def __getitem__(self, key: UUID | str) -> CitedAnswer:
        if isinstance(key, str):
            try:
                key = UUID(key)
            except ValueError:
                raise KeyError(key) from None
        return self._answers[key]

    def __iter__(self) -> Iterator[UUID]:
        return iter(self._answers)

    def __len__(self) -> int:
        return len(self._answers)


class Publisher:
    """Keeps the last ``keep`` answers and announces each one."""

    def __init__(
        self, keep: int, on_citations: Callable[[CitedAnswer], object] | None = None
    ) -> None:
        self.keep = keep
        self.on_citations = on_citations
        self.lock = threading.Lock()
        self._answers: OrderedDict[UUID, CitedAnswer] = OrderedDict()
        self._last: CitedAnswer | None = None

    @property
    def last(self) -> CitedAnswer | None:
        """The answer published last."""
        return self._last

    @property
    def answers(self) -> Answers:
        """A snapshot of the kept answers."""
        with self.lock:
            return Answers(dict(self._answers))

    def publish(self, root: Root, answer: CitedAnswer, *, warn: bool = True) -> None:
        """Keep the answer, emit the custom event, call ``on_citations``, log the outcome.

        ``warn=False``: the answer's own publisher already warned when nothing was cited.
        """
        with self.lock:
            self._answers[root.run_id] = answer
            self._answers.move_to_end(root.run_id)
            while len(self._answers) > self.keep:
                self._answers.popitem(last=False)
            self._last = answer
        origin = answer.extras.get("citation_origin")
        if root.handlers and any(_listens(h) for h in root.handlers):
            try:
                CallbackManager(
                    handlers=root.handlers, tags=root.tags, metadata=root.metadata
                ).on_custom_event(
                    CITATIONS_EVENT, event_data(root.run_id, answer), run_id=root.run_id
                )
            except Exception as err:
                logger.debug("unicite-langchain: the custom event failed: %s", describe_error(err))
        if self.on_citations is not None:
            try:
                self.on_citations(answer)
            except Exception as err:
                logger.warning("unicite-langchain: on_citations raised %s", describe_error(err))
        if warn and len(root.ledger) and not answer.citations:
            logger.warning(
                "run %s: %d sources were captured but no citation could be extracted",
                root.run_id,
                len(root.ledger),
            )
        elif logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "run %s: %d citations (%s), %d sources",
                root.run_id,
                len(answer.citations),
                origin,
                len(answer.sources),
            )
