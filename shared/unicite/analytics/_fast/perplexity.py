"""Fast reader for Perplexity responses (see `unicite.analytics._fast`).

`PerplexityProvider` reads Sonar chat completions (top-level ``citations`` and
``search_results``, ``[n]`` markers in ``choices[0].message.content``) and Agent API responses
(``search_results`` / ``fetch_url_results`` output items, ``[n]`` naming a result's ``id``).
Its citations come from the markers: `find_markers` segments the whole text (to leave out
code) and every run of adjacent markers becomes one citation. Where each claim sits decides
only the order the answer lists its sources in, which a row does not keep
(`unicite.analytics._rows.canonical`), so this reader finds the same runs without segmenting
or locating claims. It takes the common case only:

- every ``[`` of the text opens a plain ``[n]`` marker (else `MARKER_RE` finds the markers,
  and any that is not a plain numeric bracket marker gives up);
- no backtick, ``~~~``, ``<sup`` or ``【`` in a text with markers (inline code, fences and
  the marker shapes that could swallow a ``[n]`` depend on the segmentation);
- a marker on a line indented four columns or more, which may be an indented code block,
  gives up unless the lines above it show it is not one;
- a marker whose reading depends on where a sentence starts gives up: one glued to a ``]``
  right after a CJK terminator, where a sentence may start without a space; a marker glued
  to a word is read by `glued_reading`, as `find_markers` reads it;
- every marker names a given source, and the response holds nothing the reader notes as a
  diagnostic (wrong types, results without a URL or an id, unknown output items, ...).

Anything else returns None, and `extract()` reads the response.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from unicite._marker_syntax import (
    MARKER_RE,
    expand_ranges,
    glued_reading,
    in_url,
    read_token,
)
from unicite.analytics._fast._sources import FastSources
from unicite.analytics._fast._types import FastReader
from unicite.analytics._rows import Row
from unicite.providers.perplexity import agent_response

__all__ = ["READERS", "read_perplexity"]

_PROVIDER = "perplexity"

# Runs of plain numeric markers: what almost every Perplexity answer writes.
_PLAIN_RUN_RE = re.compile(r"(\[\d{1,4}\](?:\[\d{1,4}\])*)")
# What stops `MARKER_RE`'s numeric shape: a reference definition after it, or these before it.
_DEFINITION_AFTER_RE = re.compile(r":[ \t]*(?:[A-Za-z][A-Za-z0-9+.\-]{0,20}://|www\.|<)")
_NOT_AFTER = frozenset("/=&#%+~@[\\")
_GLUE = frozenset("_)%\u2030")  # besides letters and digits, what may glue a bracket to text
_SUP_RE = re.compile(r"<sup\b", re.IGNORECASE)
# The CJK terminators that end a sentence without a space after them, and what the sentence
# takes after one (`unicite._segment`): closers, then markers, each maybe after white space
# (`_opens_sentence` also takes digits and white space). The next sentence may start right
# after that, without a space.
_CJK_TERMS = frozenset("\u3002\uff61\uff01\uff1f")
_SENTENCE_TAIL = frozenset(
    "\"'\u201d\u2019\u00bb\u203a)]*_\u300d\u300f\uff09\u3011\u3015\u3009\u300b"  # closers
    "[],-\u2013"
)
_TAIL_SCAN = 64
"""How far back `_opens_sentence` reads for a CJK terminator; a longer tail counts as one."""


_AGENT_QUIET = frozenset({"function_call", "mcp_list_tools", "mcp_call", "reasoning"})


class _GiveUp(Exception):
    """The response holds something this reader does not model exactly."""


# --- markers ------------------------------------------------------------------------------------


def _maybe_url(text: str) -> bool:
    """Whether any marker of the text may be part of a URL: it holds ``://`` or ``www.``.

    ``www.`` in any case ends in one of ``ww.``, ``wW.``, ``Ww.``, ``WW.``; the last three need
    a ``W``, which one character search rules out in most texts (as ``/`` rules out ``://``).
    """
    return (
        ("/" in text and "://" in text)
        or "ww." in text
        or ("W" in text and ("WW." in text or "wW." in text or "Ww." in text))
    )


def _no_citation(text: str, start: int) -> bool:
    """Whether the ``[n]`` at `start`, glued to what is before it, reads as no citation."""
    reading = glued_reading(text, start)
    return reading is not None and reading.reading != "citation"


def _opens_sentence(text: str, pos: int) -> bool:
    """Whether a sentence may start at `pos`, which no space precedes.

    Only a sentence ending in a CJK terminator, its closers and markers can end right before
    it; the tail is read generously (any digits, brackets and white space).
    """
    k = pos
    lo = max(0, pos - _TAIL_SCAN)
    while k > lo and ((ch := text[k - 1]) in _SENTENCE_TAIL or ch.isdecimal() or ch.isspace()):
        k -= 1
    return k > 0 and (k == lo or text[k - 1] in _CJK_TERMS)


def _line_start(text: str, pos: int) -> int:
    return max(text.rfind("\n", 0, pos), text.rfind("\r", 0, pos)) + 1


def _indented(text: str, start: int) -> bool:
    """Whether the line at `start` is indented four columns or more (a tab counts so)."""
    head = text[start : start + 4]
    lead = len(head) - len(head.lstrip())
    return lead == 4 or "\t" in head[:lead]


def _maybe_code(text: str, line: int) -> bool:
    """Whether an indented line may lie in an indented code block.

    A code block opens on an indented line after a blank one (or at the start) and runs over
    indented and blank lines; an unindented line of text above, reached before any blank
    line, shows the line is not in one.
    """
    while line > 0:
        end = line - 1
        if text[end] == "\n" and end > 0 and text[end - 1] == "\r":
            end -= 1
        start = _line_start(text, end)
        if not text[start:end].strip():
            return True
        if not _indented(text, start):
            return False
        line = start
    return True


def _check_code(text: str, start: int, crs: bool) -> None:
    """Give up when the marker run at `start` may lie in an indented code block.

    `crs` says whether the text holds a carriage return (a line break of its own).
    """
    line = text.rfind("\n", 0, start) + 1
    if crs:
        line = max(line, text.rfind("\r", 0, start) + 1)
    if text[line].isspace() and _indented(text, line) and _maybe_code(text, line):
        raise _GiveUp


def _plain_runs(text: str) -> list[list[str]] | None:
    """The numbers of each run of markers, when every ``[`` opens a plain ``[n]`` marker.

    Runs of adjacent ``[n]`` are taken whole: the markers after the first follow a ``]`` and
    are kept exactly when the first is (`marker_spans`); the run's first marker decides.
    Numbers stay as written (``"3"``): a number written otherwise (``"03"``) names no source
    under its text, and the reader gives up on it.
    """
    parts = _PLAIN_RUN_RE.split(text)  # prose, run, prose, run, ..., prose
    if len(parts) == 1:
        return None  # a "[" that opens no plain marker
    crs = "\r" in text
    url = _maybe_url(text)
    runs: list[list[str]] = []
    opened = 0
    a = len(parts[0])
    for k in range(1, len(parts), 2):
        run = parts[k]
        after = parts[k + 1]
        numbers = run[1:-1].split("][")
        opened += len(numbers)
        start, a = a, a + len(run) + len(after)
        if after:
            nxt = after[0]
            if nxt == "(":
                raise _GiveUp  # a link's text, or the inside of a ``([1](url))`` marker
            if nxt == ":" and _DEFINITION_AFTER_RE.match(after) is not None:
                raise _GiveUp  # a reference definition: its last marker is none
        if start:
            before = text[start - 1]
            if before in _NOT_AFTER and not (
                before == "%" and text[start - 2 : start - 1].isdigit()
            ):
                continue  # `MARKER_RE` does not match the first; "]" drops the rest
            if url and in_url(text, start):
                continue
            if before.isalnum() or before in _GLUE:
                if _no_citation(text, start):
                    continue
            elif before == "]":
                if _opens_sentence(text, start):
                    raise _GiveUp  # its sentence would keep a marker that opens it
                continue
            _check_code(text, start, crs)
        runs.append(numbers)
    return runs if opened == text.count("[") else None


def _any_runs(text: str) -> list[list[str]]:
    """The numbers of each run of markers `MARKER_RE` finds; gives up on any but ``[n, m-k]``."""
    crs = "\r" in text
    url = _maybe_url(text)
    runs: list[list[str]] = []
    last = -1  # end of the last marker kept
    for m in MARKER_RE.finditer(text):
        a, e = m.span()
        token = read_token(text, a, e)
        if token is None or token.kind != "brackets" or token.prefix is not None:
            raise _GiveUp
        if token.problems or not token.ranges:
            raise _GiveUp
        if a:
            before = text[a - 1]
            if url and in_url(text, a):
                continue
            if before == "]" and last != a:
                if _opens_sentence(text, a):
                    raise _GiveUp
                continue
            if (before.isalnum() or before in _GLUE) and _no_citation(text, a):
                continue
        numbers = [str(n) for n in expand_ranges(token.ranges)]
        if a == last:
            runs[-1].extend(numbers)
        else:
            _check_code(text, a, crs)
            runs.append(numbers)
        last = e
    return runs


def _marker_runs(text: str) -> list[list[str]]:
    """The numbers of each run of adjacent markers, as `find_markers` and the reader group them.

    Raises:
        _GiveUp: The text holds what the segmentation decides (code, odd marker shapes).
    """
    if "[" not in text:
        return []
    if "`" in text or ("~" in text and "~~~" in text) or "\u3010" in text:
        raise _GiveUp
    if "<" in text and _SUP_RE.search(text) is not None:
        raise _GiveUp
    runs = _plain_runs(text)
    return _any_runs(text) if runs is None else runs


# --- rows ---------------------------------------------------------------------------------------


def _cite(sources: FastSources, runs: list[list[str]], named: dict[str, int]) -> None:
    """Mark the sources each run cites; `named` maps a marker's number, as written, to one."""
    for numbers in runs:
        for number in numbers:
            position = named.get(number)
            if position is None:
                raise _GiveUp  # the reader notes a marker that names nothing
            sources.cite(position)


def _text(value: object) -> str | None:
    """A string field, None when missing; gives up on any other type (a diagnostic)."""
    if value is None or type(value) is str:
        return value
    raise _GiveUp


def _items(value: object) -> list[Any]:
    """A list field, empty when missing; gives up on any other type (a diagnostic)."""
    if value is None:
        return []
    if type(value) is list:
        return value
    raise _GiveUp


def _obj(value: object) -> dict[str, Any]:
    if type(value) is dict:
        return value
    raise _GiveUp


def _result(sources: FastSources, item: object) -> int:
    """Add one search result (or fetched page) with a URL; give up where the reader notes."""
    if type(item) is not dict:
        raise _GiveUp
    url = item.get("url")
    if type(url) is not str or not url:
        raise _GiveUp
    title = item.get("title")
    if title is not None and type(title) is not str:
        raise _GiveUp
    snippet = item.get("snippet")
    if snippet is not None and type(snippet) is not str:
        raise _GiveUp
    return sources.web(url, title)


def _content(value: object) -> str:
    """A Chat Completions message content: a string, or text parts joined."""
    if value is None:
        return ""
    if type(value) is str:
        return value
    parts = []
    for part in _items(value):
        text = _obj(part).get("text")
        if type(text) is not str:
            raise _GiveUp
        parts.append(text)
    return "".join(parts)


def _chat(data: Mapping[str, Any]) -> Row:
    model = _text(data.get("model"))
    _text(data.get("id"))
    urls = _items(data.get("citations"))
    results = _items(data.get("search_results"))
    sources = FastSources()
    found = [_result(sources, item) for item in results]
    numbered = found
    if urls:
        numbered = []
        for url in urls:
            if type(url) is not str or not url:
                raise _GiveUp
            numbered.append(sources.web(url))
    choices = _items(data.get("choices"))
    text = ""
    if choices:
        choice = _obj(choices[0])
        _text(choice.get("finish_reason"))
        message = choice.get("message")
        if message is not None:
            text = _content(_obj(message).get("content"))
    runs = _marker_runs(text)
    if runs:
        _cite(sources, runs, {str(n): p for n, p in enumerate(numbered, 1)})
    return sources.row(
        provider=_PROVIDER,
        model=model,
        grounded=bool(numbered) or bool(found),
        citations=len(runs),
    )


def _agent(data: Mapping[str, Any]) -> Row:
    model = _text(data.get("model"))
    _text(data.get("id"))
    status = _text(data.get("status"))
    if status in ("failed", "cancelled"):
        raise _GiveUp
    sources = FastSources()
    by_id: dict[str, int] = {}  # "[n]" names the result whose id is n
    texts: list[str] = []
    searches = 0
    grounded = False
    for item in _items(data.get("output")):
        entry = _obj(item)
        kind = _text(entry.get("type"))
        if kind == "message":
            for part in _items(entry.get("content")):
                block = _obj(part)
                text = block.get("text")
                if type(text) is not str:
                    raise _GiveUp
                texts.append(text)
                for annotation in _items(block.get("annotations")):
                    _result(sources, annotation)
        elif kind == "search_results":
            searches += 1
            grounded = True
            _items(entry.get("queries"))
            for result in _items(entry.get("results")):
                position = _result(sources, result)
                number = result.get("id")
                if type(number) is not int:
                    raise _GiveUp  # missing, or a type the reader converts or notes
                if by_id.setdefault(str(number), position) != position:
                    raise _GiveUp  # two results under one id: the reader notes it
        elif kind == "fetch_url_results":
            grounded = True
            for page in _items(entry.get("contents")):
                _result(sources, page)
        elif kind not in _AGENT_QUIET:
            raise _GiveUp
    runs = _marker_runs("".join(texts))
    _cite(sources, runs, by_id)
    return sources.row(
        provider=_PROVIDER,
        model=model,
        grounded=searches > 0 if grounded else None,
        citations=len(runs),
    )


def read_perplexity(data: Mapping[str, Any]) -> Row | None:
    """The row of a response `PerplexityProvider` detected, or None to let `extract()` read it."""
    try:
        response = agent_response(data)
        return _chat(data) if response is None else _agent(response)
    except _GiveUp:
        return None
    except (RecursionError, ValueError, TypeError, KeyError, IndexError, AttributeError):
        return None


READERS: dict[str, FastReader] = {"PerplexityProvider": read_perplexity}
"""Fast readers by the class name of the provider reader they stand in for."""
