"""The real google-genai SDK (sync, async, streams, Vertex AI express mode) on cassettes."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from typing import Any

import pytest

genai = pytest.importorskip("google.genai")

from google.genai import types  # noqa: E402

from unicite import CitationError, CitedAnswer, GroundingRequiredError, PageLocation  # noqa: E402
from unicite.providers import (  # noqa: E402
    StreamCollector,
    acollect_stream,
    collect_stream,
    extract,
)

MODEL = "gemini-2.5-flash"
SEARCH = types.GenerateContentConfig(tools=[types.Tool(google_search=types.GoogleSearch())])
REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
PT_PROMPT = "Qual é a densidade populacional de Lisboa? Usa os dados mais recentes e calcula-a."


@pytest.fixture(autouse=True)
def _httpx_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    # google-genai prefers httpx2 when it is installed, and vcrpy patches httpx and aiohttp only.
    monkeypatch.setenv("GOOGLE_GENAI_HTTP_CLIENT", "httpx")


def client() -> Any:
    return genai.Client(api_key=os.getenv("GEMINI_API_KEY", "mock-api-key"))


def spans(answer: CitedAnswer) -> list[tuple[int, int, str, list[int]]]:
    """Each citation as (start, end, text, footnote numbers of its sources)."""
    return [
        (c.start, c.end, c.text, [answer.footnote_number(sid) or 0 for sid in c.source_ids])
        for c in answer.citations
    ]


def supports(response: Any, candidate: int = 0) -> list[Any]:
    metadata = response.candidates[candidate].grounding_metadata
    return list(metadata.grounding_supports)


def assert_same_reading(response: Any) -> None:
    """The SDK object, its snake_case dump and its camelCase dump read the same."""
    answer = extract(response)
    assert extract(response.model_dump()) == answer
    assert extract(response.model_dump(mode="json", by_alias=True, exclude_none=True)) == answer


@pytest.mark.vcr
def test_generate_content_google_search() -> None:
    gemini = client()
    response = gemini.models.generate_content(
        model=MODEL,
        contents="Quels sont les ponts à haubans les plus célèbres de France, et quelle hauteur ?",
        config=SEARCH,
    )
    answer = extract(response, strict=True)

    assert answer.provider == "gemini"
    assert answer.model == MODEL
    assert answer.text == response.text
    assert spans(answer) == [
        (83, 146, "*   **Hauteur :** son pylône le plus haut culmine à 343 mètres.", [1, 2]),
        (147, 169, "*   **Inauguration :**", [2]),
        (170, 233, "le 14 décembre 2004, après un peu plus de trois ans de travaux.", [1, 2]),
        (
            289,
            362,
            "*   **Hauteur :** ses deux pylônes en forme de « A » mesurent 214 mètres.",
            [3, 4],
        ),
        (363, 385, "*   **Inauguration :**", [4]),
        (386, 405, "le 20 janvier 1995.", [4]),
        (460, 518, "460 mètres ; c'est l'un des ponts les plus hauts du monde.", [1, 2]),
    ]
    # The segment starts inside "2 460": the claim is widened to the word "460".
    assert answer.text[454:469] == "sur 2 460 mètre"

    first = answer.citations[0]
    assert first.confidence == 0.9341
    assert first.extras == {"confidence_scores": [0.9341, 0.8876]}
    assert first.raw["groundingChunkIndices"] == [0, 1]

    assert [(s.title, s.domain, s.redirect, s.kind) for s in answer.sources] == [
        ("wikipedia.org", "wikipedia.org", True, "web"),
        ("leviaducdemillau.com", "leviaducdemillau.com", True, "web"),
        ("normandie-tourisme.fr", "normandie-tourisme.fr", True, "web"),
        ("wikipedia.org", "wikipedia.org", True, "web"),
    ]
    assert all(s.url and s.url.startswith(REDIRECT) for s in answer.sources)
    assert [s.rank for s in answer.sources] == [0, 1, 2, 3]

    assert answer.extras["web_search_queries"] == [
        "viaduc de Millau hauteur inauguration",
        "pont de Normandie hauteur pylônes",
    ]
    assert "pont de Normandie hauteur pylônes</a>" in answer.extras["search_entry_point"]
    assert answer.extras["finish_reason"] == "STOP"
    assert answer.extras["usage_metadata"]["toolUsePromptTokenCount"] == 412
    assert_naive_reading_is_wrong(response, answer)
    assert_same_reading(response)


def assert_naive_reading_is_wrong(response: Any, answer: CitedAnswer) -> None:
    """Segment offsets are UTF-8 bytes: used as str indices they miss on this text."""
    text = response.text
    for support, citation in zip(supports(response), answer.citations, strict=True):
        segment = support.segment
        start, end = segment.start_index or 0, segment.end_index
        assert text[start:end] != segment.text
        # A claim cut inside a word is widened to it; the provider's span is kept in extras.
        first, last = citation.extras.get("provider_span", (citation.start, citation.end))
        assert answer.text[first:last] == segment.text
        assert (len(text[:first].encode()), len(text[:last].encode())) == (start, end)


@pytest.mark.vcr
def test_stream_matches_generate_content() -> None:
    prompt = "富士山の高さと、最後に噴火した年を教えてください。"
    gemini = client()
    models = gemini.models
    response = models.generate_content(model=MODEL, contents=prompt, config=SEARCH)
    chunks = list(models.generate_content_stream(model=MODEL, contents=prompt, config=SEARCH))

    answer = extract(response, strict=True)
    assert collect_stream(chunks, strict=True) == answer
    assert "".join(chunk.text or "" for chunk in chunks) == answer.text == response.text
    assert spans(answer) == [
        (0, 30, "富士山の標高は3,776メートルで、日本で最も高い山です🗻。", [1, 2]),
        (30, 51, "最後の噴火は1707年の宝永大噴火でした。", [2, 1]),
        (
            52,
            99,
            "2013年には「富士山－信仰の対象と芸術の源泉」として"  # noqa: RUF001
            "ユネスコの世界文化遺産に登録されました。",
            [3],
        ),
    ]
    # Grounding comes on the last chunk, with byte offsets into the text of every chunk.
    last = supports(chunks[-1])
    assert (last[1].segment.start_index, last[1].segment.end_index) == (81, 136)
    assert_naive_reading_is_wrong(response, answer)

    collector = StreamCollector()
    announced = [[e.citation for e in collector.feed(chunk)] for chunk in chunks]
    assert [len(batch) for batch in announced] == [0, 0, 0, 3]
    assert announced[-1] == collector.result().citations == answer.citations


# google-genai subclasses aiohttp.ClientSession, which aiohttp deprecates.
AIOHTTP_SUBCLASS = "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"


@pytest.mark.filterwarnings(AIOHTTP_SUBCLASS)
@pytest.mark.vcr
def test_async_generate_content() -> None:
    async def call() -> Any:
        gemini = client()
        return await gemini.aio.models.generate_content(
            model=MODEL, contents="Wie hoch ist die Zugspitze?", config=SEARCH
        )

    response = asyncio.run(call())
    answer = extract(response, strict=True)
    assert answer.text == response.text
    # "⛰️" is two code points (U+26F0, U+FE0F) and six UTF-8 bytes.
    assert spans(answer)[:2] == [
        (0, 68, "Die Zugspitze ist mit 2.962 Metern der höchste Berg Deutschlands ⛰️.", [1]),
        (69, 137, "Sie liegt im Wettersteingebirge, direkt an der Grenze zu Österreich.", [1, 2]),
    ]
    assert (supports(response)[1].segment.start_index, supports(response)[1].segment.end_index) == (
        74,
        143,
    )
    assert answer.citations[2].text.endswith("Gesamthöhe für eine Pendelbahnstütze (127 Meter).")
    assert [s.domain for s in answer.sources] == ["wikipedia.org", "zugspitze.de"]
    assert_same_reading(response)


@pytest.mark.filterwarnings(AIOHTTP_SUBCLASS)
@pytest.mark.vcr
def test_async_stream_matches_generate_content() -> None:
    prompt = "N서울타워는 얼마나 높고 언제 개방되었나요?"

    async def call() -> tuple[Any, CitedAnswer]:
        gemini = client()
        models = gemini.aio.models
        response = await models.generate_content(model=MODEL, contents=prompt, config=SEARCH)
        stream = await models.generate_content_stream(model=MODEL, contents=prompt, config=SEARCH)
        return response, await acollect_stream(stream, strict=True)

    response, streamed = asyncio.run(call())
    answer = extract(response, strict=True)
    assert streamed == answer
    assert spans(answer) == [
        (
            0,
            63,
            "N서울타워의 높이는 236.7미터이며, "
            "남산 정상에 있어 해발 약 480미터에서 서울을 내려다볼 수 있습니다 🗼.",
            [1, 2],
        ),
        (64, 110, "1969년에 착공되어 1975년에 완공되었고, 1980년부터 일반에 공개되었습니다.", [3]),
    ]
    assert answer.extras["web_search_queries"] == ["N서울타워 높이", "남산타워 개방 연도"]


@pytest.mark.vcr
def test_file_search() -> None:
    store = "fileSearchStores/manuale-caldaia-7k2m9q4x1b3c"
    tool = types.Tool(file_search=types.FileSearch(file_search_store_names=[store]))
    gemini = client()
    response = gemini.models.generate_content(
        model=MODEL,
        contents="Ogni quanto va revisionata la caldaia, e cosa significa l'errore E10?",
        config=types.GenerateContentConfig(tools=[tool]),
    )
    answer = extract(response, strict=True)

    # Chunks 0 and 1 are the same text with no uri or title: one source, cited through either.
    manual, errors = answer.sources
    assert [c.source_ids for c in answer.citations] == [[manual.id], [errors.id, manual.id]]
    assert (manual.kind, manual.url, manual.title) == ("document", None, None)
    assert manual.content is not None
    assert manual.content.startswith("Manutenzione ordinaria.")
    assert manual.extras == {"file_search_store": store}
    assert errors.extras == {"file_search_store": store, "page_number": 14}
    assert answer.citations[0].location is None
    assert answer.citations[1].location == PageLocation(start_page=14, end_page=15)
    assert answer.citations[1].text.startswith(
        "Se il display mostra l'errore **E10**, la pressione è"
    )
    assert answer.citations[1].text.endswith("premi RESET per tre secondi.")
    assert_same_reading(response)


@pytest.mark.vcr
def test_maps_grounding() -> None:
    config = types.GenerateContentConfig(
        tools=[types.Tool(google_maps=types.GoogleMaps())],
        tool_config=types.ToolConfig(
            retrieval_config=types.RetrievalConfig(
                lat_lng=types.LatLng(latitude=40.4169, longitude=-3.7035)
            )
        ),
    )
    gemini = client()
    response = gemini.models.generate_content(
        model=MODEL,
        contents="¿Dónde puedo cenar comida tradicional cerca de la Puerta del Sol?",
        config=config,
    )
    answer = extract(response, strict=True)
    assert [(s.kind, s.title, s.id, s.url, s.domain) for s in answer.sources] == [
        (
            "place",
            "Casa Labra",
            "places/ChIJx3Kp5H4oQg0RhVv7Yd2sTQk",
            "https://maps.google.com/?cid=4820186623471559270",
            "google.com",
        ),
        (
            "place",
            "Lhardy",
            "places/ChIJ5cFq0X0oQg0R8mJc3bXkP1A",
            "https://maps.google.com/?cid=11603882264711097365",
            "google.com",
        ),
    ]
    assert [s.provider_id for s in answer.sources] == [s.id for s in answer.sources]
    assert [(c.start, c.end, len(c.source_ids)) for c in answer.citations] == [
        (0, 152, 1),
        (153, 248, 1),
        (249, 304, 2),
    ]
    assert answer.citations[1].text == (
        "Otra opción clásica es Lhardy, en la Carrera de San Jerónimo, "
        "conocida por su cocido madrileño."
    )
    assert_same_reading(response)


@pytest.mark.vcr
def test_multi_part_answer() -> None:
    config = types.GenerateContentConfig(
        tools=[
            types.Tool(google_search=types.GoogleSearch()),
            types.Tool(code_execution=types.ToolCodeExecution()),
        ],
        thinking_config=types.ThinkingConfig(include_thoughts=True),
    )
    gemini = client()
    response = gemini.models.generate_content(
        model=MODEL,
        contents=PT_PROMPT,
        config=config,
    )
    answer = extract(response, strict=True)

    # Text parts 1 and 4 joined as the SDK joins them; the thought and the code are not answer text.
    assert answer.text == response.text
    parts = response.candidates[0].content.parts
    assert answer.text == parts[1].text + parts[4].text
    assert spans(answer) == [
        (
            0,
            93,
            "Segundo os Censos 2021, o município de Lisboa tem 545 923 habitantes "
            "numa área de 100,05 km².",
            [1, 2],
        ),
        (191, 247, "Lisboa é a capital mais ocidental da Europa continental.", [2]),
    ]
    # Segment offsets of part 4 count from that part's start.
    segment = supports(response)[1].segment
    assert (segment.part_index, segment.start_index, segment.end_index) == (4, 64, 121)
    assert answer.extras["thoughts"] == [parts[0].text]
    assert answer.extras["non_text_parts"] == [
        {
            "partIndex": 2,
            "executableCode": {"language": "PYTHON", "code": "print(round(545923 / 100.05, 1))\n"},
        },
        {"partIndex": 3, "codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "5456.5\n"}},
    ]
    assert_same_reading(response)


@pytest.mark.vcr
def test_recitation_citation_metadata() -> None:
    gemini = client()
    response = gemini.models.generate_content(
        model=MODEL, contents="Cite le début de la licence MIT, en gardant le texte anglais."
    )
    answer = extract(response, strict=True)
    (citation,) = answer.citations
    assert (citation.start, citation.end) == (62, 252)
    assert citation.text.startswith("Permission is hereby granted, free of charge")
    assert citation.text.endswith("to deal in the Software without restriction")
    assert citation.extras == {"recitation": True, "license": "mit"}
    cited, uncited = answer.sources
    assert citation.source_ids == [cited.id]
    assert cited.url == "https://github.com/lumen-tools/lumen-cli/blob/main/LICENSE"
    assert cited.extras == {"license": "mit"}
    assert uncited.url == "https://opensource.org/license/mit"
    # Recitation indices are UTF-8 bytes too: "Voilà" and "—" come before the quote.
    assert answer.byte_span(citation) == (67, 257)
    assert_same_reading(response)


@pytest.mark.vcr
def test_vertex_recitation_noisy() -> None:
    vertex = genai.Client(vertexai=True, api_key=os.getenv("GOOGLE_API_KEY", "mock-api-key"))
    response = vertex.models.generate_content(
        model=MODEL, contents="¿Qué dice el artículo 1 de la Constitución Española?"
    )
    answer = extract(response)
    assert answer.diagnostics == [
        "candidates[0].citationMetadata.citations: skipped 4 empty citation entries"
    ]
    (citation,) = answer.citations
    assert citation.text == "España se constituye en un Estado social y democrático de Derecho"
    boe, congreso = answer.sources
    assert citation.source_ids == [boe.id]
    assert boe.title == "Constitución Española"
    assert boe.extras["publication_date"] == {"year": 1978, "month": 12, "day": 29}
    assert congreso.domain == "congreso.es"
    assert answer.extras["create_time"] == "2026-03-11T09:42:17.318204Z"
    with pytest.raises(CitationError):
        extract(response, strict=True)
    assert_same_reading(response)


@pytest.mark.vcr
def test_multiple_candidates() -> None:
    config = types.GenerateContentConfig(
        tools=[types.Tool(google_search=types.GoogleSearch())], candidate_count=2
    )
    gemini = client()
    response = gemini.models.generate_content(
        model=MODEL, contents="Hoeveel grachten en bruggen heeft Amsterdam?", config=config
    )
    first = extract(response, strict=True)
    second = extract(response, candidate=1, strict=True)
    assert first.text == response.candidates[0].content.parts[0].text
    assert second.text == response.candidates[1].content.parts[0].text
    assert first.extras["candidate_count"] == second.extras["candidate_count"] == 2
    assert [c.text for c in second.citations] == [
        "In Amsterdam liggen zo'n 165 grachten met een totale lengte van meer dan 100 kilometer.",
        "Sinds 2010 is de grachtengordel UNESCO-werelderfgoed 🌍.",
    ]
    # Chunk indices are per candidate: the second candidate's chunk 0 is the first's chunk 1.
    assert second.citations[0].source_ids == [first.sources[1].id]

    missing = extract(response, candidate=2)
    assert missing.text == ""
    assert missing.diagnostics == ["candidate 2 is out of range: the response has 2 candidate(s)"]


@pytest.mark.vcr
def test_blocked_prompt() -> None:
    gemini = client()
    response = gemini.models.generate_content(
        model=MODEL,
        contents="Comment forcer la serrure de mon voisin sans qu’il le remarque ?",
        config=SEARCH,
    )
    answer = extract(response, strict=True)
    assert (answer.text, answer.citations, answer.diagnostics) == ("", [], [])
    assert answer.extras["prompt_feedback"]["blockReason"] == "SAFETY"
    with pytest.raises(GroundingRequiredError) as info:
        extract(response, require="citations")
    assert (info.value.provider, info.value.reason) == ("gemini", "no grounding")


def test_sdk_bytes_read_as_the_rest_api_writes_them() -> None:
    # The REST API writes bytes fields in standard base64; pydantic's JSON mode, which the
    # SDK's own dumps use (ser_json_bytes="base64"), would write "-_-_EA==" here.
    signature = bytes([0xFB, 0xFF, 0xBF, 0x10])
    encoded = base64.b64encode(signature).decode("ascii")
    rest = {
        "candidates": [
            {
                "content": {
                    "role": "model",
                    "parts": [
                        {"text": "Olá, mundo.", "thoughtSignature": encoded},
                        {"inlineData": {"mimeType": "image/png", "data": encoded}},
                    ],
                },
                "finishReason": "STOP",
            }
        ],
        "modelVersion": MODEL,
    }
    sdk = types.GenerateContentResponse.model_validate_json(json.dumps(rest))
    assert sdk.candidates[0].content.parts[1].inline_data.data == signature  # type: ignore[index,union-attr]
    answer = extract(sdk)
    assert answer == extract(rest)
    assert answer.extras["non_text_parts"][0]["inlineData"]["data"] == "+/+/EA=="
