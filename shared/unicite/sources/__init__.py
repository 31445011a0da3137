"""Sources from tools and retrievers: extractors, a run's `SourceLedger`, prompt digests."""

from unicite.sources._digest import build_digest, estimate_tokens
from unicite.sources._filter import filter_content
from unicite.sources._knowledge_bases import bedrock_kb_source
from unicite.sources._ledger import (
    SourceLedger,
    as_source,
    current_ledger,
    ledger_scope,
    page_key,
    seed_sid,
    shown_numbers,
)
from unicite.sources._pipeline import asearch, search, to_seed_dict, to_seed_dicts
from unicite.sources._reconcile import reconcile
from unicite.sources._registry import (
    EXTRACTORS,
    Extractor,
    ExtractorRegistry,
    default_registry,
    from_tool_output,
    register,
    unregister,
)

__all__ = [
    "EXTRACTORS",
    "Extractor",
    "ExtractorRegistry",
    "SourceLedger",
    "as_source",
    "asearch",
    "bedrock_kb_source",
    "build_digest",
    "current_ledger",
    "default_registry",
    "estimate_tokens",
    "filter_content",
    "from_tool_output",
    "ledger_scope",
    "page_key",
    "reconcile",
    "register",
    "search",
    "seed_sid",
    "shown_numbers",
    "to_seed_dict",
    "to_seed_dicts",
    "unregister",
]
