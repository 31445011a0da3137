"""Cited answers the wire tests send: non-ASCII text, several sources, odd shapes."""

from __future__ import annotations

from collections.abc import Callable

import unicite
from unicite import Citation, CitedAnswer, PageLocation, Source, wire
from unicite.generation import Retry

SOURCES = [
    Source(
        url="https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
        title="Viaduc de Millau — Wikipédia",
        snippet="Le viaduc culmine à 343 mètres.",
    ),
    Source(title="Rapport d’inauguration.pdf", content="inauguré le 14 décembre 2004"),
    Source(url="https://www.tokyotower.co.jp/", title="東京タワー 🗼", snippet="高さ333メートル"),
    Source(url="javascript:alert(1)", title='<img src=x onerror="alert(1)">'),
]

MARKED = (
    "Le viaduc de Millau mesure **343 mètres**[1]. Il a été inauguré en 2004 [2][1].\n\n"
    "- 東京タワー🗼は333メートルです[3]。\n"
    "- Une source douteuse[4]."
)


def marked() -> CitedAnswer:
    """An answer whose model wrote [n] markers, cited by `unicite.cite`."""
    return unicite.cite(MARKED, SOURCES)


def native() -> CitedAnswer:
    """An answer with provider citations and no markers (an Anthropic-like answer)."""
    text = "東京タワーの高さは333メートルです。Le viaduc a été inauguré en 2004."
    first = "東京タワーの高さは333メートルです。"
    second = "Le viaduc a été inauguré en 2004."
    start = text.index(second)
    return CitedAnswer(
        text=text,
        provider="anthropic",
        model="claude-sonnet-4-5",
        sources=SOURCES[:3],
        citations=[
            Citation(
                start=0,
                end=len(first),
                text=first,
                source_ids=[SOURCES[2].id],
                quote="高さ333メートル",
                verified=True,
            ),
            Citation(
                start=start,
                end=start + len(second),
                text=second,
                source_ids=[SOURCES[1].id, SOURCES[0].id],
                quote="inauguré le 14 décembre 2004",
                location=PageLocation(start_page=3, end_page=4),
                confidence=0.75,
            ),
        ],
    )


def uncited() -> CitedAnswer:
    """Sources but no citation: a front end shows the fallback list."""
    return CitedAnswer(text="Zürich liegt auf 408 m ü. M.", sources=SOURCES[:2])


# --- an answer every protocol test sends: URL, document and hostile sources, emoji ---------

RICH_TEXT = (
    "La tour Eiffel mesure 330 mètres 🗼. 東京タワーは333メートルです。"
    "Les deux sont des tours 📡 célèbres."
)
EIFFEL = Source(
    id="eiffel",
    url="https://fr.wikipedia.org/wiki/Tour_Eiffel",
    title="Tour Eiffel — Wikipédia",
    snippet="La tour Eiffel est une tour de fer puddlé.",
)
REPORT = Source(id="report", kind="document", title="Rapport annuel 2024.pdf", snippet="330 m.")
HOSTILE = Source(id="hostile", url="javascript:alert(1)", title="Cliquez ici")
TOKYO = Source(id="tokyo", url="https://ja.wikipedia.org/wiki/東京タワー", title="東京タワー")
TOKYO_HREF = "https://ja.wikipedia.org/wiki/%E6%9D%B1%E4%BA%AC%E3%82%BF%E3%83%AF%E3%83%BC"
EIFFEL_HREF = "https://fr.wikipedia.org/wiki/Tour_Eiffel"


def cite_span(text: str, claim: str, ids: list[str]) -> Citation:
    """A citation of `claim`, found in `text`, by the sources `ids`."""
    start = text.index(claim)
    return Citation(start=start, end=start + len(claim), text=claim, source_ids=ids)


RICH = CitedAnswer(
    text=RICH_TEXT,
    sources=[EIFFEL, REPORT, HOSTILE, TOKYO],
    citations=[
        cite_span(RICH_TEXT, "La tour Eiffel mesure 330 mètres 🗼.", ["eiffel", "report"]),
        cite_span(RICH_TEXT, "東京タワーは333メートルです。", ["tokyo"]),
        cite_span(
            RICH_TEXT, "Les deux sont des tours 📡 célèbres.", ["eiffel", "hostile", "tokyo"]
        ),
    ],
    provider="openai",
    model="gpt-4o-search-preview",
)
UNCITED = CitedAnswer(text="Résumé sans marqueur 😀 : voir les sources.", sources=[EIFFEL, REPORT])


# --- the streams every protocol test encodes ----------------------------------------------------

FIRST_ROUND = "Première version [7] ✗ "
"""A generation round that fails its checks: a retry discards it."""


def content_of(answer: CitedAnswer) -> str:
    """The content the wire sends for `answer` (markers placed)."""
    return str(wire.history(answer)["content"])


def pieces(text: str, size: int = 7) -> list[object]:
    """`text` cut into deltas of `size` characters."""
    return [text[k : k + size] for k in range(0, len(text), size)]


def streams() -> dict[str, Callable[[], object]]:
    """Named cited streams: an answer alone, deltas then the answer, a retry, odd endings."""
    return {
        "answer-alone": lambda: RICH,
        "deltas-then-answer": lambda: [*pieces(content_of(RICH)), RICH],
        "retry": lambda: [
            *pieces(FIRST_ROUND),
            Retry(round=2, reason="marker [7] names no source"),
            *pieces(content_of(RICH)),
            RICH,
        ],
        "uncited": lambda: [*pieces(UNCITED.text), UNCITED],
        "diverging": lambda: ["Un texte qui ne continue pas", RICH],
        "no-answer": lambda: ["Du texte ", "sans réponse 🙂"],
    }
