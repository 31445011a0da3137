"""Where a root run's cited answer goes: the recent answers, a custom event, a callback, a log.

The custom event ``unicite_citations`` is published through the run tree's own callback
handlers, so ``astream_events`` and any handler's ``on_custom_event`` see it before the root
run ends. A failing callback never reaches the chain.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from uuid import UUID

from langchain_core.callbacks import CallbackManager

from unicite import CitedAnswer
from unicite.exceptions import describe_error
from unicite_langchain._runs import Root

__all__ = ["CITATIONS_EVENT", "Answers", "Publisher"]

logger = logging.getLogger("unicite.langchain")

CITATIONS_EVENT = "unicite_citations"
"""Name of the LangChain custom event carrying a root run's answer (see `astream_events`)."""


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

    def publish(self, root: Root, answer: CitedAnswer) -> None:
        """Keep the answer, emit the custom event, call ``on_citations``, log the outcome."""
        with self.lock:
            self._answers[root.run_id] = answer
            self._answers.move_to_end(root.run_id)
            while len(self._answers) > self.keep:
                self._answers.popitem(last=False)
            self._last = answer
        origin = answer.extras.get("citation_origin")
        if root.handlers and any(not h.ignore_custom_event for h in root.handlers):
            try:
                CallbackManager(
                    handlers=root.handlers, tags=root.tags, metadata=root.metadata
                ).on_custom_event(
                    CITATIONS_EVENT,
                    {"run_id": str(root.run_id), "origin": origin, "answer": answer},
                    run_id=root.run_id,
                )
            except Exception as err:
                logger.debug("unicite-langchain: the custom event failed: %s", describe_error(err))
        if self.on_citations is not None:
            try:
                self.on_citations(answer)
            except Exception as err:
                logger.warning("unicite-langchain: on_citations raised %s", describe_error(err))
        if len(root.ledger) and not answer.citations:
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
