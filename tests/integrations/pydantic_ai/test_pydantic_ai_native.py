"""Native citations of real pydantic-ai models replaying cassettes.

pydantic-ai keeps each text part's provider citation payload in ``provider_details``; the
adapter puts it back in the provider's shape and `unicite.cite` keeps the citations.
"""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("pydantic_ai.agent")
pytest.importorskip("vcr")

from integrations.pydantic_ai.scripted import run
from pydantic_ai import Agent
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.google import GoogleModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.providers.anthropic import AnthropicProvider
from pydantic_ai.providers.google import GoogleProvider
from pydantic_ai.providers.openai import OpenAIProvider

from unicite import CitedAnswer
from unicite_pydantic_ai import cite_result, with_citations

QUESTION = "Quelle est la hauteur du viaduc de Millau ?"
KEY = "mock-api-key"
WIKI = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"


def spans_hold(answer: CitedAnswer) -> None:
    assert answer.citations
    for citation in answer.citations:
        assert answer.text[citation.start : citation.end] == citation.text


@pytest.mark.vcr
def test_openai_responses_web_search() -> None:
    model = OpenAIResponsesModel("gpt-5.2", provider=OpenAIProvider(api_key=KEY))
    result = run(with_citations(Agent(model)), QUESTION)
    answer = result.citations
    assert answer.text == result.output
    assert answer.provider == "openai"
    spans_hold(answer)
    (citation,) = answer.citations
    assert citation.origin == "native"
    assert "343 mètres" in citation.text
    (source,) = answer.sources
    assert source.url is not None
    assert source.url.startswith(WIKI)
    assert source.title == "Viaduc de Millau — Wikipédia"


@pytest.mark.vcr
def test_openai_chat_search_model() -> None:
    model = OpenAIChatModel("gpt-4o-search-preview", provider=OpenAIProvider(api_key=KEY))
    result = run(Agent(model), QUESTION)
    answer = cite_result(result)
    assert answer.text == result.output
    spans_hold(answer)
    assert [s.title for s in answer.sources] == ["Viaduc de Millau — Wikipédia"]
    assert all(c.origin == "native" for c in answer.citations)


@pytest.mark.vcr
def test_anthropic_web_search() -> None:
    model = AnthropicModel("claude-opus-4-7", provider=AnthropicProvider(api_key=KEY))
    # A max_tokens this small is sent as one request, not streamed behind the scenes.
    result = run(Agent(model, model_settings={"max_tokens": 1024}), QUESTION)
    answer = cite_result(result)
    # A text block before the search: the output is the text after it, the response's text both.
    assert result.response.text.startswith("Je cherche la hauteur du viaduc 🔎.\n\nD’après ")
    assert result.output.startswith("D’après Wikipédia, ")
    assert answer.text == result.output
    assert answer.provider == "anthropic"
    spans_hold(answer)
    assert [c.text for c in answer.citations] == [
        "le viaduc de Millau culmine à 343 mètres",
        "明石海峡大橋は1998年に開通しました",
    ]
    assert [s.url for s in answer.sources] == [WIKI, "https://ja.wikipedia.org/wiki/明石海峡大橋"]
    assert answer.sources[1].title == "明石海峡大橋 - Wikipedia"


@pytest.mark.vcr
def test_gemini_grounding() -> None:
    model = GoogleModel("gemini-2.5-flash", provider=GoogleProvider(api_key=KEY))
    result = run(Agent(model), QUESTION)
    answer = cite_result(result)
    assert answer.text == result.output
    assert answer.provider == "gemini"
    spans_hold(answer)
    assert [c.text for c in answer.citations] == [
        "Le viaduc de Millau culmine à 343 mètres.",
        "Il a été inauguré le 14 décembre 2004.",
    ]
    assert [c.source_ids for c in answer.citations][1] == [s.id for s in answer.sources]
    assert [s.title for s in answer.sources] == ["wikipedia.org", "eiffage.com"]


@pytest.mark.vcr
def test_openai_responses_stream() -> None:
    model = OpenAIResponsesModel("gpt-5.2", provider=OpenAIProvider(api_key=KEY))
    agent = with_citations(Agent(model))

    async def go() -> tuple[list[str], CitedAnswer | None, str]:
        async with agent.run_stream(QUESTION) as stream:
            live = [d async for d in stream.stream_text(delta=True, debounce_by=None)]
            return live, stream.citations, await stream.get_output()

    live, answer, output = asyncio.run(go())
    assert answer is not None
    # The provider's text has no markers to settle: what streamed is the cited text.
    assert "".join(live) == answer.text == output
    spans_hold(answer)
    assert answer.provider == "openai"
    assert [s.title for s in answer.sources] == ["Viaduc de Millau — Wikipédia"]
