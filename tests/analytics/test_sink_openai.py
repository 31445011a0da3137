"""OpenAI responses read through the analytics sink give `extract()`'s row.

Fixtures are written here from the documented shapes of the Responses API (``output`` items:
``message`` with ``output_text`` parts and ``url_citation`` / ``file_citation`` /
``container_file_citation`` / ``file_path`` annotations, ``web_search_call`` with
``action.sources``, ``file_search_call`` with ``results``, ``reasoning``...) and of Chat
Completions (``choices[0].message.annotations``, nested ``url_citation``; OpenRouter's
placeholder spans, xAI's ``[[n]](url)`` markers titled by their number); the recorded corpus is
`analytics._corpus`.
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
from unicite.sources import page_key

RESPONSES = "OpenAIResponsesProvider"
CHAT = "OpenAIChatProvider"

CORPUS = [(name, data) for name, data in responses() if reader_of(data) in (RESPONSES, CHAT)]


# --- the recorded corpus ------------------------------------------------------------------


def test_the_corpus_holds_openai_responses() -> None:
    kinds = {reader_of(data) for _, data in CORPUS}
    assert kinds == {RESPONSES, CHAT}


@pytest.mark.parametrize(("name", "data"), CORPUS, ids=[name for name, _ in CORPUS])
def test_corpus_agrees(name: str, data: Mapping[str, Any]) -> None:
    check_corpus_response(name, data)


# --- documented shapes --------------------------------------------------------------------

SEARCH_TOOL = {"type": "web_search", "search_context_size": "medium"}


def _response(*output: Any, **fields: Any) -> dict[str, Any]:
    response: dict[str, Any] = {
        "id": "resp_68af4030592c81938ec0a5fbab4a3e9f05438e46b5f69a3b",
        "object": "response",
        "created_at": 1756315696,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "model": "gpt-5-2025-08-07",
        "output": list(output),
        "previous_response_id": None,
        "tools": [SEARCH_TOOL],
        "usage": {"input_tokens": 9241, "output_tokens": 187, "total_tokens": 9428},
    }
    response.update(fields)
    return response


def _message(*parts: Any) -> dict[str, Any]:
    return {
        "id": "msg_68af4033b5c881938b6fc3bd4b8a0c4805438e46b5f69a3b",
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": list(parts),
    }


def _part(text: str, *annotations: Any) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": list(annotations), "logprobs": []}


def _search(*sources: Any, status: str = "completed") -> dict[str, Any]:
    action: dict[str, Any] = {"type": "search", "query": "q", "queries": ["q"]}
    if sources:
        action["sources"] = [
            {"type": "url", "url": s} if isinstance(s, str) else s for s in sources
        ]
    return {"id": "ws_68af40", "type": "web_search_call", "status": status, "action": action}


def _url(text: str, link: str, url: str, title: str | None = "Title") -> dict[str, Any]:
    """A flat ``url_citation`` over the first occurrence of ``link`` in ``text``."""
    start = text.index(link)
    annotation: dict[str, Any] = {
        "type": "url_citation",
        "start_index": start,
        "end_index": start + len(link),
        "url": url,
    }
    if title is not None:
        annotation["title"] = title
    return annotation


def _completion(content: object, *annotations: Any, **fields: Any) -> dict[str, Any]:
    completion: dict[str, Any] = {
        "id": "chatcmpl-BZ6ZDPo5LRNkuDkJxE3VZNQ5QzXsL",
        "object": "chat.completion",
        "created": 1748126567,
        "model": "gpt-4o-search-preview-2025-03-11",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "refusal": None,
                    "annotations": list(annotations),
                },
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 14, "completion_tokens": 96, "total_tokens": 110},
    }
    completion.update(fields)
    return completion


def _nested(annotation: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in annotation.items() if k != "type"}
    return {"type": "url_citation", "url_citation": body}


WEB_TEXT = (
    "🗼 La tour Eiffel mesure aujourd’hui **330 mètres**, antennes comprises. "
    "([toureiffel.paris](https://www.toureiffel.paris/fr/chiffres-cles?utm_source=openai)) "
    "Lors de son inauguration en 1889, elle culminait à 312 mètres. "
    "([fr.wikipedia.org](https://fr.wikipedia.org/wiki/Tour_Eiffel?utm_source=openai))\n\n"
    "- Sa hauteur varie d’une quinzaine de centimètres selon la température. "
    "([sciencesetavenir.fr](https://www.sciencesetavenir.fr/tour-eiffel/?utm_source=openai))\n"
    "- 東京タワーは333メートルです。"
    "([ja.wikipedia.org](https://ja.wikipedia.org/wiki/東京タワー))\n\n"
    "If you want, I can compare it with other towers."
)
WEB_LINKS = [
    ("[toureiffel.paris](https://www.toureiffel.paris/fr/chiffres-cles?utm_source=openai)",
     "https://www.toureiffel.paris/fr/chiffres-cles?utm_source=openai"),
    ("[fr.wikipedia.org](https://fr.wikipedia.org/wiki/Tour_Eiffel?utm_source=openai)",
     "https://fr.wikipedia.org/wiki/Tour_Eiffel?utm_source=openai"),
    ("[sciencesetavenir.fr](https://www.sciencesetavenir.fr/tour-eiffel/?utm_source=openai)",
     "https://www.sciencesetavenir.fr/tour-eiffel/?utm_source=openai"),
    ("[ja.wikipedia.org](https://ja.wikipedia.org/wiki/東京タワー)",
     "https://ja.wikipedia.org/wiki/東京タワー"),
]  # fmt: skip


def _web_response(**fields: Any) -> dict[str, Any]:
    annotations = [_url(WEB_TEXT, link, url) for link, url in WEB_LINKS]
    return _response(
        {"id": "rs_1", "type": "reasoning", "summary": []},
        _search(
            "https://toureiffel.paris/fr/chiffres-cles/",  # the same page as the first cited
            "https://www.lefigaro.fr/culture/la-tour-eiffel-gagne-six-metres-20220315",
            {"type": "api", "name": "oai-weather"},
        ),
        _message(_part(WEB_TEXT, *annotations)),
        **fields,
    )


def test_a_typical_web_search_is_read_by_the_sink() -> None:
    data = _web_response()
    row = fast_row(data)
    assert row is not None
    assert row == {**analyze_one(data, fast=False), "day": None}
    assert row["citations"] == 4
    # The canonical row: sources sorted by URL (the api source has none), not in text order.
    assert row["urls"] == [
        None,  # the api source
        "https://fr.wikipedia.org/wiki/Tour_Eiffel?utm_source=openai",
        "https://ja.wikipedia.org/wiki/東京タワー",
        "https://toureiffel.paris/fr/chiffres-cles/",  # the first sighting's URL stays
        "https://www.lefigaro.fr/culture/la-tour-eiffel-gagne-six-metres-20220315",
        "https://www.sciencesetavenir.fr/tour-eiffel/?utm_source=openai",
    ]
    assert row["domains"] == [
        None,
        "wikipedia.org",
        "wikipedia.org",
        "toureiffel.paris",
        "lefigaro.fr",
        "sciencesetavenir.fr",
    ]
    assert row["tlds"] == [None, "org", "org", "paris", "fr", "fr"]
    assert row["cited"] == [False, True, True, True, False, True]
    assert row["redirects"] == [False] * 6
    assert row["grounded"] is True
    assert_rows_agree(data)


def test_a_terminal_stream_event_reads_as_its_response() -> None:
    event = {"type": "response.completed", "sequence_number": 42, "response": _web_response()}
    assert fast_row(event) is not None
    assert_rows_agree(event)


@pytest.mark.parametrize(
    "fields",
    [
        {"status": "failed", "error": {"code": "server_error", "message": "boom"}},
        {"status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}},
        {"status": "cancelled"},
        {"tools": []},
        {"tools": None, "model": "o4-mini-deep-research"},
        {"model": "gpt-4o-search-preview"},
        {"model": None},
        {"citations": ["https://www.lemonde.fr/a", 5, "", "https://lemonde.fr/a/"]},
        {"citations": "not a list"},
    ],
)
def test_response_fields(fields: dict[str, Any]) -> None:
    data = _web_response(**fields)
    assert fast_row(data) is not None
    assert_rows_agree(data)


def test_missing_or_empty_output() -> None:
    for data in (
        {k: v for k, v in _response().items() if k != "output"},
        _response(),
        {**_response(), "output": None},
        _response(_search(status="failed"), tools=[]),
        _response(_message()),
        _response(_message(_part(""))),
        _response(_message({"type": "output_text", "text": None, "annotations": None})),
        _response(_message({"type": "refusal", "refusal": "I can't help with that."})),
    ):
        assert fast_row(data) is not None
        assert_rows_agree(data)


def test_annotation_edge_cases_are_counted() -> None:
    text = "Paris compte 2,1 millions d’habitants. ([insee.fr](https://www.insee.fr/fr/stats))"
    link = "[insee.fr](https://www.insee.fr/fr/stats)"
    good = _url(text, link, "https://www.insee.fr/fr/stats")
    cases = [
        {**good, "end_index": len(text) + 5},  # past the text: a source, no citation
        {**good, "start_index": 30, "end_index": 10},  # not a range
        {k: v for k, v in good.items() if k != "start_index"},  # no span
        {**good, "url": ""},  # dropped
        {k: v for k, v in good.items() if k != "url"},
        {**good, "title": None},
        {"type": "web_search_result", "url": "https://x.example"},  # unknown type
        {"url": "https://x.example"},  # no type
        {"type": 7},
        "not an object",
        None,
        {"type": "file_path", "file_id": "file-abc", "index": 0},
        {"type": "file_citation", "file_id": "file-abc", "filename": "a.pdf", "index": 999},
        {"type": "file_citation", "file_id": "", "filename": "a.pdf"},
        {"type": "container_file_citation", "container_id": "cntr_1", "file_id": "cfile_1",
         "filename": "out.csv", "start_index": 37, "end_index": 9999},
        # Another source cited in the text before the link, but after it in the annotations.
        {"type": "file_citation", "file_id": "file-abc", "filename": "a.pdf", "index": 10},
        {"type": "file_citation", "file_id": "file-abc", "filename": "a.pdf", "index": 37},
        {"type": "container_file_citation", "container_id": "cntr_1", "file_id": "cfile_1",
         "filename": "out.csv", "start_index": 5, "end_index": 5},
    ]  # fmt: skip
    for annotation in cases:
        data = _response(_message(_part(text, good, annotation)))
        assert fast_row(data) is not None, annotation
        assert_rows_agree(data)
        chat = _completion(
            text, _nested(good), _nested(annotation) if isinstance(annotation, dict) else annotation
        )
        assert_rows_agree(chat)


def test_xai_numbered_markers_and_their_titles() -> None:
    text = (
        "富士山の標高は3776メートルで、日本で最も高い山です[[1]](https://ja.wikipedia.org/wiki/富士山)。"
        "登山シーズンは例年7月上旬から9月上旬までです[[2]](https://www.fujisan-climb.jp/info/)。"
    )
    wiki, climb = "https://ja.wikipedia.org/wiki/富士山", "https://www.fujisan-climb.jp/info/"
    first = _url(text, f"[[1]]({wiki})", wiki, "1")
    second = _url(text, f"[[2]]({climb})", climb, "2")
    for titles in (("1", "2"), ("2", "1"), ("[1]", " 2 "), ("1", "Fujisan")):
        data = _response(
            _search("https://ja.wikipedia.org/wiki/富士山"),
            _message(_part(text, {**first, "title": titles[0]}, {**second, "title": titles[1]})),
            model="grok-4-1-fast-reasoning",
            citations=["https://ja.wikipedia.org/wiki/富士山", "https://www.japan.travel/ja/"],
        )
        assert fast_row(data) is not None
        assert_rows_agree(data)
    disagree = _response(_message(_part(text, {**first, "title": "3"})))
    row = fast_row(disagree)
    assert row is not None
    assert (row["citations"], row["diagnostics"]) == (0, 1)
    assert_rows_agree(disagree)


def test_file_search_and_file_citations() -> None:
    text = (
        "Tienes 30 días naturales para solicitar la devolución. Los gastos de envío corren a tu "
        "cargo. ¿Artículos rebajados? Se devuelven en las mismas condiciones."
    )
    ends = [i for i, char in enumerate(text) if char in ".?"]
    results = [
        {"file_id": "file-7Ux3", "filename": "política.pdf", "score": 0.91, "text": "30 días",
         "vector_store_id": "vs_1", "attributes": {}},
        {"file_id": "file-7Ux3", "filename": "política.pdf", "score": 0.84, "text": "gastos"},
        {"file_id": "file-Q8vT", "filename": "faq.md", "score": 0.6, "text": "rebajados"},
        {"file_id": None, "filename": "notas.txt", "score": 0.5, "text": "sin id"},
        {"filename": "notas.txt", "score": 0.4, "text": "sin id"},
    ]  # fmt: skip
    cites = [
        {"type": "file_citation", "file_id": file_id, "filename": name, "index": ends[k]}
        for file_id, name, k in (
            ("file-7Ux3", "política.pdf", 0),
            ("file-7Ux3", "política.pdf", 1),
            ("file-Q8vT", "faq.md", 3),
            ("file-Q8vT", "faq.md", 3),  # twice at one index: one claim, two citations
        )
    ]
    data = _response(
        {"id": "fs_1", "type": "file_search_call", "status": "completed", "queries": ["q"],
         "results": results},
        _message(_part(text, *cites)),
        tools=[{"type": "file_search", "vector_store_ids": ["vs_1"]}],
    )  # fmt: skip
    row = fast_row(data)
    # Two cited files, and the id-less "notas.txt" results: one source (same title and text).
    assert row is not None
    assert row["citations"] == 4
    assert row["cited"] == [False, True, True]  # canonical: uncited first among equal URLs
    assert row["urls"] == [None] * 3
    assert_rows_agree(data)


def test_placeholders_without_markers_are_counted() -> None:
    text = "En juin 2025, une canicule a frappé la France, avec plus de 40 °C dans le Sud-Ouest."
    spans = [
        _nested({"url": u, "title": t, "start_index": 0, "end_index": 0})
        for u, t in (
            ("https://www.lemonde.fr/canicule.html", "Canicule"),
            ("https://lemonde.fr/canicule.html/", "1"),
            ("", "vide"),
        )
    ]
    data = _completion(text, *spans, model="openai/gpt-4o:online")
    row = fast_row(data)
    assert row is not None
    assert (row["citations"], row["sources"], row["diagnostics"]) == (0, 1, 2)
    assert_rows_agree(data)
    with_markers = _completion(text + " [1]", *spans, model="openai/gpt-4o:online")
    assert fast_row(with_markers) is not None
    assert_rows_agree(with_markers)


@pytest.mark.parametrize(
    "text",
    [
        "Zürich hat 448 000 Einwohner. \ue200cite\ue202turn0search0\ue201",
        'Voir \ue200entity\ue202["city","Zürich"]\ue201.',
    ],
)
def test_private_use_markers_agree(text: str) -> None:
    data = _response(_search("https://www.stadt-zuerich.ch/"), _message(_part(text)))
    assert fast_row(data) is not None
    assert_rows_agree(data)


def test_chat_shapes() -> None:
    text = (
        "Segundo o Censo 2022, São Paulo tem 11.451.999 habitantes. "
        "([ibge.gov.br](https://www.ibge.gov.br/sp.html?utm_source=openai)) "
        "A região metropolitana ultrapassa 20 milhões de pessoas 🏙️. "
        "([pt.wikipedia.org](https://pt.wikipedia.org/wiki/S%C3%A3o_Paulo?utm_source=openai)) "
    )
    annotations = [
        _nested(_url(text, "[ibge.gov.br](https://www.ibge.gov.br/sp.html?utm_source=openai)",
                     "https://www.ibge.gov.br/sp.html?utm_source=openai")),
        _nested(_url(text, "[pt.wikipedia.org](https://pt.wikipedia.org/wiki/S%C3%A3o_Paulo?utm_source=openai)",
                     "https://pt.wikipedia.org/wiki/S%C3%A3o_Paulo?utm_source=openai")),
    ]  # fmt: skip
    base = _completion(text, *annotations)
    variants = [
        base,
        _completion(text, *annotations, model="gpt-4o"),
        _completion(text, model="gpt-4o-mini-search-preview"),
        _completion(None, model="gpt-4o"),
        _completion(text, *annotations, model="openai/gpt-4o:online", provider="OpenAI"),
        {k: v for k, v in base.items() if k != "object"},
    ]
    for data in variants:
        assert fast_row(data) is not None
        assert_rows_agree(data)
    two = copy.deepcopy(base)
    two["choices"].insert(0, {**two["choices"][0], "index": 1})
    assert_rows_agree(two)
    azure = copy.deepcopy(base)
    azure["choices"][0]["content_filter_results"] = {"hate": {"filtered": False}}
    azure["prompt_filter_results"] = [{"prompt_index": 0, "content_filter_results": {}}]
    assert fast_row(azure) is not None
    assert_rows_agree(azure)


# --- generated responses ------------------------------------------------------------------

PAGES = [
    ("https://www.lemonde.fr/planete/article/2025/06/12/canicule.html", "Canicule – Le Monde"),
    ("https://lemonde.fr/planete/article/2025/06/12/canicule.html/", "Le Monde"),
    ("https://www.lemonde.fr/planete/article/2025/06/12/canicule.html?utm_source=openai", None),
    ("https://fr.wikipedia.org/wiki/Tour_Eiffel", "Tour Eiffel — Wikipédia"),
    ("https://ja.wikipedia.org/wiki/東京", "東京 - Wikipedia"),
    ("https://www.bbc.co.uk/news/world-12345", "BBC News"),
    ("https://例え.テスト/パス?q=café", "例え"),
    ("https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQE1", "nytimes.com"),
    ("https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQE2", None),
    ("https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQE3", "A title"),
    ("https://VERTEXAISEARCH.cloud.google.com/grounding-api-redirect/AUZIYQE1", "www.nytimes.com"),
    ("http://localhost:8000/docs", "2"),
]
SENTENCES = [
    "La tour Eiffel mesure aujourd’hui 330 mètres.",
    "Tokyo compte environ 14 millions d’habitants 😀.",
    "Le café ouvre à 9 h 30 !",
    "東京は日本の首都です。",
    "Der Zürichsee ist rund 40 km lang.",
    "Dr. Smith said the U.S. economy grew 2.5% in 2024.",
    "Mount Columbia rises to 3,747 m (12,294 ft).",
    "**La région métropolitaine** dépasse 20 millions de personnes 🏙️.",
    "The bridge opened on 5 May 1937, after four years of work.",
    "Acme Inc. The firm was founded in 1999.",
    "Il est né le 5. Dezember 1901 à Zürich.",
    "¿Dónde está el café?",
]
OFFERS = [
    "If you want, I can compare it with other towers.",
    "Would you like more details?",
    "Si vous voulez, je peux vérifier les horaires.",
    "Let me know if you need the sources.",
]


def _site(url: str) -> str:
    return url.split("/")[2]


@st.composite
def _cited_text(
    draw: st.DrawFn, *, pages: list[int], numbered: bool = False
) -> tuple[str, list[tuple[int, int, int]]]:
    """A clean answer text: paragraphs and bullets of sentences, each maybe cited by a link.

    Returns the text and, per citation, its span and the page it links.
    """
    pieces: list[str] = []
    length = 0
    cites: list[tuple[int, int, int]] = []

    def put(piece: str) -> None:
        nonlocal length
        pieces.append(piece)
        length += len(piece)

    for p in range(draw(st.integers(1, 3))):
        if p:
            put("\n\n")
        layout = draw(st.sampled_from(["para", "bullets", "heading"]))
        if layout == "heading":
            put(f"## {draw(st.sampled_from(['Hauteur', 'Histoire 東京', 'Facts']))}\n\n")
        for s in range(draw(st.integers(1, 4))):
            if layout == "bullets":
                put("\n- " if s else "- ")
            elif s:
                put(draw(st.sampled_from([" ", "\n"])))
            put(draw(st.sampled_from(SENTENCES)))
            if draw(st.booleans()):
                page = draw(st.sampled_from(pages))
                url = PAGES[page][0]
                if numbered:
                    link = f"[[{len(cites) + 1}]]({url})"
                    put(draw(st.sampled_from(["", " "])))
                else:
                    link = f"[{_site(url)}]({url})"
                    put(draw(st.sampled_from([" (", "("])))
                cites.append((length, length + len(link), page))
                put(link)
                if not numbered:
                    put(")")
    if draw(st.booleans()):
        put("\n\n" + draw(st.sampled_from(OFFERS)))
    return "".join(pieces), cites


@st.composite
def _clean_response(draw: st.DrawFn) -> dict[str, Any]:
    pages = draw(st.lists(st.integers(0, len(PAGES) - 1), min_size=1, max_size=6, unique=True))
    xai = draw(st.booleans())
    output: list[Any] = []
    if draw(st.booleans()):
        output.append({"id": "rs_1", "type": "reasoning", "summary": []})
    for _ in range(draw(st.integers(0, 2))):
        found = draw(st.lists(st.sampled_from(pages), max_size=4))
        entries: list[Any] = [
            {"type": "url", "url": PAGES[k][0], **({"title": PAGES[k][1]} if PAGES[k][1] else {})}
            for k in found
        ]
        if draw(st.booleans()):
            entries.append({"type": "api", "name": "oai-weather"})
        output.append(_search(*entries))
    if draw(st.booleans()):
        output.append(
            {"id": "ws_2", "type": "web_search_call", "status": "completed",
             "action": {"type": "open_page", "url": PAGES[pages[0]][0]}}
        )  # fmt: skip
    parts = []
    for _ in range(draw(st.integers(1, 2))):
        text, cites = draw(_cited_text(pages=pages, numbered=xai))
        annotations = []
        for n, (start, end, page) in enumerate(cites):
            url, title = PAGES[page]
            annotation: dict[str, Any] = {
                "type": "url_citation",
                "start_index": start,
                "end_index": end,
                "url": url,
                "title": str(n + 1) if xai else title,
            }
            annotations.append(annotation)
        parts.append(_part(text, *annotations))
    output.append(_message(*parts))
    fields: dict[str, Any] = {}
    if xai:
        fields = {"model": "grok-4", "citations": [PAGES[k][0] for k in pages]}
    return _response(*output, **fields)


@st.composite
def _clean_completion(draw: st.DrawFn) -> dict[str, Any]:
    pages = draw(st.lists(st.integers(0, len(PAGES) - 1), min_size=1, max_size=6, unique=True))
    text, cites = draw(_cited_text(pages=pages))
    annotations = [
        {
            "type": "url_citation",
            "url_citation": {
                "start_index": start,
                "end_index": end,
                "url": PAGES[page][0],
                "title": PAGES[page][1],
            },
        }
        for start, end, page in cites
    ]
    model = draw(st.sampled_from(["gpt-4o-search-preview", "gpt-4o", "openai/gpt-4o:online"]))
    return _completion(text, *annotations, model=model)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(_clean_response())
def test_clean_responses_are_read_by_the_sink(data: dict[str, Any]) -> None:
    assert fast_row(data) is not None
    assert_rows_agree(data)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(_clean_completion())
def test_clean_completions_are_read_by_the_sink(data: dict[str, Any]) -> None:
    assert fast_row(data) is not None
    assert_rows_agree(data)


# Hostile text: what moves claims in `extract()` (offers, pointers, prefixes, tables, code,
# markers, long gaps, abbreviations, CJK), and what may cite beyond the annotations.
TOKENS = [
    *SENTENCES,
    *OFFERS,
    " ", " ", " ", "\n", "\n\n", "\r\n", "- ", "1. ", "1.", "## ", "> ", "• ", "* ",
    ", ", "; ", ": ", ". ", "。", "…", "!", "¿", "(", ")", "\"", "”", "»", " » ",
    "(see the report)", "(per the filing)", "(via Reuters", "参照",
    "[1]", "[2, 3]", "【4:0†source】", "<sup>1</sup>", "[^1]",
    "[lemonde.fr](https://www.lemonde.fr/a)", "([bbc.co.uk](https://www.bbc.co.uk/b))",
    "`code`", "| a | b |\n|---|---|\n| 1 | 2 |", "```\nx = [1]\n```", "~~~", "    indented",
    "Dr.", "z. B.", "U.S.", "am 5.", " Dezember", "Inc.", " The",
    " " * 300, ",;:" * 90, "café 東京 😀", "**bold**", "Want me to", "Der ", "OpenAI",
    "\ue200cite\ue202turn0search0\ue201",
]  # fmt: skip


ODD_ANNOTATIONS = [
    {"type": "file_path", "file_id": "file-xyz", "index": 0},
    {"type": "unknown_kind"},
    {"type": None},
    {"type": 3},
    {"type": ["url_citation"]},
    "text",
    None,
    [],
]


@st.composite
def _odd_annotation(draw: st.DrawFn, size: int) -> Any:
    """An annotation with a random span, source and field types (or no annotation at all)."""
    kind = draw(st.sampled_from(["url", "file", "container", "odd"]))
    index = st.integers(-2, size + 3) | st.none() | st.just(0)
    if kind == "url":
        return {
            "type": "url_citation",
            "start_index": draw(index),
            "end_index": draw(index),
            "url": draw(st.sampled_from([p[0] for p in PAGES] + ["", None, 5])),
            "title": draw(st.sampled_from([p[1] for p in PAGES] + ["3", 1.5])),
        }
    if kind == "file":
        return {
            "type": "file_citation",
            "index": draw(index | st.sampled_from([True, 2.0])),
            "file_id": draw(st.sampled_from(["file-abc", "file-def", "", None, "u-0123456789ab"])),
            "filename": draw(st.sampled_from(["a.pdf", "b.md", None])),
        }
    if kind == "container":
        return {
            "type": "container_file_citation",
            "start_index": draw(st.integers(0, size + 1)),
            "end_index": draw(st.integers(0, size + 1)),
            "file_id": draw(st.sampled_from(["cfile_1", "cfile_2", None])),
            "filename": "out.csv",
            "container_id": "cntr_1",
        }
    return draw(st.sampled_from(ODD_ANNOTATIONS))


@st.composite
def _hostile_link(draw: st.DrawFn, at: int) -> tuple[str, dict[str, Any]]:
    """A link placed at ``at`` as OpenAI (``([site](url))``), xAI or a bare link writes it."""
    url, title = draw(st.sampled_from(PAGES))
    style = draw(st.sampled_from(["wrapped", "bare", "numbered", "whole"]))
    if style == "numbered":
        link = f"[[{draw(st.integers(1, 4))}]]({url})"
        title = str(draw(st.integers(1, 4)))
    else:
        link = f"[{_site(url)}]({url})"
    piece = f"({link})" if style in ("wrapped", "whole") else link
    start = at + (1 if style == "wrapped" else 0)
    end = start + len(link) + (2 if style == "whole" else 0)
    annotation = {
        "type": "url_citation",
        "start_index": start,
        "end_index": end,
        "url": url,
        "title": title,
    }
    return piece, annotation


@st.composite
def _hostile_part(draw: st.DrawFn, chat: bool = False) -> tuple[str, list[Any]]:
    """A text with links at random places, annotated (or not) with odd fields and spans."""
    pieces: list[str] = []
    length = 0
    annotations: list[Any] = []
    for _ in range(draw(st.integers(0, 14))):
        if draw(st.integers(0, 3)) == 0:
            piece, annotation = draw(_hostile_link(length))
            annotations.append(annotation)
        else:
            piece = draw(st.sampled_from(TOKENS))
        pieces.append(piece)
        length += len(piece)
    text = "".join(pieces)
    extra = draw(st.lists(_odd_annotation(len(text)), max_size=3))
    if draw(st.integers(0, 5)) == 0:
        annotations = list(draw(st.permutations(annotations)))
    position = draw(st.integers(0, len(annotations)))
    annotations[position:position] = extra
    if chat:
        annotations = [
            _nested(a) if _is_url_citation(a) and draw(st.booleans()) else a for a in annotations
        ]
    return text, annotations


def _is_url_citation(annotation: Any) -> bool:
    return isinstance(annotation, dict) and annotation.get("type") == "url_citation"


@st.composite
def _hostile_response(draw: st.DrawFn) -> dict[str, Any]:
    output: list[Any] = []
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(
            st.sampled_from(["message", "search", "file_search", "reasoning", "other", "odd"])
        )
        if kind == "message":
            parts = []
            for _ in range(draw(st.integers(0, 2))):
                text, annotations = draw(_hostile_part())
                parts.append(_part(text, *annotations))
            if draw(st.integers(0, 6)) == 0:
                parts.append(draw(st.sampled_from([{"type": "refusal", "refusal": "no"},
                                                   {"type": "summary_text"}, "x"])))  # fmt: skip
            output.append(_message(*parts))
        elif kind == "search":
            entries = draw(
                st.lists(
                    st.sampled_from(
                        [{"type": "url", "url": u, "title": t} for u, t in PAGES]
                        + [{"type": "url", "url": ""}, {"type": "api", "name": "finance"},
                           {"type": "api"}, {"type": "video"}, "x", {"type": "url", "url": 3}]
                    ),
                    max_size=4,
                )
            )  # fmt: skip
            item = _search(*entries, status=draw(st.sampled_from(["completed", "failed"])))
            if draw(st.integers(0, 4)) == 0:
                item["action"] = draw(
                    st.sampled_from(
                        [None, {"type": "open_page", "url": PAGES[0][0]}, {"type": "find"},
                         {"type": "scroll"}, "x", {"type": "search", "queries": "q"}]
                    )
                )  # fmt: skip
            output.append(item)
        elif kind == "file_search":
            output.append(
                {"id": "fs_1", "type": "file_search_call", "status": "completed",
                 "results": [
                     {"file_id": f, "filename": n, "text": t, "score": 0.5}
                     for f, n, t in draw(st.lists(st.tuples(
                         st.sampled_from(["file-abc", "file-def", None, ""]),
                         st.sampled_from(["a.pdf", "b.md", None]),
                         st.sampled_from(["chunk", "", None])), max_size=3))
                 ]}
            )  # fmt: skip
        elif kind == "reasoning":
            output.append({"id": "rs_1", "type": "reasoning", "summary": []})
        elif kind == "other":
            output.append({"type": draw(st.sampled_from(["function_call", "image_generation_call",
                                                          "mystery_call", None]))})  # fmt: skip
        else:
            output.append(
                draw(st.sampled_from(["item", 3, None, {"type": 5}, {"type": ["message"]}]))
            )
    fields: dict[str, Any] = {}
    for key, values in (
        ("model", ["gpt-5", "gpt-4o-search-preview", "o3-deep-research", None, 7]),
        ("status", ["completed", "failed", "incomplete", None]),
        ("tools", [[SEARCH_TOOL], [], None, [{"type": "function"}], "x"]),
        ("citations", [None, [PAGES[1][0], 3, ""], [], "yes"]),
        ("previous_response_id", [None, "resp_1"]),
    ):
        if draw(st.booleans()):
            fields[key] = draw(st.sampled_from(values))
    data = _response(*output, **fields)
    if draw(st.integers(0, 8)) == 0:
        del data["output"]
    if draw(st.integers(0, 8)) == 0:
        data["type"] = draw(st.sampled_from([["response"], {"k": 1}, "response"]))
    if draw(st.integers(0, 8)) == 0:
        return {"type": "response.completed", "response": data}
    return data


@st.composite
def _hostile_completion(draw: st.DrawFn) -> dict[str, Any]:
    text, annotations = draw(_hostile_part(chat=True))
    content = draw(st.sampled_from([text, text, None, [{"type": "text", "text": text}]]))
    data = _completion(
        content,
        *annotations,
        model=draw(st.sampled_from(["gpt-4o-search-preview", "gpt-4o", "x:online", None, 3])),
    )
    choice = data["choices"][0]
    if draw(st.integers(0, 6)) == 0:
        choice["index"] = draw(st.sampled_from([1, None, False]))
    if draw(st.integers(0, 8)) == 0:
        choice["message"] = draw(st.sampled_from([None, "x", {}]))
    if draw(st.integers(0, 8)) == 0:
        data["choices"] = draw(st.sampled_from([[], [choice, choice], "x"]))
    return data


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_hostile_response())
def test_hostile_responses_agree(data: dict[str, Any]) -> None:
    assert_rows_agree(data)


@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(_hostile_completion())
def test_hostile_completions_agree(data: dict[str, Any]) -> None:
    assert_rows_agree(data)


# --- source order -------------------------------------------------------------------------
# A row lists its sources sorted (`canonical`), not in the order the answer gives them (the
# order of its claims in the text): the analytics sink locates no claim, and its rows agree
# whatever order the text, the annotations and the search results name the sources in.

DISTINCT_PAGES = list(
    {page_key(url): k for k, (url, _) in reversed(list(enumerate(PAGES)))}.values()
)
"""Pages with distinct page keys: which URL and title a shared page keeps depends on the order
it is met in, in `extract()` too."""


@st.composite
def _out_of_order(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Several sources cited in one order in the text and in others in the annotations and the
    search results (and xAI's ``citations``), with hostile text between the markers.

    Returns that response, the same one with every list in text order, and the completion of
    the shuffled annotations.
    """
    pages = draw(st.lists(st.sampled_from(DISTINCT_PAGES), min_size=2, max_size=5, unique=True))
    cited = draw(st.permutations(pages + draw(st.lists(st.sampled_from(pages), max_size=3))))
    pieces: list[str] = []
    length = 0
    annotations: list[dict[str, Any]] = []
    for n, page in enumerate(cited):
        for _ in range(draw(st.integers(0, 3))):
            piece = draw(st.sampled_from(TOKENS[:-1]))  # all but the private-use marker
            pieces.append(piece)
            length += len(piece)
        url, title = PAGES[page]
        style = draw(st.sampled_from(["wrapped", "bare", "numbered", "file"]))
        if style == "file":
            piece = draw(st.sampled_from([".", "。", "", " "]))
            annotation: dict[str, Any] = {
                "type": "file_citation",
                "index": length,
                "file_id": f"file-{page}",
                "filename": f"{page}.pdf",
            }
        else:
            link = f"[[{n + 1}]]({url})" if style == "numbered" else f"[{_site(url)}]({url})"
            piece = f"({link})" if style == "wrapped" else link
            start = length + int(style == "wrapped")
            annotation = {
                "type": "url_citation",
                "start_index": start,
                "end_index": start + len(link),
                "url": url,
                "title": str(n + 1) if style == "numbered" else title,
            }
        pieces.append(piece)
        length += len(piece)
        annotations.append(annotation)
    text = "".join(pieces)
    shuffled = draw(st.permutations(annotations))
    if shuffled == annotations:
        shuffled = annotations[1:] + annotations[:1]
    found = draw(st.permutations(pages))
    fields: dict[str, Any] = {}
    if draw(st.booleans()):
        fields = {"model": "grok-4", "citations": [PAGES[k][0] for k in reversed(found)]}

    def response(annotations: list[Any], found: list[int], **fields: Any) -> dict[str, Any]:
        entries = [{"type": "url", "url": PAGES[k][0], "title": PAGES[k][1]} for k in found]
        return _response(_search(*entries), _message(_part(text, *annotations)), **fields)

    in_text_order = list(dict.fromkeys(cited))
    fields_in_order = (
        {**fields, "citations": [PAGES[k][0] for k in in_text_order]} if fields else {}
    )
    chat = [_nested(a) if a["type"] == "url_citation" else a for a in shuffled]
    return (
        response(shuffled, found, **fields),
        response(annotations, in_text_order, **fields_in_order),
        _completion(text, *chat),
    )


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(_out_of_order())
def test_sources_out_of_text_order_are_read_by_the_sink(
    case: tuple[dict[str, Any], dict[str, Any], dict[str, Any]],
) -> None:
    shuffled, in_order, chat = case
    row = fast_row(shuffled)
    assert row is not None
    assert row == fast_row(in_order)
    assert fast_row(chat) is not None
    for data in case:
        assert_rows_agree(data)
