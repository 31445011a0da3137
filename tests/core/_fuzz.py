"""Shared pieces of the fuzz suite: real payloads, hostile values, mutations, and one checker.

The payloads are the response bodies of the recorded cassettes (JSON documents and SSE logs)
and the provider fixtures under ``tests/data/providers``. Mutations follow the ways real data
goes wrong: a key missing, a value of the wrong type, an array repeated, an offset out of
range, a value buried under many levels of nesting, text that is not valid Unicode.

`check_answer` states what every `CitedAnswer` a public entry point returns must satisfy.
"""

from __future__ import annotations

import copy
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from unicite import (
    BlockLocation,
    CharLocation,
    Citation,
    CitedAnswer,
    PageLocation,
    SearchResultLocation,
    Source,
    UrlLocation,
)
from unicite import render as render_answer

ROOT = Path(__file__).resolve().parents[2]
CASSETTES = ROOT / "cassettes"
PROVIDER_DATA = ROOT / "tests" / "data" / "providers"

FORMATS = ("terminal", "markdown", "html", "json", "text")

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# --- settings ---------------------------------------------------------------------------------


def fuzz_settings(share: float = 1.0) -> settings:
    """Settings for a fuzz test: `share` of the profile's example budget, no deadline.

    The budget comes from the Hypothesis profile loaded in ``tests/conftest.py``
    (``HYPOTHESIS_PROFILE``), so CI stays bounded and a long local run only changes the profile.
    """
    budget = max(10, int(settings().max_examples * share))
    return settings(
        max_examples=budget,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )


# --- hostile values ---------------------------------------------------------------------------

LONE_SURROGATES = ("\ud800", "\udfff", "a\ud83d", "\ude00b", "\udc80\udc80")
HUGE = "Lorem ipsum dolor sit amet. " * 4_000  # ~112 kB, with sentence breaks
HUGE_WORD = "x" * 100_000  # one unbreakable 100 kB token
HOSTILE_STRINGS: tuple[str, ...] = (
    "",
    " ",
    "\x00",
    "\x1b]8;;javascript:alert(1)\x1b\\click\x1b]8;;\x1b\\",
    "\x1b[2J\x9b31m",
    "\u202eevil\u202c",
    "\ufeff\u200b",
    "e\u0301\u0301\u0301",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "東京タワー",
    "<script>alert(1)</script>",
    "[1][2][[S:1]]<sup>3</sup>[^4]",
    "javascript:alert(1)",
    "https://example.com/a?utm_source=x#frag",
    "http://[::1",
    "\r\n\r\n",
    "NaN",
    "-1",
    "1e309",
    *LONE_SURROGATES,
)

WRONG_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    1.5,
    2**63,
    -(10**30),
    math.nan,
    math.inf,
    "",
    "x",
    "\ud800",
    HUGE_WORD,
    [],
    {},
    [None],
    {"": None},
    [[[]]],
)

# Text that may hold anything a str can: lone surrogates, controls, astral characters.
ANY_CHAR = st.characters(exclude_categories=())
hostile_text = st.one_of(
    st.text(max_size=60),
    st.text(ANY_CHAR, max_size=30),
    st.sampled_from(HOSTILE_STRINGS),
    st.lists(st.sampled_from(HOSTILE_STRINGS), max_size=6).map("".join),
)
json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    hostile_text,
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(
            st.one_of(
                st.sampled_from(
                    [
                        "type",
                        "text",
                        "url",
                        "title",
                        "content",
                        "citations",
                        "annotations",
                        "start_index",
                        "end_index",
                        "output",
                        "candidates",
                        "error",
                        "message",
                        "choices",
                        "results",
                    ]
                ),
                hostile_text,
            ),
            children,
            max_size=5,
        ),
    ),
    max_leaves=30,
)
"""Arbitrary JSON-like data with provider-flavoured keys and hostile leaves."""


def nested(depth: int, leaf: Any = None, kind: Literal["list", "dict"] = "list") -> Any:
    """`leaf` under `depth` levels of lists or dicts, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


def nested_json(depth: int, kind: Literal["list", "dict"] = "list") -> str:
    """The JSON text of `nested` with a null leaf, built without the recursive encoder."""
    if kind == "list":
        return "[" * depth + "null" + "]" * depth
    return '{"a":' * depth + "null" + "}" * depth


# --- payloads ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Payload:
    """One recorded response body: its text as sent, and what it parses to."""

    name: str
    kind: Literal["json", "sse"]
    text: str
    data: Any
    """The parsed document for JSON bodies; the list of parsed events for SSE bodies."""

    @property
    def raw(self) -> bytes:
        """The body as bytes on the wire."""
        return self.text.encode("utf-8")


def parse_sse(text: str) -> list[Any]:
    """The JSON events of an SSE log (``event:`` names become ``type`` when missing)."""
    events: list[Any] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name, data = None, []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip(" "))
        payload = "\n".join(data).strip()
        if not payload or payload == "[DONE]":
            continue
        event = json.loads(payload)
        if isinstance(event, dict) and name and "type" not in event:
            event = {"type": name, **event}
        events.append(event)
    return events


def to_sse(events: list[Any]) -> str:
    """An SSE log of `events`, one ``data:`` line each."""
    return "".join(f"data: {json.dumps(e, ensure_ascii=False)}\n\n" for e in events)


@cache
def payloads() -> tuple[Payload, ...]:
    """Every distinct recorded response body, in a stable order."""
    found: dict[str, Payload] = {}
    for path in sorted(CASSETTES.rglob("*.yaml")):
        cassette = yaml.load(path.read_text("utf-8"), Loader=_LOADER)  # noqa: S506
        stem = path.relative_to(CASSETTES).with_suffix("").as_posix()
        for n, interaction in enumerate(cassette["interactions"]):
            response = interaction["response"]
            if "parsed_body" in response:
                data = response["parsed_body"]
                text = json.dumps(data, ensure_ascii=False)
                payload = Payload(f"{stem}#{n}", "json", text, data)
            elif "events" in response:
                # An AWS event stream, as the events boto3 yields ({type: payload}), logged as SSE.
                events = [
                    {entry.get("event") or entry.get("exception"): entry.get("payload", {})}
                    for entry in response["events"]
                ]
                text = to_sse(events)
                payload = Payload(f"{stem}#{n}", "sse", text, events)
            else:
                text = response.get("body") or ""
                payload = Payload(f"{stem}#{n}", "sse", text, parse_sse(text))
            found.setdefault(payload.text, payload)
    for path in sorted(PROVIDER_DATA.glob("*.json")):
        data = json.loads(path.read_text("utf-8"))
        name = f"data/{path.stem}"
        if isinstance(data, list):
            text = to_sse(data)
            found.setdefault(text, Payload(name, "sse", text, data))
        else:
            text = json.dumps(data, ensure_ascii=False)
            found.setdefault(text, Payload(name, "json", text, data))
    return tuple(found.values())


def json_payloads() -> list[Payload]:
    """The JSON response bodies."""
    return [p for p in payloads() if p.kind == "json"]


def sse_payloads() -> list[Payload]:
    """The SSE stream bodies."""
    return [p for p in payloads() if p.kind == "sse"]


# --- mutations --------------------------------------------------------------------------------

Path_ = tuple[Any, ...]
OFFSET_WORDS = ("index", "start", "end", "offset", "position", "page", "block")


def paths(value: Any, prefix: Path_ = ()) -> Iterator[Path_]:
    """Every path to a value inside `value` (dict keys and list positions)."""
    stack: list[tuple[Any, Path_]] = [(value, prefix)]
    while stack:
        node, here = stack.pop()
        if isinstance(node, dict):
            items: list[tuple[Any, Any]] = list(node.items())
        elif isinstance(node, list):
            items = list(enumerate(node))
        else:
            continue
        for key, item in reversed(items):
            yield (*here, key)
            stack.append((item, (*here, key)))


def get(data: Any, path: Path_) -> Any:
    """The value at `path`."""
    for key in path:
        data = data[key]
    return data


def _set(data: Any, path: Path_, value: Any) -> None:
    get(data, path[:-1])[path[-1]] = value


def _drop(data: Any, path: Path_) -> None:
    del get(data, path[:-1])[path[-1]]


MutationKind = Literal["drop", "wrong_type", "offset", "duplicate", "nest", "retype", "text"]
MUTATIONS: tuple[MutationKind, ...] = (
    "drop",
    "wrong_type",
    "offset",
    "duplicate",
    "nest",
    "retype",
    "text",
)


@st.composite
def mutate(draw: st.DrawFn, data: Any, max_mutations: int = 4) -> Any:
    """A deep copy of `data` with one to `max_mutations` mutations at random paths."""
    data = copy.deepcopy(data)
    for _ in range(draw(st.integers(1, max_mutations))):
        every = list(paths(data))
        if not every:
            break
        path = every[draw(st.integers(0, len(every) - 1))]
        value = get(data, path)
        kind = draw(st.sampled_from(MUTATIONS))
        if kind == "drop":
            _drop(data, path)
        elif kind == "wrong_type":
            # A copy: later mutations must not change the shared WRONG_VALUES containers.
            _set(data, path, copy.deepcopy(draw(st.sampled_from(WRONG_VALUES) | json_values)))
        elif kind == "offset":
            # Offsets out of range, reversed or of the wrong sign, wherever a key looks like one.
            offsets = [p for p in every if any(w in str(p[-1]).lower() for w in OFFSET_WORDS)]
            target = draw(st.sampled_from(offsets)) if offsets else path
            current = get(data, target)
            base = current if isinstance(current, int) and not isinstance(current, bool) else 0
            _set(
                data,
                target,
                draw(
                    st.sampled_from([-1, -base, base + 1, base * 3 + 7, 10**9, 2**64, 0])
                    | st.integers(-5, 5_000)
                ),
            )
        elif kind == "duplicate":
            if isinstance(value, list):
                _set(data, path, value + copy.deepcopy(value))
            elif isinstance(path[-1], int):
                get(data, path[:-1]).insert(path[-1], copy.deepcopy(value))
            else:
                _set(data, path, [value, copy.deepcopy(value)])
        elif kind == "nest":
            depth = draw(st.sampled_from([1, 2, 5, 30, 200]))
            _set(data, path, nested(depth, value, draw(st.sampled_from(["list", "dict"]))))
        elif kind == "retype":
            if isinstance(value, dict):
                _set(data, path, list(value.values()))
            elif isinstance(value, list):
                _set(data, path, {str(n): v for n, v in enumerate(value)})
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                _set(data, path, str(value))
            elif isinstance(value, str):
                _set(data, path, [value])
            else:
                _set(data, path, str(value))
        else:
            # Text mutations: hostile characters spliced into a string value.
            prefix = value if isinstance(value, str) else ""
            cut = draw(st.integers(0, len(prefix)))
            _set(data, path, prefix[:cut] + draw(hostile_text) + prefix[cut:])
    return data


# --- answers ----------------------------------------------------------------------------------

URLS = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "https://example.com/a",
            "https://www.bbc.co.uk/news?utm_source=x",
            "javascript:alert(1)",
            "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC",
            "http://[::1]/",
            "https://\ud800.example/",
        ]
    ),
    hostile_text,
)
LOCATIONS = st.one_of(
    st.none(),
    st.builds(PageLocation, start_page=st.integers(0, 5), end_page=st.integers(5, 9)),
    st.builds(CharLocation, start=st.integers(0, 5), end=st.integers(5, 9)),
    st.builds(BlockLocation, start_block=st.integers(0, 5), end_block=st.integers(5, 9)),
    st.builds(SearchResultLocation, search_result_index=st.integers(0, 5)),
    st.builds(UrlLocation, url=hostile_text),
)
answer_text = st.one_of(
    hostile_text,
    st.lists(
        st.sampled_from(
            [
                "The river is long. ",
                "Paris [1] is large.",
                "## Heading\n",
                "- bullet [2]\n",
                "```\ncode [1]\n```\n",
                "\u00e9t\u00e9 \u6771\u4eac. ",
                "\n\n",
                *HOSTILE_STRINGS,
            ]
        ),
        max_size=12,
    ).map("".join),
)


@st.composite
def cited_answers(draw: st.DrawFn) -> CitedAnswer:
    """Valid answers with hostile text, sources and citations (spans anywhere in the text)."""
    text = draw(answer_text)
    count = draw(st.integers(0, 5))
    sources = [
        Source(
            # Lone surrogates in a provider id are spelled out in the derived id.
            provider_id=draw(st.sampled_from([f"s{n}", f"id \ud800 {n}", f"\u202e{n}", f"[{n}]"])),
            url=draw(URLS),
            title=draw(st.none() | hostile_text),
            snippet=draw(st.none() | hostile_text),
            content=draw(st.none() | hostile_text),
            domain=draw(st.none() | hostile_text),
            kind=draw(st.sampled_from(["web", "document", "file", "tool", "place", "other"])),
        )
        for n in range(count)
    ]
    citations = []
    if sources:
        for _ in range(draw(st.integers(0, 6))):
            start = draw(st.integers(0, len(text)))
            end = draw(st.integers(start, len(text)))
            marker = None
            if draw(st.booleans()):
                left = draw(st.integers(0, len(text)))
                marker = (left, draw(st.integers(left, len(text))))
            ids = draw(st.lists(st.sampled_from([s.id for s in sources]), min_size=1, max_size=3))
            citations.append(
                Citation(
                    start=start,
                    end=end,
                    text=text[start:end],
                    source_ids=ids,
                    quote=draw(st.none() | hostile_text),
                    location=draw(LOCATIONS),
                    marker_span=marker,
                    origin=draw(st.sampled_from(["native", "marker", "posthoc-lexical"])),
                    confidence=draw(st.none() | st.floats(0, 1)),
                )
            )
    extras = {"search_entry_point": draw(hostile_text)} if draw(st.booleans()) else {}
    return CitedAnswer(
        text=text, sources=sources, citations=citations, extras=extras, provider="openai"
    )


source_like: st.SearchStrategy[Any] = st.one_of(
    st.builds(
        dict,
        url=URLS,
        title=st.none() | hostile_text,
        content=st.none() | hostile_text,
        snippet=st.none() | hostile_text,
    ),
    st.builds(lambda t, c: Source(title=t, content=c), hostile_text, hostile_text),
)


# --- the invariant checker --------------------------------------------------------------------


_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def _walk(value: Any) -> Iterator[tuple[Any, int]]:
    """Every value inside `value` (dict keys included) with its depth, without recursion."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        yield item, depth
        if isinstance(item, (dict, list, tuple)) and depth < 200:
            children = [*item, *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def json_fidelity(answer: CitedAnswer) -> Literal["exact", "lossy", "ambiguous"]:
    """How `answer` survives its JSON form.

    ``"ambiguous"``: a str holds a high surrogate followed by a low one, which JSON reads
    back as one astral character (data read from JSON never holds such a pair). ``"lossy"``:
    a free-form field (`extras`, `raw`) holds what JSON cannot (NaN, bytes, tuples, non-str
    keys, objects) or nests 200 levels or more (cut short).
    """
    if any(
        isinstance(item, str) and _SURROGATE_PAIR.search(item)
        for item, _ in _walk(answer.model_dump())
    ):
        return "ambiguous"
    free = [answer.extras]
    free += [part for s in answer.sources for part in (s.extras, s.raw)]
    free += [part for c in answer.citations for part in (c.extras, c.raw)]
    for item, depth in _walk(free):
        if depth >= 200 or isinstance(item, tuple):
            return "lossy"
        if isinstance(item, float) and not math.isfinite(item):
            return "lossy"
        if isinstance(item, dict) and not all(isinstance(key, str) for key in item):
            return "lossy"
        if not isinstance(item, (type(None), bool, int, float, str, list, dict)):
            return "lossy"
    return "exact"


def check_answer(answer: object, *, render: bool = True) -> CitedAnswer:
    """Assert everything a returned `CitedAnswer` promises; return it.

    Spans lie in the text and slice to the cited text, every cited id resolves, ids are unique,
    citations are sorted, the JSON form reads back equal, and every renderer accepts it.
    """
    assert isinstance(answer, CitedAnswer), type(answer)
    text = answer.text
    assert isinstance(text, str)
    ids = [s.id for s in answer.sources]
    assert len(set(ids)) == len(ids), ids
    known = set(ids)
    for c in answer.citations:
        # Empty spans are legitimate: a marker with no claim before it, an empty cited block.
        assert 0 <= c.start <= c.end <= len(text), (c.start, c.end, len(text))
        assert text[c.start : c.end] == c.text
        assert c.source_ids, c
        assert set(c.source_ids) <= known, (c.source_ids, ids)
        if c.marker_span is not None:
            assert 0 <= c.marker_span[0] <= c.marker_span[1] <= len(text), c.marker_span
        if c.confidence is not None:
            assert 0.0 <= c.confidence <= 1.0
    spans = [(c.start, c.end) for c in answer.citations]
    assert spans == sorted(spans)
    assert all(isinstance(d, str) for d in answer.diagnostics)
    # A reader that crashed was caught by the dispatcher's safety net: still a bug to fix.
    assert not [d for d in answer.diagnostics if d.startswith("internal error")], answer.diagnostics
    assert set(answer.sources_used or ()) <= known

    dumped = answer.to_json()
    fidelity = json_fidelity(answer)
    if fidelity == "exact":
        assert CitedAnswer.from_json(dumped) == answer
    elif fidelity == "lossy":
        # NaN and infinity become null and deep nesting is cut: the result is then stable.
        again = CitedAnswer.from_json(dumped)
        assert CitedAnswer.from_json(again.to_json()) == again
    else:
        assert isinstance(json.loads(dumped), dict)
    if render:
        for fmt in FORMATS:
            out = render_answer(answer, fmt, hyperlinks=True)  # type: ignore[arg-type]
            assert isinstance(out, str)
    return answer


def outcome(call: Callable[[], T], *allowed: type[E]) -> T | E:
    """The result of `call`, or the exception it raised when that exception is one of `allowed`.

    Any other exception propagates and fails the test: only documented errors may escape.
    """
    try:
        return call()
    except allowed as err:
        return err
