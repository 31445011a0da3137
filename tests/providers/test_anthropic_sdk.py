"""The real anthropic SDK (sync, async, raw streams, the `MessageStream` helper) on cassettes."""

from __future__ import annotations

import asyncio
import base64
import os
from typing import Any

import pytest

anthropic = pytest.importorskip("anthropic")

from providers._fixtures import cassette_bodies  # noqa: E402

from unicite import (  # noqa: E402
    BlockLocation,
    CharLocation,
    CitedAnswer,
    PageLocation,
    SearchResultLocation,
    UrlLocation,
)
from unicite.providers import (  # noqa: E402
    StreamCollector,
    acollect_stream,
    collect_stream,
    extract,
)

MODEL = "claude-sonnet-4-6"
KEY = os.getenv("ANTHROPIC_API_KEY", "mock-api-key")

# A travel notebook in French with Japanese sentences and emoji: char indices count code points.
NOTEBOOK = (
    "Le café « Chez Zoé » ouvre à 7 h 30 et ferme à 19 h. "
    "Sa spécialité est la tarte Tatin aux pommes caramélisées 🍎. "
    "京都の喫茶店「月と珈琲」は午前8時に開店します。"
    "抹茶ラテが一番人気です。"
    "Le dimanche, le café est fermé. 😴\n"
)
NOTEBOOK_REQUEST: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 1024,
    "messages": [
        {
            "role": "user",
            "content": [
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": NOTEBOOK},
                    "title": "carnet-de-voyage.txt",
                    "citations": {"enabled": True},
                },
                {"type": "text", "text": "Quand ouvre le café Chez Zoé, et que boire à Kyoto ?"},
            ],
        }
    ],
}

PDF = base64.b64encode(
    b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"
).decode()

WARRANTY = [
    "Garantie : 2 ans pièces et main-d'œuvre.",
    "Extension possible à 5 ans pour 49 €.",
    "Retours acceptés sous 30 jours, emballage d'origine requis.",
    "Service client : du lundi au vendredi, 9 h – 18 h.",
]

GARDEN_RESULTS = [
    (
        "https://jardin-facile.example.org/compost/demarrer",
        "Démarrer un compost",
        [
            "Alternez déchets verts (azotés) et bruns (carbonés) à parts égales.",
            "Retournez le tas toutes les 3 à 4 semaines.",
        ],
    ),
    (
        "kb://potager/arrosage-été",
        "Arrosage en été ☀️",
        ["Arrosez le soir, au pied des plants, jamais sur les feuilles."],
    ),
]
GARDEN_REQUEST: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 1024,
    "messages": [
        {
            "role": "user",
            "content": [
                *(
                    {
                        "type": "search_result",
                        "source": source,
                        "title": title,
                        "content": [{"type": "text", "text": text} for text in blocks],
                        "citations": {"enabled": True},
                    }
                    for source, title, blocks in GARDEN_RESULTS
                ),
                {
                    "type": "text",
                    "text": "Comment démarrer mon compost, et quand arroser le potager ?",
                },
            ],
        }
    ],
}

SAKURA_REQUEST: dict[str, Any] = {
    "model": MODEL,
    "max_tokens": 4096,
    "thinking": {"type": "enabled", "budget_tokens": 2048},
    "tools": [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
    "messages": [
        {
            "role": "user",
            "content": "When did the cherry blossoms reach full bloom in Kyoto this year?",
        }
    ],
}
SAKURA_URLS = [
    "https://www.kyoto-sakura-watch.jp/2025/forecast",
    "https://sakura-data.example.jp/observations?city=kyoto",
    "https://kansai-now.example.com/news/2025/04/maruyama-park-full-bloom",
]


KYOTO = (
    "À Kyoto, le salon « 月と珈琲 » ouvre à 8 h ; son latte au matcha (抹茶ラテ) est le plus "
    "demandé"
)
BLOOM = (
    "Kyoto's cherry trees reached full bloom (満開) on April 1, 2025, four days earlier than the "
    "30-year average"
)


def _spans(answer: CitedAnswer) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in answer.citations]


def _without_id(answer: CitedAnswer) -> CitedAnswer:
    extras = {k: v for k, v in answer.extras.items() if k != "message_id"}
    return answer.model_copy(update={"extras": extras})


def _cassette_answer(name: str) -> CitedAnswer:
    """The answer of another test's non-streaming cassette, read as the SDK's `Message`."""
    body = cassette_bodies(f"providers/test_anthropic_sdk/{name}.yaml")[0]
    return extract(anthropic.types.Message.model_validate(body))


@pytest.mark.vcr
def test_plain_text_document_char_location() -> None:
    with anthropic.Anthropic(api_key=KEY) as client:
        message = client.messages.create(**NOTEBOOK_REQUEST)
    answer = extract(message)
    assert answer.provider == "anthropic"
    assert answer.model == MODEL
    assert answer.diagnostics == []
    assert answer.text == "".join(block.text for block in message.content if block.type == "text")
    assert _spans(answer) == [
        (36, 87, "Le café « Chez Zoé » ouvre à 7 h 30 et ferme à 19 h"),
        (110, 150, "la tarte Tatin aux pommes caramélisées 🍎"),
        (
            154,
            241,
            KYOTO,
        ),
        (
            154,
            241,
            KYOTO,
        ),
        # The block is " Le café est fermé le dimanche 😴 ": the span leaves its spaces out.
        (245, 276, "Le café est fermé le dimanche 😴"),
    ]
    assert [c.location for c in answer.citations] == [
        CharLocation(start=0, end=53, document_index=0),
        CharLocation(start=53, end=113, document_index=0),
        CharLocation(start=113, end=137, document_index=0),
        CharLocation(start=137, end=149, document_index=0),
        CharLocation(start=149, end=183, document_index=0),
    ]
    for citation in answer.citations:
        assert isinstance(citation.location, CharLocation)
        assert citation.quote == NOTEBOOK[citation.location.start : citation.location.end]
        # The SDK's nulls (file_id=None) are no extras.
        assert citation.extras == {}
        assert citation.raw["file_id"] is None
    [source] = answer.sources
    assert (source.id, source.kind, source.title) == (
        "document:0",
        "document",
        "carnet-de-voyage.txt",
    )
    assert answer.extras == {
        "message_id": message.id,
        "stop_reason": "end_turn",
        "grounded_effective": True,
        "tool_calls": 0,
    }


@pytest.mark.vcr
def test_pdf_document_page_location() -> None:
    with anthropic.Anthropic(api_key=KEY) as client:
        message = client.messages.create(
            model=MODEL,
            max_tokens=1024,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "document",
                            "source": {
                                "type": "base64",
                                "media_type": "application/pdf",
                                "data": PDF,
                            },
                            "title": "rapport-annuel-2024.pdf",
                            "citations": {"enabled": True},
                        },
                        {"type": "text", "text": "Résume les résultats 2024 en une phrase."},
                    ],
                }
            ],
        )
    answer = extract(message, strict=True)
    assert _spans(answer) == [
        (
            25,
            106,
            "le chiffre d'affaires a progressé de 12 % en 2024, porté par l'export vers l'Asie",
        ),
        (122, 190, "les émissions de CO₂ des trois sites de production ont baissé de 8 %"),
    ]
    assert [c.location for c in answer.citations] == [
        PageLocation(start_page=2, end_page=3, document_index=0),
        PageLocation(start_page=3, end_page=5, document_index=0),
    ]
    # Quotes are kept verbatim, PDF line breaks included.
    assert answer.citations[0].quote is not None
    assert answer.citations[0].quote.startswith("Chiffre d'affaires 2024 : +12 %\r\n")
    assert [s.title for s in answer.sources] == ["rapport-annuel-2024.pdf"]


@pytest.mark.vcr
def test_custom_content_document_block_location() -> None:
    with anthropic.Anthropic(api_key=KEY) as client:
        message = client.messages.create(
            model=MODEL,
            max_tokens=1024,
            messages=[
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "document",
                            "source": {
                                "type": "content",
                                "content": [{"type": "text", "text": text} for text in WARRANTY],
                            },
                            "title": "Conditions de garantie — Vélo électrique Ébène",
                            "context": "Extrait des conditions générales de vente, édition 2025.",
                            "citations": {"enabled": True},
                        },
                        {
                            "type": "text",
                            "text": "What does the warranty cover, and can I return the bike?",
                        },
                    ],
                }
            ],
        )
    answer = extract(message, strict=True)
    assert _spans(answer) == [
        (
            0,
            84,
            "Your e-bike is covered for 2 years (parts and labour), extendable to 5 years for €49",
        ),
        (86, 148, "Returns are accepted within 30 days, in the original packaging"),
    ]
    assert [c.location for c in answer.citations] == [
        BlockLocation(start_block=0, end_block=2, document_index=0),
        BlockLocation(start_block=2, end_block=3, document_index=0),
    ]
    assert [c.quote for c in answer.citations] == [WARRANTY[0] + WARRANTY[1], WARRANTY[2]]


@pytest.mark.vcr
def test_search_result_blocks_search_result_location() -> None:
    with anthropic.Anthropic(api_key=KEY) as client:
        message = client.messages.create(**GARDEN_REQUEST)
    answer = extract(message, strict=True)
    _check_garden(answer)


def _check_garden(answer: CitedAnswer) -> None:
    assert answer.text == (
        "Alternez à parts égales déchets verts et déchets bruns, puis retournez le tas toutes "
        "les 3 à 4 semaines. Pour l'arrosage, arrosez le soir au pied des plants, jamais sur les "
        "feuilles 🌱."
    )
    assert _spans(answer) == [
        (0, 54, "Alternez à parts égales déchets verts et déchets bruns"),
        (61, 103, "retournez le tas toutes les 3 à 4 semaines"),
        (122, 181, "arrosez le soir au pied des plants, jamais sur les feuilles"),
    ]
    assert [c.location for c in answer.citations] == [
        SearchResultLocation(search_result_index=0, start_block=0, end_block=1),
        SearchResultLocation(search_result_index=0, start_block=1, end_block=2),
        SearchResultLocation(search_result_index=1, start_block=0, end_block=1),
    ]
    compost, watering = answer.sources
    assert (compost.id, compost.kind, compost.url, compost.domain) == (
        "search_result:0",
        "search_result",
        "https://jardin-facile.example.org/compost/demarrer",
        "example.org",
    )
    # A source that is not a web address is no URL: it is kept in extras.
    assert (watering.url, watering.title, watering.extras) == (
        None,
        "Arrosage en été ☀️",
        {"source": "kb://potager/arrosage-été"},
    )
    assert [c.source_ids for c in answer.citations] == [
        ["search_result:0"],
        ["search_result:0"],
        ["search_result:1"],
    ]


@pytest.mark.vcr
def test_web_search_server_tool() -> None:
    with anthropic.Anthropic(api_key=KEY) as client:
        message = client.messages.create(**SAKURA_REQUEST)
    answer = extract(message, strict=True, require="citations")
    assert [block.type for block in message.content][:3] == [
        "thinking",
        "server_tool_use",
        "web_search_tool_result",
    ]
    _check_sakura(answer)
    assert answer.extras["message_id"] == message.id


def _check_sakura(answer: CitedAnswer) -> None:
    assert answer.text.startswith(
        "Here's what I found about this year's bloom in Kyoto:\n\nKyoto's"
    )
    assert _spans(answer) == [
        (55, 160, BLOOM),
        (55, 160, BLOOM),
        (
            162,
            242,
            "The famous weeping cherry in Maruyama Park (円山公園) was in full bloom by April 2 🌸",
        ),
    ]
    assert [s.url for s in answer.sources] == SAKURA_URLS
    assert [s.rank for s in answer.sources] == [0, 2, 1]
    assert all(s.kind == "web" and s.extras["encrypted_content"] for s in answer.sources)
    assert answer.sources[0].extras["page_age"] == "March 28, 2025"
    assert "page_age" not in answer.sources[1].extras
    assert [c.location for c in answer.citations] == [UrlLocation(url=url) for url in SAKURA_URLS]
    first = answer.citations[0]
    # Web search quotes arrive HTML-escaped: unescaped once; the cut at ~150 characters stays.
    assert first.quote is not None
    assert "Kyoto's official full-bloom date" in first.quote
    assert first.raw["cited_text"].startswith(first.quote.split("Kyoto")[0])
    assert "Kyoto&#x27;s" in first.raw["cited_text"]
    assert first.quote.endswith("weather permit...")
    assert first.extras["encrypted_index"]
    assert answer.extras["search_queries"] == ["Kyoto cherry blossom full bloom date 2025"]


@pytest.mark.vcr
def test_stream_raw_events() -> None:
    with anthropic.Anthropic(api_key=KEY) as client:
        stream = client.messages.create(**NOTEBOOK_REQUEST, stream=True)
        collector = StreamCollector()
        announced = []
        for event in stream:
            got = collector.feed(event)
            if got:
                # Anthropic citations become final when their text block closes.
                assert event.type == "content_block_stop"
            announced.extend(item.citation for item in got)
    answer = collector.result()
    assert answer.diagnostics == []
    assert announced == answer.citations
    assert _without_id(answer) == _without_id(
        _cassette_answer("test_plain_text_document_char_location")
    )


@pytest.mark.vcr
def test_messages_stream_helper() -> None:
    with (
        anthropic.Anthropic(api_key=KEY) as client,
        client.messages.stream(**SAKURA_REQUEST) as stream,
    ):
        events = list(stream)
        final = stream.get_final_message()
    # The helper adds its own "text" / "citation" / "thinking" / "input_json" events.
    assert {"text", "citation", "thinking", "input_json"} <= {event.type for event in events}
    answer = collect_stream(events)
    assert answer == extract(final)
    assert answer.diagnostics == []
    _check_sakura(answer)
    assert _without_id(answer) == _without_id(_cassette_answer("test_web_search_server_tool"))


@pytest.mark.vcr
def test_async_client() -> None:
    async def run() -> tuple[CitedAnswer, CitedAnswer]:
        async with anthropic.AsyncAnthropic(api_key=KEY) as client:
            message = await client.messages.create(**GARDEN_REQUEST)
            stream = await client.messages.create(**GARDEN_REQUEST, stream=True)
            return extract(message), await acollect_stream(stream)

    final, streamed = asyncio.run(run())
    _check_garden(final)
    _check_garden(streamed)
    assert streamed.diagnostics == []
    assert _without_id(streamed) == _without_id(final)
    assert streamed.extras["message_id"] != final.extras["message_id"]
