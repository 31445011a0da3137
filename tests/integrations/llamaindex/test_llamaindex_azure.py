"""llama-index-llms-azure-openai with Azure OpenAI On Your Data, replaying a cassette.

``AzureOpenAI.chat`` keeps the SDK's completion in ``ChatResponse.raw``, its ``context``
included, so the answer is the one `unicite.extract` gives for the raw response. A stream keeps
each chunk's own ``raw``: the handler reads them all (the context is in the first), while the
last chunk alone holds the text without the documents its ``[docN]`` markers name.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.azure_openai")

import os
from pathlib import Path
from typing import Any

import yaml
from llama_index.core.llms import ChatMessage
from llama_index.llms.azure_openai import AzureOpenAI

from unicite import CitedAnswer, cite, extract
from unicite_llamaindex import CitationEventHandler, from_llamaindex_response

KEY = os.getenv("AZURE_OPENAI_API_KEY", "mock-api-key")
QUESTION = "Quelles sont les règles de télétravail et de mobilité chez Contoso ?"
CASSETTE = (
    Path(__file__).resolve().parents[3]
    / "cassettes/integrations/llamaindex/test_llamaindex_azure"
    / "test_azure_openai_on_your_data.yaml"
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
    data = yaml.safe_load(CASSETTE.read_text(encoding="utf-8"))
    return data["interactions"][0]["response"]["parsed_body"]


def llm() -> AzureOpenAI:
    return AzureOpenAI(
        engine="gpt-4o-rh",
        model="gpt-4o",
        azure_endpoint="https://contoso-rh.openai.azure.com",
        api_key=KEY,
        api_version="2024-10-21",
        additional_kwargs={"extra_body": DATA_SOURCES},
    )


def claims(answer: CitedAnswer) -> list[tuple[str, str, list[str | None]]]:
    out = []
    for c in answer.citations:
        assert c.marker_span is not None
        titles = [s.title for sid in c.source_ids if (s := answer.source(sid)) is not None]
        out.append((c.text, answer.text[c.marker_span[0] : c.marker_span[1]], titles))
    return out


@pytest.mark.vcr
def test_azure_openai_on_your_data() -> None:
    model = llm()
    answers: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=answers.append):
        response = model.chat([ChatMessage(role="user", content=QUESTION)])
        chunks = list(model.stream_chat([ChatMessage(role="user", content=QUESTION)]))
    chat, streamed = answers

    expected = extract(raw_completion())
    assert expected.provider == "azure"
    assert [c.text for c in expected.citations][-1] == (
        "Le télétravail depuis l’étranger n’est pas autorisé sans dérogation de la DRH"
    )
    direct = from_llamaindex_response(response)
    assert direct == expected
    assert claims(direct)[2] == (
        "Côté mobilité, l’entreprise rembourse 50 % de votre abonnement de transport 🚆, et "
        "l’indemnité vélo s’y ajoute",
        "[doc2][doc3]",
        ["Guide des avantages 2025", "Note mobilité douce"],
    )
    # The handler reads the chat response, and every streamed chunk, then cites through
    # `unicite.cite`, which renumbers: [doc5] is a chunk of [doc1]'s PDF, one source, so it is
    # written [doc1]; the other markers already count in first-cited order.
    renumbered = cite(expected)
    assert renumbered.text == expected.text.replace("l’autre[doc5].", "l’autre[doc1].")
    for answer in (chat, streamed):
        assert answer.text == renumbered.text
        assert claims(answer) == claims(renumbered)
        assert [c.text for c in answer.citations] == [c.text for c in expected.citations]
        assert answer.sources == expected.sources

    # The last chunk alone: the whole text, but the context came in the first chunk.
    last = from_llamaindex_response(chunks[-1])
    assert last.text == expected.text
    assert last.provider == "azure"
    assert last.citations == []
    assert len(last.diagnostics) == 1
    assert "no message.context" in last.diagnostics[0]
