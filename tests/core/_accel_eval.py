"""The public calls the accelerator's differential tests compare, with their results as JSON.

`evaluate` runs one call on one input and returns its result (or the exception it raised) as
JSON-ready data. Run as a script, in a process with ``UNICITE_PURE_PYTHON=1``, it answers one
request per line on stdin (``[call, input]`` as JSON) with one line of JSON on stdout, so that
the tests compare the compiled build, in their own process, with the pure one.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import unicite
from unicite import Source

SOURCES = [
    Source(url="https://www.example.com/a?utm_source=x", title="A"),
    Source(url="https://docs.example.org/b#part", title="B"),
    Source(url="https://xn--zrich-kva.example.ch/c", title="C"),
    Source(title="D", text="Zürich zählt 440 000 Einwohner. Bern ist die Bundesstadt."),
]


def _segments(text: str) -> Any:
    return [[s.start, s.end, s.kind] for s in unicite.segment(text)]


def _clauses(text: str) -> Any:
    return [unicite.clauses(text, s.start, s.end) for s in unicite.segment(text)]


def _claim_spans(text: str) -> Any:
    return [unicite.claim_span(text, i) for i in range(0, len(text) + 1, 3)]


def _parse(text: str) -> Any:
    return [
        unicite.parse_markers(text, SOURCES, style=style).model_dump(mode="json")
        for style in ("auto", "brackets", "sids", "sup", "footnotes", "assistant", "links")
    ]


def _cite(text: str) -> Any:
    return unicite.cite(text, SOURCES).model_dump(mode="json")


def _diagnosed_url(url: str) -> Any:
    diagnostics: list[str] = []
    return [unicite.normalize_url(url, diagnostics), diagnostics]


CALLS: dict[str, Callable[[str], Any]] = {
    "segment": _segments,
    "clauses": _clauses,
    "claim_span": _claim_spans,
    "parse_markers": _parse,
    "cite": _cite,
    "normalize_url": _diagnosed_url,
    "registrable_domain": unicite.registrable_domain,
    "safe_href": unicite.safe_href,
    "is_redirect_url": unicite.is_redirect_url,
}


def evaluate(call: str, arg: str) -> Any:
    """`CALLS[call](arg)` as JSON data (tuples as lists); an exception as its type and message."""
    try:
        result = {"value": CALLS[call](arg)}
    except Exception as exc:  # raising the same error is part of the result
        result = {"raised": type(exc).__name__, "message": str(exc)}
    return json.loads(json.dumps(result))


def main() -> None:
    """Answer requests from stdin until it closes; the first line says which build runs."""
    print(json.dumps(unicite.accelerated()), flush=True)
    for line in sys.stdin:
        call, arg = json.loads(line)
        print(json.dumps(evaluate(call, arg)), flush=True)


if __name__ == "__main__":
    main()
