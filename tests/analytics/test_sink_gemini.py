"""Gemini / Vertex AI responses read through the analytics sink give `extract()`'s row.

Fixtures are written here from the documented shapes of ``GenerateContentResponse`` (REST
camelCase and the SDK's snake_case dump with its nulls; ``groundingMetadata`` chunks ``web``,
``retrievedContext``, ``maps``, ``image``; supports with UTF-8 byte offsets; ``citationMetadata``)
and of the Interactions API's ``Interaction`` (``steps`` and the first beta's ``outputs``, text
blocks with byte-offset ``annotations``); the recorded corpus is `analytics._corpus`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest
from analytics._corpus import (
    assert_rows_agree,
    check_corpus_response,
    json_nodes,
    reader_of,
    responses,
)
from hypothesis import given
from hypothesis import strategies as st

from unicite import is_redirect_url, normalize_url
from unicite.analytics import fast_row
from unicite.sources import page_key

READER = "GeminiProvider"

CORPUS = [(name, data) for name, data in responses() if reader_of(data) == READER]


def _sink_reads(data: Mapping[str, Any]) -> None:
    """The analytics sink reads `data`, and its row is `extract()`'s."""
    assert fast_row(data) is not None
    assert_rows_agree(data)


def test_the_corpus_has_gemini_responses() -> None:
    assert len(CORPUS) >= 20


@pytest.mark.parametrize(("name", "data"), CORPUS, ids=[name for name, _ in CORPUS])
def test_corpus(name: str, data: Mapping[str, Any]) -> None:
    check_corpus_response(name, data)


# --- fixtures ----------------------------------------------------------------------------------

REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"


def _b(text: str, part: str) -> tuple[int, int]:
    """The UTF-8 byte span of `part` (its first occurrence) in `text`."""
    start = text.index(part)
    return len(text[:start].encode()), len(text[: start + len(part)].encode())


def _support(text: str, claim: str, *chunks: int, **segment: Any) -> dict[str, Any]:
    start, end = _b(text, claim)
    seg: dict[str, Any] = {"endIndex": end, "text": claim}
    if start:
        seg["startIndex"] = start
    seg.update(segment)
    return {"segment": seg, "groundingChunkIndices": list(chunks)}


def _web(uri: str, title: str | None = None, **fields: Any) -> dict[str, Any]:
    web: dict[str, Any] = {"uri": uri}
    if title is not None:
        web["title"] = title
    web.update(fields)
    return {"web": web}


def _response(
    parts: list[dict[str, Any]],
    grounding: dict[str, Any] | None = None,
    **candidate: Any,
) -> dict[str, Any]:
    chosen: dict[str, Any] = {
        "content": {"parts": parts, "role": "model"},
        "finishReason": "STOP",
        "index": 0,
    }
    if grounding is not None:
        chosen["groundingMetadata"] = grounding
    chosen.update(candidate)
    return {
        "candidates": [chosen],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 40},
        "modelVersion": "gemini-2.5-flash",
        "responseId": "a1b2c3d4e5f6",
    }


TEXT = "Le café de Flore est à Paris 😀. Il a ouvert vers 1887. 東京にも店があります。"

SEARCH = _response(
    [{"text": TEXT}],
    {
        "webSearchQueries": ["café de Flore ouverture"],
        "searchEntryPoint": {"renderedContent": "<style>.chip{}</style><div>…</div>"},
        "groundingChunks": [
            _web(REDIRECT + "AUZIYQHk7wT2mWcVx0pQ3rLd", "wikipedia.org"),
            _web(REDIRECT + "AUZIYQEr3bV8nXk1cW6yTfH0", "cafedeflore.fr"),
            _web(REDIRECT + "AUZIYQ9xZx", "Café de Flore — site officiel"),
            _web("https://www.example.com/flore/?utm_source=gemini", "Example"),
            _web("https://example.com/flore", "Example again"),
        ],
        "groundingSupports": [
            # Listed first, though its claim comes second: where claims sit does not matter.
            {**_support(TEXT, "Il a ouvert vers 1887.", 1, 3), "confidenceScores": [0.9, 0.4]},
            _support(TEXT, "Le café de Flore est à Paris 😀.", 0, 4, 2),
            _support(TEXT, "東京にも店があります。", 2),
        ],
    },
)


def _snake(value: Any) -> Any:
    """The google-genai SDK's ``model_dump()``: snake_case keys, and nulls for unset fields."""
    if isinstance(value, list):
        return [_snake(item) for item in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        out[name] = _snake(item)
    if "text" in out:
        out.setdefault("thought", None)
    return out


def _sdk_dump(response: dict[str, Any]) -> dict[str, Any]:
    dump = _snake(response)
    chosen = dump["candidates"][0]
    chosen.update(citation_metadata=None, url_context_metadata=None, avg_logprobs=None)
    dump["prompt_feedback"] = None
    return dump


def test_search() -> None:
    _sink_reads(SEARCH)
    row = fast_row(SEARCH)
    assert row is not None
    assert (row["citations"], row["sources"]) == (3, 4)
    # Sorted by URL. The two example.com URLs are one page (the first one's URL stays); a
    # redirect whose title is no domain has none.
    assert row["urls"] == [
        REDIRECT + "AUZIYQ9xZx",
        REDIRECT + "AUZIYQEr3bV8nXk1cW6yTfH0",
        REDIRECT + "AUZIYQHk7wT2mWcVx0pQ3rLd",
        "https://www.example.com/flore/?utm_source=gemini",
    ]
    assert row["domains"] == [None, "cafedeflore.fr", "wikipedia.org", "example.com"]
    assert row["tlds"] == [None, "fr", "org", "com"]
    assert row["redirects"] == [True, True, True, False]
    assert row["cited"] == [True, True, True, True]


def test_sdk_dump() -> None:
    _sink_reads(_sdk_dump(SEARCH))


def test_camel_key_wins_over_its_snake_twin() -> None:
    data = copy.deepcopy(SEARCH)
    metadata = data["candidates"][0]["groundingMetadata"]
    metadata["grounding_supports"] = metadata["groundingSupports"][:1]
    metadata["web_search_queries"] = None
    data["candidates"][0]["grounding_metadata"] = {"groundingChunks": []}
    _sink_reads(data)
    metadata["groundingSupports"] = None  # dropped: the snake twin is read
    _sink_reads(data)


def test_odd_spellings() -> None:
    data = copy.deepcopy(SEARCH)
    metadata = data["candidates"][0]["groundingMetadata"]
    metadata["webSearch_queries"] = metadata.pop("webSearchQueries")
    metadata["search_entryPoint"] = metadata.pop("searchEntryPoint")
    support = metadata["groundingSupports"][0]
    support["groundingChunk_indices"] = support.pop("groundingChunkIndices")
    _sink_reads(data)
    support["grounding_chunk_indices"] = [4]  # after the other spelling: not read
    _sink_reads(data)


MULTI_PART_TEXT = ("Lisboa tem 545 923 habitantes. ", "A densidade é de 5 456,5 hab./km² 🏙️.")
MULTI_PART = _response(
    [
        {"text": "**Procurar os dados**\n\nPreciso da população.", "thought": True},
        {"text": MULTI_PART_TEXT[0]},
        {"executableCode": {"language": "PYTHON", "code": "print(545923 / 100.05)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "5456.5\n"}},
        {"functionCall": {"name": "lookup", "args": {"city_name": "Lisboa"}}},
        {"text": MULTI_PART_TEXT[1], "thoughtSignature": "CiQBcsjafD4t"},
    ],
    {
        "groundingChunks": [
            _web("https://ine.pt/censos", "ine.pt"),
            _web("https://pt.wikipedia.org/wiki/Lisboa"),
        ],
        "groundingSupports": [
            _support(MULTI_PART_TEXT[1], "5 456,5 hab./km² 🏙️.", 0, partIndex=5),
            _support(MULTI_PART_TEXT[0], "Lisboa tem 545 923 habitantes.", 1, 0, partIndex=1),
            # No partIndex: part 0 is a thought, so the first text part.
            _support(MULTI_PART_TEXT[0], "545 923", 0),
        ],
    },
)


def test_multi_part() -> None:
    _sink_reads(MULTI_PART)


FILE_SEARCH_TEXT = "A caldeira deve ser revista todos os anos. O código E10 indica pressão baixa."
FILE_SEARCH = _response(
    [{"text": FILE_SEARCH_TEXT}],
    {
        "groundingChunks": [
            {
                "retrievedContext": {
                    "text": "Manutenção anual.",
                    "fileSearchStore": "fileSearchStores/a1",
                }
            },
            {
                "retrievedContext": {
                    "text": "Manutenção anual.",
                    "fileSearchStore": "fileSearchStores/a1",
                }
            },
            {"retrievedContext": {"text": "E10: pressão < 0,8 bar.", "pageNumber": 14}},
            {
                "retrievedContext": {
                    "uri": "gs://manuais/caldeira.pdf",
                    "title": "caldeira.pdf",
                    "ragChunk": {"text": "E10", "pageSpan": {"firstPage": 3, "lastPage": 4}},
                }
            },
            {"retrievedContext": {"title": "Notas", "ragChunk": {"text": "E10 é comum."}}},
        ],
        "groundingSupports": [
            _support(FILE_SEARCH_TEXT, "A caldeira deve ser revista todos os anos.", 1),
            _support(FILE_SEARCH_TEXT, "O código E10 indica pressão baixa.", 2, 0, 3, 4),
        ],
    },
)


def test_file_search() -> None:
    _sink_reads(FILE_SEARCH)
    row = fast_row(FILE_SEARCH)
    assert row is not None
    assert row["sources"] == 4  # the two equal chunks are one source
    assert row["urls"] == [None, None, None, "gs://manuais/caldeira.pdf"]
    assert row["cited"] == [True, True, True, True]


MAPS_TEXT = "Casa Labra sirve bacalao. Lhardy es un clásico."
MAPS = _response(
    [{"text": MAPS_TEXT}],
    {
        "groundingChunks": [
            {"maps": {"title": "Casa Labra", "placeId": "places/ChIJx3Kp5H4oQg0R"}},
            {
                "maps": {
                    "uri": "https://maps.google.com/?cid=1160",
                    "title": "Lhardy",
                    "placeId": "places/ChIJ5cFq",
                }
            },
            # The first place again, with its URL now: the source it merges into gets it.
            {
                "maps": {
                    "uri": "https://maps.google.com/?cid=4820",
                    "title": "Casa Labra",
                    "placeId": "places/ChIJx3Kp5H4oQg0R",
                }
            },
            {"maps": {"title": "Mercado de San Miguel", "text": "Un mercado."}},
        ],
        "groundingSupports": [
            _support(MAPS_TEXT, "Casa Labra sirve bacalao.", 2),
            _support(MAPS_TEXT, "Lhardy es un clásico.", 1, 3),
        ],
    },
)


def test_maps() -> None:
    _sink_reads(MAPS)
    row = fast_row(MAPS)
    assert row is not None
    # Casa Labra has the URL its second sighting gave; Mercado de San Miguel has none.
    assert row["urls"] == [
        None,
        "https://maps.google.com/?cid=1160",
        "https://maps.google.com/?cid=4820",
    ]
    assert row["citations"] == 2


def test_image_chunks() -> None:
    text = "Un pont à haubans."
    data = _response(
        [{"text": text}],
        {
            "imageSearchQueries": ["pont à haubans"],
            "groundingChunks": [
                {"image": {"sourceUri": "https://images.example.org/pont.jpg", "title": "Pont"}}
            ],
            "groundingSupports": [_support(text, text, 0)],
        },
    )
    _sink_reads(data)


RECITED = "Voilà la licence MIT : Permission is hereby granted, free of charge, to any person."
RECITATION = _response(
    [{"text": RECITED}],
    citationMetadata={
        "citationSources": [
            {
                "startIndex": _b(RECITED, "Permission")[0],
                "endIndex": len(RECITED.encode()),
                "uri": "https://github.com/x/y/blob/main/LICENSE",
                "license": "mit",
            },
            {"uri": "https://opensource.org/license/mit"},
            {},
            {"uri": None, "title": None},
            {"title": "The MIT License", "endIndex": _b(RECITED, "Voilà")[1]},
        ]
    },
)


def test_recitation() -> None:
    _sink_reads(RECITATION)
    row = fast_row(RECITATION)
    assert row is not None
    assert (row["citations"], row["diagnostics"]) == (2, 1)


def test_blocked_prompt_and_no_candidates() -> None:
    blocked = {
        "promptFeedback": {"blockReason": "SAFETY"},
        "usageMetadata": {"promptTokenCount": 9},
        "modelVersion": "gemini-2.5-flash",
    }
    _sink_reads(blocked)
    _sink_reads({**blocked, "candidates": []})
    # noted: no candidates
    _sink_reads({"usageMetadata": {"promptTokenCount": 9}, "candidates": []})
    _sink_reads(
        {"usage_metadata": {"prompt_token_count": 9}, "prompt_feedback": {"block_reason": "OTHER"}}
    )


# "6." out of "4.0.6.": a segment may start inside a word; the claim widens to the whole word.
# Each support stays one citation, whatever its widened span.
WIDEN_TEXT = "La version 4.0.6 sort aujourd’hui, avec 2\u00a0460 correctifs."
WIDEN = _response(
    [{"text": WIDEN_TEXT}],
    {
        "groundingChunks": [_web("https://ruby-lang.org/a"), _web("https://ruby-lang.org/b")],
        "groundingSupports": [
            _support(WIDEN_TEXT, "0.6 sort aujourd’hui,", 0),
            _support(WIDEN_TEXT, "6 sort aujourd", 1),
            _support(WIDEN_TEXT, "60 correctifs.", 0),
            _support(WIDEN_TEXT, "jourd’", 1),
        ],
    },
)


def test_widening() -> None:
    _sink_reads(WIDEN)
    row = fast_row(WIDEN)
    assert row is not None
    assert row["citations"] == 4
    assert row["urls"] == ["https://ruby-lang.org/a", "https://ruby-lang.org/b"]


def test_segment_text_with_other_whitespace() -> None:
    data = copy.deepcopy(SEARCH)
    data["candidates"][0]["groundingMetadata"]["groundingSupports"][0]["segment"]["text"] = (
        " Il a ouvert vers 1887.\n"
    )
    _sink_reads(data)


def _with(data: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `data` with the value at a dotted path (list indices as numbers) replaced."""
    out = copy.deepcopy(data)
    *head, last = path.split(".")
    node: Any = out
    for key in head:
        node = node[int(key)] if isinstance(node, list) else node[key]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


SEGMENT = "candidates.0.groundingMetadata.groundingSupports.1.segment"
SUPPORT = "candidates.0.groundingMetadata.groundingSupports.1"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (f"{SEGMENT}.startIndex", 1),  # slices "e café…": not the segment's text
        (f"{SEGMENT}.endIndex", len(TEXT.encode()) + 1),  # past the part
        (f"{SEGMENT}.endIndex", _b(TEXT, "😀")[0] + 1),  # inside a character
        (f"{SEGMENT}.endIndex", None),
        (f"{SEGMENT}.partIndex", 3),
        (f"{SEGMENT}.text", "Le café de Flore est à Lyon."),
        (f"{SEGMENT}.startIndex", "0"),  # a digit string: read
        (f"{SEGMENT}.startIndex", True),
        (f"{SUPPORT}.groundingChunkIndices", [0, 9]),
        (f"{SUPPORT}.groundingChunkIndices", []),
        (f"{SUPPORT}.groundingChunkIndices", [1.0]),
        (f"{SUPPORT}.confidenceScores", [1.5, 0.2, 0.1]),
        (f"{SUPPORT}.confidenceScores", [0.5]),
        (f"{SUPPORT}.segment", None),
        ("candidates.0.groundingMetadata.groundingChunks.2", {"web": {"title": "no uri"}}),
        ("candidates.0.groundingMetadata.groundingChunks.2", {"unknownKind": {}}),
        ("candidates.0.groundingMetadata.groundingChunks.2", "https://example.com"),
        ("candidates.0.groundingMetadata.webSearchQueries", ["ok", 3]),
        (
            "candidates.0.groundingMetadata.retrievalMetadata",
            {"sources": [{"uri": "https://a.org"}]},
        ),
        (
            "candidates.0.groundingMetadata.groundingAttributions",
            [{"web": {"uri": "https://a.org"}}],
        ),
        ("candidates.0.groundingMetadata.citedSources", ["https://a.org"]),
        ("candidates.0.groundingMetadata.searchEntryPoint", "<div>"),
        ("candidates.0.content.parts.0.thought", "yes"),
        ("candidates.0.content.parts.0.fancyNewPart", {"x": 1}),
        ("candidates.0.content.parts.0.text", "Le caf\ud800 de Flore est à Paris 😀."),
        (
            "candidates.0.groundingAttributions",
            [{"sourceId": {"groundingPassage": {"passageId": "p"}}}],
        ),
        ("modelVersion", 2),
    ],
)
def test_sink_reads(path: str, value: Any) -> None:
    _sink_reads(_with(SEARCH, path, value))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("candidates.0.groundingMetadata.citations", [0, 1]),  # chunk indices: nothing new
        ("candidates.0.groundingMetadata.sources", []),
        (
            "candidates.0.groundingMetadata.retrievalMetadata",
            {"googleSearchDynamicRetrievalScore": 0.7},
        ),
        ("candidates.0.groundingMetadata.retrievalMetadata", {}),
        (
            "candidates.0.groundingMetadata.groundingChunks.3",
            {"web": {"uri": "https://example.org/x", "domain": "www.Example.org"}},
        ),
        (
            "candidates.0.groundingMetadata.groundingChunks.2",
            {"web": {"uri": REDIRECT + "AUZ", "title": "Some site"}, "retrievedContext": None},
        ),
        ("candidates.0.content.parts.0.fancyNewPart", None),  # a null: as if not there
        (f"{SEGMENT}.startIndex", 0.0),
        (f"{SEGMENT}.partIndex", 0),
        (f"{SUPPORT}.confidenceScores", [1, 0, 0.5]),
        (f"{SUPPORT}.groundingChunkIndices", [0, 0, 4]),
        ("candidates.0.urlContextMetadata", {"urlMetadata": [{"retrievedUrl": "https://a.org"}]}),
    ],
)
def test_other_values_agree(path: str, value: Any) -> None:
    _sink_reads(_with(SEARCH, path, value))


def test_a_word_too_long_to_widen_sink_reads() -> None:
    blob = "x" * 600
    text = f"Le hash {blob} est long."
    start = _b(text, blob)[0] + 300
    data = _response(
        [{"text": text}],
        {
            "groundingChunks": [_web("https://a.org")],
            "groundingSupports": [
                {
                    "segment": {"startIndex": start, "endIndex": len(text.encode())},
                    "groundingChunkIndices": [0],
                }
            ],
        },
    )
    _sink_reads(data)


def test_bare_candidate_and_generate_answer_agree() -> None:
    chosen = SEARCH["candidates"][0]
    _sink_reads({**chosen, "modelVersion": "gemini-2.5-flash"})
    _sink_reads({"answer": chosen, "answerableProbability": 0.9})


# --- the Interactions API ------------------------------------------------------------------------

BLOCK = "A Ponte 25 de Abril abriu em 1966. Mede 2 277 metros. 東京タワーより長い。"


def _annotation(claim: str, **fields: Any) -> dict[str, Any]:
    start, end = _b(BLOCK, claim)
    out: dict[str, Any] = {"end_index": end, **fields}
    if start:
        out["start_index"] = start
    return out


INTERACTION = {
    "id": "v1_ChdQb250ZTI1",
    "status": "completed",
    "model": "gemini-3-flash-preview",
    "role": "model",
    "steps": [
        {"type": "user_input", "content": [{"type": "text", "text": "Ponte 25 de Abril?"}]},
        {
            "type": "thought",
            "signature": "CrUBAd",
            "summary": [{"type": "text", "text": "Vou pesquisar."}],
        },
        {
            "type": "google_search_call",
            "id": "gs_1",
            "arguments": {"queries": ["ponte 25 de abril"]},
        },
        {
            "type": "google_search_result",
            "call_id": "gs_1",
            "result": [
                {"search_suggestions": "<div>…</div>"},
                {
                    "url": "https://pt.wikipedia.org/wiki/Ponte_25_de_Abril",
                    "title": "Ponte 25 de Abril",
                },
                {"url": REDIRECT + "AUZIYQF8sWc1", "title": "infraestruturasdeportugal.pt"},
            ],
        },
        {"type": "url_context_call", "arguments": {"urls": ["https://www.visitlisboa.com/"]}},
        {
            "type": "url_context_result",
            "result": [{"url": "https://www.visitlisboa.com/", "status": "success"}],
        },
        {"type": "function_call", "name": "lookup", "arguments": {"x": 1}},
        {"type": "function_result", "call_id": "f1", "result": "ok"},
        {
            "type": "model_output",
            "content": [
                {
                    "type": "text",
                    "text": BLOCK,
                    "annotations": [
                        _annotation(
                            "A Ponte 25 de Abril abriu em 1966.",
                            type="url_citation",
                            url=REDIRECT + "AUZIYQF8sWc1",
                            title="infraestruturasdeportugal.pt",
                        ),
                        # The same span again: one citation of both sources.
                        _annotation(
                            "A Ponte 25 de Abril abriu em 1966.",
                            type="url_citation",
                            url="https://pt.wikipedia.org/wiki/Ponte_25_de_Abril",
                        ),
                        # Widened to "Mede 2 277 metros." — one more span merged into it.
                        _annotation(
                            "de 2 277 metros.", type="url_citation", url="https://visitlisboa.com"
                        ),
                        _annotation(
                            "e 2 277 metros.",
                            type="file_citation",
                            document_uri="gs://docs/ponte.pdf",
                            file_name="ponte.pdf",
                            page_number=3,
                        ),
                        _annotation(
                            "東京タワーより長い。",
                            type="place_citation",
                            place_id="places/ChIJ1",
                            name="Tokyo Tower",
                        ),
                    ],
                },
                {"type": "image", "data": "iVBORw0KGgo=", "mime_type": "image/png"},
            ],
        },
    ],
    "usage": {"total_tokens": 673},
}


def test_interaction() -> None:
    _sink_reads(INTERACTION)
    row = fast_row(INTERACTION)
    assert row is not None
    assert row["citations"] == 3


OUTPUTS_BETA = {
    "id": "v1_beta",
    "status": "completed",
    "model": "gemini-2.5-flash",
    "outputs": [
        {"type": "google_search_call", "id": "c1", "arguments": {"queries": ["Teide"]}},
        {
            "type": "google_search_result",
            "call_id": "c1",
            "result": [{"url": "https://es.wikipedia.org/wiki/Teide", "title": "Teide"}],
        },
        {
            "type": "file_search_result",
            "result": [
                {"text": "El Teide mide 3715 m.", "title": "Memoria"},
                {"text": "El Teide mide 3715 m.", "title": "Memoria"},
            ],
        },
        {
            "type": "google_maps_result",
            "result": [
                {
                    "places": [
                        {
                            "place_id": "p/1",
                            "name": "Teide",
                            "url": "https://maps.google.com/?cid=1",
                        }
                    ]
                }
            ],
        },
        {
            "type": "text",
            "text": BLOCK,
            "annotations": [
                _annotation(
                    "A Ponte 25 de Abril abriu em 1966.",
                    source="https://es.wikipedia.org/wiki/Teide",
                ),
                _annotation("Mede 2 277 metros.", source="Memoria anual 2023"),
            ],
        },
    ],
}


def test_interaction_outputs_beta() -> None:
    _sink_reads(OUTPUTS_BETA)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("status", "failed"),
        ("steps.8.content.0.annotations.0.end_index", 0),
        ("steps.8.content.0.annotations.0.end_index", 10_000),
        ("steps.8.content.0.annotations.0.start_index", 3),
        ("steps.8.content.0.annotations.4.end_index", _b(BLOCK, "東")[0] + 1),
        ("steps.8.content.0.annotations.0.type", "mystery_citation"),
        ("steps.8.content.0.annotations.0.url", ""),
        ("steps.8.content.0.annotations.3.page_number", 0),
        ("steps.8.content.0.text", 7),
        ("steps.2.arguments", {"queries": [1]}),
        ("steps.0.type", "brand_new_step"),
    ],
)
def test_interaction_edges(path: str, value: Any) -> None:
    assert_rows_agree(_with(INTERACTION, path, value))


# --- generated responses ----------------------------------------------------------------------

WORDS = [
    "café",
    "東京",
    "😀",
    "Zugspitze",
    "2\u00a0460",
    "4.0.6",
    "l’abbaye",
    "naïve",
    "Straße",
    "e\u0301te\u0301",
    "δέντρο",
    "สวัสดี",
    "x",
    "mètres",
    "co-op",
    "a_b",
    "**bold**",
    "(1887)",
]
SEPARATORS = [" ", " ", " ", ", ", " — ", "\n", "\u00a0", ""]
ENDS = [".", "!", "。", "?", ""]

PAGES = [
    "https://www.example.com/a",
    "https://example.com/a/",
    "https://example.com/a?utm_source=gemini",
    "https://EXAMPLE.com/a#top",
    "https://news.example.co.uk/story",
    "http://blog.example.org/post",
    "https://café.example.fr/menu",
    "https://example.com/b",
]
TITLES = [
    None,
    "",
    "wikipedia.org",
    "www.BBC.co.uk",
    "example.com.",
    "Example Domain",
    "café.fr",
    "bbc.co.uk",
]


@st.composite
def _sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5))
    text = words[0]
    for word in words[1:]:
        text += draw(st.sampled_from(SEPARATORS)) + word
    return text + draw(st.sampled_from(ENDS))


@st.composite
def _texts(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    """A text part and its sentences' str spans."""
    text = ""
    spans = []
    for sentence in draw(st.lists(_sentences(), min_size=1, max_size=4)):
        if text:
            text += draw(st.sampled_from([" ", "\n\n", ""]))
        spans.append((len(text), len(text) + len(sentence)))
        text += sentence
    return text, spans


def _redirect(draw: st.DrawFn) -> str:
    token = draw(
        st.text(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-=",
            min_size=1,
            max_size=30,
        )
    )
    return REDIRECT + token


@st.composite
def _chunks(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["web", "web", "web", "redirect", "redirect", "retrieved", "maps"]))
    title = draw(st.sampled_from(TITLES))
    if kind == "web":
        body: dict[str, Any] = {"uri": draw(st.sampled_from(PAGES))}
        if title is not None:
            body["title"] = title
        if draw(st.booleans()) and draw(st.booleans()):
            body["domain"] = draw(
                st.sampled_from(["example.com", "www.Example.com", "not a domain"])
            )
        return {"web": body}
    if kind == "redirect":
        body = {"uri": _redirect(draw)}
        if title is not None:
            body["title"] = title
        return {"web": body}
    if kind == "retrieved":
        body = {"text": draw(st.sampled_from(["Manutenção anual.", "E10", ""]))}
        if draw(st.booleans()):
            body["uri"] = draw(st.sampled_from(["gs://bucket/doc.pdf", "https://example.com/a"]))
        if draw(st.booleans()):
            body["title"] = draw(st.sampled_from(["doc.pdf", "Notas"]))
        if draw(st.booleans()):
            body["pageNumber"] = draw(st.integers(1, 5))
        if not (body.get("uri") or body.get("title") or body["text"]):
            body["title"] = "untitled"
        return {"retrievedContext": body}
    body = {"title": draw(st.sampled_from(["Casa Labra", "Lhardy"]))}
    if draw(st.booleans()):
        body["placeId"] = draw(st.sampled_from(["places/A", "places/B"]))
    if draw(st.booleans()):
        body["uri"] = draw(
            st.sampled_from(["https://maps.google.com/?cid=1", "https://maps.google.com/?cid=2"])
        )
    return {"maps": body}


@st.composite
def _clean_responses(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed response: every support valid."""
    parts: list[dict[str, Any]] = []
    texts: list[tuple[int, str, list[tuple[int, int]]]] = []
    for kind in draw(
        st.lists(st.sampled_from(["text", "text", "thought", "call"]), min_size=1, max_size=4)
    ):
        if kind == "call":
            parts.append({"functionCall": {"name": "f", "args": {"some_arg": 1}}})
        elif kind == "thought":
            parts.append({"text": draw(_sentences()), "thought": True})
        else:
            text, spans = draw(_texts())
            texts.append((len(parts), text, spans))
            parts.append({"text": text})
    chunks = draw(st.lists(_chunks(), max_size=6))
    supports = []
    if texts and chunks:
        for _ in range(draw(st.integers(0, 5))):
            index, text, spans = draw(st.sampled_from(texts))
            first = draw(st.integers(0, len(spans) - 1))
            last = draw(st.integers(first, len(spans) - 1))
            start, end = spans[first][0], spans[last][1]
            start = draw(st.integers(start, max(start, end - 1)))  # maybe inside a word
            byte_start, byte_end = len(text[:start].encode()), len(text[:end].encode())
            segment: dict[str, Any] = {"endIndex": byte_end}
            if byte_start or draw(st.booleans()):
                segment["startIndex"] = byte_start
            first_text = texts[0][0]
            if index != first_text or draw(st.booleans()):
                segment["partIndex"] = index
            if draw(st.booleans()):
                segment["text"] = text[start:end]
            indices = draw(st.lists(st.integers(0, len(chunks) - 1), min_size=1, max_size=3))
            support: dict[str, Any] = {"segment": segment, "groundingChunkIndices": indices}
            if draw(st.booleans()):
                support["confidenceScores"] = draw(
                    st.lists(st.floats(0, 1), min_size=len(indices), max_size=len(indices))
                )
            supports.append(support)
    grounding: dict[str, Any] = {"groundingChunks": chunks, "groundingSupports": supports}
    if draw(st.booleans()):
        grounding["webSearchQueries"] = ["café 東京 😀"]
        grounding["searchEntryPoint"] = {"renderedContent": "<div></div>"}
    candidate: dict[str, Any] = {}
    if draw(st.booleans()):
        joined = "".join(t for _, t, _ in texts)
        entries: list[dict[str, Any]] = [{}] if draw(st.booleans()) else []
        if joined:
            end = draw(st.integers(1, len(joined)))
            start = draw(st.integers(0, end - 1))
            entries.append(
                {
                    "startIndex": len(joined[:start].encode()),
                    "endIndex": len(joined[:end].encode()),
                    "uri": draw(st.sampled_from(PAGES)),
                }
            )
        entries.append({"uri": draw(st.sampled_from(PAGES))})
        candidate["citationMetadata"] = {"citationSources": entries}
    response = _response(parts, grounding if draw(st.booleans()) or chunks else None, **candidate)
    return _sdk_dump(response) if draw(st.booleans()) else response


@given(_clean_responses())
def test_clean_responses_are_read_by_the_sink(data: dict[str, Any]) -> None:
    _sink_reads(data)


def _distinct_source(draw: st.DrawFn, n: int) -> dict[str, Any]:
    """A web chunk of its own page: the n-th site, or a redirect with a title."""
    if draw(st.booleans()):
        return _web(_redirect(draw) + f"x{n}", draw(st.sampled_from(TITLES)))
    return _web(f"https://s{n}.example.{draw(st.sampled_from(['com', 'org', 'co.uk']))}/p")


@st.composite
def _reordered_responses(draw: st.DrawFn) -> dict[str, Any]:
    """Several sources whose order in the text, in the chunks and in the supports all differ."""
    sentences = draw(st.lists(_sentences(), min_size=2, max_size=6))
    text = " ".join(sentences)
    chunks = [_distinct_source(draw, n) for n in range(len(sentences) + draw(st.integers(0, 2)))]
    # Which chunks each sentence cites (the first one its own), in an order of their own.
    cited_by = draw(st.permutations(range(len(chunks))))
    supports = []
    offset = 0
    for n, sentence in enumerate(sentences):
        start = len(text[:offset].encode())
        segment: dict[str, Any] = {"endIndex": start + len(sentence.encode())}
        if start or draw(st.booleans()):
            segment["startIndex"] = start
        if draw(st.booleans()):
            segment["text"] = sentence
        others = draw(st.lists(st.integers(0, len(chunks) - 1), max_size=2))
        supports.append({"segment": segment, "groundingChunkIndices": [cited_by[n], *others]})
        offset += len(sentence) + 1
    supports = draw(st.permutations(supports))
    candidate: dict[str, Any] = {}
    if draw(st.booleans()):
        # Recitations too, listed against the text's order.
        entries = []
        offset = 0
        for n, sentence in enumerate(sentences):
            start = len(text[:offset].encode())
            entries.append(
                {
                    "startIndex": start,
                    "endIndex": start + len(sentence.encode()),
                    "uri": f"https://r{len(sentences) - n}.example.net/",
                }
            )
            offset += len(sentence) + 1
        candidate["citationMetadata"] = {"citationSources": draw(st.permutations(entries))}
    grounding = {"groundingChunks": chunks, "groundingSupports": supports}
    response = _response([{"text": text}], grounding, **candidate)
    return _sdk_dump(response) if draw(st.booleans()) else response


@given(_reordered_responses())
def test_sources_in_any_order_are_read_by_the_sink(data: dict[str, Any]) -> None:
    _sink_reads(data)
    row = fast_row(data)
    assert row is not None
    assert row["citations"] >= 2
    assert row["sources"] >= 2


ODD_VALUES = [
    None,
    "",
    0,
    -1,
    1,
    3,
    2.5,
    1.0,
    True,
    "7",
    "x",
    "https://example.com/a",
    REDIRECT + "AUZ",
    [],
    {},
    [0],
    [None],
    [0.5, 2],
    {"uri": "https://example.com/a"},
    {"web": {"uri": "https://example.com/a"}},
    10**6,
    "Le caf\ud800",
]
ODD_KEYS = [
    "text",
    "thought",
    "partIndex",
    "part_index",
    "startIndex",
    "start_index",
    "endIndex",
    "end_index",
    "uri",
    "title",
    "domain",
    "webSearch_queries",
    "search_entry_point",
    "groundingChunkIndices",
    "grounding_chunk_indices",
    "groundingChunk_indices",
    "confidenceScores",
    "segment",
    "citations",
    "sources",
    "retrievalMetadata",
    "groundingAttributions",
    "retrieved_context",
    "maps",
    "image",
    "placeId",
    "pageNumber",
    "candidates",
    "promptFeedback",
    "answer",
    "content",
    "Text",
    "START_INDEX",
    "type",
    "url",
    "annotations",
    "status",
    "steps",
]


def _odd(draw: st.DrawFn) -> Any:
    return copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))  # never edit the shared ones


def _mutate(data: dict[str, Any], draw: st.DrawFn) -> None:
    """One hostile edit: an odd value, a dropped or doubled entry, a shifted offset."""
    node = draw(st.sampled_from(json_nodes(data)))
    action = draw(st.sampled_from(["set", "set", "drop", "double", "shift"]))
    if isinstance(node, list):
        if not node:
            node.append(_odd(draw))
        elif action == "double":
            node.append(copy.deepcopy(draw(st.sampled_from(node))))
        elif action == "drop":
            node.pop(draw(st.integers(0, len(node) - 1)))
        else:
            node[draw(st.integers(0, len(node) - 1))] = _odd(draw)
        return
    key = (
        draw(st.sampled_from(sorted(node) + ODD_KEYS)) if node else draw(st.sampled_from(ODD_KEYS))
    )
    if action == "drop":
        node.pop(key, None)
    elif (
        action == "shift" and isinstance(node.get(key), int) and not isinstance(node.get(key), bool)
    ):
        node[key] += draw(st.sampled_from([-2, -1, 1, 2, 3]))
    elif action == "double" and key in node:
        node[draw(st.sampled_from(ODD_KEYS))] = copy.deepcopy(node[key])
    else:
        node[key] = _odd(draw)


@given(st.data())
def test_hostile_responses_agree(data: st.DataObject) -> None:
    response = data.draw(_clean_responses())
    for _ in range(data.draw(st.integers(1, 3))):
        _mutate(response, data.draw)
    assert_rows_agree(response)


@st.composite
def _clean_interactions(draw: st.DrawFn) -> dict[str, Any]:
    results = [
        {
            "url": draw(st.sampled_from([*PAGES, _redirect(draw)])),
            "title": draw(st.sampled_from(TITLES)),
        }
        for _ in range(draw(st.integers(0, 3)))
    ]
    steps: list[dict[str, Any]] = [
        {"type": "user_input", "content": [{"type": "text", "text": "?"}]},
        {"type": "google_search_call", "id": "c", "arguments": {"queries": ["café"]}},
        {
            "type": "google_search_result",
            "call_id": "c",
            "result": [{k: v for k, v in r.items() if v is not None} for r in results],
        },
    ]
    for _ in range(draw(st.integers(1, 2))):
        text, spans = draw(_texts())
        annotations = []
        for _ in range(draw(st.integers(0, 4))):
            first = draw(st.integers(0, len(spans) - 1))
            start, end = spans[first]
            start = draw(st.integers(start, end - 1))
            annotation: dict[str, Any] = {"end_index": len(text[:end].encode())}
            if start or draw(st.booleans()):
                annotation["start_index"] = len(text[:start].encode())
            if draw(st.booleans()):
                annotation.update(
                    type="url_citation", url=draw(st.sampled_from([*PAGES, REDIRECT + "AUZ"]))
                )
                if draw(st.booleans()):
                    annotation["title"] = draw(st.sampled_from(["wikipedia.org", "Teide"]))
            elif draw(st.booleans()):
                annotation.update(
                    type="file_citation",
                    file_name="doc.pdf",
                    document_uri=draw(st.sampled_from(["gs://b/doc.pdf", "files/abc", ""])),
                )
            else:
                annotation["source"] = draw(st.sampled_from([*PAGES, "Memoria 2023"]))
            annotations.append(annotation)
        steps.append(
            {
                "type": "model_output",
                "content": [{"type": "text", "text": text, "annotations": annotations}],
            }
        )
    return {"id": "v1_x", "status": "completed", "model": "gemini-3-flash-preview", "steps": steps}


@given(_clean_interactions())
def test_clean_interactions_are_read_by_the_sink(data: dict[str, Any]) -> None:
    _sink_reads(data)


@st.composite
def _reordered_interactions(draw: st.DrawFn) -> dict[str, Any]:
    """Search results, annotations and the text each list the sources in an order of their own."""
    sentences = draw(st.lists(_sentences(), min_size=2, max_size=6))
    text = " ".join(sentences)
    urls = [
        draw(st.sampled_from([f"https://s{n}.example.org/p", REDIRECT + f"AUZ{n}"]))
        for n in range(len(sentences))
    ]
    titles = {url: draw(st.sampled_from(["wikipedia.org", "Teide", "bbc.co.uk"])) for url in urls}
    results = [{"url": url, "title": titles[url]} for url in draw(st.permutations(urls))]
    order = draw(st.permutations(range(len(sentences))))
    annotations = []
    offset = 0
    for n, sentence in enumerate(sentences):
        start = len(text[:offset].encode())
        annotation: dict[str, Any] = {"end_index": start + len(sentence.encode())}
        if start or draw(st.booleans()):
            annotation["start_index"] = start
        url = urls[order[n]]
        annotation.update(type="url_citation", url=url, title=titles[url])
        annotations.append(annotation)
        offset += len(sentence) + 1
    steps: list[dict[str, Any]] = [
        {"type": "google_search_call", "id": "c", "arguments": {"queries": ["café"]}},
        {"type": "google_search_result", "call_id": "c", "result": results},
        {
            "type": "model_output",
            "content": [
                {"type": "text", "text": text, "annotations": draw(st.permutations(annotations))}
            ],
        },
    ]
    return {"id": "v1_x", "status": "completed", "model": "gemini-3-flash-preview", "steps": steps}


@given(_reordered_interactions())
def test_interaction_sources_in_any_order_are_read_by_the_sink(data: dict[str, Any]) -> None:
    _sink_reads(data)


@given(st.data())
def test_hostile_interactions_agree(data: st.DataObject) -> None:
    interaction = data.draw(_clean_interactions())
    for _ in range(data.draw(st.integers(1, 3))):
        _mutate(interaction, data.draw)
    assert_rows_agree(interaction)


# --- what the analytics sink takes for granted -----------------------------------------------


@given(st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-=", min_size=1))
def test_a_vertex_redirect_is_its_own_page_key(token: str) -> None:
    url = REDIRECT + token
    assert page_key(url) == url
    assert normalize_url(url) == url
    assert is_redirect_url(url)


def test_rows_survive_json() -> None:
    row = fast_row(SEARCH)
    assert row is not None
    assert json.loads(json.dumps(row)) == row
