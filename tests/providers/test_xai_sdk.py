"""xAI through the real OpenAI SDK (``base_url="https://api.x.ai/v1"``), replayed from cassettes.

The cassettes are written from xAI's documented Agent Tools API (Responses, with ``web_search``,
``x_search`` and ``code_interpreter``) and its deprecated Live Search (Chat Completions with
``search_parameters``): what ``extract`` and ``collect_stream`` make of the SDK's objects.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from unicite import CitedAnswer  # noqa: E402
from unicite.providers import (  # noqa: E402
    StreamCollector,
    acollect_stream,
    capabilities,
    collect_stream,
    extract,
    llm_kind,
)

API_KEY = os.getenv("XAI_API_KEY", "mock-api-key")
BASE_URL = "https://api.x.ai/v1"


@pytest.fixture
def client() -> Iterator[Any]:
    with openai.OpenAI(api_key=API_KEY, base_url=BASE_URL) as sdk:
        yield sdk


def cited(answer: CitedAnswer) -> list[tuple[str, list[str]]]:
    return [(c.text, [answer.source(s).url or "" for s in c.source_ids]) for c in answer.citations]


@pytest.mark.vcr
def test_responses_agent_tools(client: Any) -> None:
    response = client.responses.create(
        model="grok-4-1-fast-reasoning",
        input="Quelle est la hauteur de la tour Eiffel, et que dit-on d’elle sur X ?",
        tools=[{"type": "web_search"}, {"type": "x_search"}],
    )
    answer = extract(response, strict=True)
    assert answer.provider == "xai"
    assert answer.model == "grok-4-1-fast-reasoning"
    assert answer.text == response.output_text
    wiki = "https://fr.wikipedia.org/wiki/Tour_Eiffel"
    assert cited(answer)[0] == (
        "La tour Eiffel mesure aujourd’hui 330 mètres, antenne comprise",
        [wiki],
    )
    assert [c.text for c in answer.citations][1:3] == [
        "Sur X, la Société d’exploitation a fêté ses 136 ans 🎉"
    ] * 2
    # The SDK keeps xAI's top-level `citations` (an extra field): the uncited page is a source.
    assert [s.url for s in answer.sources] == response.model_extra["citations"]
    assert answer.extras["tool_calls"] == 2
    assert answer.extras["x_search_queries"] == ["tour Eiffel 136 ans"]


@pytest.mark.vcr
def test_responses_agent_tools_stream(client: Any) -> None:
    stream = client.responses.create(
        model="grok-4-1-fast-reasoning",
        input="¿Cuánto medirá la torre de Jesucristo de la Sagrada Família?",
        tools=[{"type": "web_search"}, {"type": "x_search"}, {"type": "code_interpreter"}],
        stream=True,
    )
    events = list(stream)
    collector = StreamCollector(strict=True)
    announced = [item.citation for event in events for item in collector.feed(event)]
    answer = collector.result()
    final = events[-1].response
    assert answer == extract(final, strict=True)
    assert announced == answer.citations
    assert answer.provider == "xai"
    sagrada = "https://es.wikipedia.org/wiki/Templo_Expiatorio_de_la_Sagrada_Familia"
    assert cited(answer) == [
        (
            "La torre de Jesucristo de la Sagrada Família alcanzará 172,5 metros y convertirá al "
            "templo en la iglesia más alta del mundo",
            [sagrada],
        ),
        (
            "En febrero de 2025 se colocó la última pieza del brazo de la cruz, según anunció la "
            "basílica",
            ["https://x.com/sagradafamilia/status/1862345678901234567"],
        ),
        ("Gaudí quiso que no superara a Montjuïc ⛪", [sagrada]),
    ]
    # The code interpreter call is a tool call, not a search.
    assert answer.extras["tool_calls"] == 2


@pytest.mark.vcr
def test_chat_live_search(client: Any) -> None:
    completion = client.chat.completions.create(
        model="grok-3",
        messages=[{"role": "user", "content": "清水寺について教えてください。"}],
        extra_body={
            "search_parameters": {
                "mode": "auto",
                "return_citations": True,
                "sources": [{"type": "web"}, {"type": "x"}],
            }
        },
    )
    answer = extract(completion, strict=True)
    assert answer.provider == "xai"
    assert answer.text == completion.choices[0].message.content
    assert cited(answer) == [
        (
            "京都の清水寺は778年に創建されたと伝えられています",
            ["https://ja.wikipedia.org/wiki/清水寺"],
        ),
        (
            "本堂の「清水の舞台」は2020年に檜皮葺の屋根の葺き替えを終えました",
            [
                "https://www.kiyomizudera.or.jp/news/",
                "https://x.com/i/status/1265432109876543210",
            ],
        ),
    ]
    assert [s.url for s in answer.sources] == completion.model_extra["citations"]


@pytest.mark.vcr
def test_chat_live_search_stream(client: Any) -> None:
    chunks = list(
        client.chat.completions.create(
            model="grok-3",
            messages=[{"role": "user", "content": "Wie hoch ist der Kölner Dom?"}],
            stream=True,
            extra_body={"search_parameters": {"mode": "on", "return_citations": True}},
        )
    )
    answer = collect_stream(chunks, strict=True)
    assert answer.provider == "xai"
    assert [c.text for c in answer.citations] == [
        "Der Kölner Dom ist 157 Meter hoch und war von 1880 bis 1884 das höchste Gebäude der Welt",
        "Seit 1996 gehört er zum UNESCO-Welterbe",
        "Am Dreikönigsfest strömen Tausende Pilger zum Schrein 👑",
    ]
    # The last chunk's `citations`: four pages, the last one cited by no link.
    assert [s.url for s in answer.sources] == chunks[-1].model_extra["citations"]
    assert answer.sources[2].extras == {"x_post_id": "1876543210987654321"}


@pytest.mark.vcr("test_chat_live_search_stream.yaml")
def test_chat_live_search_async_stream() -> None:
    async def run() -> CitedAnswer:
        async with openai.AsyncOpenAI(api_key=API_KEY, base_url=BASE_URL) as sdk:
            stream = await sdk.chat.completions.create(
                model="grok-3",
                messages=[{"role": "user", "content": "Wie hoch ist der Kölner Dom?"}],
                stream=True,
                extra_body={"search_parameters": {"mode": "on", "return_citations": True}},
            )
            return await acollect_stream(stream, strict=True)

    answer = asyncio.run(run())
    assert answer.provider == "xai"
    assert len(answer.citations) == 3


def test_capabilities_of_an_openai_client_pointed_at_xai(client: Any) -> None:
    assert llm_kind(client).vendor == "xai"
    grok4 = capabilities(client, model="grok-4-1-fast-reasoning")
    assert (grok4.provider, grok4.native_citations, grok4.grounding) == ("xai", False, True)
    assert capabilities(client, model="grok-3").grounding is False
