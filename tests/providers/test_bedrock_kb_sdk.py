"""A real boto3 ``bedrock-agent-runtime`` client (Knowledge Bases) on cassettes.

``retrieve_and_generate`` gives a dict `extract` reads as it is (boto3's ``ResponseMetadata``
beside the API's fields); ``retrieve_and_generate_stream`` an ``EventStream`` under
``response["stream"]`` that `collect_stream` reads as it is; ``retrieve`` the results `cite`
numbers as the sources a model was shown.
"""

from __future__ import annotations

from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")

from providers._fixtures import cassette_bodies  # noqa: E402

from unicite import PageLocation, cite  # noqa: E402
from unicite.providers import StreamCollector, collect_stream, extract  # noqa: E402

KNOWLEDGE_BASE = "KBHANDBUCH1"
MODEL = "arn:aws:bedrock:eu-central-1::foundation-model/anthropic.claude-3-5-sonnet-20240620-v1:0"
QUESTION = "Wie lange gilt die Garantie, und wo bekomme ich Ersatzteile? 保修多久?"
REQUEST: dict[str, Any] = {
    "input": {"text": QUESTION},
    "retrieveAndGenerateConfiguration": {
        "type": "KNOWLEDGE_BASE",
        "knowledgeBaseConfiguration": {"knowledgeBaseId": KNOWLEDGE_BASE, "modelArn": MODEL},
    },
}
PDF = "s3://handbuch-eu/de/Garantie-Handbuch.pdf"


def client() -> Any:
    """A client whose placeholder keys sign requests the cassettes answer."""
    return boto3.client(
        "bedrock-agent-runtime",
        region_name="eu-central-1",
        aws_access_key_id="x",
        aws_secret_access_key="y",  # noqa: S106
    )


def final_body() -> dict[str, Any]:
    """The non-streamed cassette's response, as the API sent it."""
    body: dict[str, Any] = cassette_bodies(
        "providers/test_bedrock_kb_sdk/test_retrieve_and_generate.yaml"
    )[0]
    return body


@pytest.mark.vcr
def test_retrieve_and_generate() -> None:
    response = client().retrieve_and_generate(**REQUEST)
    assert "ResponseMetadata" in response
    answer = extract(response, strict=True)
    assert answer.provider == "bedrock"
    assert answer.text == response["output"]["text"]
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (0, 53, "Die Garantie für Geräte gilt zwei Jahre ab Kaufdatum."),
        (54, 67, "保修期为两年。请保留发票。"),
        (68, 111, "Ersatzteile bestellen Sie im Online-Shop 🔧."),
    ]
    # Each cited text is the API's own textResponsePart text.
    assert [c.text for c in answer.citations] == [
        item["generatedResponsePart"]["textResponsePart"]["text"] for item in response["citations"]
    ]
    pdf, web, shop = answer.sources
    assert (pdf.title, pdf.url, pdf.extras["uri"], pdf.extras["page_number"]) == (
        "Garantie-Handbuch.pdf",
        None,
        PDF,
        3,
    )
    assert (web.url, web.domain) == ("https://hilfe.example.cn/baoxiu", "example.cn")
    assert shop.content == "Ersatzteile: Bestellung über den Online-Shop, Lieferung in 3 Tagen 🔧"
    assert answer.citations[0].location == PageLocation(start_page=3, end_page=4)
    assert answer.extras == {
        "guardrail_action": "NONE",
        "grounded_effective": True,
        "session_id": response["sessionId"],
    }
    # boto3's ResponseMetadata is the SDK's, not the answer's: the dict as sent reads the same.
    assert extract(final_body()) == answer


@pytest.mark.vcr
def test_retrieve_and_generate_stream() -> None:
    response = client().retrieve_and_generate_stream(**REQUEST)
    collector = StreamCollector()
    announced = []
    for event in response["stream"]:
        announced.extend(item.citation.text for item in collector.feed(event))
    answer = collector.result()
    assert announced == [c.text for c in answer.citations]
    # The streamed answer is the final one but for the session id, a header of the response.
    final = final_body()
    del final["sessionId"]
    assert answer == extract(final)
    assert len(answer.citations) == 3
    assert answer.diagnostics == []


@pytest.mark.vcr(
    "test_retrieve_and_generate_stream.yaml",
)
def test_collect_stream_reads_the_event_stream_as_it_is() -> None:
    response = client().retrieve_and_generate_stream(**REQUEST)
    answer = collect_stream(response["stream"])
    final = final_body()
    del final["sessionId"]
    assert answer == extract(final)


@pytest.mark.vcr
def test_retrieve_then_cite() -> None:
    response = client().retrieve(
        knowledgeBaseId=KNOWLEDGE_BASE, retrievalQuery={"text": "Garantie Ersatzteile 保修"}
    )
    text = "Zwei Jahre Garantie ab Kauf [1]. 请保留发票 [2]. Ersatzteile im Online-Shop [3]."
    answer = cite(text, sources=response)
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("Zwei Jahre Garantie ab Kauf", ["1%3A0%3AgQ7tZ"]),
        ("请保留发票", ["1%3A0%3AwZ3kq"]),
        ("Ersatzteile im Online-Shop", ["1%3A0%3AeT5pn"]),
    ]
    assert [s.extras["score"] for s in answer.sources] == [0.71, 0.64, 0.52]
    assert answer.sources[0].extras["uri"] == PDF
