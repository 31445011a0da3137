"""LangChain's ``ChatMistralAI`` over cassettes written from Mistral's documented format.

langchain-mistralai keeps a chat completion's content chunks in ``AIMessage.content``, each
``reference`` chunk rewritten as a text block holding it under ``"reference"`` (and streamed
blocks numbered with an ``index``); `from_ai_message` puts them back and hands them to the core's
Mistral reader, so the message gives the citations of the raw response, invoked or streamed.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_mistralai")
pytest.importorskip("vcr")

from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_mistralai import ChatMistralAI

from unicite import extract
from unicite.providers import capabilities, extract_content
from unicite_langchain import CitationCallbackHandler, from_ai_message

API_KEY = os.getenv("MISTRAL_API_KEY", "mock-api-key")
MODEL = "mistral-large-latest"
FR = (
    "Le prix Nobel de la paix 2024 a été décerné à Nihon Hidankyo, la confédération des "
    "survivants d'Hiroshima et de Nagasaki"
)
JA = "日本被団協は被爆者の全国組織です"
REFERENCES = {
    "0": {"url": "https://fr.wikipedia.org/wiki/Prix_Nobel_de_la_paix_2024", "title": "Prix"},
    "1": {"url": "https://ja.wikipedia.org/wiki/日本原水爆被害者団体協議会", "title": "日本被団協"},
}


OUTPUT_VERSIONS = pytest.mark.parametrize("version", [None, "v1"])
"""The chunks read the same in LangChain's default output and in its v1 standard blocks (where
a reference is a text block with a ``citation`` annotation holding the ids)."""


def model(version: str | None = None) -> ChatMistralAI:
    return ChatMistralAI(  # type: ignore[call-arg]
        model=MODEL,
        api_key=API_KEY,  # type: ignore[arg-type]
        temperature=0.0,
        output_version=version,
    )


def messages() -> list[BaseMessage]:
    return [
        SystemMessage("Answer the user by providing references to the source of the information."),
        HumanMessage("Qui a reçu le prix Nobel de la paix 2024 ? 日本語でも一言お願いします。"),
        AIMessage(
            "",
            tool_calls=[{"id": "Xa7bC9dE1", "name": "get_information", "args": {}}],
        ),
        ToolMessage(json.dumps(REFERENCES, ensure_ascii=False), tool_call_id="Xa7bC9dE1"),
    ]


def raw_response() -> dict[str, Any]:
    from providers._fixtures import cassette_bodies

    (body,) = cassette_bodies(
        "integrations/langchain/test_langchain_mistral/"
        "test_chat_mistralai_invoke_keeps_reference_chunks.yaml"
    )
    assert isinstance(body, dict)
    return body


def spans(answer: Any) -> list[tuple[str, list[str]]]:
    return [(c.text, c.source_ids) for c in answer.citations]


EXPECTED = [(FR, ["reference:0"]), (JA, ["reference:0", "reference:1"])]


@pytest.mark.vcr
@pytest.mark.default_cassette("test_chat_mistralai_invoke_keeps_reference_chunks.yaml")
@OUTPUT_VERSIONS
def test_chat_mistralai_invoke_keeps_reference_chunks(version: str | None) -> None:
    message = model(version).invoke(messages())
    assert isinstance(message.content, list)
    # The reference chunk as langchain-mistralai keeps it.
    assert message.content[1] == (
        {
            "type": "text",
            "text": "",
            "annotations": [{"type": "citation", "extras": {"reference_ids": [0]}}],
        }
        if version == "v1"
        else {"type": "text", "text": "", "reference": {"reference_ids": [0]}}
    )
    answer = from_ai_message(message)
    assert answer.provider == "mistral"
    assert answer.text == message.text == FR + ". " + JA + "。🕊️"
    assert spans(answer) == EXPECTED
    raw = extract(raw_response())
    assert (answer.text, answer.citations, answer.sources) == (
        raw.text,
        raw.citations,
        raw.sources,
    )
    assert answer.diagnostics == []


@pytest.mark.vcr
@pytest.mark.default_cassette("test_chat_mistralai_stream_keeps_reference_chunks.yaml")
@OUTPUT_VERSIONS
def test_chat_mistralai_stream_keeps_reference_chunks(version: str | None) -> None:
    chunks = list(model(version).stream(messages()))
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert isinstance(total, AIMessageChunk)
    answer = from_ai_message(total)
    assert answer.provider == "mistral"
    assert answer.text == total.text == FR + ". " + JA + "。🕊️"
    assert spans(answer) == EXPECTED
    assert answer.citations == extract(raw_response()).citations


def test_a_string_answer_is_read_as_mistral_without_citations() -> None:
    message = AIMessage(
        "Bonjour ! こんにちは 👋",
        response_metadata={"model_provider": "mistralai", "model_name": "mistral-small-latest"},
    )
    answer = from_ai_message(message)
    assert (answer.provider, answer.text, answer.citations) == (
        "mistral",
        "Bonjour ! こんにちは 👋",
        [],
    )
    assert answer.model == "mistral-small-latest"


def test_reference_blocks_are_detected_without_a_provider_name() -> None:
    content = [
        {"type": "text", "text": "Zürich liegt am See."},
        {"type": "text", "text": "", "reference": {"reference_ids": [3]}},
    ]
    answer = extract_content(content)
    assert answer.provider == "mistral"
    assert spans(answer) == [("Zürich liegt am See.", ["reference:3"])]


def test_capabilities_of_chat_mistralai() -> None:
    large = capabilities(model())
    assert (large.provider, large.grounding, large.streaming_citations) == ("mistral", True, True)
    # The documents' citations are Mistral's own; unicite's native path does not drive them.
    assert large.native_citations is False
    code = capabilities(ChatMistralAI(model="codestral-latest", api_key=API_KEY))  # type: ignore[arg-type]
    assert (code.grounding, code.streaming_citations) == (False, False)


@pytest.mark.vcr
def test_handler_names_the_referenced_documents() -> None:
    # The documents are in the request's tool result, keyed by their reference ids: the
    # handler sees the request and gives the reader's sources their URLs and titles.
    handler = CitationCallbackHandler()
    message = model().invoke(messages(), config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert answer.text == message.text
    assert spans(answer) == EXPECTED
    assert [(s.id, s.url, s.title, s.extras["reference_id"]) for s in answer.sources] == [
        ("reference:0", REFERENCES["0"]["url"], "Prix", 0),
        ("reference:1", REFERENCES["1"]["url"], "日本被団協", 1),
    ]
    # Read alone, the message names the documents by id only.
    assert [s.url for s in from_ai_message(message).sources] == [None, None]


def test_references_given_as_a_list_with_reference_ids() -> None:
    from langchain_core.language_models import GenericFakeChatModel

    reply = AIMessage(
        [
            {"type": "text", "text": "Die Brücke ist 2 460 m lang"},
            {"type": "text", "text": "", "reference": {"reference_ids": [7]}},
            {"type": "text", "text": ". 🌉"},
        ],
        response_metadata={"model_provider": "mistralai"},
    )
    documents = [
        {
            "reference_id": 7,
            "title": "Viaduc de Millau",
            "url": "https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
            "source": "wikipedia",
            "description": "Pont à haubans franchissant le Tarn.",
        },
        {"reference_id": 8, "title": "Pont de Normandie"},
    ]
    handler = CitationCallbackHandler()
    GenericFakeChatModel(messages=iter([reply])).invoke(
        [
            HumanMessage("Wie lang ist der Viaduc de Millau ?"),
            AIMessage("", tool_calls=[{"id": "a1", "name": "search", "args": {}}]),
            ToolMessage(json.dumps(documents, ensure_ascii=False), tool_call_id="a1"),
        ],
        config={"callbacks": [handler]},
    )
    answer = handler.answer
    assert answer is not None
    assert spans(answer) == [("Die Brücke ist 2 460 m lang", ["reference:7"])]
    (source,) = [s for s in answer.sources if s.id == "reference:7"]
    assert (source.url, source.title, source.snippet) == (
        "https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
        "Viaduc de Millau",
        "Pont à haubans franchissant le Tarn.",
    )
    assert source.extras == {"source": "wikipedia", "reference_id": 7}


@pytest.mark.vcr
@pytest.mark.default_cassette("test_chat_mistralai_stream_keeps_reference_chunks.yaml")
@OUTPUT_VERSIONS
def test_handler_names_the_referenced_documents_when_streaming(version: str | None) -> None:
    handler = CitationCallbackHandler()
    text = "".join(
        chunk.text for chunk in model(version).stream(messages(), config={"callbacks": [handler]})
    )
    answer = handler.answer
    assert answer is not None
    assert answer.text == text
    assert spans(answer) == EXPECTED
    assert [s.title for s in answer.sources] == ["Prix", "日本被団協"]
