"""Perplexity (``[n]`` markers over ``citations`` or ``search_results``) reader.

Its SDK is not a dependency: the cases are JSON fixtures under ``tests/data/providers``.
"""

from __future__ import annotations

from typing import Any

import pytest
from providers._fixtures import load_json
from providers.contract import ProviderContract

from unicite import CitationError, GroundingRequiredError
from unicite.providers import StreamCollector, collect_stream, detect_provider, extract
from unicite.providers.perplexity import PERPLEXITY


def fixture(name: str) -> Any:
    return load_json(f"providers/{name}.json")


class TestPerplexityContract(ProviderContract):
    provider = "perplexity"
    noisy_cases = frozenset({"unknown-marker"})

    def final_cases(self) -> dict[str, Any]:
        noisy = fixture("perplexity_search_results_only")
        noisy["choices"][0]["message"]["content"] += " Mehr dazu später.[7]"
        return {
            "sonar-pro": fixture("perplexity_sonar_pro"),
            "search-results-only": fixture("perplexity_search_results_only"),
            "unknown-marker": noisy,
            "agent-api": fixture("perplexity_agent_search"),
        }

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        return {
            "sonar-pro": (fixture("perplexity_sonar_pro_stream"), fixture("perplexity_sonar_pro")),
            "agent-api": (
                fixture("perplexity_agent_search_stream"),
                fixture("perplexity_agent_search"),
            ),
        }


def completion(content: Any, citations: list[Any] | None = None, **fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "pplx-1",
        "model": "sonar",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        **fields,
    }
    if citations is not None:
        data["citations"] = citations
    return data


def test_markers_cite_the_claim_they_close() -> None:
    data = fixture("perplexity_sonar_pro")
    answer = extract(data, strict=True)
    text = answer.text
    assert [(c.start, c.end, c.marker_span) for c in answer.citations] == [
        (0, 96, (96, 102)),
        (103, 169, (169, 172)),
        (197, 256, (256, 259)),
        (262, 319, (319, 322)),
    ]
    assert [text[a:b] for a, b in (c.marker_span or (0, 0) for c in answer.citations)] == [
        "[1][3]",
        "[2]",
        "[3]",
        "[4]",
    ]
    assert answer.citations[2].text == "Las obras se financian con donativos y con las entradas 🎟️."
    assert (
        answer.citations[3].text
        == "El templo recibe a muchos visitantes de Japón (日本からの観光客)."
    )
    assert all(c.origin == "native" and c.quote is None for c in answer.citations)


def test_a_run_of_markers_is_one_citation_of_several_sources() -> None:
    data = fixture("perplexity_sonar_pro")
    answer = extract(data)
    first = answer.citations[0]
    assert [answer.source(sid).url for sid in first.source_ids] == [
        data["citations"][0],
        data["citations"][2],
    ]
    assert first.raw == "[1][3]"


def test_sources_keep_the_given_order_and_merge_search_results() -> None:
    data = fixture("perplexity_sonar_pro")
    answer = extract(data)
    by_url = {s.url: s for s in answer.sources}
    for rank, result in enumerate(data["search_results"]):
        source = by_url[result["url"]]
        assert (source.kind, source.title, source.snippet, source.rank) == (
            "web",
            result["title"],
            result["snippet"],
            rank,
        )
        assert source.extras["last_updated"] == result["last_updated"]
        assert source.raw == result
    # Numbered first-cited; the search result no marker cites comes last.
    assert [s.url for s in answer.sources] == [
        data["citations"][0],
        data["citations"][2],
        data["citations"][1],
        data["citations"][3],
        "https://visitas.example.es/horarios",
    ]
    assert answer.extras == {
        "response_id": data["id"],
        "finish_reason": "stop",
        "grounded_effective": True,
    }
    assert answer.model == "sonar-pro"


def test_without_a_citations_list_markers_count_into_search_results() -> None:
    data = fixture("perplexity_search_results_only")
    answer = extract(data, strict=True)
    assert [(c.text, answer.source(c.source_ids[0]).url) for c in answer.citations] == [
        ("Zürich hat rund 447 000 Einwohner.", "https://statistik.example.ch/bevoelkerung"),
        (
            "Die Stadt liegt am Zürichsee 🏞️.",
            "https://enzyklopaedie.example.org/wiki/Z%C3%BCrichsee",
        ),
    ]


def test_unknown_numbers_are_diagnosed() -> None:
    data = completion("Uno.[1][5] Dos.[0]", ["https://a.example.com/", "https://b.example.com/"])
    answer = extract(data)
    assert [(c.text, len(c.source_ids)) for c in answer.citations] == [("Uno.", 1)]
    assert answer.diagnostics == [
        "marker [5] at 7 names no source (2 given)",
        "marker [0] at 15 names no source (2 given)",
    ]
    with pytest.raises(CitationError):
        extract(data, strict=True)


def test_brackets_in_code_and_urls_are_not_markers() -> None:
    text = "Use `items[1]` here.[1] See https://x.example.com/a[2] for more.[2]"
    answer = extract(
        completion(text, ["https://a.example.com/", "https://b.example.com/"]), strict=True
    )
    assert [text[a:b] for a, b in (c.marker_span or (0, 0) for c in answer.citations)] == [
        "[1]",
        "[2]",
    ]
    assert [c.text for c in answer.citations] == [
        "Use `items[1]` here.",
        "See https://x.example.com/a[2] for more.",
    ]


def test_content_parts_and_empty_lists() -> None:
    parts = [{"type": "text", "text": "Première partie. "}, {"type": "text", "text": "Seconde.[1]"}]
    answer = extract(completion(parts, ["https://a.example.com/"]), strict=True)
    assert answer.text == "Première partie. Seconde.[1]"
    assert answer.citations[0].text == "Seconde."
    with pytest.raises(GroundingRequiredError) as info:
        extract(completion("Nothing found.", []), require="citations")
    assert (info.value.provider, info.value.reason) == ("perplexity", "no citations")


def test_detection_needs_citations_or_search_results() -> None:
    assert detect_provider(completion("x", ["https://a.example.com/"])) == "perplexity"
    assert detect_provider(completion("x", search_results=[])) == "perplexity"
    assert detect_provider(completion("x", [1, 2])) != "perplexity"
    assert detect_provider(completion("x", ["https://a.example.com/", 5])) == "perplexity"
    plain_chunk = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "x"}}],
    }
    assert not PERPLEXITY.detect_event(plain_chunk)
    assert PERPLEXITY.detect_event({**plain_chunk, "citations": ["https://a.example.com/"]})


def test_an_entry_that_is_no_url_is_named_and_the_others_kept() -> None:
    answer = extract(
        completion(
            "Zürich wächst [1]. Bern auch [3].", ["https://a.example/zh", 5, "https://b.example/be"]
        )
    )
    assert [source.url for source in answer.sources] == [
        "https://a.example/zh",
        "https://b.example/be",
    ]
    assert [c.source_ids for c in answer.citations] == [
        [answer.sources[0].id],
        [answer.sources[1].id],
    ]
    assert "response.citations[1]: expected a URL string, got 5" in answer.diagnostics


def test_stream_citations_arrive_with_the_last_chunk() -> None:
    chunks = fixture("perplexity_sonar_pro_stream")
    collector = StreamCollector()
    announced = {n: collector.feed(chunk) for n, chunk in enumerate(chunks)}
    answer = collector.result()
    # A marker's claim can depend on the text after it, so it is final with the text.
    assert [n for n, got in announced.items() if got] == [len(chunks) - 1]
    assert [item.citation for item in announced[len(chunks) - 1]] == answer.citations
    assert answer == extract(fixture("perplexity_sonar_pro"))


def test_a_stream_cut_short_says_so() -> None:
    chunks = fixture("perplexity_sonar_pro_stream")
    answer = collect_stream(chunks[:5])
    assert answer.provider == "perplexity"
    assert answer.diagnostics == ["stream ended before a chunk with a finish_reason"]
    assert answer.text == "".join(c["choices"][0]["delta"]["content"] for c in chunks[:5])


def test_perplexity_lists_and_ranges_expand_and_bad_ranges_are_reported() -> None:
    response = {
        "id": "pplx-1",
        "model": "sonar",
        "object": "chat.completion",
        "citations": ["https://a.example/1", "https://b.example/2", "https://c.example/3"],
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Paris est grande [1, 3]. Lyon est ancienne[2-3]. Faux [4-2].",
                },
                "finish_reason": "stop",
            }
        ],
    }
    answer = extract(response)
    urls = {s.id: s.url for s in answer.sources}
    assert [(c.text, [urls[i] for i in c.source_ids]) for c in answer.citations] == [
        ("Paris est grande", ["https://a.example/1", "https://c.example/3"]),
        ("Lyon est ancienne", ["https://b.example/2", "https://c.example/3"]),
    ]
    at = answer.text.index("[4-2]")
    assert answer.diagnostics == [f"marker [4-2] at {at}: reversed range 4-2"]


# --- Agent API (/v1/agent, /v1/responses) ------------------------------------------------------


def test_agent_markers_name_search_results_by_id() -> None:
    data = fixture("perplexity_agent_search")
    answer = extract(data, strict=True)
    assert answer.provider == "perplexity"
    assert answer.model == "openai/gpt-5.2"
    results = {r["id"]: r["url"] for item in data["output"][:2] for r in item["results"]}
    urls = {s.id: s.url for s in answer.sources}
    assert [
        (c.text, answer.text[c.marker_span[0] : c.marker_span[1]], [urls[s] for s in c.source_ids])
        for c in answer.citations
        if c.marker_span
    ] == [
        ("Le viaduc de Millau franchit la vallée du Tarn, en Aveyron", "[1]", [results[1]]),
        (
            "Avec 343 mètres au sommet d'un pylône, c'est le pont le plus haut de France",
            "[1][2]",
            [results[1], results[2]],
        ),
        ("Il a été inauguré le 14 décembre 2004", "[3]", [results[3]]),
    ]
    first = answer.sources[0]
    assert (first.title, first.snippet, first.extras["date"], first.extras["source"]) == (
        "Viaduc de Millau — Wikipédia",
        data["output"][0]["results"][0]["snippet"],
        "2004-12-14",
        "web",
    )
    assert answer.extras == {
        "response_id": data["id"],
        "status": "completed",
        "search_queries": [
            "viaduc de Millau hauteur",
            "viaduc de Millau inauguration",
            "viaduc de Millau 20 ans",
        ],
        "grounded_effective": True,
        "tool_calls": 2,
    }


def test_agent_ids_not_positions_name_the_results() -> None:
    data = fixture("perplexity_agent_search")
    first, second = data["output"][0]["results"]
    first["id"], second["id"] = 2, 1  # the same results, numbered the other way round
    answer = extract(data, strict=True)
    assert answer.source(answer.citations[0].source_ids[0]).url == second["url"]


def test_agent_results_without_ids_or_with_clashing_ids_are_not_guessed() -> None:
    data = fixture("perplexity_agent_search")
    del data["output"][1]["results"][0]["id"]
    answer = extract(data)
    assert [len(c.source_ids) for c in answer.citations] == [1, 2]
    assert answer.diagnostics == [
        "response.output[1].results[0]: search result without an id: no marker can name it",
        f"marker [3] at {answer.text.index('[3]')} names no source (2 search result ids)",
    ]
    clash = fixture("perplexity_agent_search")
    clash["output"][1]["results"][0]["id"] = 1
    answer = extract(clash)
    assert [len(c.source_ids) for c in answer.citations] == [1]  # only [2] is certain
    assert answer.diagnostics[0] == (
        "response.output[1].results[0]: id 1 is already another result's: [1] is ambiguous"
    )


def test_agent_response_is_not_read_as_an_openai_one() -> None:
    data = fixture("perplexity_agent_search")
    assert detect_provider(data) == "perplexity"
    # Read through the OpenAI reader (its stream looks like one), it still reads as Perplexity.
    assert extract(data, provider="openai") == extract(data)
    # Without search, its usage cost still tells it apart.
    data["output"] = data["output"][3:]
    data["output"][0]["content"][0]["text"] = "Bonjour."
    assert detect_provider(data) == "perplexity"
    answer = extract(data, strict=True)
    assert (answer.text, answer.citations, answer.sources) == ("Bonjour.", [], [])
    assert "grounded_effective" not in answer.extras


def test_agent_stream_announces_its_citations_with_the_final_response() -> None:
    events = fixture("perplexity_agent_search_stream")
    collector = StreamCollector()
    announced = {n: collector.feed(event) for n, event in enumerate(events)}
    answer = collector.result()
    assert [n for n, got in announced.items() if got] == [len(events) - 1]
    assert answer == extract(fixture("perplexity_agent_search"))
    assert answer.provider == "perplexity"
    assert answer.diagnostics == []


def test_sonar_reports_whether_it_searched() -> None:
    searched = {
        "id": "pplx-1",
        "model": "sonar",
        "citations": ["https://www.insee.fr/fr/statistiques"],
        "choices": [
            {"message": {"role": "assistant", "content": "Paris compte 2,1 M d’habitants [1]."}}
        ],
    }
    assert extract(searched).extras["grounded_effective"] is True
    none = {**searched, "citations": []}
    assert extract(none).extras["grounded_effective"] is False
