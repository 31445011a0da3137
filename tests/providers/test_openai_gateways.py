"""OpenAI-compatible gateways and newer surfaces: OpenRouter, xAI, leaked private-use markers.

No SDK needed: the cases are JSON fixtures under ``tests/data/providers``, written from each
provider's documented response shape.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from providers._fixtures import load_json
from providers.contract import ProviderContract, assert_same_answer, check_invariants

from unicite import CitationError
from unicite.providers import StreamCollector, collect_stream, extract

PUA_OPEN, PUA_CLOSE, PUA_SEP = "\ue200", "\ue201", "\ue202"


def fixture(name: str) -> Any:
    return load_json(f"providers/{name}.json")


def cite_marker(*ids: str, kind: str = "cite") -> str:
    return PUA_OPEN + kind + "".join(PUA_SEP + i for i in ids) + PUA_CLOSE


def chat_chunks(final: dict[str, Any], pieces: int = 5) -> list[dict[str, Any]]:
    """OpenRouter's chunk stream for a completion: the annotations first, before any text."""
    head = {k: final[k] for k in ("id", "provider", "model", "created")}
    head["object"] = "chat.completion.chunk"
    message = final["choices"][0]["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": {"role": "assistant", **delta}, "finish_reason": finish}
        return {**head, "choices": [{**choice, "native_finish_reason": finish, "logprobs": None}]}

    text = message["content"]
    step = max(1, len(text) // pieces)
    return [
        chunk({"content": "", "annotations": message["annotations"]}),
        *(chunk({"content": text[k : k + step]}) for k in range(0, len(text), step)),
        chunk({"content": ""}, "stop"),
        {**chunk({"content": ""}), "usage": final["usage"]},
    ]


def responses_events(final: dict[str, Any], pieces: int = 4) -> list[dict[str, Any]]:
    """The Responses API stream a final response comes from: items, text deltas, annotations."""
    created = {**final, "status": "in_progress", "output": []}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": created}]
    for i, item in enumerate(final["output"]):
        if item["type"] != "message":
            events.append({"type": "response.output_item.added", "output_index": i, "item": item})
            events.append({"type": "response.output_item.done", "output_index": i, "item": item})
            continue
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": i,
                "item": {**item, "status": "in_progress", "content": []},
            }
        )
        for j, part in enumerate(item["content"]):
            where = {"output_index": i, "content_index": j, "item_id": item["id"]}
            events.append(
                {
                    "type": "response.content_part.added",
                    **where,
                    "part": {**part, "text": "", "annotations": []},
                }
            )
            text = part["text"]
            step = max(1, len(text) // pieces)
            for k in range(0, len(text), step):
                events.append(
                    {"type": "response.output_text.delta", **where, "delta": text[k : k + step]}
                )
            for n, annotation in enumerate(part["annotations"]):
                events.append(
                    {
                        "type": "response.output_text.annotation.added",
                        **where,
                        "annotation_index": n,
                        "annotation": annotation,
                    }
                )
            events.append({"type": "response.output_text.done", **where, "text": text})
            events.append({"type": "response.content_part.done", **where, "part": part})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    events.append({"type": "response.completed", "response": final})
    return events


class TestGatewayContract(ProviderContract):
    provider = "openai"
    noisy_cases = frozenset(
        {"openrouter-web-plugin", "openrouter-perplexity", "openai-private-markers"}
    )
    mutation_budget = 250

    def final_cases(self) -> dict[str, Any]:
        return {
            "openrouter-web-plugin": fixture("openrouter_chat_web_plugin"),
            "openrouter-perplexity": fixture("openrouter_chat_perplexity"),
            "openai-private-markers": fixture("openai_responses_private_markers"),
        }

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        private = fixture("openai_responses_private_markers")
        return {
            "openrouter-perplexity": (
                chat_chunks(fixture("openrouter_chat_perplexity")),
                fixture("openrouter_chat_perplexity"),
            ),
            "openai-private-markers": (responses_events(private), private),
        }


# --- 1. placeholder offsets (OpenRouter and other gateways) -------------------------------------


def test_placeholder_annotations_are_sources_not_citations_of_the_first_sentence() -> None:
    data = fixture("openrouter_chat_web_plugin")
    message = data["choices"][0]["message"]
    # Without links in the text, nothing ties a claim to a source.
    message["content"] = (
        "En juin 2025, une canicule a frappé la France. Météo-France classe ce mois de juin au "
        "deuxième rang des plus chauds depuis 1900."
    )
    answer = extract(data)
    assert answer.citations == []
    assert [s.url for s in answer.sources] == [
        a["url_citation"]["url"] for a in message["annotations"]
    ]
    assert answer.sources[0].content == message["annotations"][0]["url_citation"]["content"]
    assert answer.diagnostics == [
        "completion.choices[0].message: 3 url_citation annotation(s) with the placeholder span "
        "0..0 (a gateway's sources, not spans): kept as sources"
    ]
    assert answer.extras["grounded_effective"] is True
    with pytest.raises(CitationError):
        extract(data, strict=True)


def test_links_the_web_plugin_asks_for_cite_the_placeholder_source_they_link() -> None:
    data = fixture("openrouter_chat_web_plugin")
    answer = extract(data)
    check_invariants(answer)
    lemonde, meteo, wiki = (a["url_citation"] for a in data["choices"][0]["message"]["annotations"])
    assert [(c.text, [answer.source(s).url for s in c.source_ids]) for c in answer.citations] == [
        (
            "En juin 2025, une canicule a frappé la France : le thermomètre a dépassé 40 °C dans "
            "le Sud-Ouest",
            [lemonde["url"]],
        ),
        (
            "Météo-France classe ce mois de juin au deuxième rang des plus chauds depuis 1900",
            [meteo["url"]],
        ),
    ]
    first = answer.citations[0]
    assert first.marker_span is not None
    assert answer.text[first.marker_span[0] : first.marker_span[1]] == (
        f"[lemonde.fr]({lemonde['url']})"
    )
    assert first.extras == {"placeholder_by": "link"}
    # The source no link names stays, uncited, after the cited ones.
    assert [s.url for s in answer.sources][-1] == wiki["url"]
    assert answer.sources[0].title == lemonde["title"]


def test_numbered_markers_index_the_placeholder_annotations() -> None:
    data = fixture("openrouter_chat_perplexity")
    answer = extract(data)
    check_invariants(answer)
    urls = [a["url_citation"]["url"] for a in data["choices"][0]["message"]["annotations"]]
    assert [
        (
            answer.text[c.marker_span[0] : c.marker_span[1]],
            [answer.source(s).url for s in c.source_ids],
        )
        for c in answer.citations
        if c.marker_span
    ] == [("[1]", [urls[0]]), ("[1][2]", [urls[0], urls[1]]), ("[3]", [urls[2]])]
    assert answer.citations[2].text == (
        "Con la torre de Jesucristo, de 172,5 metros, será la iglesia más alta del mundo 🏗️"
    )
    assert {c.extras["placeholder_by"] for c in answer.citations} == {"order"}
    assert answer.provider == "openai"
    assert answer.model == "perplexity/sonar"


def test_a_number_past_the_annotations_leaves_every_numbered_marker_uncited() -> None:
    data = fixture("openrouter_chat_perplexity")
    message = data["choices"][0]["message"]
    message["content"] = message["content"].replace("🏗️[3]", "🏗️[4]")
    answer = extract(data)
    assert answer.citations == []
    assert answer.diagnostics[-1] == (
        "completion.choices[0].message: markers [4] name no annotation (3 given): "
        "numbered markers left uncited"
    )


def test_numbered_markers_need_every_annotation_to_be_a_placeholder() -> None:
    data = fixture("openrouter_chat_perplexity")
    message = data["choices"][0]["message"]
    text = message["content"]
    real = {
        "type": "url_citation",
        "url_citation": {
            "url": "https://ca.wikipedia.org/wiki/Sagrada_Fam%C3%ADlia",
            "title": "Sagrada Família - Viquipèdia",
            "start_index": 0,
            "end_index": text.index("[1]"),
        },
    }
    message["annotations"] = [real, *message["annotations"]]
    answer = extract(data)
    # The real annotation cites its span; [n] would be ambiguous, so no marker is cited.
    [citation] = answer.citations
    assert citation.text == text[: text.index("[1]")]
    assert answer.diagnostics[-1].endswith("numbered markers left uncited")


def test_stream_with_annotations_before_any_text_announces_at_the_end() -> None:
    chunks = chat_chunks(fixture("openrouter_chat_perplexity"), pieces=7)
    assert chunks[0]["choices"][0]["delta"]["content"] == ""
    assert chunks[0]["choices"][0]["delta"]["annotations"]
    collector = StreamCollector()
    announced = {n: collector.feed(chunk) for n, chunk in enumerate(chunks)}
    answer = collector.result()
    finish = next(n for n, c in enumerate(chunks) if c["choices"][0]["finish_reason"])
    assert [n for n, got in announced.items() if got] == [finish]
    assert [item.citation for item in announced[finish]] == answer.citations
    assert_same_answer(answer, extract(fixture("openrouter_chat_perplexity")))


def test_placeholders_in_a_responses_output_text_are_sources_too() -> None:
    final = fixture("xai_responses_web_search")
    part = final["output"][1]["content"][0]
    for annotation in part["annotations"]:
        annotation["start_index"] = annotation["end_index"] = 0
    answer = extract(final)
    # The [[n]](url) links still name their sources.
    assert [c.extras["placeholder_by"] for c in answer.citations] == ["link", "link"]
    assert [c.text for c in answer.citations] == [
        "富士山の標高は3776メートルで、日本で最も高い山です",
        "登山シーズンは例年7月上旬から9月上旬までです",
    ]


# --- 2. xAI: titles that are marker numbers -------------------------------------------------------


def test_xai_number_titles_are_not_titles_and_its_links_are_markers() -> None:
    data = fixture("xai_responses_web_search")
    answer = extract(data, strict=True)
    check_invariants(answer)
    links = [a for a in data["output"][1]["content"][0]["annotations"]]
    assert [
        (c.text, answer.text[c.marker_span[0] : c.marker_span[1]], c.extras)
        for c in answer.citations
        if c.marker_span
    ] == [
        (
            "富士山の標高は3776メートルで、日本で最も高い山です",
            f"[[1]]({links[0]['url']})",
            {"marker_number": 1},
        ),
        (
            "登山シーズンは例年7月上旬から9月上旬までです",
            f"[[2]]({links[1]['url']})",
            {"marker_number": 2},
        ),
    ]
    # A number is not a title: the domain is what shows.
    assert [(s.title, s.domain) for s in answer.sources[:2]] == [
        (None, "wikipedia.org"),
        (None, "fujisan-climb.jp"),
    ]
    # The top-level `citations` lists every source the search met, cited or not.
    assert answer.sources[2].url == data["citations"][2]
    assert answer.extras["grounded_effective"] is True
    assert answer.extras["tool_calls"] == 1


def test_xai_title_naming_another_marker_than_its_span_is_not_cited() -> None:
    data = fixture("xai_responses_web_search")
    data["output"][1]["content"][0]["annotations"][1]["title"] = "[1]"
    answer = extract(data)
    assert len(answer.citations) == 1
    [note] = answer.diagnostics
    assert note.startswith("response.output[1].content[0].annotations[1]: title says marker [1]")
    assert note.endswith("source kept without a span")


def test_xai_without_inline_citations_numbers_name_the_titled_placeholders() -> None:
    data = fixture("xai_responses_web_search")
    part = data["output"][1]["content"][0]
    # include=["no_inline_citations"] gives positionless annotations; here the text kept [n].
    part["text"] = "富士山の標高は3776メートルです[1]。登山シーズンは7月から9月です[2]。"
    for annotation in part["annotations"]:
        annotation["start_index"] = annotation["end_index"] = 0
    part["annotations"].reverse()  # titles, not order, give the numbers
    answer = extract(data)
    assert [(c.text, answer.source(c.source_ids[0]).url) for c in answer.citations] == [
        ("富士山の標高は3776メートルです", "https://ja.wikipedia.org/wiki/富士山"),
        ("登山シーズンは7月から9月です", "https://www.fujisan-climb.jp/info/index.html"),
    ]
    assert {c.extras["placeholder_by"] for c in answer.citations} == {"titles"}
    part["text"] += "冬は危険です[3]。"
    noisy = extract(data)
    assert len(noisy.citations) == 2
    assert noisy.diagnostics[-1].endswith("[3] names no annotation title")


# --- 3. private-use markers --------------------------------------------------------------------


def test_private_markers_leave_the_text_and_cite_the_search_results_they_name() -> None:
    data = fixture("openai_responses_private_markers")
    answer = extract(data)
    check_invariants(answer)
    assert not any(char in answer.text for char in (PUA_OPEN, PUA_CLOSE, PUA_SEP))
    assert answer.text == (
        "Zürich hat rund 448 000 Einwohnerinnen und Einwohner.\n"
        "Das Grossmünster ist das Wahrzeichen der Altstadt.\n"
        "Die neue Seepromenade am Utoquai wurde 2025 eröffnet ([nzz.ch](https://www.nzz.ch/"
        "zuerich/seepromenade-utoquai-eroeffnet-ld.1875523?utm_source=openai)). Der Architekt "
        "Santiago Calatrava baute den Bahnhof Stadelhofen um.\n"
    )
    first_search = data["output"][1]["action"]["sources"]
    second_search = data["output"][2]["action"]["sources"]
    urls = {s.id: s.url for s in answer.sources}
    assert [(c.text, [urls[s] for s in c.source_ids], c.marker_span) for c in answer.citations] == [
        ("Zürich hat rund 448 000 Einwohnerinnen und Einwohner.", [first_search[0]["url"]], None),
        (
            "Das Grossmünster ist das Wahrzeichen der Altstadt.",
            [first_search[1]["url"], second_search[0]["url"]],
            answer.citations[1].marker_span,
        ),
        (
            "Die neue Seepromenade am Utoquai wurde 2025 eröffnet",
            [
                "https://www.nzz.ch/zuerich/seepromenade-utoquai-eroeffnet-ld.1875523?utm_source=openai"
            ],
            answer.citations[2].marker_span,
        ),
    ]
    assert answer.citations[1].marker_span is None
    assert answer.citations[0].extras == {"private_marker": "cite:turn0search0"}
    assert answer.citations[0].raw == cite_marker("turn0search0")


def test_annotations_after_private_markers_move_with_the_text() -> None:
    data = fixture("openai_responses_private_markers")
    raw = data["output"][3]["content"][0]["annotations"][0]
    answer = extract(data)
    link = answer.citations[2]
    assert link.marker_span is not None
    assert answer.text[link.marker_span[0] : link.marker_span[1]] == (f"([nzz.ch]({raw['url']}))")
    # The raw annotation is kept as the provider sent it, its offsets into the raw text.
    assert link.raw == raw
    assert link.marker_span[0] < raw["start_index"]


def test_unresolvable_private_markers_are_dropped_and_said() -> None:
    answer = extract(fixture("openai_responses_private_markers"))
    prefix = "response.output[3].content[0]: private-use marker "
    at = len("Zürich hat rund 448 000 Einwohnerinnen und Einwohner.\n") + len(
        "Das Grossmünster ist das Wahrzeichen der Altstadt.\n"
    )
    assert answer.text[at:].startswith("Die neue Seepromenade")
    assert answer.diagnostics == [
        prefix + 'entity:["people","Santiago Calatrava","spanischer Architekt"] at '
        f"{answer.text.index('Santiago')}: replaced by the name it shows",
        prefix + f"navlist:Aktuelles zu Zürich,turn0news3 at {len(answer.text)}: removed from "
        "the text",
        prefix + f"cite:turn0news3 at {len(answer.text) - 1}: turn0news3 names no search result "
        "of this response; left uncited",
    ]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (
            lambda d: d.update(previous_response_id="resp_0123"),
            "the response continues an earlier one",
        ),
        (
            lambda d: d["output"].insert(
                1,
                {
                    "id": "ws_x",
                    "type": "web_search_call",
                    "status": "completed",
                    "action": {"type": "open_page", "url": "https://www.zuerich.com/de"},
                },
            ),
            "not every tool call is a web search",
        ),
        (
            lambda d: d["output"][1]["action"].pop("sources"),
            "no search result of this response",
        ),
    ],
)
def test_private_markers_are_only_resolved_when_unambiguous(change: Any, why: str) -> None:
    data = fixture("openai_responses_private_markers")
    change(data)
    answer = extract(data)
    check_invariants(answer)
    cited = [c for c in answer.citations if "private_marker" in c.extras]
    if why == "no search result of this response":
        # turn1search0 still names the second search's first result.
        assert [c.extras["private_marker"] for c in cited] == ["cite:turn0search1,turn1search0"]
        assert any("turn0search0 names" in d for d in answer.diagnostics)
    else:
        assert cited == []
        assert any(f"turn0search0 names {why}" in d for d in answer.diagnostics)


def test_private_markers_in_a_completion_are_removed_and_left_uncited() -> None:
    text = (
        "Oslo er Norges hovedstad. " + cite_marker("turn0search0") + " Byen har 717 000 innbyggere."
    )
    data = {
        "id": "chatcmpl-0123",
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "annotations": []},
                "finish_reason": "stop",
            }
        ],
    }
    answer = extract(data)
    assert answer.text == "Oslo er Norges hovedstad. Byen har 717 000 innbyggere."
    assert answer.citations == []
    assert answer.diagnostics == [
        "completion.choices[0].message: private-use marker cite:turn0search0 at 25: a completion "
        "lists no search results; left uncited"
    ]
    assert "grounded_effective" not in answer.extras


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        # A filecite marker: removed; the claim stays uncited (no file result it can name).
        (
            "Die Frist beträgt 30 Tage. " + cite_marker("turn0file1", kind="filecite"),
            "Die Frist beträgt 30 Tage.",
        ),
        # A line range after a file id, and a marker cut short by the end of the text.
        ("Siehe Abschnitt 2 " + cite_marker("turn0file0", "L8-L13") + ".", "Siehe Abschnitt 2."),
        ("Ende der Antwort. \ue200cite\ue202turn0sea", "Ende der Antwort."),
        # A lone separator.
        ("Hallo\ue202 Welt.", "Hallo Welt."),
        # An entity keeps its name.
        (
            'Gebaut von \ue200entity\ue202["people","Gustave Eiffel"]\ue201.',
            "Gebaut von Gustave Eiffel.",
        ),
    ],
)
def test_private_marker_forms(text: str, clean: str) -> None:
    answer = extract(
        {
            "object": "response",
            "id": "resp_1",
            "status": "completed",
            "model": "gpt-5.2",
            "output": [
                {
                    "type": "message",
                    "id": "msg_1",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": text, "annotations": []}],
                }
            ],
        }
    )
    assert answer.text == clean
    assert answer.citations == []
    assert len(answer.diagnostics) == 1


def test_private_marker_stream_announces_the_final_citations_once() -> None:
    final = fixture("openai_responses_private_markers")
    events = responses_events(final, pieces=7)
    collector = StreamCollector()
    announced = [item.citation for event in events for item in collector.feed(event)]
    answer = collector.result()
    assert sorted(announced, key=lambda c: (c.start, c.end)) == answer.citations
    assert_same_answer(answer, extract(final))
    assert_same_answer(collect_stream(events), extract(final))


# --- 5. grounded_effective and tool_calls -------------------------------------------------------


def _response(*output: Any, **fields: Any) -> dict[str, Any]:
    return {
        "object": "response",
        "id": "resp_1",
        "status": "completed",
        "model": "gpt-5.2",
        "output": list(output),
        **fields,
    }


MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "content": [{"type": "output_text", "text": "Bonjour à tous.", "annotations": []}],
}


@pytest.mark.parametrize(
    ("fields", "output", "expected"),
    [
        # A search tool offered (the request is echoed in `tools`), no call: not grounded.
        ({"tools": [{"type": "web_search"}]}, [MESSAGE], (False, 0)),
        ({"tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}]}, [MESSAGE], (False, 0)),
        # No search tool offered, none ran: nothing to say.
        ({"tools": [{"type": "function", "name": "f"}]}, [MESSAGE], None),
        ({}, [MESSAGE], None),
        # The request is not visible: a search model that ran no search says so.
        ({"model": "o4-mini-deep-research"}, [MESSAGE], (False, 0)),
        # A call that ran grounds the answer even without citations.
        (
            {},
            [
                {
                    "type": "web_search_call",
                    "id": "ws_1",
                    "status": "completed",
                    "action": {"type": "search", "query": "météo"},
                },
                MESSAGE,
            ],
            (True, 1),
        ),
        # A failed call is a call, but it grounded nothing.
        (
            {"tools": [{"type": "web_search"}]},
            [{"type": "web_search_call", "id": "ws_1", "status": "failed"}, MESSAGE],
            (False, 1),
        ),
        (
            {},
            [
                {"type": "file_search_call", "id": "fs_1", "status": "completed", "queries": ["q"]},
                {"type": "web_search_call", "id": "ws_1", "status": "completed"},
                MESSAGE,
            ],
            (True, 2),
        ),
    ],
)
def test_responses_grounded_effective(
    fields: dict[str, Any], output: list[Any], expected: tuple[bool, int] | None
) -> None:
    answer = extract(_response(*copy.deepcopy(output), **fields))
    got = (
        (answer.extras["grounded_effective"], answer.extras["tool_calls"])
        if "grounded_effective" in answer.extras
        else None
    )
    assert got == expected
    assert ("tool_calls" in answer.extras) == (expected is not None)


@pytest.mark.parametrize(
    ("model", "annotations", "expected"),
    [
        ("gpt-4o-mini", [], None),
        ("gpt-4o-mini-search-preview", [], False),
        ("openai/gpt-4o:online", [], False),
        (
            "gpt-4o-mini",
            [
                {
                    "type": "url_citation",
                    "url_citation": {
                        "url": "https://a.example/",
                        "title": "A",
                        "start_index": 0,
                        "end_index": 0,
                    },
                }
            ],
            True,
        ),
    ],
)
def test_chat_grounded_effective(model: str, annotations: list[Any], expected: bool | None) -> None:
    data = {
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hej.", "annotations": annotations},
                "finish_reason": "stop",
            }
        ],
    }
    answer = extract(data)
    assert answer.extras.get("grounded_effective") == expected
    assert "tool_calls" not in answer.extras  # Chat Completions do not show their searches
