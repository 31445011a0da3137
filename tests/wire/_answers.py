"""Cited answers the wire tests send: non-ASCII text, several sources, odd shapes."""

from __future__ import annotations

import unicite
from unicite import Citation, CitedAnswer, PageLocation, Source

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
