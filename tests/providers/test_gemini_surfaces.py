"""Gemini / Vertex surfaces beyond ``groundingChunks``: claim boundaries, the Interactions API,
the other keys grounding shows up under, and what a REQUIRED-grounding router reads.

Fixtures under ``tests/data/providers/`` are written from the documented formats:

- ``gemini_interaction_google_search.json`` / ``_stream.json``: an ``Interaction`` of the
  Interactions API (``steps``: ``thought``, ``google_search_call``, ``google_search_result``,
  ``model_output`` with ``url_citation`` annotations in UTF-8 bytes) and its event stream
  (``interaction.created``, ``step.start`` / ``step.delta`` (``text``, ``text_annotation_delta``,
  ``thought_summary``, ``thought_signature``) / ``step.stop``, ``interaction.completed`` with
  its steps left out), after google-genai's ``_interactions`` types;
- ``gemini_interaction_outputs_beta.json``: the first beta's flat ``outputs`` with untyped
  ``{source, start_index, end_index}`` annotations;
- ``vertex_grounding_attributions.json``: Vertex AI v1beta1 ``groundingAttributions``
  (``segment``, ``confidenceScore``, ``web`` / ``retrievedContext``);
- ``gemini_generate_answer_attributions.json``: a Gemini API ``GenerateAnswerResponse`` whose
  candidate carries ``groundingAttributions`` (``sourceId.groundingPassage`` /
  ``semanticRetrieverChunk``, ``content``);
- ``vertex_grounding_keys_snake.json``: an SDK ``model_dump()`` (snake_case, nulls) with
  grounding under ``citations``, ``cited_sources``, ``supporting_content``, ``sources``,
  ``web_search_sources`` and ``retrieval_metadata``. No public schema fixes these entries: they
  follow the places the seed names (``source.url``, ``reference.url``, ``web.uri``, ``host``).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest
from providers._fixtures import cassette_bodies, load_json
from providers.contract import ProviderContract, assert_same_answer, check_invariants

from unicite import CitationError, PageLocation
from unicite.providers import StreamCollector, collect_stream, detect_provider, extract

REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
CASSETTES = "providers/test_gemini_sdk"
_CAMEL = re.compile(r"_([a-z0-9])")


def fixture(name: str) -> Any:
    return load_json(f"providers/{name}.json")


def cassette(name: str) -> Any:
    return copy.deepcopy(cassette_bodies(f"{CASSETTES}/{name}.yaml")[0])


def camel_case(value: Any) -> Any:
    """The REST shape of an SDK dump: camelCase keys, no nulls."""
    if isinstance(value, dict):
        return {
            _CAMEL.sub(lambda m: m.group(1).upper(), k): camel_case(v)
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        return [camel_case(item) for item in value]
    return value


def response(text: str, *supports: dict[str, Any], chunks: int = 1) -> dict[str, Any]:
    """A documented ``GenerateContentResponse`` with web chunks and the given supports."""
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "groundingMetadata": {
                    "webSearchQueries": ["consulta"],
                    "groundingChunks": [
                        {"web": {"uri": f"{REDIRECT}chunk{n}", "title": f"sitio{n}.es"}}
                        for n in range(chunks)
                    ],
                    "groundingSupports": list(supports),
                },
            }
        ],
        "modelVersion": "gemini-2.5-flash",
    }


def support(text: str, piece: str, *, at: int = 0, claimed: str | None = None) -> dict[str, Any]:
    """A support whose byte offsets slice `piece` (its n-th occurrence from `at`)."""
    start = text.index(piece, at)
    segment = {
        "startIndex": len(text[:start].encode()),
        "endIndex": len(text[: start + len(piece)].encode()),
        "text": piece if claimed is None else claimed,
    }
    return {"segment": segment, "groundingChunkIndices": [0], "confidenceScores": [0.9]}


class TestGeminiSurfacesContract(ProviderContract):
    provider = "gemini"
    mutation_budget = 250

    def final_cases(self) -> dict[str, Any]:
        names = (
            "gemini_interaction_google_search",
            "gemini_interaction_outputs_beta",
            "vertex_grounding_attributions",
            "gemini_generate_answer_attributions",
            "vertex_grounding_keys_snake",
        )
        return {name: fixture(name) for name in names}

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        return {
            "interaction": (
                fixture("gemini_interaction_google_search_stream"),
                fixture("gemini_interaction_google_search"),
            )
        }


# --- 1. claim boundaries never fall inside a word ----------------------------------------------


def test_a_segment_starting_mid_version_number_cites_the_whole_number() -> None:
    text = "La versión estable de la biblioteca es la 4.0.6. Corrige el cálculo de años bisiestos."
    answer = extract(response(text, support(text, "6.", at=text.index("4.0.6"))), strict=True)
    (citation,) = answer.citations
    assert citation.text == "4.0.6."
    assert citation.extras["provider_span"] == [text.index("6."), text.index("6.") + 2]
    check_invariants(answer)


def test_a_segment_ending_mid_word_is_widened_to_its_end() -> None:
    text = "Sevilla acoge la Giralda, campanario de la catedral desde el siglo XVI."
    piece = "Sevilla acoge la Gira"
    answer = extract(response(text, support(text, piece)), strict=True)
    assert answer.citations[0].text == "Sevilla acoge la Giralda"


@pytest.mark.parametrize(
    ("text", "piece", "cited"),
    [
        (
            "L’abbaye du Mont-Saint-Michel domine la baie.",
            "abbaye du Mont",
            "L’abbaye du Mont-Saint-Michel",
        ),
        ("Le viaduc mesure 2 460 mètres.", "460 mètres.", "460 mètres."),
        ("Le pont fait 2\u202f460 mètres.", "460 mètres.", "2\u202f460 mètres."),
        ("O Cristo Redentor tem 38 m; foi inaugurado em 1931.", "foi inaugurado", "foi inaugurado"),
    ],
    ids=[
        "apostrophe-and-hyphens",
        "space-separates",
        "narrow-no-break-space-groups-digits",
        "whole-words",
    ],
)
def test_word_rule(text: str, piece: str, cited: str) -> None:
    answer = extract(response(text, support(text, piece)), strict=True)
    assert answer.citations[0].text == cited


def test_boundaries_in_scripts_without_spaces_stand() -> None:
    text = "富士山の標高は3776メートルです。最後の噴火は1707年の宝永大噴火でした。"
    piece = "最後の噴火は1707年"
    answer = extract(response(text, support(text, piece)), strict=True)
    assert answer.citations[0].text == piece
    assert "provider_span" not in answer.citations[0].extras


def test_a_word_too_long_to_widen_to_is_left_uncited() -> None:
    digest = "a3f9" * 80
    text = f"El hash del fichero es {digest} y no cambia."
    answer = extract(response(text, support(text, digest[10:40])))
    assert answer.citations == []
    (diagnostic,) = answer.diagnostics
    assert diagnostic.endswith("falls inside a word too long to widen to; left uncited")


# --- 1. a segment whose text contradicts its offsets --------------------------------------------


def test_contradicting_text_is_cited_at_its_occurrence_nearest_the_offsets() -> None:
    text = (
        "**Alhambra:** palacio nazarí del siglo XIII. "
        "**Mezquita:** templo omeya de Córdoba. "
        "**Alhambra:** declarada Patrimonio de la Humanidad en 1984."
    )
    # The offsets slice the second "**Mezquita:**" line, the text names "**Alhambra:**": the
    # occurrence nearest the offsets is the second one.
    wrong = support(text, "templo omeya de Córdoba.", claimed="**Alhambra:**")
    answer = extract(response(text, wrong))
    (citation,) = answer.citations
    second = text.index("**Alhambra:**", 1)
    assert (citation.start, citation.text) == (second, "**Alhambra:**")
    (diagnostic,) = answer.diagnostics
    assert "text '**Alhambra:**' differs from 'templo omeya de Córdoba.'" in diagnostic
    assert diagnostic.endswith(f"located its text at {second}..{second + 13} instead")
    with pytest.raises(CitationError):
        extract(response(text, wrong), strict=True)


def test_contradicting_text_found_nowhere_is_left_uncited() -> None:
    text = "La Sagrada Familia se empezó en 1882."
    wrong = support(text, "se empezó en 1882.", claimed="se terminó en 2026.")
    answer = extract(response(text, wrong))
    assert answer.citations == []
    (diagnostic,) = answer.diagnostics
    assert diagnostic.endswith("and its text 'se terminó en 2026.' is not in the answer")
    assert len(answer.sources) == 1  # the source stays, uncited


def test_contradicting_text_located_mid_word_is_widened() -> None:
    text = "Valencia celebra las Fallas en marzo; las Fallas duran cinco días."
    wrong = support(text, "Valencia celebra", claimed="allas duran")
    answer = extract(response(text, wrong))
    assert answer.citations[0].text == "Fallas duran"
    assert len(answer.diagnostics) == 1


def test_a_whitespace_only_difference_is_no_contradiction() -> None:
    text = "Toledo es la ciudad de las tres culturas.\n"
    ok = support(text, "Toledo es la ciudad de las tres culturas.\n")
    ok["segment"]["text"] = "Toledo es la ciudad de las tres culturas."
    answer = extract(response(text, ok), strict=True)
    assert answer.citations[0].text == "Toledo es la ciudad de las tres culturas.\n"


def test_a_stream_does_not_announce_a_claim_its_next_chunk_may_widen() -> None:
    text = "El acueducto de Segovia tiene 167 arcos y mide 28,5 metros en su punto más alto."
    final = response(text, support(text, "El acueducto de Segovia tiene 167 arcos y mide 28"))
    cut = text.index(",5 metros")
    head = copy.deepcopy(final)
    head["candidates"][0]["content"]["parts"][0]["text"] = text[:cut]
    del head["candidates"][0]["finishReason"]
    tail = {"candidates": [{"content": {"role": "model", "parts": [{"text": text[cut:]}]}}]}
    tail["candidates"][0]["finishReason"] = "STOP"
    collector = StreamCollector()
    counts = [len(collector.feed(event)) for event in (head, tail)]
    # Grounding came with the first chunk, whose text ends inside "28,5": the claim waits.
    assert counts == [0, 1]
    answer = collector.result()
    assert answer.citations[0].text.endswith("mide 28,5")
    assert answer.diagnostics == []
    assert answer == extract(final)


# --- 2. the Interactions API ---------------------------------------------------------------------


def test_interaction_final_reads_text_annotations_and_tools() -> None:
    interaction = fixture("gemini_interaction_google_search")
    answer = extract(interaction, strict=True)
    assert detect_provider(interaction) == "gemini"
    assert answer.provider == "gemini"
    assert answer.model == "gemini-3-flash-preview"
    text = interaction["steps"][4]["content"][0]["text"]
    assert answer.text == text
    assert [(c.text, len(c.source_ids)) for c in answer.citations] == [
        (
            "A Ponte 25 de Abril, em Lisboa, foi inaugurada a 6 de agosto de 1966 com o nome de "
            "Ponte Salazar.",
            2,
        ),
        ("277 metros de comprimento e o tabuleiro rodoviário fica a 70 m acima do Tejo.", 1),
        ("A ligação ferroviária, no tabuleiro inferior, só abriu em 1999.", 1),
    ]
    # Byte offsets: the third annotation starts at byte 183, at str index 182.
    annotation = interaction["steps"][4]["content"][0]["annotations"][3]
    assert annotation["start_index"] == 183
    assert answer.citations[2].start == 182
    # The second claim started inside "2 277": widened to the number.
    assert answer.citations[1].extras == {"provider_span": [105, 181]}
    assert answer.citations[1].raw == [interaction["steps"][4]["content"][0]["annotations"][2]]
    wiki, infra, lisboa = answer.sources
    assert (wiki.redirect, wiki.domain, wiki.title) == (True, "wikipedia.org", "pt.wikipedia.org")
    assert infra.domain == "infraestruturasdeportugal.pt"
    assert (lisboa.redirect, lisboa.domain) == (False, "visitlisboa.com")
    assert answer.extras["web_search_queries"] == [
        "Ponte 25 de Abril inauguração",
        "Ponte 25 de Abril comprimento tabuleiro",
    ]
    assert answer.extras["search_entry_point"].startswith("<style>")
    assert answer.extras["thoughts"][0].startswith("**À procura")
    assert answer.extras["interaction_id"] == interaction["id"]
    assert (answer.extras["grounded_effective"], answer.extras["tool_calls"]) == (True, 1)
    check_invariants(answer)


def test_interaction_stream_is_the_final_interaction_live_and_at_the_end() -> None:
    events = fixture("gemini_interaction_google_search_stream")
    final = extract(fixture("gemini_interaction_google_search"))
    collector = StreamCollector()
    announced = [item.citation for event in events for item in collector.feed(event)]
    answer = collector.result()
    assert_same_answer(answer, final)
    # Live = final: each citation is announced once, with its final offsets; the last one
    # ("... em 1999.") waits for the end, as "1999." could still grow into "1999.5".
    assert sorted(announced, key=lambda c: (c.start, c.end)) == final.citations
    assert announced[-1].text.endswith("1999.")


def test_interaction_stream_as_sse_text() -> None:
    events = fixture("gemini_interaction_google_search_stream")
    sse = "".join(
        f"event: {e['event_type']}\ndata: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events
    )
    final = extract(fixture("gemini_interaction_google_search"))
    assert collect_stream(sse + "data: [DONE]\n\n") == final
    assert extract(sse) == final


def test_interaction_stream_cut_short_says_so() -> None:
    events = fixture("gemini_interaction_google_search_stream")
    answer = collect_stream(events[:-1])
    assert answer.diagnostics == [
        "stream ended before interaction.completed: the answer may be cut short"
    ]
    assert len(answer.citations) == 3
    check_invariants(answer)


def test_interaction_stream_error_event_is_a_diagnostic() -> None:
    events = fixture("gemini_interaction_google_search_stream")[:5]
    events.append(
        {"event_type": "error", "error": {"code": "unavailable", "message": "Sobrecarga"}}
    )
    answer = collect_stream(events)
    assert "the interaction stream reported an error: unavailable: Sobrecarga" in answer.diagnostics


def test_interaction_as_an_sdk_dump_reads_the_same() -> None:
    interaction = fixture("gemini_interaction_google_search")
    dumped = copy.deepcopy(interaction)
    dumped.update(previous_interaction_id=None, agent=None, system_instruction=None)
    for step in dumped["steps"]:
        step.setdefault("signature", None)
    assert extract(dumped) == extract(interaction)


def test_a_first_beta_sdk_dump_with_null_steps_is_an_interaction() -> None:
    beta = fixture("gemini_interaction_outputs_beta")
    dumped = {**copy.deepcopy(beta), "steps": None}  # a newer SDK's field, unset
    assert detect_provider(dumped) == "gemini"
    assert extract(dumped) == extract(beta)


def test_first_beta_outputs_and_untyped_annotations() -> None:
    beta = fixture("gemini_interaction_outputs_beta")
    answer = extract(beta, strict=True)
    assert [c.text for c in answer.citations] == [
        "El Teide, en Tenerife, es el pico más alto de España: mide 3 715 metros.",
        "Su última erupción, la del Chinyero, fue en 1909.",
        "4,4 millones de visitas.",  # the annotation started inside "4,4"
    ]
    wiki, volcanes, memoria = (answer.source(c.source_ids[0]) for c in answer.citations)
    assert wiki is not None
    assert volcanes is not None
    assert memoria is not None
    assert (wiki.url, wiki.title) == (
        "https://es.wikipedia.org/wiki/Teide",
        "Teide - Wikipedia, la enciclopedia libre",
    )
    assert (memoria.kind, memoria.url, memoria.title) == (
        "document",
        None,
        "Parque Nacional del Teide — Memoria anual 2023",
    )
    assert answer.extras["search_entry_point"].startswith('<div class="chips">')
    assert (answer.extras["grounded_effective"], answer.extras["tool_calls"]) == (True, 1)


def test_first_beta_content_events_read_like_the_final() -> None:
    beta = fixture("gemini_interaction_outputs_beta")
    events: list[dict[str, Any]] = [
        {
            "event_type": "interaction.start",
            "interaction": {**beta, "outputs": [], "status": "in_progress"},
        }
    ]
    for n, output in enumerate(beta["outputs"]):
        if output["type"] == "text":
            text, annotations = output["text"], output["annotations"]
            events.append({"event_type": "content.start", "index": n, "content": {"type": "text"}})
            for piece in (text[:50], text[50:120], text[120:]):
                events.append(
                    {
                        "event_type": "content.delta",
                        "index": n,
                        "delta": {"type": "text", "text": piece},
                    }
                )
            events.append(
                {
                    "event_type": "content.delta",
                    "index": n,
                    "delta": {"type": "text", "text": "", "annotations": annotations},
                }
            )
        else:
            events.append({"event_type": "content.start", "index": n, "content": output})
        events.append({"event_type": "content.stop", "index": n})
    events.append({"event_type": "interaction.complete", "interaction": {**beta, "outputs": []}})
    assert_same_answer(collect_stream(events), extract(beta))


def test_file_and_place_citations() -> None:
    interaction = fixture("gemini_interaction_google_search")
    block = interaction["steps"][4]["content"][0]
    block["annotations"][3] = {
        "type": "file_citation",
        "document_uri": "fileSearchStores/pontes-lisboa-8k2/documents/relatorio-1999",
        "file_name": "relatório-ferrovia-1999.pdf",
        "page_number": 12,
        "start_index": block["annotations"][3]["start_index"],
        "end_index": block["annotations"][3]["end_index"],
    }
    block["annotations"][2] = {
        "type": "place_citation",
        "place_id": "places/ChIJ8cPJp9wzGQ0Rm3Kj7x1fS2A",
        "name": "Ponte 25 de Abril",
        "url": "https://maps.google.com/?cid=1234567890",
        "review_snippets": [{"review_id": "r9", "title": "Vista incrível"}],
        "start_index": block["annotations"][2]["start_index"],
        "end_index": block["annotations"][2]["end_index"],
    }
    answer = extract(interaction, strict=True)
    place = answer.source(answer.citations[1].source_ids[0])
    document = answer.source(answer.citations[2].source_ids[0])
    assert place is not None
    assert document is not None
    assert (place.kind, place.provider_id, place.title) == (
        "place",
        "places/ChIJ8cPJp9wzGQ0Rm3Kj7x1fS2A",
        "Ponte 25 de Abril",
    )
    assert place.extras == {"review_snippets": [{"review_id": "r9", "title": "Vista incrível"}]}
    assert (document.kind, document.url, document.title) == (
        "document",
        None,
        "relatório-ferrovia-1999.pdf",
    )
    assert document.provider_id == "fileSearchStores/pontes-lisboa-8k2/documents/relatorio-1999"
    assert answer.citations[2].location == PageLocation(start_page=12, end_page=13)


def _inside_c_cedilla(text: str) -> int:
    return len(text[: text.index("ç")].encode()) + 1


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"end_index": 9_999}, "byte offsets 183..9999 do not fit the text block (250 bytes)"),
        ({"end_index": _inside_c_cedilla}, "byte offsets 183..{inside} fall inside a character"),
        ({"end_index": None}, "no end_index; left uncited"),
        ({"type": "hologram_citation"}, "unknown annotation type 'hologram_citation'"),
    ],
    ids=["past-the-block", "inside-a-character", "no-end", "unknown-type"],
)
def test_unusable_annotations_are_left_uncited(change: dict[str, Any], problem: str) -> None:
    interaction = fixture("gemini_interaction_google_search")
    block = interaction["steps"][4]["content"][0]
    annotation = block["annotations"][3]
    for key, value in change.items():
        if value is None:
            del annotation[key]
        else:
            annotation[key] = value(block["text"]) if callable(value) else value
    answer = extract(interaction)
    assert len(answer.citations) == 2
    (diagnostic,) = answer.diagnostics
    assert diagnostic.startswith("steps[4].content[0].annotations[3]: ")
    assert problem.format(inside=_inside_c_cedilla(block["text"])) in diagnostic


def test_a_failed_interaction_says_so() -> None:
    interaction = fixture("gemini_interaction_google_search")
    interaction["status"] = "incomplete"
    answer = extract(interaction)
    assert answer.diagnostics == ["interaction status is incomplete: the answer may be incomplete"]
    assert len(answer.citations) == 3


# --- 3. the other keys grounding shows up under ---------------------------------------------------


def test_every_grounding_key_gives_sources_preferring_end_sites() -> None:
    dumped = fixture("vertex_grounding_keys_snake")
    answer = extract(dumped, strict=True)
    by_key = {s.extras.get("grounding_key"): s for s in answer.sources}
    # citations / cited_sources name the end sites behind the chunks' redirects: the chunks'
    # sources take them, and remember the redirect.
    gard, unesco = (answer.source(c.source_ids[0]) for c in answer.citations)
    assert gard is not None
    assert unesco is not None
    assert (gard.url, gard.redirect, gard.domain) == (
        "https://www.pontdugard.fr/fr/le-monument",
        False,
        "pontdugard.fr",
    )
    assert gard.extras["redirect_url"] == f"{REDIRECT}AUZIYQHpontdugard01"
    assert (unesco.url, unesco.domain) == ("https://whc.unesco.org/fr/list/344/", "unesco.org")
    assert gard is by_key["citations"] or gard.id == by_key["citations"].id
    # Every key read; every source has a domain, from its end-site URL, a host, or its title.
    assert set(by_key) == {
        "citations",
        "citedSources",
        "supportingContent",
        "sources",
        "webSearchSources",
        "retrievalMetadata",
    }
    nimes = by_key["supportingContent"]
    assert (nimes.redirect, nimes.domain, nimes.snippet) == (
        True,
        "nimes-tourisme.com",
        "À 25 km de Nîmes, le pont du Gard franchit le Gardon.",
    )
    assert by_key["retrievalMetadata"].domain == "culture.gouv.fr"
    assert by_key["sources"].domain == "wikipedia.org"
    assert by_key["webSearchSources"].url == "https://www.gard-tourisme.com/pont-du-gard"
    assert all(s.domain for s in answer.sources)
    assert answer.extras["retrieval_metadata"]["googleSearchDynamicRetrievalScore"] == 0.77
    assert (answer.extras["grounded_effective"], answer.extras["tool_calls"]) == (True, 1)


def test_the_rest_shape_reads_like_the_sdk_dump() -> None:
    dumped = fixture("vertex_grounding_keys_snake")
    assert_same_answer(extract(camel_case(dumped)), extract(dumped))


def test_vertex_grounding_attributions_are_cited_by_their_segments() -> None:
    answer = extract(fixture("vertex_grounding_attributions"), strict=True)
    assert [(c.text, c.confidence) for c in answer.citations] == [
        ("Il Duomo di Milano è stato iniziato nel 1386 e completato solo nel 1965.", 0.93),
        ("La Madonnina, in cima alla guglia maggiore, si trova a 108,5 metri d’altezza.", 0.81),
        ("108,5 metri d’altezza.", 0.64),  # the segment started inside "108,5"
    ]
    duomo, madonnina, scheda = answer.sources
    assert (duomo.url, duomo.domain) == (
        "https://www.duomomilano.it/it/infopage/storia/",
        "duomomilano.it",
    )
    assert madonnina.title == "Madonnina - Wikipedia"
    assert (scheda.kind, scheda.url) == ("document", "gs://guide-milano/duomo-scheda-tecnica.pdf")
    assert answer.extras["web_search_queries"][0] == "Duomo di Milano anno inizio costruzione"


def test_generate_answer_attributions_cite_the_whole_answer() -> None:
    body = fixture("gemini_generate_answer_attributions")
    answer = extract(body, strict=True)
    assert detect_provider(body) == "gemini"
    assert answer.text == body["answer"]["content"]["parts"][0]["text"]
    (citation,) = answer.citations
    assert (citation.start, citation.end) == (0, len(answer.text))
    assert citation.extras == {"grounding_key": "groundingAttributions", "whole_answer": True}
    passage, chunk = answer.sources
    assert (passage.kind, passage.provider_id, passage.title) == (
        "document",
        "passage:schwebebahn-geschichte",
        "schwebebahn-geschichte",
    )
    assert passage.content is not None
    assert passage.content.startswith("Die Schwebebahn wurde")
    assert chunk.provider_id == "corpora/wuppertal-stadtfuehrer/documents/verkehr/chunks/c7x2p"
    assert chunk.extras["corpus"] == "corpora/wuppertal-stadtfuehrer"
    assert answer.extras["answerable_probability"] == 0.91
    # A bare candidate (as frameworks keep it) reads the same.
    assert extract(body["answer"]).citations == answer.citations


def test_cited_sources_as_chunk_indices_add_nothing() -> None:
    body = cassette("test_generate_content_google_search")
    body["candidates"][0]["groundingMetadata"]["citedSources"] = [0, 2]
    assert extract(body, strict=True) == extract(cassette("test_generate_content_google_search"))


def test_undocumented_flat_indices_stay_uncited() -> None:
    body = cassette("test_generate_content_google_search")
    body["candidates"][0]["groundingMetadata"]["citations"] = [
        {"startIndex": 0, "endIndex": 12, "uri": "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"}
    ]
    answer = extract(body)
    assert len(answer.citations) == 7
    assert answer.diagnostics == [
        "candidates[0].groundingMetadata.citations[0]: startIndex/endIndex without a segment "
        "are of no documented unit; kept as an uncited source"
    ]
    assert answer.sources[-1].url == "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"


def test_an_unreadable_entry_is_a_diagnostic() -> None:
    body = cassette("test_generate_content_google_search")
    body["candidates"][0]["groundingMetadata"]["sources"] = ["pas une URL", 7]
    answer = extract(body)
    assert answer.diagnostics == [
        "candidates[0].groundingMetadata.sources[0]: not a URL; skipped",
        "candidates[0].groundingMetadata.sources[1]: expected an object or a URL, got int; skipped",
    ]


# --- 4. what a REQUIRED-grounding router reads ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "grounded", "tool_calls"),
    [
        ("test_generate_content_google_search", True, 1),
        ("test_file_search", True, 1),
        ("test_maps_grounding", True, 1),
        ("test_recitation_citation_metadata", False, 0),
        ("test_blocked_prompt", False, 0),
    ],
)
def test_grounded_effective_and_tool_calls(name: str, grounded: bool, tool_calls: int) -> None:
    answer = extract(cassette(name))
    assert answer.extras["grounded_effective"] is grounded
    assert answer.extras["tool_calls"] == tool_calls


def test_code_and_function_calls_are_tool_calls() -> None:
    body = cassette("test_multi_part_answer")
    parts = body["candidates"][0]["content"]["parts"]
    parts.append({"functionCall": {"name": "orari_tram", "args": {"linea": "28"}}})
    answer = extract(body)
    # One code execution, one function call, and the Google Search grounding tool.
    assert sum("executableCode" in p for p in parts) == 1
    assert answer.extras["tool_calls"] == 3


@pytest.mark.parametrize(
    "metadata",
    [
        {},
        {"groundingChunks": [], "groundingSupports": [], "webSearchQueries": []},
        {"retrievalMetadata": {"googleSearchDynamicRetrievalScore": 0.12}},
    ],
    ids=["empty", "empty-lists", "dynamic-retrieval-declined"],
)
def test_empty_grounding_metadata_did_not_ground(metadata: dict[str, Any]) -> None:
    body = cassette("test_generate_content_google_search")
    body["candidates"][0]["groundingMetadata"] = metadata
    answer = extract(body)
    assert (answer.extras["grounded_effective"], answer.extras["tool_calls"]) == (False, 0)
    assert "web_search_queries" not in answer.extras
