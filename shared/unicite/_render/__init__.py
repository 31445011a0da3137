"""Render a `CitedAnswer` for people: terminal, plain text, Markdown, HTML, or JSON.

Every format places markers the same way (see `unicite.inject_markers`), numbers them by
position in ``answer.sources``, lists the sources after the text, and treats every field of the
answer as untrusted: control characters, escape sequences and bidi overrides are stripped,
quotes are cut at 200 characters, only http(s) URLs become links, and ``raw`` is never shown.
The same answer always renders to the same bytes.
"""

from __future__ import annotations

import shutil
from typing import Literal

from unicite._marks import check_choice
from unicite._render._html import render_html
from unicite._render._hyperlinks import supports_hyperlinks
from unicite._render._json import render_json
from unicite._render._markdown import MarkdownMarkers, render_markdown
from unicite._render._plan import SourceSelection, build_plan
from unicite._render._terminal import render_terminal
from unicite.exceptions import UsageError
from unicite.model import CitedAnswer

__all__ = ["MarkdownMarkers", "RenderFormat", "SourceSelection", "render", "supports_hyperlinks"]

RenderFormat = Literal["terminal", "markdown", "html", "json", "text"]
"""What `render` produces."""

_FORMATS = ("terminal", "markdown", "html", "json", "text")
_DEFAULT_WIDTH = 80


def render(
    answer: CitedAnswer,
    format: RenderFormat = "terminal",
    *,
    hyperlinks: bool | None = None,
    sources: SourceSelection = "cited",
    markers: MarkdownMarkers = "brackets",
    width: int | None = None,
    prefix: str | None = None,
    schema: bool = False,
) -> str:
    """Render `answer` as text with citation markers followed by its sources.

    A citation with a ``marker_span`` (an inline link, a ``[3]`` the model wrote) has that span
    replaced by the marker; any other gets a marker at the end of its span, before trailing
    whitespace; citations ending at the same place share one marker, ``[1][2]``. When nothing
    is cited, every source is still listed. Formats:

    - ``"terminal"``: the text, then a Sources block (``1. Title — URL``, quotes as
      ``> "…"`` lines, locations such as ``pages 3–4``), with OSC 8 hyperlinks when enabled,
      wrapped to ``width``. No colour codes.
    - ``"text"``: the same layout with no escape sequences at all, unwrapped unless ``width``
      is given.
    - ``"markdown"``: the text (still Markdown, defused: no raw HTML, no non-http(s) links)
      with ``[1]`` or ``[^1]`` markers, then ``1. [Title](url)`` entries or footnote
      definitions.
    - ``"html"``: a self-contained ``<div class="unicite">`` fragment (inline ``<style>``, no
      script): the text rendered as Markdown (CommonMark with tables and strikethrough; raw
      HTML shows as text, only http(s) links become links, images are shown as links and never
      loaded, single newlines break lines), markers with CSS tooltips linking to an ordered
      source list, and Google Search Suggestions, sanitised, when the answer carries them (the
      other text formats add a note that they exist).
    - ``"json"``: ``answer.to_json(indent=2)`` without the ``raw`` fields; with
      ``schema=True``, ``{"schema": ..., "answer": ...}``.

    Args:
        answer: The answer to render.
        format: The output format.
        hyperlinks: Terminal only: OSC 8 links on (True), off (False) or as
            `supports_hyperlinks` detects for ``sys.stdout`` (None).
        sources: List only the cited sources (``"cited"``; numbers still match
            ``answer.sources``, so they may have gaps) or all of them (``"all"``).
        markers: Markdown only: inline ``"brackets"`` or GFM ``"footnotes"``.
        width: Terminal and text: wrap lines to this many columns (words, links and markers
            are never split). Terminal default: the terminal's width, else 80; text default:
            no wrapping.
        prefix: HTML only: prefix of element ids (a letter, then letters, digits, ``-``,
            ``_``). Default: derived from the answer, so different answers on one page never
            share ids and the same answer always gets the same ones.
        schema: JSON only: include the JSON Schema.

    Returns:
        The rendering; it never ends with a newline.

    Raises:
        UsageError: An argument has the wrong type or an unknown value. Odd answer data
            never raises.
    """
    if not isinstance(answer, CitedAnswer):
        raise UsageError(f"render expects a CitedAnswer, got {type(answer).__name__}")
    check_choice("format", format, _FORMATS)
    check_choice("markers", markers, ("brackets", "footnotes"))
    if hyperlinks is not None and not isinstance(hyperlinks, bool):
        raise UsageError(f"hyperlinks must be True, False or None, got {hyperlinks!r}")
    if width is not None and (isinstance(width, bool) or not isinstance(width, int) or width < 1):
        raise UsageError(f"width must be a positive int or None, got {width!r}")
    check_choice("sources", sources, ("cited", "all"))
    if format == "json":
        return render_json(answer, schema=schema)
    plan = build_plan(answer, sources)
    if format == "html":
        return render_html(answer, plan, prefix=prefix)
    if format == "markdown":
        return render_markdown(answer, plan, markers=markers)
    if format == "text":
        return render_terminal(answer, plan, links=False, width=width)
    links = supports_hyperlinks() if hyperlinks is None else hyperlinks
    if width is None:
        width = shutil.get_terminal_size((_DEFAULT_WIDTH, 24)).columns or _DEFAULT_WIDTH
    return render_terminal(answer, plan, links=links, width=width)
