"""Perplexity responses read through the analytics sink give `extract()`'s row.

Fixtures are written here from Perplexity's documented shapes: Sonar chat completions with a
top-level ``citations`` URL list and/or ``search_results`` (``title``, ``url``, ``date``,
``last_updated``, ``snippet``, ``source``) and ``[n]`` markers in the message text, and Agent
API responses (``search_results`` / ``fetch_url_results`` output items, ``[n]`` naming a
result's ``id``). The recorded corpus is `analytics._corpus`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest
from analytics._corpus import assert_rows_agree, check_corpus_response, reader_of, responses
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unicite.analytics import analyze_one, fast_row

READER = "PerplexityProvider"

CORPUS = [(name, data) for name, data in responses() if reader_of(data) == READER]


def _chat(
    content: object,
    citations: list[Any] | None = None,
    results: list[Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A Sonar chat completion as the API returns it."""
    data: dict[str, Any] = {
        "id": "3f1c9a52-7d4e-4b8e-9a61-0c2d5e7f8a90",
        "model": "sonar-pro",
        "created": 1771322640,
        "usage": {"prompt_tokens": 14, "completion_tokens": 131, "total_tokens": 145},
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
                "delta": {"role": "assistant", "content": ""},
            }
        ],
    }
    if citations is not None:
        data["citations"] = citations
    if results is not None:
        data["search_results"] = results
    data.update(fields)
    return data


def _result(url: object, title: object = "A page", **fields: Any) -> dict[str, Any]:
    result: dict[str, Any] = {
        "title": title,
        "url": url,
        "date": "2025-06-12",
        "last_updated": "2025-06-13",
        "snippet": "Snippet text …",
        "source": "web",
    }
    result.update(fields)
    return result


def _agent(*items: Any, **fields: Any) -> dict[str, Any]:
    """An Agent API (``/v1/agent``) response."""
    data: dict[str, Any] = {
        "id": "resp_4c7e2a19-8b3d-4f6e-a5c1-9d0b7e3f2a68",
        "object": "response",
        "created_at": 1762512000,
        "model": "openai/gpt-5.2",
        "status": "completed",
        "output": list(items),
        "usage": {"input_tokens": 5210, "output_tokens": 74, "cost": {"currency": "USD"}},
    }
    data.update(fields)
    return data


def _search(*results: tuple[int, str], queries: tuple[str, ...] = ("q",)) -> dict[str, Any]:
    return {
        "type": "search_results",
        "queries": list(queries),
        "results": [
            {"id": n, "url": url, "title": f"Result {n}", "snippet": "…", "date": None}
            for n, url in results
        ],
    }


def _message(*texts: str) -> dict[str, Any]:
    return {
        "id": "msg_4c7e2a19",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": t, "annotations": []} for t in texts],
    }


URLS = [
    "https://noticias.example.es/2026/02/torre",
    "https://enciclopedia.example.org/wiki/Antoni_Gaud%C3%AD",
    "https://www.fundacion.example.com/financiacion?utm_source=perplexity",
    "https://tabi.example.jp/spain/sagrada-familia",
]

SONAR = _chat(
    "La Sagrada Família alcanzó su altura máxima en 2026 con la torre de Jesucristo.[1][3] "
    "Gaudí dirigió las obras desde 1883.[2]\n\n**Datos prácticos:**\n"
    "- Las obras se financian con donativos 🎟️.[3]\n"
    "- Muchos visitantes llegan de Japón (日本からの観光客).[4]\n\n"
    "Conviene reservar con antelación.",
    citations=URLS,
    results=[_result(url) for url in URLS],
)

FAST = {
    "citations and search results": SONAR,
    "citations only": _chat(
        "Paris has about 2.1 million residents[2][3]. It is the capital of France[1].",
        citations=["https://a.example/", "https://b.example/x", "https://c.example/y"],
    ),
    "search results only": _chat(
        "Zürich hat rund 447 000 Einwohner.[1] Die Stadt liegt am Zürichsee 🏞️.[2]",
        results=[_result("https://statistik.example.ch/b"), _result("https://see.example.org/")],
    ),
    "first cited later": _chat(
        "Tokyo 東京 is large.[3] Osaka is second[1][3].",
        citations=["https://a.example/", "https://b.example/", "https://c.example/"],
    ),
    "duplicate pages": _chat(
        "One[1]. Two[2]. Three[3]. Four[4].",
        citations=[
            "https://www.example.com/a/",
            "https://example.com/a",
            "https://example.com/a?utm_source=perplexity",
            "https://example.org/",
        ],
        results=[_result("https://example.com/a/", "Example"), _result("https://x.example/")],
    ),
    "spaced markers": _chat(
        "Malaria caused 608,000 deaths in 2022 [1]. A second vaccine came in 2023 [2][3].",
        citations=["https://who.example/", "https://nature.example/", "https://wiki.example/"],
    ),
    "markdown": _chat(
        "## Overview\n\nThe city grows.[1]\n\n| City | People |\n|---|---|\n"
        "| Paris | 2.1 million[2] |\n| Lyon | half a million[1] |\n\n"
        "1. **First**: the Louvre[2].\n"
        "   - nested item, close to its parent.[1]\n"
        "> Quoted claim.[2]\n\nSee a[1] and row_2[2] (indexing, not markers).",
        citations=["https://a.example/", "https://b.example/"],
    ),
    "content parts": _chat(
        [{"type": "text", "text": "Part one[1]. "}, {"type": "text", "text": "Part two[2]."}],
        citations=["https://a.example/", "https://b.example/"],
    ),
    "no markers": _chat("No citations here.", citations=["https://a.example/"]),
    "no sources": _chat("Nothing was searched.", citations=[]),
    "empty content": _chat(None, citations=["https://a.example/"]),
    "no choices": {**_chat("x", citations=["https://a.example/"]), "choices": []},
    "range and list markers": _chat(
        "Claims[1, 3]. More claims[2-3].",
        citations=["https://a.example/", "https://b.example/", "https://c.example/"],
    ),
    "reference style link": _chat(
        "See the [guide](https://a.example/guide) for details[1].",
        citations=["https://a.example/"],
    ),
    "agent": _agent(
        _search((1, "https://fr.example.org/wiki/Viaduc"), (2, "https://www.viaduc.example/")),
        _search((3, "https://journal.example.fr/20-ans")),
        {
            "type": "fetch_url_results",
            "contents": [{"url": "https://viaduc.example", "title": "Chiffres", "snippet": "…"}],
        },
        _message("Le viaduc franchit le Tarn[1]. C'est le plus haut[1][2]. ", "Inauguré[3]."),
    ),
    "agent cites later results first": _agent(
        _search((1, "https://a.example/"), (2, "https://b.example/"), (3, "https://c.example/")),
        _message("First claim[3]. Second claim[2][1]."),
    ),
    "agent annotations": _agent(
        _search((1, "https://a.example/")),
        {
            "type": "message",
            "content": [
                {
                    "type": "output_text",
                    "text": "Claim[1].",
                    "annotations": [
                        {"type": "url_citation", "url": "https://z.example/", "title": "Z"}
                    ],
                }
            ],
        },
        {"type": "reasoning", "summary": []},
    ),
    "agent fetch only": _agent(
        {"type": "fetch_url_results", "contents": [{"url": "https://a.example/", "title": "A"}]},
        _message("Fetched."),
    ),
    "agent terminal event": {
        "type": "response.completed",
        "response": _agent(_search((1, "https://a.example/")), _message("Claim[1].")),
    },
    "agent without search": _agent(_message("Hello."), usage={"cost": {"currency": "USD"}}),
    "agent id zero": _agent(
        _search((0, "https://a.example/"), (1, "https://b.example/")), _message("Claim [0].")
    ),
    # Markers whose claims sit after them, around them or in a cell: where a claim sits
    # decides only the order the answer lists its sources in, which a row does not keep.
    "leading marker": _chat("[1] Paris is big. Lyon is small[2].", citations=URLS),
    "marker leads a line": _chat("Paris is big.\n[2] Lyon is small[1].", citations=URLS),
    "marker after a bullet": _chat("- [1] Paris is big.\n1. [2] Lyon.", citations=URLS),
    "marker after a quote prefix": _chat(">[1] Paris is big.\n> [2] Lyon.", citations=URLS),
    "marker after a heading prefix": _chat("## [2] Paris\n\nBig[1].", citations=URLS),
    "marker in a parenthesis": _chat("Paris is big ([3]), Lyon ( [1][2] ).", citations=URLS),
    "marker alone in a cell": _chat("| a | b |\n|---|---|\n| x |[2] |\n| y, [1] |", citations=URLS),
    "marker far from its claim": _chat("Paris is big," + " " * 300 + "[2][1].", citations=URLS),
}


# --- the recorded corpus ---------------------------------------------------------------------


def test_the_corpus_has_perplexity_responses() -> None:
    assert len(CORPUS) >= 4


@pytest.mark.parametrize(("name", "data"), CORPUS, ids=[name for name, _ in CORPUS])
def test_corpus_rows_agree(name: str, data: Mapping[str, Any]) -> None:
    check_corpus_response(name, data)


# --- written fixtures ------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(FAST))
def test_documented_shapes_are_read_by_the_sink(name: str) -> None:
    data = FAST[name]
    assert reader_of(data) == READER
    assert_rows_agree(data)
    assert fast_row(data) is not None


def test_sources_are_listed_canonically_whatever_order_cites_them() -> None:
    row = analyze_one(FAST["first cited later"])
    assert row["urls"] == ["https://a.example/", "https://b.example/", "https://c.example/"]
    assert row["cited"] == [True, False, True]
    assert row["citations"] == 2
    assert row["grounded"] is True
    agent = fast_row(FAST["agent cites later results first"])
    assert agent is not None
    assert agent["urls"] == ["https://a.example/", "https://b.example/", "https://c.example/"]
    assert agent["cited"] == [True, True, True]
    assert agent["citations"] == 2


def test_the_same_page_is_one_source() -> None:
    row = analyze_one(FAST["duplicate pages"])
    assert row["urls"] == [
        "https://example.com/a/",
        "https://example.org/",
        "https://x.example/",
    ]
    assert row["cited"] == [True, True, False]
    assert row["citations"] == 4


def test_adjacent_markers_are_one_citation() -> None:
    row = analyze_one(SONAR)
    assert row["citations"] == 4
    assert row["sources"] == 4
    assert all(row["cited"])


def test_agent_rows() -> None:
    row = analyze_one(FAST["agent"])
    assert row["urls"] == [
        "https://fr.example.org/wiki/Viaduc",
        "https://journal.example.fr/20-ans",
        "https://www.viaduc.example/",
    ]
    assert row["cited"] == [True, True, True]
    assert row["citations"] == 3
    assert row["grounded"] is True
    fetched = analyze_one(FAST["agent fetch only"])
    assert fetched["grounded"] is False
    assert analyze_one(FAST["agent without search"])["grounded"] is None


# What the analytics sink leaves to `extract()`: what the reader notes as a diagnostic, and texts
# whose markers (which ones count, how they group) depend on the segmentation.
ODD = {
    "marker names no source": _chat("Claim[4].", citations=URLS[:2]),
    "marker zero": _chat("Claim.[0]", citations=URLS[:2]),
    "citation not a string": _chat("Claim[1].", citations=[URLS[0], 3], results=[]),
    "citation empty": _chat("Claim[1].", citations=[""]),
    "citations not a list": _chat("Claim[1].", results=[], citations={"a": 1}),  # type: ignore[arg-type]
    "result without url": _chat("Claim[1].", results=[_result(None)]),
    "result url not a string": _chat("Claim[1].", results=[_result(["https://a.example/"])]),
    "result title not a string": _chat("Claim[1].", results=[_result(URLS[0], 7)]),
    "result snippet not a string": _chat("x", results=[_result(URLS[0], snippet=3)]),
    "result not an object": _chat("Claim[1].", results=[URLS[0]]),
    "model not a string": _chat("x", citations=URLS, model=5),
    "id not a string": _chat("x", citations=URLS, id=5),
    "content not a string": _chat(5, citations=URLS),
    "content part without text": _chat([{"type": "image_url"}], citations=URLS),
    "choice not an object": {**_chat("x", citations=URLS), "choices": ["x"]},
    "message not an object": {**_chat("x", citations=URLS), "choices": [{"message": "x"}]},
    "finish reason not a string": {
        **_chat("x", citations=URLS),
        "choices": [{"message": {"content": "x"}, "finish_reason": 1}],
    },
    "marker in inline code": _chat("Use `a[1]` here[2].", citations=URLS),
    "marker in a fence": _chat("Text[1].\n\n```\nx[2]\n```\n", citations=URLS),
    "marker in a tilde fence": _chat("Text[1].\n\n~~~\nx [2]\n~~~\n", citations=URLS),
    "indented code": _chat("Text[1].\n\n    code [2]\n", citations=URLS),
    "marker leads an indented code line": _chat("Text[1].\n\n    [2] code\n", citations=URLS),
    # After a CJK terminator a sentence starts without a space, past the closers and markers
    # that follow it: whether a "]" there continues a run of markers depends on where it starts.
    "marker after a CJK sentence's bracket": _chat("東京。][1] です。", citations=URLS),
    "link marker": _chat("Paris is big ([1](https://a.example/)).", citations=URLS),
    "superscript": _chat("Paris is big<sup>[1]</sup>.", citations=URLS),
    "assistant marker": _chat("Paris is big【1†source】 and old[1].", citations=URLS),
    "reference definition": _chat("Paris is big[1].\n\n[2]: https://a.example/\n", citations=URLS),
    "double brackets": _chat("Paris is big[[1]].", citations=URLS),
    "reversed range": _chat("Paris is big[3-1].", citations=URLS),
    "long range": _chat("Paris is big[1-200].", citations=URLS),
    "agent result without id": _agent(
        {"type": "search_results", "results": [{"url": "https://a.example/"}]},
        _message("Claim[1]."),
    ),
    "agent id as text": _agent(
        {"type": "search_results", "results": [{"id": "1", "url": "https://a.example/"}]},
        _message("Claim[1]."),
    ),
    "agent id a bool": _agent(
        {"type": "search_results", "results": [{"id": True, "url": "https://a.example/"}]},
        _message("Claim[1]."),
    ),
    "agent ambiguous id": _agent(
        _search((1, "https://a.example/"), (1, "https://b.example/")),
        _message("Claim[1]."),
    ),
    "agent unknown item": _agent(_search((1, "https://a.example/")), {"type": "image"}),
    "agent item without type": _agent(_search((1, "https://a.example/")), {"x": 1}),
    "agent failed": _agent(_search((1, "https://a.example/")), status="failed"),
    "agent marker names no result": _agent(
        _search((1, "https://a.example/")), _message("Claim[2].")
    ),
    "agent annotation without url": _agent(
        {"type": "message", "content": [{"text": "a", "annotations": [{"title": "t"}]}]}
    ),
    "agent part without text": _agent({"type": "message", "content": [{"type": "refusal"}]}),
    "agent fetched page without url": _agent(
        {"type": "fetch_url_results", "contents": [{"title": "t"}]}
    ),
}


@pytest.mark.parametrize("name", sorted(ODD))
def test_odd_shapes_agree(name: str) -> None:
    data = ODD[name]
    assert reader_of(data) == READER
    assert_rows_agree(data)
    assert fast_row(data) is not None


# A glued marker reads the same wherever a sentence starts (`glued_reading` reads the text
# around it, not the sentence): the analytics sink takes these and agrees.
GLUED_AFTER_CJK = {
    "marker after a CJK sentence's underscore": _chat("東京。_[1] です。", citations=URLS),
    "word split by a CJK sentence": _chat("東京。_abc[1] です。", citations=URLS),
    "dot after a CJK sentence's marker": _chat("東京。[1].abc[2] です。", citations=URLS),
    "dot after a CJK sentence's closer": _chat("東京。).abc[2] です。", citations=URLS),
    "index in a Japanese answer": _chat("配列 arr[1] は要素です。東京[2]。", citations=URLS),
}


@pytest.mark.parametrize("name", sorted(GLUED_AFTER_CJK))
def test_glued_markers_after_a_cjk_sentence_agree(name: str) -> None:
    data = GLUED_AFTER_CJK[name]
    assert_rows_agree(data)
    assert fast_row(data) is not None


def test_a_redirect_source_takes_a_later_sightings_domain() -> None:
    redirect = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123"
    data = _chat(
        "Claim[1]. Other[2].",
        citations=[redirect, "https://b.example/"],
        results=[_result(redirect, "Some page"), _result(redirect + "/", "bbc.co.uk")],
    )
    assert_rows_agree(data)
    row = fast_row(data)
    assert row is not None
    assert row["urls"] == ["https://b.example/", redirect]
    assert row["domains"] == ["b.example", "bbc.co.uk"]
    assert row["redirects"] == [False, True]


def test_markers_in_urls_and_code_like_words_are_not_citations() -> None:
    data = _chat(
        "See https://a.example/page[1] and www.b.example/[2] or myList[1], x[2], obj.items[1].\n"
        "Then the claim.[2]",
        citations=URLS[:2],
    )
    assert_rows_agree(data)
    row = fast_row(data)
    assert row is not None
    assert row["citations"] == 1


# --- generated responses ---------------------------------------------------------------------

PAGES = [
    "https://www.example.com/a/",
    "https://example.com/a",
    "https://example.com/a?utm_source=perplexity&utm_medium=x",
    "https://example.com/a/#section",
    "https://news.example.org/2026/story",
    "https://café.example.fr/menu",
    "https://東京.example.jp/",
    "https://bbc.co.uk/news",
    "http://localhost:8000/x",
    "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123",
    "https://vertexaisearch.cloud.google.com/grounding-api-redirect/XyZ789",
]
TITLES = st.sampled_from([None, "A page", "bbc.co.uk", "example.com", "café 東京 😀", ""])
WORDS = st.sampled_from(
    [
        "Paris",
        "café",
        "東京",
        "😀",
        "Zürich",
        "population",
        "grew",
        "in",
        "2024",
        "1.5",
        "(as of 2025)",
        "**Louvre**",
        "world",
        "OpenAI",
        "x",
        "e.g.",
        "Dr.",
        "“quoted”",
        "and",
    ]
)


@st.composite
def _prose(draw: st.DrawFn, sources: int) -> str:
    """Markdown an answer engine writes: sentences with ``[n]`` markers glued to them."""
    marker = st.integers(1, max(sources, 1)).map(lambda n: f"[{n}]")
    lines = []
    for _ in range(draw(st.integers(0, 4))):
        lead = draw(st.sampled_from(["", "", "- ", "1. ", "## ", "> ", "   - ", "**Note**: "]))
        sentences = []
        for _ in range(draw(st.integers(1, 3))):
            words = " ".join(draw(st.lists(WORDS, min_size=1, max_size=6)))
            markers = "".join(draw(st.lists(marker, max_size=3))) if sources else ""
            where = draw(st.sampled_from(["glued", "after stop", "spaced", "leading", "aside"]))
            if where == "glued":
                sentences.append(f"{words}{markers}.")
            elif where == "after stop":
                sentences.append(f"{words}.{markers}")
            elif where == "leading":
                sentences.append(f"{markers} {words}.")
            elif where == "aside":
                sentences.append(f"{words} ({markers}).")
            else:
                sentences.append(f"{words} {markers}." if markers else f"{words}.")
        lines.append(lead + " ".join(sentences))
        if draw(st.booleans()):
            lines.append("")
    return "\n".join(lines)


@st.composite
def _clean_chat(draw: st.DrawFn) -> dict[str, Any]:
    citations = draw(st.none() | st.lists(st.sampled_from(PAGES), max_size=6))
    results = draw(
        st.none() | st.lists(st.builds(_result, st.sampled_from(PAGES), TITLES), max_size=6)
    )
    if citations is None and results is None:
        results = []
    numbered = len(citations) if citations else len(results or [])
    return _chat(draw(_prose(numbered)), citations=citations, results=results)


@st.composite
def _clean_agent(draw: st.DrawFn) -> dict[str, Any]:
    pages = draw(st.lists(st.sampled_from(PAGES), max_size=6))
    items: list[Any] = []
    numbered = list(enumerate(pages, start=1))
    cut = draw(st.integers(0, len(pages)))
    for chunk in (numbered[:cut], numbered[cut:]):
        if chunk:
            items.append(_search(*chunk))
    if draw(st.booleans()):
        items.append(
            {
                "type": "fetch_url_results",
                "contents": [{"url": draw(st.sampled_from(PAGES)), "title": draw(TITLES)}],
            }
        )
    items.append(_message(draw(_prose(len(pages))), "\n\n" + draw(_prose(len(pages)))))
    return _agent(*draw(st.permutations(items)))


DISTINCT_PAGES = [
    "https://news.example.org/2026/story",
    "https://café.example.fr/menu",
    "https://東京.example.jp/",
    "https://bbc.co.uk/news",
    "http://localhost:8000/x",
    "https://www.example.com/a/",
    "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123",
    "https://vertexaisearch.cloud.google.com/grounding-api-redirect/XyZ789",
    "https://a.example/?utm_source=perplexity",
    "https://z.example/",
]
"""Pages no two of which are one source."""

PROSE = WORDS.filter(lambda word: word not in ("OpenAI", "x"))
"""Words of the cited sentences (not code-like ones, which a glued marker may index)."""
GLUED = WORDS.filter(lambda word: not (word.isascii() and word.isalpha() and word.islower()))
"""Words a glued marker always cites after: names, numbers, other scripts, closing punctuation.
A plain lowercase word is a citation only where nothing around it reads as code or as another
language (``café population[1]`` is left uncited), which the generated sentences do not control."""

PLACES = [
    "{words}{markers}.",
    "{words}.{markers}",
    "{words} {markers}.",
    "{markers} {words}.",
    "- {markers} {words}.",
    "1. **{words}**: {markers}",
    "> {markers} {words}.",
    "## {markers} {words}",
    "{words} ({markers}).",
    "| {words} | {markers} |",
    "| {words}, |{markers} |",
    "{words}," + " " * 250 + "{markers}.",
]
"""Where a run of markers may sit: after its claim, leading it, beside it, in a cell, far away.
The reader once checked that claims come in the order of their markers; these are the places
where they may not."""


@st.composite
def _out_of_order_text(draw: st.DrawFn, numbers: list[int]) -> str:
    """A text citing every number of `numbers`, first in an order other than theirs."""
    order = list(draw(st.permutations(numbers)))
    if order == sorted(order):
        order.reverse()
    order += draw(st.lists(st.sampled_from(numbers), max_size=3))  # cited again
    lines = []
    while order:
        size = draw(st.integers(1, 3))
        run, order = order[:size], order[size:]
        place = draw(st.sampled_from(PLACES))
        last = GLUED if "{words}{markers}" in place else PROSE
        words = " ".join([*draw(st.lists(PROSE, max_size=3)), draw(last)])
        lines.append(place.format(words=words, markers="".join(f"[{n}]" for n in run)))
    return draw(st.sampled_from(["\n", "\n\n", " "])).join(lines)


@st.composite
def _out_of_order_chat(draw: st.DrawFn) -> dict[str, Any]:
    """Sources cited in an order other than ``citations`` lists them (and ``search_results``
    lists them in another)."""
    pages = draw(st.lists(st.sampled_from(DISTINCT_PAGES), min_size=2, max_size=6, unique=True))
    text = draw(_out_of_order_text(list(range(1, len(pages) + 1))))
    results = [_result(url, draw(TITLES)) for url in draw(st.permutations(pages))]
    if draw(st.booleans()):
        return _chat(text, results=results)  # the markers count into the results
    return _chat(text, citations=pages, results=draw(st.none() | st.just(results)))


@st.composite
def _out_of_order_agent(draw: st.DrawFn) -> dict[str, Any]:
    """Results cited in an order other than their items list them, under ids of another;
    annotations and fetched pages naming the same pages in yet another."""
    pages = draw(st.lists(st.sampled_from(DISTINCT_PAGES), min_size=2, max_size=6, unique=True))
    ids = draw(st.permutations(range(1, len(pages) + 1)))
    numbered = list(zip(ids, pages, strict=True))
    cut = draw(st.integers(0, len(pages)))
    items: list[Any] = [_search(*chunk) for chunk in (numbered[:cut], numbered[cut:]) if chunk]
    message = _message(draw(_out_of_order_text(list(ids))))
    message["content"][0]["annotations"] = [
        {"type": "url_citation", "url": url, "title": draw(TITLES)}
        for url in draw(st.permutations(pages))
    ]
    items.append(message)
    if draw(st.booleans()):
        fetched = [{"url": url, "title": draw(TITLES)} for url in draw(st.permutations(pages))]
        items.append({"type": "fetch_url_results", "contents": fetched})
    return _agent(*draw(st.permutations(items)))


OUT_OF_ORDER = _out_of_order_chat() | _out_of_order_agent()
CLEAN = _clean_chat() | _clean_agent() | OUT_OF_ORDER


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(CLEAN)
def test_generated_clean_responses_are_read_by_the_sink(data: dict[str, Any]) -> None:
    assert_rows_agree(data)
    assert fast_row(data) is not None


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(OUT_OF_ORDER)
def test_sources_cited_out_of_order_agree(data: dict[str, Any]) -> None:
    assert_rows_agree(data)
    row = fast_row(data)
    assert row is not None
    urls = [url or "" for url in row["urls"]]
    assert urls == sorted(urls)
    assert all(row["cited"])
    assert row["sources"] == len(urls) >= 2


HOSTILE_TEXT = st.sampled_from(
    [
        "[1]",
        "[2][3]",
        "[9]",
        "[0]",
        " ",
        "\n",
        "\n\n",
        "\n    ",
        "\n- ",
        "\n> ",
        "\n| ",
        " | ",
        "\r\n",
        "\t",
        "`",
        "```",
        "~~~",
        "arr",
        "x",
        "_",
        "。",
        "」",
        "]",
        "[",
        "(",
        ")",
        "(see",
        "Would you like more?",
        "https://a.example/",
        "www.",
        "[1, 2]",
        "[2-1]",
        "[[1]]",
        "[^1]",
        "[1](u)",
        "<sup>1</sup>",
        "【1】",
        ": https://x.example/",
        "**",
        "#",
        ".",
        ",",
        "Paris",
        "café 東京 😀",
        "\u00a0",
    ]
)


MUTATIONS: list[tuple[str, Any]] = [
    ("model", 5),
    ("model", None),
    ("id", ["x"]),
    ("citations", "https://a.example/"),
    ("citations", [None]),
    ("citations", [1, "https://a.example/"]),
    ("search_results", {"url": "x"}),
    ("search_results", [{"url": ""}]),
    ("search_results", [{"url": "https://a.example/", "title": 3}]),
    ("search_results", ["https://a.example/"]),
    ("choices", None),
    ("choices", {}),
    ("choices", [None]),
    ("choices", [{"message": None}]),
    ("choices", [{"message": {"content": [{"text": "a[1]"}, {"text": 2}]}}]),
    ("output", [{"type": "search_results", "results": [{"id": 1.0, "url": "https://a/"}]}]),
    ("status", "cancelled"),
    ("status", 3),
]
"""Ways a logged response may be odd: fields None or of another type."""


@st.composite
def _hostile(draw: st.DrawFn) -> dict[str, Any]:
    data = copy.deepcopy(draw(CLEAN))
    text = "".join(draw(st.lists(HOSTILE_TEXT | WORDS, max_size=25)))
    if "choices" in data:
        data["choices"][0]["message"]["content"] = text
    else:
        data["output"].append(_message(text))
    if draw(st.booleans()):
        key, value = draw(st.sampled_from(MUTATIONS))
        if reader_of({**data, key: value}) == READER:
            data[key] = value
    return data


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(_hostile())
def test_generated_odd_responses_agree(data: dict[str, Any]) -> None:
    assert_rows_agree(data)
