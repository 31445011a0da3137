"""LangChain's ``AzureChatOpenAI`` with Azure OpenAI On Your Data, replaying a cassette.

langchain-openai builds the message from the completion's ``content`` and drops the message's
``context`` (the documents ``[docN]`` names), invoked and streamed alike. The adapter still
hands the message to the core's Azure reader, which leaves the markers uncited and says why;
where an integration keeps the context in ``additional_kwargs``, the answer is the one
`unicite.extract` gives for the raw response.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_openai")
pytest.importorskip("vcr")

import yaml
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import AzureChatOpenAI

from unicite import extract
from unicite.providers import capabilities
from unicite_langchain import CitationCallbackHandler, from_ai_message

API_KEY = os.getenv("AZURE_OPENAI_API_KEY", "mock-api-key")
QUESTION = "Quelles sont les règles de télétravail et de mobilité chez Contoso ?"
CASSETTE = (
    Path(__file__).resolve().parents[3]
    / "cassettes/integrations/langchain/test_langchain_azure"
    / "test_azure_chat_openai_drops_the_context.yaml"
)
DATA_SOURCES = {
    "data_sources": [
        {
            "type": "azure_search",
            "parameters": {
                "endpoint": "https://contoso-search.search.windows.net",
                "index_name": "politiques-rh",
                "authentication": {"type": "api_key", "key": "mock-search-key"},
                "include_contexts": ["citations", "intent"],
                "top_n_documents": 5,
                "strictness": 3,
                "in_scope": True,
            },
        }
    ]
}


def raw_completion() -> Any:
    """The completion the cassette's first interaction answers with."""
    data = yaml.safe_load(CASSETTE.read_text(encoding="utf-8"))
    return data["interactions"][0]["response"]["parsed_body"]


def model() -> AzureChatOpenAI:
    return AzureChatOpenAI(
        azure_deployment="gpt-4o-rh",
        azure_endpoint="https://contoso-rh.openai.azure.com",
        api_key=API_KEY,  # type: ignore[arg-type]
        api_version="2024-10-21",
        extra_body=DATA_SOURCES,
    )


@pytest.mark.vcr
def test_azure_chat_openai_drops_the_context() -> None:
    invoke_handler = CitationCallbackHandler()
    message = model().invoke([HumanMessage(QUESTION)], config={"callbacks": [invoke_handler]})
    stream_handler = CitationCallbackHandler()
    chunks = list(model().stream([HumanMessage(QUESTION)], config={"callbacks": [stream_handler]}))
    streamed = chunks[0]
    for chunk in chunks[1:]:
        streamed = streamed + chunk

    raw = raw_completion()
    text = raw["choices"][0]["message"]["content"]
    assert "[doc1]" in text
    for kept in (message, streamed):
        assert isinstance(kept, AIMessage)
        assert kept.text == text
        # What LangChain keeps of the completion: no context anywhere.
        assert "context" not in kept.additional_kwargs
        assert "context" not in kept.response_metadata
        answer = from_ai_message(kept)
        assert answer.provider == "azure"
        assert answer.text == text
        assert answer.citations == []
        assert len(answer.diagnostics) == 1
        assert "no message.context" in answer.diagnostics[0]
        assert "AzureChatOpenAI" in answer.diagnostics[0]
    for handler in (invoke_handler, stream_handler):
        assert handler.answer is not None
        assert handler.answer.citations == []
        assert any("no message.context" in d for d in handler.answer.diagnostics)
    # The raw response itself cites every marker.
    assert len(extract(raw).citations) == 4


def test_a_context_kept_in_additional_kwargs_is_read() -> None:
    raw = raw_completion()
    message = raw["choices"][0]["message"]
    kept = AIMessage(
        content=message["content"],
        additional_kwargs={"context": message["context"]},
        response_metadata={
            "model_provider": "openai",
            "model_name": raw["model"],
            "id": raw["id"],
            "finish_reason": "stop",
        },
    )
    answer = from_ai_message(kept, strict=True)
    expected = extract(raw)
    assert answer.provider == "azure"
    assert answer.citations == expected.citations
    assert answer.sources == expected.sources
    assert answer.citations[0].text.startswith("Chez Contoso, vous pouvez")


def test_plain_openai_messages_stay_openai() -> None:
    plain = AIMessage(
        content="Bonjour ! Le code `hits[doc1]` lit un dictionnaire.",
        response_metadata={"model_provider": "openai", "model_name": "gpt-4o"},
    )
    answer = from_ai_message(plain)
    assert answer.provider == "openai"
    assert answer.diagnostics == []


def test_capabilities_say_the_documents_are_dropped() -> None:
    notes = capabilities(model()).notes
    assert notes[0] == "through LangChain AzureChatOpenAI"
    assert any("On Your Data" in note and "drops the documents" in note for note in notes)
