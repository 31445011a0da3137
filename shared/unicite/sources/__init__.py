"""Sources from tools and retrievers, and the ledger that collects them across a run."""

from unicite.sources._ledger import SourceLedger, as_source

__all__ = ["SourceLedger", "as_source"]
