"""xAI through LangChain's ``ChatOpenAI(base_url="https://api.x.ai/v1")``, replaying cassettes.

``langchain-xai`` is not installed here; ``ChatOpenAI`` pointed at xAI keeps the answer text
(with its ``[[n]](url)`` links) and, on the Responses API, the ``url_citation`` annotations and
the ``web_search_call`` block, so `from_ai_message` gives the citations `extract` gives on the
raw response. It drops xAI's top-level ``citations`` (the URLs no link cites are lost) and, on
the Responses API, the ``x_search_call`` item.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_openai")
pytest.importorskip("vcr")

from langchain_openai import ChatOpenAI
from providers._fixtures import cassette_bodies

from unicite import CitedAnswer, extract
from unicite_langchain import from_ai_message

API_KEY = os.getenv("XAI_API_KEY", "mock-api-key")
BASE_URL = "https://api.x.ai/v1"


def spans(answer: CitedAnswer) -> list[tuple[int, int, str, list[str]]]:
    return [
        (c.start, c.end, c.text, [answer.source(s).url or "" for s in c.source_ids])
        for c in answer.citations
    ]


def raw(cassette: str) -> Any:
    [body] = cassette_bodies(f"integrations/langchain/test_langchain_xai/{cassette}.yaml")
    return body


@pytest.mark.vcr
def test_chat_openai_live_search() -> None:
    llm = ChatOpenAI(api_key=API_KEY, base_url=BASE_URL, model="grok-3")
    message = llm.invoke("清水寺について教えてください。")
    answer = from_ai_message(message)
    direct = extract(raw("test_chat_openai_live_search"))
    assert answer.provider == "xai"
    assert answer.text == direct.text
    # The links survive, so do their citations.
    assert spans(answer) == spans(direct)
    assert len(answer.citations) == 2
    # The `citations` list did not: the page no link names is lost.
    assert [s.url for s in direct.sources][-1] == "https://www.japan-guide.com/e/e3901.html"
    assert [s.url for s in answer.sources] == [s.url for s in direct.sources][:3]


@pytest.mark.vcr
def test_chat_openai_live_search_stream() -> None:
    llm = ChatOpenAI(api_key=API_KEY, base_url=BASE_URL, model="grok-3")
    chunks = list(llm.stream("Wie hoch ist der Kölner Dom?"))
    message = chunks[0]
    for chunk in chunks[1:]:
        message = message + chunk
    answer = from_ai_message(message)
    assert answer.provider == "xai"
    assert [c.text for c in answer.citations] == [
        "Der Kölner Dom ist 157 Meter hoch und war von 1880 bis 1884 das höchste Gebäude der Welt",
        "Seit 1996 gehört er zum UNESCO-Welterbe",
        "Am Dreikönigsfest strömen Tausende Pilger zum Schrein 👑",
    ]
    assert "https://www.koelner-dom.de/besuchen" not in [s.url for s in answer.sources]


@pytest.mark.vcr
def test_chat_openai_responses_agent_tools() -> None:
    llm = ChatOpenAI(
        api_key=API_KEY,
        base_url=BASE_URL,
        model="grok-4-1-fast-reasoning",
        use_responses_api=True,
    )
    message = llm.invoke(
        "Quelle est la hauteur de la tour Eiffel, et que dit-on d’elle sur X ?",
        tools=[{"type": "web_search"}, {"type": "x_search"}],
    )
    answer = from_ai_message(message)
    direct = extract(raw("test_chat_openai_responses_agent_tools"))
    assert answer.provider == "xai"
    assert spans(answer) == spans(direct)
    # Dropped by LangChain: the x_search_call item and the uncited page of `citations`.
    assert (answer.extras["tool_calls"], direct.extras["tool_calls"]) == (1, 2)
    assert "x_search_queries" not in answer.extras
    assert len(answer.sources) == len(direct.sources) - 1
