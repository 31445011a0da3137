"""Page numbers of retrieved chunks: kept 1-based in ``extras["page_number"]``, whatever the loader.

LangChain's PDF loaders give a 0-based ``page`` (PyPDFLoader also the printed ``page_label``),
LlamaIndex's PDF reader a ``page_label`` that is the 1-based page as text, Unstructured and
LlamaParse a 1-based ``page_number``. The loader's own values stay beside it as they were.
"""

from __future__ import annotations

from typing import Any

import pytest

from unicite.sources import from_tool_output


def langchain_document(**metadata: Any) -> dict[str, Any]:
    return {"page_content": "Revenue grew 14%.", "metadata": {"source": "r.pdf", **metadata}}


def llamaindex_node(**metadata: Any) -> dict[str, Any]:
    node = {"id_": "n-1", "text": "Revenue grew 14%.", "metadata": metadata}
    return {"node": node, "score": 0.5}


@pytest.mark.parametrize(
    ("metadata", "page"),
    [
        ({"page": 0}, 1),  # PyMuPDF / PDFPlumber: a 0-based page index
        ({"page": 11, "page_label": "12"}, 12),  # PyPDFLoader
        ({"page": 11, "page_label": "xii"}, 12),  # the index is the page, not the label
        ({"page": "11"}, 12),
        ({"page_number": 3}, 3),  # Unstructured: 1-based
        ({"page_number": 3, "page": 7}, 3),
        ({"page_label": "7"}, 7),  # LlamaIndex's PDF reader: 1-based, as text
        ({"page_label": "iv"}, None),  # a roman numeral says nothing of the page
        ({"page": -1}, None),
        ({"page_number": 0}, None),
        ({"page": True}, None),
        ({"page": 2.5}, None),
        ({"page": None}, None),
        ({"total_pages": 84}, None),
        ({}, None),
    ],
)
def test_page_number_from_loader_metadata(metadata: dict[str, Any], page: int | None) -> None:
    for item in (langchain_document(**metadata), llamaindex_node(**metadata)):
        [source] = from_tool_output("retriever", [item])
        assert source.extras.get("page_number") == page, item
        for key in ("page", "page_label"):
            if metadata.get(key) is not None:
                assert source.extras[key] == metadata[key]  # the loader's value, as it was


def test_langchain_document_objects_keep_their_page() -> None:
    documents = pytest.importorskip("langchain_core.documents")
    document = documents.Document(
        page_content="Revenue grew 14%.", metadata={"source": "r.pdf", "page": 4}
    )
    [source] = from_tool_output("retriever", [document])
    assert (source.extras["page"], source.extras["page_number"]) == (4, 5)


def test_llamaindex_node_objects_keep_their_page() -> None:
    schema = pytest.importorskip("llama_index.core.schema")
    node = schema.TextNode(text="Leave accrues monthly.", id_="n-1", metadata={"page_label": "9"})
    [source] = from_tool_output("retriever", [schema.NodeWithScore(node=node, score=0.5)])
    assert (source.extras["page_label"], source.extras["page_number"]) == ("9", 9)


def test_pages_survive_tool_message_envelopes() -> None:
    message = {
        "type": "tool",
        "tool_call_id": "call_1",
        "content": "1 document",
        "artifact": [langchain_document(page=2)],
    }
    [source] = from_tool_output("search_docs", message)
    assert source.extras["page_number"] == 3


def test_sources_other_than_retrieved_chunks_have_no_page_number() -> None:
    results = {"results": [{"url": "https://a.example/", "title": "A", "content": "x", "page": 2}]}
    [hit] = from_tool_output("tavily_search", results)
    assert "page_number" not in hit.extras


def test_a_marker_citing_a_page_points_at_it() -> None:
    from unicite import MarkerStream, PageLocation, Source, parse_markers

    sources = [
        Source(id="rapport", title="Rapport annuel", content="…", extras={"page_number": 12}),
        Source(id="site", url="https://www.example.fr/", title="Site"),
    ]
    text = "Le chiffre d’affaires a crû de 8 % [1]. Le site le confirme [2]."
    answer = parse_markers(text, sources)
    assert [c.location for c in answer.citations] == [
        PageLocation(start_page=12, end_page=13),
        None,
    ]
    stream = MarkerStream(sources)
    shown = "".join(stream.feed(ch) for ch in text) + stream.close()
    assert shown == text
    assert stream.answer.citations == answer.citations
