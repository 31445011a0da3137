"""The bundled, offline demonstration behind ``unicite demo`` and ``make demo``."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from unicite._text import sanitize_display
from unicite._urls import safe_href
from unicite.model import CharLocation, Citation, CitedAnswer, Source

__all__ = ["example_answer", "run_demo"]

_TEXT = (
    "Der Kölner Dom wurde 1248 begonnen und erst 1880 vollendet. "
    "東京タワーの高さは333メートルです。 "
    "Both facts are easy to check 🙂."
)


def example_answer() -> CitedAnswer:
    """A small multilingual answer with two sources and exact spans."""
    sources = [
        Source(
            url="https://de.wikipedia.org/wiki/K%C3%B6lner_Dom?utm_source=demo",
            title="Kölner Dom – Wikipedia",
            snippet="Der Kölner Dom … Baubeginn 1248, Vollendung 1880.",
        ),
        Source(
            url="https://www.tokyotower.co.jp/en/about/",
            title="About Tokyo Tower",
            content="Tokyo Tower is 333 meters tall.",
        ),
    ]
    first = "Der Kölner Dom wurde 1248 begonnen und erst 1880 vollendet."
    second = "東京タワーの高さは333メートルです。"
    citations = []
    for claim, source in ((first, sources[0]), (second, sources[1])):
        start = _TEXT.index(claim)
        citations.append(
            Citation(
                start=start,
                end=start + len(claim),
                text=claim,
                source_ids=[source.id],
                quote=source.content,
                location=CharLocation(start=0, end=len(source.content)) if source.content else None,
            )
        )
    return CitedAnswer(text=_TEXT, sources=sources, citations=citations, provider=None)


def run_demo(console: Console) -> None:
    """Print each bundled answer with its citation spans and sources."""
    answer = example_answer()
    console.rule("[bold]unicite demo[/bold]: one citation model")
    text = Text(answer.text)
    for citation in answer.citations:
        text.stylize("underline", citation.start, citation.end)
    console.print(text)
    console.print()
    for citation in answer.citations:
        numbers = ", ".join(str(answer.footnote_number(sid)) for sid in citation.source_ids)
        console.print(
            f"  [{numbers}] chars {citation.start}-{citation.end}"
            f"  utf-16 {answer.utf16_span(citation)}  utf-8 bytes {answer.byte_span(citation)}"
        )
    console.print("\n[bold]Sources[/bold]")
    for n, source in enumerate(answer.sources, 1):
        title = escape(sanitize_display(source.title or source.url or source.id))
        href = safe_href(source.url)
        console.print(f"  {n}. {title} — {escape(href or '')} ({source.domain})")
