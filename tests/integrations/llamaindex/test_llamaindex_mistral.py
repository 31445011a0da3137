"""llama-index-llms-mistralai's ``MistralAI`` over cassettes written from Mistral's format.

``MistralAI.chat`` keeps a shallow ``dict`` of the SDK's completion in ``ChatResponse.raw``,
its content chunks included, so an answer the integration returns reads as `unicite.extract`
reads the raw response. Where the integration loses the chunks, the tests pin what is left:

- ``chat`` with a model outside its reasoning list fails on a chunk list (it builds a
  ``TextBlock`` from the list): nothing reaches the adapter;
- ``stream_chat`` drops the reference chunks from the text, and keeps in ``raw`` the last chunk
  of a delta's list instead of the event: the handler's collector says so in a diagnostic and
  cites nothing.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.mistralai")

import os
from pathlib import Path
from typing import Any

import yaml
from llama_index.core.llms import ChatMessage
from llama_index.llms.mistralai import MistralAI
from pydantic import ValidationError

from unicite import CitedAnswer, extract
from unicite.providers import capabilities
from unicite_llamaindex import CitationEventHandler, from_llamaindex_response

KEY = os.getenv("MISTRAL_API_KEY", "mock-api-key")
CASSETTES = Path(__file__).resolve().parents[3] / "cassettes/integrations/llamaindex"
QUESTION = "Qui a reçu le prix Nobel de la paix 2024 ? 日本語でも一言お願いします。"
FR = (
    "Le prix Nobel de la paix 2024 a été décerné à Nihon Hidankyo, la confédération des "
    "survivants d'Hiroshima et de Nagasaki"
)
JA = "日本被団協は被爆者の全国組織です"


def raw(name: str) -> Any:
    path = CASSETTES / "test_llamaindex_mistral" / f"{name}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data["interactions"][0]["response"]["parsed_body"]


def ask() -> list[ChatMessage]:
    return [ChatMessage(role="user", content=QUESTION)]


def spans(answer: CitedAnswer) -> list[tuple[str, list[str]]]:
    return [(c.text, c.source_ids) for c in answer.citations]


@pytest.mark.vcr
def test_mistralai_chat_string_answer() -> None:
    response = MistralAI(model="mistral-large-latest", api_key=KEY).chat(ask())
    answer = from_llamaindex_response(response)
    assert answer.provider == "mistral"
    assert answer.text == response.message.content == FR + ". " + JA + "。🕊️"
    assert answer == extract(raw("test_mistralai_chat_string_answer"))
    assert answer.citations == []


@pytest.mark.vcr
def test_magistral_chat_keeps_reference_chunks_in_raw() -> None:
    response = MistralAI(model="magistral-medium-latest", api_key=KEY).chat(ask())
    answer = from_llamaindex_response(response)
    expected = extract(raw("test_magistral_chat_keeps_reference_chunks_in_raw"))
    assert answer == expected
    assert answer.provider == "mistral"
    assert answer.text == FR + ". " + JA + "。🕊️"
    assert spans(answer) == [(FR, ["reference:0"]), (JA, ["reference:0", "reference:1"])]
    assert answer.extras["thinking"].startswith("L'utilisateur demande")
    # The integration's own text joins the chunks with newlines; the answer is the API's text.
    assert response.message.content == FR + "\n. " + JA + "\n。🕊️"


@pytest.mark.vcr
def test_mistralai_chat_with_reference_chunks() -> None:
    # llama-index-llms-mistralai builds TextBlock(text=<the chunk list>) for such models.
    with pytest.raises(ValidationError, match="TextBlock"):
        MistralAI(model="mistral-large-latest", api_key=KEY).chat(ask())


@pytest.mark.vcr
def test_mistralai_stream_chat_drops_reference_chunks() -> None:
    answers: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=answers.append):
        chunks = list(MistralAI(model="mistral-large-latest", api_key=KEY).stream_chat(ask()))
    # The raws of deltas holding chunk lists are the chunks themselves, not the events.
    assert [type(c.raw).__name__ for c in chunks][2:4] == ["TextChunk", "ReferenceChunk"]
    (streamed,) = answers
    assert streamed.provider == "mistral"
    assert streamed.citations == []
    assert streamed.text == FR + ". " + JA + "。🕊️"
    assert len(streamed.diagnostics) == 1
    assert "bare content chunks" in streamed.diagnostics[0]
    # The last chunk alone: its raw is the final event, its text the integration's.
    last = from_llamaindex_response(chunks[-1])
    assert last.citations == []


def test_capabilities_of_mistralai() -> None:
    found = capabilities(MistralAI(model="mistral-small-latest", api_key=KEY))
    assert (found.provider, found.grounding) == ("mistral", True)
    assert found.native_citations is False
