"""llama-index-llms-bedrock-converse (boto3 underneath) replaying a cassette: Nova web grounding.

``BedrockConverse`` keeps the whole Converse response in ``ChatResponse.raw`` when chatting,
and each stream event in its chunk's ``raw`` (only block starts, block deltas and the
metadata: no message start, block stop or message stop). Its message holds the ``text``
blocks only: a ``citationsContent`` block (its citations, and the text of Claude's cited
blocks) is in ``raw`` alone.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.bedrock_converse")
pytest.importorskip("boto3")
pytest.importorskip("vcr")

from llama_index.core.llms import ChatMessage
from llama_index.llms.bedrock_converse import BedrockConverse

from unicite import CitedAnswer, UrlLocation
from unicite.providers import capabilities
from unicite_llamaindex import CitationEventHandler, from_llamaindex_response

NOVA = "us.amazon.nova-2-lite-v1:0"
TOOLS = {"tools": [{"systemTool": {"name": "nova_grounding"}}]}
TODAY = "Aujourd’hui à Zürich : 21 °C et grand soleil ☀️."
TOMORROW = "Demain, des averses l’après-midi 🌧️."
METEO = "https://www.météosuisse.admin.ch/prévisions/zürich?jour=lundi"
TENKI = "https://天気.example.jp/チューリッヒ/週間"


def llm() -> BedrockConverse:
    """The LLM over a boto3 client whose placeholder keys sign what the cassette answers."""
    return BedrockConverse(
        model=NOVA,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="y",  # noqa: S106
        max_tokens=1024,
    )


def question() -> list[ChatMessage]:
    return [ChatMessage(role="user", content="Quel temps fait-il à Zürich aujourd’hui et demain ?")]


def check(answer: CitedAnswer) -> None:
    assert answer.provider == "bedrock"
    assert answer.text == TODAY + " " + TOMORROW
    tomorrow = len(TODAY) + 1
    assert [(c.start, c.end, c.location) for c in answer.citations] == [
        (0, len(TODAY), UrlLocation(url=METEO)),
        (tomorrow, tomorrow + len(TOMORROW), UrlLocation(url=TENKI)),
        (tomorrow, tomorrow + len(TOMORROW), UrlLocation(url=METEO)),
    ]
    assert [s.url for s in answer.sources] == [METEO, TENKI]
    assert answer.extras["search_queries"] == ["météo Zürich aujourd’hui demain"]


@pytest.mark.vcr
def test_nova_web_grounding_chat_and_stream() -> None:
    model = llm()
    answers: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=answers.append):
        response = model.chat(question(), tools=TOOLS)
        chunks = list(model.stream_chat(question(), tools=TOOLS))
    chat, streamed = answers
    check(chat)
    assert chat.diagnostics == []
    # The chat response read directly (its raw response) agrees with the handler.
    assert from_llamaindex_response(response) == chat
    # LlamaIndex joins the message's text blocks with a newline; the answer is the real text.
    assert response.message.content == TODAY + "\n " + TOMORROW
    # Streamed: the chunks' raw events rebuild the same answer; LlamaIndex passes no
    # messageStop on, which the answer says.
    check(streamed)
    assert streamed.citations == chat.citations
    assert streamed.diagnostics == ["stream ended before messageStop"]
    # The last chunk alone holds only the metadata event: no citation.
    assert from_llamaindex_response(chunks[-1]).citations == []


def test_capabilities_of_bedrock_converse() -> None:
    found = capabilities(llm())
    assert (found.provider, found.model) == ("bedrock", NOVA)
    assert (found.native_citations, found.grounding, found.streaming_citations) == (
        False,
        True,
        True,
    )
