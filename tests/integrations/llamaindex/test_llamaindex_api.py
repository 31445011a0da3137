"""The adapter's public names: exactly these, so nothing is exported by accident."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

import unicite_llamaindex
from unicite_llamaindex import events


def test_public_names() -> None:
    assert unicite_llamaindex.__all__ == [
        "AsyncCitedStreamingResponse",
        "CitationEventHandler",
        "CitationPostprocessor",
        "CitationsEvent",
        "CitedQueryEngine",
        "CitedStreamingResponse",
        "CitedSynthesizer",
        "CitedTool",
        "__version__",
        "citations_of",
        "cite_tools",
        "dispatcher",
        "from_citation_blocks",
        "from_llamaindex_response",
        "source_from_node",
        "to_citation_blocks",
    ]
    for name in unicite_llamaindex.__all__:
        assert getattr(unicite_llamaindex, name) is not None
    assert events.__all__ == ["CitationsEvent", "dispatcher"]
    # The module-level dispatcher CitationsEvents go through hangs under LlamaIndex's root.
    assert unicite_llamaindex.dispatcher.name == "unicite_llamaindex.events"
    assert unicite_llamaindex.dispatcher.parent_name == "root"
