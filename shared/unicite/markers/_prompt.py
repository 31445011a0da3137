"""The prompt side: instructions that make a model cite in a style `parse_markers` reads back."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from unicite.exceptions import UsageError
from unicite.model import Source
from unicite.sources import SourceLedger, build_digest

__all__ = ["InstructionFormat", "InstructionStyle", "citation_instructions", "format_sources"]

InstructionFormat = Literal["markdown", "html", "json"]
"""What the model is asked to write."""

InstructionStyle = Literal["brackets", "sids", "footnotes", "sup", "sidecar", "inline"]
"""How it cites: ``[1]``, ``[[S:1]]``, ``[^1]``, ``<sup …>``; for JSON a ``_citations`` sidecar
or ``[[S:1]]`` inside string values."""

_STYLES: dict[str, tuple[str, ...]] = {
    "markdown": ("brackets", "sids", "footnotes"),
    "html": ("sup", "brackets", "sids"),
    "json": ("sidecar", "inline"),
}
_UNLIMITED = 1 << 40

_HOW: dict[str, str] = {
    "brackets": (
        "Cite a source by its number in square brackets: [1]. For several sources, write one "
        "marker with the numbers separated by commas: [1, 3]."
    ),
    "sids": (
        "Cite a source by its number inside double square brackets after S and a colon: "
        "[[S:1]]. For several sources, separate the numbers with commas: [[S:1,3]]."
    ),
    "footnotes": (
        "Cite a source with a footnote reference to its number: [^1]. For several sources, "
        "write one reference per source: [^1][^3]. Do not write footnote definitions."
    ),
    "sup": (
        'Cite sources with <sup class="cite" data-sids="1">[1]</sup>, listing the numbers of '
        "all sources for the claim in data-sids, comma-separated: "
        '<sup class="cite" data-sids="1,3">[1,3]</sup>.'
    ),
}
_EXAMPLE_CLAIM = "The bridge has a steel arch"
_EXAMPLES: dict[str, str] = {
    "brackets": f"{_EXAMPLE_CLAIM} [1], and it carries eight lanes [1, 3].",
    "sids": f"{_EXAMPLE_CLAIM} [[S:1]], and it carries eight lanes [[S:1,3]].",
    "footnotes": f"{_EXAMPLE_CLAIM}[^1], and it carries eight lanes[^1][^3].",
    "sup": (
        f'{_EXAMPLE_CLAIM}<sup class="cite" data-sids="1">[1]</sup>, and it carries eight '
        'lanes<sup class="cite" data-sids="1,3">[1,3]</sup>.'
    ),
}


def citation_instructions(
    format: InstructionFormat = "markdown",
    style: InstructionStyle | None = None,
    *,
    usage: bool = False,
    key: str = "_citations",
) -> str:
    """Instructions for a system prompt that make a model cite sources readably.

    Pair them with `format_sources`, which numbers the sources ``[sid:1]``, ``[sid:2]``, ...;
    a model following them writes markers that `parse_markers` (or, for JSON,
    `parse_structured`) reads back exactly. They state the rules: cite right after the claim,
    never inside code, only the listed sources by their numbers.

    Args:
        format: ``"markdown"`` (default style ``"brackets"``; also ``"sids"``,
            ``"footnotes"``), ``"html"`` (default ``"sup"``; also ``"brackets"``, ``"sids"``)
            or ``"json"`` (default ``"sidecar"``, a list of JSON Pointers; also ``"inline"``,
            ``[[S:n]]`` inside string values).
        style: The marker style; None for the format's default.
        usage: Also ask for a final ``[[USAGE:1,3]]`` line declaring the sources used (text
            formats only), read back as ``sources_used``.
        key: JSON sidecar only: the top-level key (or JSON Pointer) of the citations list.

    Returns:
        The instructions, as plain text.

    Raises:
        UsageError: An unknown format, a style the format does not have, or ``usage`` with
            JSON.
    """
    if not isinstance(format, str) or format not in _STYLES:
        raise UsageError(f"format must be 'markdown', 'html' or 'json', got {format!r}")
    styles = _STYLES[format]
    chosen = styles[0] if style is None else style
    if chosen not in styles:
        allowed = ", ".join(repr(s) for s in styles)
        raise UsageError(f"style for {format} must be one of {allowed}, got {style!r}")
    if not isinstance(usage, bool):
        raise UsageError(f"usage must be a bool, got {usage!r}")
    if usage and format == "json":
        raise UsageError("usage declarations are for text answers; JSON answers use the sidecar")
    if format == "json":
        return _json_instructions(chosen, key)
    lines = [
        "Cite your sources. The sources are listed below, each under a label [sid:N]; "
        "N is the source's number.",
        "",
        f"- {_HOW[chosen]}",
        "- Put the citation right after the claim it supports: at the end of the sentence or "
        "clause, before its closing punctuation. Cite each claim where it is made, not all "
        "sources at the end of a paragraph.",
        "- Cite only the sources listed below, by their number N. Never invent a source, a "
        "number, a title or a URL. Leave a claim uncited when no listed source supports it.",
        "- Never put citations inside code blocks or inline code; cite the sentence that "
        "introduces the code instead.",
        "- Do not add a list of sources or references at the end; it is added for you.",
    ]
    if usage:
        lines.append(
            "- End the answer with a last line [[USAGE:N,M]] listing the numbers of every "
            "source you used, for example [[USAGE:1,3]]."
        )
    lines += ["", f"Example: {_EXAMPLES[chosen]}"]
    return "\n".join(lines)


def _json_instructions(style: str, key: str) -> str:
    if not isinstance(key, str) or not key:
        raise UsageError(f"key must be a non-empty string, got {key!r}")
    rules = [
        "Cite your sources. The sources are listed below, each under a label [sid:N]; "
        "N is the source's number.",
        "",
        "- Cite only the sources listed below, by their number N. Never invent a source, a "
        "number, a title or a URL. Leave a value uncited when no listed source supports it.",
        "- Never put citations inside code (in values holding code, or in keys).",
    ]
    if style == "inline":
        rules.insert(
            2,
            "- Inside string values, put [[S:N]] right after the claim it supports, before its "
            "closing punctuation; for several sources separate the numbers with commas: "
            "[[S:1,3]]. Never put markers in keys, numbers or booleans.",
        )
        example: dict[str, object] = {
            "summary": "The bridge opened in 1932 [[S:1]] and has eight lanes [[S:1,3]]."
        }
    else:
        where = (
            f"a top-level {json.dumps(key)} array"
            if not key.startswith("/")
            else f"an array at the JSON Pointer {key}"
        )
        field = key if not key.startswith("/") else "citations"
        rules.insert(
            2,
            f"- Add {where} with one entry per cited value: "
            '{"path": "<JSON Pointer to a string value>", "sids": [<source numbers>]}. '
            "The path is an RFC 6901 JSON Pointer into the rest of the document, such as "
            '"/name" or "/items/0/summary" (array items count from 0). Cite string values only.',
        )
        example = {
            "name": "Harbour Bridge",
            "opened": "1932",
            field: [{"path": "/opened", "sids": [1, 3]}],
        }
    rules += ["", f"Example: {json.dumps(example, ensure_ascii=False)}"]
    return "\n".join(rules)


def format_sources(
    sources: Sequence[Source | Mapping[str, Any]]
    | SourceLedger
    | Mapping[int, Source | Mapping[str, Any]],
    budget_tokens: int | None = None,
    *,
    prefer: Literal["content", "snippet"] = "content",
    tokenizer: str | Callable[[str], int] | None = None,
    diagnostics: list[str] | None = None,
) -> str:
    """The numbered sources block to put in a prompt after `citation_instructions`.

    Each source is listed as ``[sid:N] Title`` followed by its text, in the order given
    (a `SourceLedger` lists its sources by their sids, a map ``{n: source}`` under its numbers,
    seed-004 rows under their ``sid``), so that marker ``[N]`` in the answer names the source
    shown as ``[sid:N]`` for `parse_markers` and `unicite.cite`. Text is sanitised and shared
    fairly within ``budget_tokens`` (see `unicite.sources.build_digest`).

    Args:
        sources: `Source` objects or dicts, a `SourceLedger`, or a map from the numbers to show
            to sources.
        budget_tokens: The most tokens the block may take; None for no limit.
        prefer: List each source's full ``content`` (falling back to its snippet) or its
            ``snippet`` (falling back to the content).
        tokenizer: How to count tokens (see `unicite.sources.build_digest`).
        diagnostics: A list to append what had to be cut or left out to.

    Returns:
        The block; ``""`` when there are no sources.

    Raises:
        UsageError: A bad argument.
    """
    if budget_tokens is None:
        budget = _UNLIMITED
    elif isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
        raise UsageError(f"budget_tokens must be an int or None, got {budget_tokens!r}")
    else:
        budget = budget_tokens
    items = sources.sources if isinstance(sources, SourceLedger) else sources
    if isinstance(items, (str, bytes)):
        raise UsageError(f"sources must be a list of sources, got {type(items).__name__}")
    return build_digest(
        items,
        budget,
        prefer,
        tokenizer=tokenizer,
        diagnostics=diagnostics,
    )
