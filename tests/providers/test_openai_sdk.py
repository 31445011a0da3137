"""The real OpenAI SDK replayed from cassettes: what `extract` and `collect_stream` make of it."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator
from typing import Any

import pytest

openai = pytest.importorskip("openai")

import pydantic  # noqa: E402
from openai.types.responses import Response  # noqa: E402

from unicite import CitedAnswer, GroundingRequiredError  # noqa: E402
from unicite.providers import (  # noqa: E402
    StreamCollector,
    acollect_stream,
    collect_stream,
    extract,
)

API_KEY = os.getenv("OPENAI_API_KEY", "mock-api-key")


@pytest.fixture
def client() -> Iterator[Any]:
    with openai.OpenAI(api_key=API_KEY) as sdk:
        yield sdk


def spans(answer: CitedAnswer) -> list[tuple[int, int, str, tuple[int, int] | None]]:
    return [(c.start, c.end, c.text, c.marker_span) for c in answer.citations]


def stream_with_events(events: Any) -> tuple[CitedAnswer, list[tuple[str, Any]]]:
    """Feed SDK events one by one; keep which event announced which citation."""
    collector = StreamCollector(strict=True)
    announced = []
    for event in events:
        for item in collector.feed(event):
            announced.append((getattr(event, "type", None) or event.object, item))
    return collector.result(), announced


# --- Responses API: web search ---------------------------------------------------------------

EIFFEL = "Quelle est la hauteur de la tour Eiffel aujourd’hui ?"


@pytest.mark.vcr
def test_responses_web_search(client: Any) -> None:
    response = client.responses.create(
        model="gpt-5.2",
        tools=[{"type": "web_search"}],
        input=EIFFEL,
        include=["web_search_call.action.sources"],
    )
    answer = extract(response, strict=True)

    assert answer.provider == "openai"
    assert answer.model == "gpt-5.2-2025-12-11"
    assert answer.text == response.output_text
    assert spans(answer) == [
        (
            0,
            178,
            "🗼 La tour Eiffel mesure aujourd’hui **330 mètres**, antennes comprises : une "
            "nouvelle antenne de radiodiffusion numérique, installée en mars 2022, l’a fait "
            "grandir de six mètres.",
            (179, 276),
        ),
        (277, 339, "Lors de son inauguration en 1889, elle culminait à 312 mètres.", (340, 421)),
        (
            423,
            537,
            "À noter : sa hauteur varie d’une quinzaine de centimètres selon la température, car "
            "le fer se dilate à la chaleur.",
            (538, 661),
        ),
    ]
    # OpenAI's indices are code points: they are the marker spans unchanged, even after the
    # emoji (two UTF-16 units) that opens the text.
    annotations = response.output[2].content[0].annotations
    assert [(a.start_index, a.end_index) for a in annotations] == [
        c.marker_span for c in answer.citations
    ]
    assert answer.text[179:276].startswith("([toureiffel.paris](")
    assert answer.utf16_span(answer.citations[1]) == (278, 340)

    # Search listed three pages; the answer cites two of them (with ?utm_source=openai: one
    # source each) and a third page search did not list, whose URL stays as given.
    assert [(s.url, s.title, s.domain, s.rank) for s in answer.sources] == [
        (
            "https://www.toureiffel.paris/fr/le-monument/chiffres-cles",
            "La tour Eiffel en chiffres – Site officiel",
            "toureiffel.paris",
            0,
        ),
        (
            "https://fr.wikipedia.org/wiki/Tour_Eiffel",
            "Tour Eiffel — Wikipédia",
            "wikipedia.org",
            1,
        ),
        (
            "https://www.sciencesetavenir.fr/fondamental/la-tour-eiffel-grandit-en-ete_171204"
            "?utm_source=openai",
            "Pourquoi la tour Eiffel grandit-elle en été ? - Sciences et Avenir",
            "sciencesetavenir.fr",
            None,
        ),
        (
            "https://www.lefigaro.fr/culture/la-tour-eiffel-gagne-six-metres-20220315",
            None,
            "lefigaro.fr",
            2,
        ),
    ]
    assert [c.source_ids for c in answer.citations] == [[s.id] for s in answer.sources[:3]]
    assert answer.cited_sources() == answer.sources[:3]
    assert {c.location.kind for c in answer.citations if c.location} == {"url"}
    assert answer.extras == {
        "response_id": "resp_0c2f4e7a91b3d5f80069a1c3e25f7c8190a4b6d2e8f1a3c5b7",
        "status": "completed",
        "web_search_queries": [
            "hauteur tour Eiffel aujourd'hui",
            "tour Eiffel nouvelle antenne mars 2022 hauteur",
        ],
        "grounded_effective": True,
        "tool_calls": 1,
    }


ZUGSPITZE: dict[str, Any] = {
    "model": "gpt-5.2",
    "tools": [{"type": "web_search"}],
    "input": "Wie hoch ist die Zugspitze und wo liegt sie?",
}


@pytest.mark.vcr
def test_responses_web_search_stream(client: Any) -> None:
    final = client.responses.create(**ZUGSPITZE)
    expected = extract(final, strict=True)
    assert spans(expected) == [
        (
            0,
            85,
            "Die Zugspitze ist mit **2.962 m** über Normalhöhennull der höchste Berg Deutschlands.",
            (86, 165),
        ),
        (
            166,
            278,
            "Über ihren Gipfel verläuft die Grenze zwischen Bayern und Tirol (Österreich); sie "
            "gehört zum Wettersteingebirge.",
            (279, 370),
        ),
        (
            371,
            438,
            "Die Gletscher am Zugspitzplatt schrumpfen seit Jahrzehnten spürbar.",
            (439, 547),
        ),
    ]
    assert expected.extras["web_search_queries"] == [
        "Zugspitze Höhe",
        "Zugspitze Grenze Österreich Wettersteingebirge",
        "Zugspitze Gletscher Rückgang",
    ]

    streamed, announced = stream_with_events(client.responses.create(**ZUGSPITZE, stream=True))
    assert streamed == expected
    # Each citation is announced once, as its annotation arrives, with its final offsets.
    assert [kind for kind, _ in announced] == ["response.output_text.annotation.added"] * 3
    assert [item.citation for _, item in announced] == expected.citations
    assert [[s.url for s in item.sources] for _, item in announced] == [
        [s.url] for s in expected.sources
    ]

    # The SDK's ResponseStream helper adds snapshots to its events; nothing is counted twice.
    with client.responses.stream(**ZUGSPITZE) as helper:
        assert collect_stream(helper, strict=True) == expected


FUJI: dict[str, Any] = {
    "model": "gpt-5-mini",
    "tools": [{"type": "web_search"}],
    "input": "富士山の高さは？いつ世界遺産になった？",  # noqa: RUF001 - Japanese punctuation
    "include": ["web_search_call.action.sources"],
    "reasoning": {"effort": "low"},
}


@pytest.mark.vcr
def test_responses_web_search_async() -> None:
    async def run() -> tuple[Any, CitedAnswer, CitedAnswer]:
        async with openai.AsyncOpenAI(api_key=API_KEY) as sdk:
            final = await sdk.responses.create(**FUJI)
            stream = await sdk.responses.create(**FUJI, stream=True)
            return final, extract(final, strict=True), await acollect_stream(stream, strict=True)

    final, answer, streamed = asyncio.run(run())
    assert streamed == answer
    assert answer.text == final.output_text
    assert spans(answer) == [
        (0, 33, "富士山の標高は**3,776メートル**で、日本で最も高い山です。", (33, 130)),
        (
            131,
            173,
            "2013年には「富士山－信仰の対象と芸術の源泉」として世界文化遺産に登録されました。",  # noqa: RUF001
            (173, 287),
        ),
    ]
    # Kana and kanji are 3 bytes in UTF-8: str offsets are not byte offsets.
    assert answer.byte_span(answer.citations[1]) == (179, 297)
    assert [s.title for s in answer.sources] == [
        "富士山 - Wikipedia",
        "富士山－信仰の対象と芸術の源泉 | 文化庁",  # noqa: RUF001
    ]


@pytest.mark.vcr
def test_responses_web_search_without_annotations(
    client: Any, caplog: pytest.LogCaptureFixture
) -> None:
    args: dict[str, Any] = {
        "model": "gpt-5",
        "instructions": "Tu es un assistant serviable.",
        "input": "Quel temps fait-il à Montréal aujourd’hui ?",
        "tools": [{"type": "web_search"}],
        "include": ["web_search_call.action.sources"],
    }
    response = client.responses.create(**args)
    with caplog.at_level(logging.WARNING, logger="unicite"):
        answer = extract(response, strict=True)
    assert answer.text == response.output_text
    assert answer.citations == []
    # The search was answered by an internal weather API: a source with no URL.
    [source] = answer.sources
    assert (source.kind, source.title, source.url, source.rank) == ("tool", "oai-weather", None, 0)
    assert answer.extras["web_search_queries"] == ["weather: Montréal, Québec, Canada"]
    # Said once per process (tests/core/test_uncited_warning.py): an earlier test may have.
    assert [r.getMessage() for r in caplog.records] in (
        [],
        ["openai: tools or search ran but no citation could be extracted"],
    )

    with pytest.raises(GroundingRequiredError) as caught:
        extract(response, require="citations")
    assert (caught.value.reason, caught.value.provider) == ("no citations", "openai")


# --- Responses API: files ---------------------------------------------------------------------


@pytest.mark.vcr
def test_responses_file_search(client: Any) -> None:
    response = client.responses.create(
        model="gpt-4.1",
        instructions="Responde en español y cita tus fuentes.",
        input="¿Cuál es el plazo de devolución y quién paga el envío?",
        tools=[
            {"type": "file_search", "vector_store_ids": ["vs_68c1f0a2b7d48191b0e5c1d2a3f4e5d6"]}
        ],
        include=["file_search_call.results"],
    )
    answer = extract(response, strict=True)
    assert answer.text == response.output_text
    # file_citation has one `index`, at the sentence's final "."; the claim is that sentence.
    assert [(c.start, c.end, c.text, c.extras) for c in answer.citations] == [
        (
            0,
            88,
            "Tienes **30 días naturales** desde la recepción del pedido para solicitar la "
            "devolución.",
            {"index": 87},
        ),
        (
            89,
            183,
            "Los gastos de envío de la devolución corren a tu cargo, salvo si el artículo llegó "
            "defectuoso.",
            {"index": 182},
        ),
        (206, 258, "Se devuelven en las mismas condiciones que el resto.", {"index": 257}),
    ]
    assert [(c.marker_span, c.location) for c in answer.citations] == [(None, None)] * 3

    policy, faq = answer.sources
    assert [c.source_ids for c in answer.citations] == [[policy.id], [policy.id], [faq.id]]
    assert (policy.id, policy.kind, policy.title, policy.rank) == (
        "file-7Ux3mQw2Jk9Lr1NbVt5Ce8",
        "file",
        "política_de_devoluciones.pdf",
        0,
    )
    # Two chunks of the same file: one source holding both.
    assert (policy.snippet or "").startswith("Dispone de 30 días naturales")
    assert (policy.content or "").endswith("o envíos erróneos.")
    assert (policy.content or "").count("\n\n") == 1
    assert [chunk["score"] for chunk in policy.extras["chunks"]] == [0.9132, 0.8421]
    assert policy.extras["vector_store_id"] == "vs_68c1f0a2b7d48191b0e5c1d2a3f4e5d6"
    assert faq.extras["attributes"] == {"idioma": "es", "version": 3}
    assert faq.extras["score"] == 0.6017
    assert answer.extras["file_search_queries"] == [
        "plazo de devolución",
        "gastos de envío de la devolución",
        "devolver artículos rebajados",
    ]


@pytest.mark.vcr
def test_responses_code_interpreter(client: Any) -> None:
    response = client.responses.create(
        model="gpt-5",
        tools=[{"type": "code_interpreter", "container": {"type": "auto"}}],
        input="Create a CSV with the squares of 1 to 10 and a bar chart of them.",
    )
    answer = extract(response, strict=True)
    assert answer.text == response.output_text
    chart, csv = answer.citations
    # A zero-width container_file_citation: the claim is the sentence it closes.
    assert (chart.start, chart.end, chart.text) == (
        83,
        122,
        "I also saved a bar chart of the values.",
    )
    # One covering the link target (not a citation marker): the span itself is the claim.
    assert (csv.start, csv.end, csv.text) == (147, 176, "sandbox:/mnt/data/squares.csv")
    assert (chart.marker_span, csv.marker_span) == (None, None)
    assert [(s.id, s.kind, s.title, s.extras) for s in answer.sources] == [
        (
            "cfile_69a1f9d4b6c88190b2d4f6a8c0e2b4d6",
            "file",
            "squares_chart.png",
            {"container_id": "cntr_69a1f9c2d0e48190a3b5c7d9e1f3a5b70c2e4f6a8b0d2f4a"},
        ),
        (
            "cfile_69a1f9d3a1f48190a5c7e9b1d3f5a7c9",
            "file",
            "squares.csv",
            {"container_id": "cntr_69a1f9c2d0e48190a3b5c7d9e1f3a5b70c2e4f6a8b0d2f4a"},
        ),
    ]
    assert chart.raw["start_index"] == chart.raw["end_index"] == 122


# --- Responses API: several messages and parts --------------------------------------------------

ORSAY: dict[str, Any] = {
    "model": "gpt-5.2",
    "tools": [{"type": "web_search"}],
    "input": "Horaires du musée d’Orsay ?",
    "reasoning": {"effort": "low"},
}


@pytest.mark.vcr
def test_responses_multi_message_stream(client: Any) -> None:
    response = client.responses.create(**ORSAY)
    answer = extract(response, strict=True)
    # A commentary message, then the answer in two text parts (the first has no annotations
    # in the commentary): joined as the SDK's output_text joins them.
    parts = [
        part.text for item in response.output if item.type == "message" for part in item.content
    ]
    assert len(parts) == 3
    assert answer.text == response.output_text == "".join(parts)
    assert len(parts[0]) == 57
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (57, 124, "Le musée d’Orsay est ouvert du mardi au dimanche, de 9 h 30 à 18 h."),
        (
            228,
            310,
            "Le jeudi, nocturne jusqu’à 21 h 45 ; fermé le lundi, le 1er mai et le 25 décembre.",
        ),
    ]
    # Offsets are per text part: the second part's annotation indexes its own text.
    second = response.output[3].content[1].annotations[0]
    assert answer.citations[1].marker_span == (
        len(parts[0]) + len(parts[1]) + second.start_index,
        len(parts[0]) + len(parts[1]) + second.end_index,
    )
    [source] = answer.sources
    assert answer.citations[0].source_ids == answer.citations[1].source_ids == [source.id]

    streamed, announced = stream_with_events(client.responses.create(**ORSAY, stream=True))
    assert streamed == answer
    assert [item.citation for _, item in announced] == answer.citations


# --- Chat Completions ----------------------------------------------------------------------------

SAO_PAULO: dict[str, Any] = {
    "model": "gpt-4o-mini-search-preview",
    "web_search_options": {},
    "messages": [{"role": "user", "content": "Qual é a população de São Paulo?"}],
}


@pytest.mark.vcr
def test_chat_search_preview(client: Any) -> None:
    completion = client.chat.completions.create(**SAO_PAULO)
    answer = extract(completion, strict=True)
    assert answer.model == "gpt-4o-mini-search-preview-2025-03-11"
    assert answer.text == completion.choices[0].message.content
    assert spans(answer) == [
        (
            0,
            78,
            "Segundo o Censo 2022 do IBGE, a cidade de São Paulo tem 11.451.999 habitantes.",
            (79, 173),
        ),
        (174, 233, "A região metropolitana ultrapassa 20 milhões de pessoas 🏙️.", (234, 318)),
    ]
    nested = completion.choices[0].message.annotations[1].url_citation
    assert answer.citations[1].marker_span == (nested.start_index, nested.end_index)
    assert [(s.title, s.domain) for s in answer.sources] == [
        ("São Paulo (SP) | Cidades e Estados | IBGE", "ibge.gov.br"),
        ("São Paulo – Wikipédia, a enciclopédia livre", "wikipedia.org"),
    ]
    assert answer.extras == {
        "response_id": "chatcmpl-9f3c2a71-4b6d-4e8a-b1c5-7d2e9f0a3b64",
        "finish_reason": "stop",
        "grounded_effective": True,
    }

    # Streamed, the annotations come on a late chunk, after all the text.
    streamed, announced = stream_with_events(
        client.chat.completions.create(**SAO_PAULO, stream=True)
    )
    assert streamed == answer
    assert [item.citation for _, item in announced] == answer.citations

    # The SDK's ChatCompletionStream helper wraps each chunk in a `chunk` event and adds its own
    # content events: the chunks are read once.
    with client.chat.completions.stream(**SAO_PAULO) as helper:
        assert collect_stream(helper, strict=True) == answer


# --- Reading data, not SDK types ---------------------------------------------------------------


@pytest.mark.vcr
def test_responses_payload_the_sdk_types_reject(client: Any) -> None:
    response = client.responses.retrieve("resp_04b6d8f0a2c4e6b80069a20a1c3e5a8190e2a4c6b8d0f2a4c6")
    body = response.model_dump(mode="json", warnings=False)
    # An older usage shape and an `api` search source: the SDK's types reject them...
    with pytest.raises(pydantic.ValidationError):
        Response.model_validate(body)
    # ... while extract reads the data as it came.
    answer = extract(response, strict=True)
    assert answer == extract(body, strict=True)
    assert [c.text for c in answer.citations] == [
        "Lisbonne compte environ 545 000 habitants, et son agglomération près de 3 millions."
    ]
    assert [s.kind for s in answer.sources] == ["web", "tool"]
