"""Amazon Bedrock Knowledge Bases reader: ``RetrieveAndGenerate`` answers, their stream, and
``Retrieve`` results as sources.

The cases are plain dicts in the API's JSON shape. Spans count code points with an INCLUSIVE
end (``output.text[start:end + 1]`` is the cited text, as on recorded responses).
"""

from __future__ import annotations

import copy
from typing import Any

from providers.contract import ProviderContract, check_invariants

from unicite import PageLocation, cite
from unicite.providers import StreamCollector, collect_stream, detect_provider, extract
from unicite.sources import bedrock_kb_source, from_tool_output

GARANTIE = "Die Garantie für Geräte gilt zwei Jahre ab Kaufdatum."
BAOXIU = "保修期为两年。请保留发票。"
ERSATZ = "Ersatzteile bestellen Sie im Online-Shop 🔧."
ANSWER = f"{GARANTIE} {BAOXIU} {ERSATZ}"

PDF = "s3://handbuch-eu/de/Garantie-Handbuch.pdf"
PDF_CHUNK: dict[str, Any] = {
    "content": {
        "text": "Für alle Geräte gilt eine Garantie von zwei Jahren ab dem Kaufdatum.",
        "type": "TEXT",
    },
    "location": {"type": "S3", "s3Location": {"uri": PDF}},
    "metadata": {
        "x-amz-bedrock-kb-source-uri": PDF,
        "x-amz-bedrock-kb-chunk-id": "1%3A0%3AgQ7tZ",
        "x-amz-bedrock-kb-data-source-id": "DSHANDBUCH",
        "x-amz-bedrock-kb-document-page-number": 2.0,
    },
}
WEB_CHUNK: dict[str, Any] = {
    "content": {"text": "所有设备保修两年。维修时请出示发票。", "type": "TEXT"},
    "location": {"type": "WEB", "webLocation": {"url": "https://hilfe.example.cn/baoxiu"}},
    "metadata": {
        "x-amz-bedrock-kb-source-uri": "https://hilfe.example.cn/baoxiu",
        "x-amz-bedrock-kb-chunk-id": "1%3A0%3AwZ3kq",
        "x-amz-bedrock-kb-data-source-id": "DSWEBCRAWL",
    },
}
# A chunk of a custom data source ingested without a location: its text and chunk id only.
SHOP_CHUNK: dict[str, Any] = {
    "content": {"text": "Ersatzteile: Bestellung über den Online-Shop, Lieferung in 3 Tagen 🔧"},
    "metadata": {"x-amz-bedrock-kb-chunk-id": "1%3A0%3AeT5pn"},
}


def citation(text: str, start: int, end: int, *references: dict[str, Any]) -> dict[str, Any]:
    return {
        "generatedResponsePart": {
            "textResponsePart": {"text": text, "span": {"start": start, "end": end}}
        },
        "retrievedReferences": [copy.deepcopy(r) for r in references],
    }


def response(*citations: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "sessionId": "3f1c2b9e-7a4d-4e0b-9c55-0d6a8e2f1b47",
        "output": {"text": ANSWER},
        "citations": list(citations),
        **fields,
    }


# Spans written as the API writes them: inclusive ends, counted in code points
# (GARANTIE is 53 characters: 0..52; BAOXIU 13 after a space: 54..66; ERSATZ 43: 68..110).
CITATIONS = [
    citation(GARANTIE, 0, 52, PDF_CHUNK),
    citation(BAOXIU, 54, 66, WEB_CHUNK, PDF_CHUNK),
    citation(ERSATZ, 68, 110, SHOP_CHUNK),
]


def answer_response() -> dict[str, Any]:
    return response(*copy.deepcopy(CITATIONS), guardrailAction="NONE")


def stream_events() -> list[dict[str, Any]]:
    """The answer streamed in pieces, each citation event after the text it cites.

    The first citation event carries the citation twice, as the API documents it: under the
    deprecated ``citation`` key and at the top level.
    """
    first, second, third = copy.deepcopy(CITATIONS)
    return [
        {"output": {"text": "Die Garantie für Geräte "}},
        {"output": {"text": "gilt zwei Jahre ab Kaufdatum. "}},
        {"citation": {"citation": copy.deepcopy(first), **first}},
        {"output": {"text": "保修期为两年。"}},
        {"output": {"text": "请保留发票。 Ersatzteile bestellen"}},
        {"citation": second},
        {"output": {"text": " Sie im Online-Shop 🔧."}},
        {"citation": third},
        {"guardrail": {"action": "NONE"}},
    ]


def streamed_response() -> dict[str, Any]:
    """The response the stream adds up to: the session id is a header, not an event."""
    final = answer_response()
    del final["sessionId"]
    return final


def disagreeing_response() -> dict[str, Any]:
    """The second citation's span is two characters off its text."""
    return response(
        citation(GARANTIE, 0, 52, PDF_CHUNK),
        citation(BAOXIU, 56, 68, WEB_CHUNK),
    )


class TestBedrockKnowledgeBasesContract(ProviderContract):
    provider = "bedrock"
    noisy_cases = frozenset({"span-disagrees", "guardrail-intervened"})

    def final_cases(self) -> dict[str, Any]:
        intervened = {
            "sessionId": "8d0e4f7a-1b2c-4d3e-9f60-7a8b9c0d1e2f",
            "output": {"text": "Entschuldigung, dazu kann ich keine Auskunft geben. 抱歉。"},
            "citations": [],
            "guardrailAction": "INTERVENED",
        }
        return {
            "answer": answer_response(),
            "span-disagrees": disagreeing_response(),
            "guardrail-intervened": intervened,
        }

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        return {"answer": (stream_events(), streamed_response())}

    def test_every_prefix_of_a_stream_never_raises(
        self, stream_case: tuple[str, tuple[list[Any], Any]]
    ) -> None:
        """The stream has no closing event: a cut stream reads as the answer so far.

        Replaces the contract's check that a cut stream says so (this API gives no way to
        tell): every prefix reads without raising, with valid offsets, as a prefix of the
        whole answer whose citations are all final ones.
        """
        _, (events, final) = stream_case
        whole = extract(final)
        for cut in range(len(events) + 1):
            answer = collect_stream(events[:cut], provider=self.provider)
            check_invariants(answer)
            assert whole.text.startswith(answer.text)
            assert all(c in whole.citations for c in answer.citations)


def test_spans_are_inclusive_code_points() -> None:
    answer = extract(answer_response(), strict=True)
    assert answer.text == ANSWER
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (0, 53, "Die Garantie für Geräte gilt zwei Jahre ab Kaufdatum."),
        (54, 67, "保修期为两年。请保留发票。"),
        (68, 111, "Ersatzteile bestellen Sie im Online-Shop 🔧."),
    ]
    assert answer.extras == {
        "guardrail_action": "NONE",
        "grounded_effective": True,
        "session_id": "3f1c2b9e-7a4d-4e0b-9c55-0d6a8e2f1b47",
    }


def test_chunks_are_sources_and_a_chunk_cited_twice_is_one() -> None:
    answer = extract(answer_response())
    pdf, web, shop = answer.sources
    # The S3 PDF: no web link; its s3:// URI kept with its type, the file name as title.
    assert (pdf.id, pdf.kind, pdf.url, pdf.title) == (
        "1%3A0%3AgQ7tZ",
        "document",
        None,
        "Garantie-Handbuch.pdf",
    )
    assert pdf.content == "Für alle Geräte gilt eine Garantie von zwei Jahren ab dem Kaufdatum."
    assert pdf.extras["location_type"] == "S3"
    assert pdf.extras["uri"] == PDF
    assert pdf.extras["data_source_id"] == "DSHANDBUCH"
    # Page index 2 (0-based) is the third page.
    assert pdf.extras["page_number"] == 3
    assert pdf.extras["metadata"]["x-amz-bedrock-kb-document-page-number"] == 2.0
    assert (web.kind, web.url, web.domain, web.content) == (
        "web",
        "https://hilfe.example.cn/baoxiu",
        "example.cn",
        "所有设备保修两年。维修时请出示发票。",
    )
    # No location: the chunk's text and id are enough to cite it.
    assert (shop.kind, shop.url, shop.provider_id) == ("document", None, "1%3A0%3AeT5pn")
    assert shop.content == SHOP_CHUNK["content"]["text"]
    assert [c.source_ids for c in answer.citations] == [
        [pdf.id],
        [web.id, pdf.id],
        [shop.id],
    ]


def test_a_paged_chunk_is_cited_at_its_page() -> None:
    answer = extract(answer_response())
    assert [c.location for c in answer.citations] == [
        PageLocation(start_page=3, end_page=4),
        None,  # its first source is a web page
        None,
    ]


def test_a_span_off_its_text_is_cited_where_the_text_is() -> None:
    answer = extract(disagreeing_response())
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (0, 53, GARANTIE),
        (54, 67, BAOXIU),
    ]
    assert answer.diagnostics == [
        "response.citations[1].generatedResponsePart.textResponsePart: text "
        "'保修期为两年。请保留发票。' is not at span 56..68; "
        "cited where the answer holds it, 54..67"
    ]


def test_a_cited_text_the_answer_lacks_is_left_uncited() -> None:
    data = response(citation("Die Garantie gilt fünf Jahre.", 0, 28, PDF_CHUNK))
    answer = extract(data)
    assert answer.citations == []
    assert [s.id for s in answer.sources] == ["1%3A0%3AgQ7tZ"]
    assert len(answer.diagnostics) == 1
    assert "is not in the answer; left uncited" in answer.diagnostics[0]


def test_spans_counted_in_bytes_or_utf16_are_read_too() -> None:
    # BAOXIU starts at byte 56 (GARANTIE holds ü and ä: 55 bytes, then a space) and is 39
    # bytes long. ERSATZ is 44 UTF-16 units (🔧 is two) from unit 68, so 68..111 inclusive;
    # read as code points the same numbers make an exclusive span of the same text.
    data = response(
        citation(BAOXIU, 56, 94, WEB_CHUNK),
        citation(ERSATZ, 68, 111, SHOP_CHUNK),
    )
    answer = extract(data, strict=True)
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (54, 67, BAOXIU),
        (68, 111, ERSATZ),
    ]


def test_a_guardrail_intervention_is_a_diagnostic() -> None:
    data = response(guardrailAction="INTERVENED")
    data["citations"] = []
    answer = extract(data)
    assert answer.extras["guardrail_action"] == "INTERVENED"
    assert answer.diagnostics == ["a guardrail intervened: the answer is the guardrail's message"]


def test_detection_leaves_other_shapes_alone() -> None:
    assert detect_provider(answer_response()) == "bedrock"
    # Bedrock Converse's answer also has an "output", holding a message and no text.
    converse = {"output": {"message": {"role": "assistant", "content": []}}, "stopReason": "x"}
    assert extract(converse).extras.get("session_id") is None
    assert detect_provider({"output": [{"type": "message"}], "citations": []}) != "bedrock"


def test_stream_announces_each_citation_when_its_event_arrives() -> None:
    collector = StreamCollector()
    announced = []
    for n, event in enumerate(stream_events()):
        for item in collector.feed(event):
            announced.append((n, item.citation.text))
    assert announced == [(2, GARANTIE), (5, BAOXIU), (7, ERSATZ)]
    assert collector.result() == extract(streamed_response())


def test_a_citation_event_with_only_its_deprecated_field_is_read() -> None:
    events = stream_events()
    events[5] = {"citation": {"citation": events[5]["citation"]}}
    assert collect_stream(events) == extract(streamed_response())


def test_a_stream_exception_is_a_diagnostic() -> None:
    events = [
        *stream_events()[:3],
        {"throttlingException": {"message": "Zu viele Anfragen"}},
    ]
    answer = collect_stream(events)
    assert answer.text == "Die Garantie für Geräte gilt zwei Jahre ab Kaufdatum. "
    assert answer.diagnostics == ["stream error: throttlingException: Zu viele Anfragen"]


# --- Retrieve results as sources ------------------------------------------------------------

RETRIEVE = {
    "retrievalResults": [
        {**copy.deepcopy(PDF_CHUNK), "score": 0.71},
        {**copy.deepcopy(WEB_CHUNK), "score": 0.64},
        {
            "content": {
                "type": "ROW",
                "row": [
                    {"columnName": "teil", "columnValue": "Dichtung Ø 42 mm", "type": "STRING"},
                    {"columnName": "preis", "columnValue": "4,90 €", "type": "STRING"},
                ],
            },
            "location": {
                "type": "SQL",
                "sqlLocation": {"query": "SELECT teil, preis FROM ersatzteile WHERE id = 7"},
            },
            "score": 0.52,
        },
    ]
}


def test_retrieve_results_are_ranked_sources() -> None:
    notes: list[str] = []
    pdf, web, row = from_tool_output("knowledge_base", RETRIEVE, diagnostics=notes)
    assert notes == []
    assert [s.rank for s in (pdf, web, row)] == [0, 1, 2]
    assert (pdf.title, pdf.extras["uri"], pdf.extras["score"]) == (
        "Garantie-Handbuch.pdf",
        PDF,
        0.71,
    )
    assert web.url == "https://hilfe.example.cn/baoxiu"
    assert row.extras["sql_query"] == "SELECT teil, preis FROM ersatzteile WHERE id = 7"
    assert row.content == '{"teil": "Dichtung Ø 42 mm", "preis": "4,90 €"}'
    assert {s.origin.tool for s in (pdf, web, row) if s.origin} == {"knowledge_base"}


def test_cite_numbers_a_retrieve_response_in_its_order() -> None:
    answer = cite("Zwei Jahre Garantie [1]. 保修两年 [2].", sources=RETRIEVE)
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("Zwei Jahre Garantie", ["1%3A0%3AgQ7tZ"]),
        ("保修两年", ["1%3A0%3AwZ3kq"]),
    ]


def test_a_langchain_knowledge_base_document_keeps_its_location() -> None:
    # AmazonKnowledgeBasesRetriever's Document: the result without its content as metadata,
    # the result's own metadata renamed source_metadata.
    document = {
        "page_content": PDF_CHUNK["content"]["text"],
        "metadata": {
            "location": PDF_CHUNK["location"],
            "score": 0.71,
            "type": "TEXT",
            "source_metadata": PDF_CHUNK["metadata"],
        },
    }
    [source] = from_tool_output("retriever", [document])
    assert (source.kind, source.url, source.title, source.provider_id) == (
        "document",
        None,
        "Garantie-Handbuch.pdf",
        "1%3A0%3AgQ7tZ",
    )
    assert (source.extras["uri"], source.extras["page_number"], source.extras["score"]) == (
        PDF,
        3,
        0.71,
    )
    assert source.content == PDF_CHUNK["content"]["text"]


def test_a_reference_naming_nothing_is_dropped_with_a_diagnostic() -> None:
    notes: list[str] = []
    assert bedrock_kb_source({"content": {}, "metadata": {}}, diagnostics=notes) is None
    assert notes == ["reference: names no chunk (no text, location or chunk id); dropped"]


def test_a_citation_arriving_before_its_text_waits_for_it() -> None:
    first, second, third = copy.deepcopy(CITATIONS)
    events = [
        {"citation": first},
        {"output": {"text": ANSWER[:60]}},
        {"output": {"text": ANSWER[60:]}},
        {"citation": second},
        {"citation": third},
    ]
    collector = StreamCollector()
    announced = [
        (n, item.citation.text) for n, event in enumerate(events) for item in collector.feed(event)
    ]
    assert announced == [(1, GARANTIE), (3, BAOXIU), (4, ERSATZ)]
    final = answer_response()
    del final["sessionId"], final["guardrailAction"]
    assert collector.result() == extract(final)


def test_a_tool_answering_from_a_knowledge_base_gives_the_chunks_it_cited() -> None:
    sources = from_tool_output("ask_handbook", answer_response())
    # The PDF chunk, cited twice, is one source.
    assert [s.id for s in sources] == ["1%3A0%3AgQ7tZ", "1%3A0%3AwZ3kq", "1%3A0%3AeT5pn"]
    assert all(s.rank is None for s in sources)  # references are cited, not ranked


def test_a_llamaindex_knowledge_base_node_keeps_its_location() -> None:
    # llama-index-retrievers-bedrock's NodeWithScore (dumped): the result's location and
    # metadata ("sourceMetadata") as the node's metadata, the score beside the node.
    node = {
        "node": {
            "id_": "9b2f6c1e-0d4a-4f7e-8a3b-5c6d7e8f9a0b",
            "text": WEB_CHUNK["content"]["text"],
            "metadata": {
                "location": WEB_CHUNK["location"],
                "sourceMetadata": WEB_CHUNK["metadata"],
            },
        },
        "score": 0.64,
    }
    [source] = from_tool_output("query_engine", [node])
    assert (source.kind, source.url, source.provider_id, source.content) == (
        "web",
        "https://hilfe.example.cn/baoxiu",
        "1%3A0%3AwZ3kq",
        "所有设备保修两年。维修时请出示发票。",
    )
    assert source.extras["score"] == 0.64


def test_a_kendra_document_is_titled_and_linked() -> None:
    reference = {
        "content": {"text": "Öffnungszeiten: Montag bis Freitag, 9–17 Uhr."},
        "location": {
            "type": "KENDRA",
            "kendraDocumentLocation": {"uri": "https://intranet.example.de/service/zeiten"},
        },
        "metadata": {"x-amz-kendra-document-title": "Servicezeiten – Übersicht"},
    }
    source = bedrock_kb_source(reference)
    assert source is not None
    assert (source.kind, source.url, source.title) == (
        "document",
        "https://intranet.example.de/service/zeiten",
        "Servicezeiten – Übersicht",
    )
    assert source.extras["location_type"] == "KENDRA"


def test_a_guardrail_on_retrieve_results_is_a_diagnostic() -> None:
    notes: list[str] = []
    found = from_tool_output(
        "knowledge_base", {**RETRIEVE, "guardrailAction": "INTERVENED"}, diagnostics=notes
    )
    assert len(found) == 3
    assert notes == ["knowledge_base: a guardrail intervened in the knowledge base's results"]


def test_an_image_chunk_s_bytes_are_no_text() -> None:
    document = {
        "page_content": "data:image/png;base64,iVBORw0KGgo=",
        "metadata": {
            "location": {"type": "S3", "s3Location": {"uri": "s3://handbuch-eu/de/Schaltplan.png"}},
            "score": 0.4,
            "type": "IMAGE",
            "source_metadata": {"x-amz-bedrock-kb-chunk-id": "1%3A0%3AiM9"},
        },
    }
    [source] = from_tool_output("retriever", [document])
    assert (source.title, source.content) == ("Schaltplan.png", None)
    assert source.extras["content_type"] == "IMAGE"
