"""Finding the `CitationCallbackHandler` of a run and its `SourceLedger` from callback managers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

from unicite.sources import SourceLedger, current_ledger
from unicite_langchain._handler import CitationCallbackHandler

__all__ = ["citation_handlers", "run_ledgers"]


def citation_handlers(callbacks: Any) -> list[CitationCallbackHandler]:
    """The enabled citation handlers among a run's callbacks (a manager or a list)."""
    # Callback managers and run managers both hold their handlers in `.handlers`.
    handlers = (
        callbacks if isinstance(callbacks, (list, tuple)) else getattr(callbacks, "handlers", None)
    )
    if not isinstance(handlers, Sequence):
        return []
    return [h for h in handlers if isinstance(h, CitationCallbackHandler) and h.enabled]


def run_ledgers(
    callbacks: Any, run_id: UUID | None
) -> list[tuple[SourceLedger, CitationCallbackHandler | None]]:
    """The ledgers a run's sources belong in: each handler's for the run's root, else the scope's.

    The first is the one whose source numbers the model sees. Outside any handler and any
    `unicite.sources.ledger_scope`, the list is empty.
    """
    found: list[tuple[SourceLedger, CitationCallbackHandler | None]] = []
    if run_id is not None:
        for handler in citation_handlers(callbacks):
            ledger = handler.ledger(run_id)
            if ledger is not None and all(ledger is not known for known, _ in found):
                found.append((ledger, handler))
    if not found:
        scoped = current_ledger()
        if scoped is not None:
            found.append((scoped, None))
    return found
