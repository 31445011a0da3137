"""Size bounds: every workload at three sizes, time and memory per unit of input.

The issue's sizes are the largest of the three: a 10 MB provider response (OpenAI Responses,
Anthropic, Gemini; final responses and SSE streams), an answer with 100,000 citations, 10,000
sources (9,999: a ``[n]`` marker has at most four digits), a 1,000,000-character answer. The
smallest size is a tenth of it, the middle one about a third. Linear work shows as a flat time
per unit: each time figure is the time per unit at the largest size against the time per unit
at the smallest, so 1.0 is linear and a quadratic path shows as about 10. Memory is the
tracemalloc peak per unit at the same two sizes, so a bounded working set shows as about 1.0.

Time is CPU time of this process (other load on a shared machine does not count), with the
cyclic garbage collector paused while the clock runs. The collector makes a full pass whenever
the objects that survived have grown by a quarter, so its cost is linear overall but comes in
steps: reading back an answer of 10,000 citations from JSON triggers no full pass, one of
100,000 triggers two, which alone double its time per citation and hide what the code does.

Inputs are synthesised from the providers' documented shapes (the same shapes as the recorded
responses under ``cassettes/``), varied with a seeded random generator, and built before the
clock starts. The smallest size is the best of two runs, the others run once. Set
``UNICITE_BENCH_SCALE`` (default 1) to scale every size, e.g. 0.1 for a quick run.
"""

from __future__ import annotations

import functools
import gc
import json
import os
import random
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from _harness import Figure

from unicite import (
    CitedAnswer,
    MarkerStream,
    OffsetIndex,
    Source,
    claim_span,
    claim_spans,
    extract,
    find_markers,
    parse_markers,
    render,
    renumber,
    segment,
)
from unicite.sources import SourceLedger

SCALE = float(os.environ.get("UNICITE_BENCH_SCALE", "1"))
"""Multiplies every size: 1 runs the issue's sizes, 0.1 a quick tenth of them."""
LINEAR = "≤ 1.5× (linear)"
BOUNDED = "≤ 1.5× (bounded)"

WORDS = (
    *("the", "river", "city", "north", "garden", "stone", "light", "report", "shows", "that"),
    *("about", "most", "people", "early", "data", "bridge", "steel", "traffic", "opened"),
    *("during", "years", "after", "café", "naïve", "Zürich", "東京", "façade", "😀", "métro"),
)


def _clear_caches() -> None:
    """Empty every bounded cache, so each run starts as cold as the first one.

    The package's caches are `functools.lru_cache` functions at module level: each loaded
    module is searched for them, so a cache added later is emptied too.
    """
    for name, module in list(sys.modules.items()):
        if name != "unicite" and not name.startswith("unicite."):
            continue
        for value in list(vars(module).values()):
            owner = getattr(value, "__module__", None) or ""
            clear = getattr(value, "cache_clear", None)
            if owner.startswith("unicite") and callable(clear) and hasattr(value, "cache_info"):
                clear()


# --- text ---------------------------------------------------------------------------------------


def _sentence(rng: random.Random, words: int = 10) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize()


def _url(n: int, rng: random.Random | None = None) -> str:
    """The n-th page of a pool of sites; with `rng`, sometimes a tracking-parameter variant."""
    url = f"https://www.site{n % 997}.example.com/articles/{n}/page?id={n}"
    if rng is not None and rng.random() < 0.3:
        url += rng.choice(("&utm_source=openai", "#section-2", "&utm_medium=search&gclid=x1"))
    return url


def _marked_text(markers: int, sources: int, seed: int = 3, words: int = 10) -> str:
    """Paragraphs of sentences, each closed by a ``[n]`` marker (some ``[a, b]``, some ``[a][b]``).

    Sources are cited in a scrambled order, so renumbering has real work to do.
    """
    rng = random.Random(seed)
    parts: list[str] = []
    for k in range(markers):
        a = rng.randrange(sources) + 1
        roll = rng.random()
        if roll < 0.15:
            marker = f"[{a}, {a % sources + 1}]"
        elif roll < 0.25:
            marker = f"[{a}][{a % sources + 1}]"
        else:
            marker = f"[{a}]"
        sep = "\n\n" if k % 6 == 5 else " "
        if k % 40 == 39:
            sep = "\n\n- "
        parts.append(f"{_sentence(rng, words)} {marker}.{sep}")
    return "".join(parts)


def _sources(count: int) -> list[Source]:
    return [
        Source(id=f"s{n}", url=_url(n), title=f"Page {n} about {WORDS[n % len(WORDS)]}")
        for n in range(count)
    ]


# --- provider responses -------------------------------------------------------------------------


def _link(url: str) -> str:
    return f"([site{url.split('site', 1)[1].split('.', 1)[0]}.example.com]({url}))"


def openai_payload(paragraphs: int, seed: int = 11) -> dict[str, Any]:
    """An OpenAI Responses payload: web searches, then messages with ``url_citation`` links."""
    rng = random.Random(seed)
    output: list[dict[str, Any]] = []
    pool = max(50, paragraphs // 2)
    for turn in range(0, paragraphs, 20):
        found = [_url(rng.randrange(pool)) for _ in range(8)]
        output.append(
            {
                "id": f"ws_{turn}",
                "type": "web_search_call",
                "status": "completed",
                "action": {
                    "type": "search",
                    "query": f"query {turn}",
                    "queries": [f"query {turn}", f"query {turn} details"],
                    "sources": [{"type": "url", "url": url} for url in found],
                },
            }
        )
        text_parts: list[str] = []
        annotations: list[dict[str, Any]] = []
        size = 0
        for _ in range(min(20, paragraphs - turn)):
            for _ in range(4):
                sentence = _sentence(rng, rng.randint(8, 18)) + ". "
                url = rng.choice(found) + "?utm_source=openai"
                link = _link(url)
                start = size + len(sentence)
                text_parts.append(sentence + link + " ")
                annotations.append(
                    {
                        "type": "url_citation",
                        "start_index": start,
                        "end_index": start + len(link),
                        "title": f"Title of {url[8:40]}",
                        "url": url,
                    }
                )
                size += len(sentence) + len(link) + 1
            text_parts.append("\n\n")
            size += 2
        output.append(
            {
                "id": f"msg_{turn}",
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": "".join(text_parts),
                        "annotations": annotations,
                        "logprobs": [],
                    }
                ],
            }
        )
    return {
        "id": "resp_scale",
        "object": "response",
        "status": "completed",
        "model": "gpt-5.2-2025-12-11",
        "output": output,
    }


def anthropic_payload(groups: int, seed: int = 12) -> dict[str, Any]:
    """An Anthropic Message: web searches, then text blocks cited by search-result locations."""
    rng = random.Random(seed)
    content: list[dict[str, Any]] = []
    pool = max(50, groups // 2)
    for g in range(groups):
        if g % 10 == 0:
            found = [_url(rng.randrange(pool)) for _ in range(5)]
            content.append(
                {
                    "type": "server_tool_use",
                    "id": f"srvtoolu_{g}",
                    "name": "web_search",
                    "input": {"query": f"query {g}"},
                }
            )
            content.append(
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": f"srvtoolu_{g}",
                    "content": [
                        {
                            "type": "web_search_result",
                            "title": f"Result {r} for {g}",
                            "url": url,
                            "encrypted_content": "x" * 120,
                            "page_age": "March 28, 2025",
                        }
                        for r, url in enumerate(found)
                    ],
                }
            )
        content.append({"type": "text", "text": _sentence(rng, 6) + ":\n\n"})
        cited = [rng.choice(found) for _ in range(rng.randint(1, 2))]
        content.append(
            {
                "type": "text",
                "text": _sentence(rng, rng.randint(10, 24)),
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "cited_text": _sentence(rng, 20) + "...",
                        "url": url,
                        "title": f"Result for {url[8:40]}",
                        "encrypted_index": "y" * 60,
                    }
                    for url in cited
                ],
            }
        )
        content.append({"type": "text", "text": ". "})
    return {
        "model": "claude-sonnet-4-6",
        "id": "msg_scale",
        "type": "message",
        "role": "assistant",
        "content": content,
        "stop_reason": "end_turn",
    }


def gemini_payload(sentences: int, seed: int = 13) -> dict[str, Any]:
    """A Gemini response: text parts, redirect grounding chunks, supports at UTF-8 byte offsets."""
    rng = random.Random(seed)
    parts: list[dict[str, Any]] = []
    chunks: list[dict[str, Any]] = []
    supports: list[dict[str, Any]] = []
    chunk_count = max(20, sentences // 4)
    for n in range(chunk_count):
        chunks.append(
            {
                "web": {
                    "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
                    + f"AUZIYQ{n:08d}"
                    + "H" * 90,
                    "title": f"site{n % 997}.example.com",
                }
            }
        )
    per_part = 200
    for p in range(0, sentences, per_part):
        text: list[str] = []
        offset = 0
        for _ in range(min(per_part, sentences - p)):
            sentence = _sentence(rng, rng.randint(8, 16)) + "."
            raw = sentence.encode("utf-8")
            picked = sorted(rng.sample(range(chunk_count), rng.randint(1, 3)))
            supports.append(
                {
                    "segment": {
                        "partIndex": len(parts),
                        "startIndex": offset,
                        "endIndex": offset + len(raw),
                        "text": sentence,
                    },
                    "groundingChunkIndices": picked,
                    "confidenceScores": [round(rng.random(), 4) for _ in picked],
                }
            )
            text.append(sentence + " ")
            offset += len(raw) + 1
        parts.append({"text": "".join(text)})
    return {
        "candidates": [
            {
                "content": {"parts": parts, "role": "model"},
                "finishReason": "STOP",
                "groundingMetadata": {
                    "webSearchQueries": ["scale query"],
                    "groundingChunks": chunks,
                    "groundingSupports": supports,
                },
            }
        ],
        "modelVersion": "gemini-2.5-flash",
    }


def openai_response(paragraphs: int) -> str:
    """`openai_payload` as JSON text."""
    return json.dumps(openai_payload(paragraphs))


def anthropic_response(groups: int) -> str:
    """`anthropic_payload` as JSON text."""
    return json.dumps(anthropic_payload(groups))


def gemini_response(sentences: int) -> str:
    """`gemini_payload` as JSON text."""
    return json.dumps(gemini_payload(sentences))


# --- provider streams, as SSE logs --------------------------------------------------------------

DELTA = 20  # characters of text per delta event


def _pieces(text: str) -> list[str]:
    return [text[k : k + DELTA] for k in range(0, len(text), DELTA)]


def _sse(events: Iterable[dict[str, Any]]) -> str:
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps(e)}\n\n"
        if "type" in e
        else f"data: {json.dumps(e)}\n\n"
        for e in events
    )


def openai_stream(paragraphs: int) -> str:
    """The Responses event stream of `openai_payload`: deltas, annotations as their text ends."""
    response = openai_payload(paragraphs)
    head = {k: v for k, v in response.items() if k != "output"}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**head, "status": "in_progress", "output": []}}
    ]
    for i, item in enumerate(response["output"]):
        if item["type"] != "message":
            events.append({"type": "response.output_item.added", "output_index": i, "item": item})
            events.append({"type": "response.output_item.done", "output_index": i, "item": item})
            continue
        where = {"output_index": i, "content_index": 0}
        part = item["content"][0]
        events.append(
            {
                "type": "response.output_item.added",
                "output_index": i,
                "item": {**item, "content": []},
            }
        )
        empty = {"type": "output_text", "text": "", "annotations": []}
        events.append({"type": "response.content_part.added", **where, "part": empty})
        pending = sorted(enumerate(part["annotations"]), key=lambda a: a[1]["end_index"])
        size = 0
        for piece in _pieces(part["text"]):
            events.append({"type": "response.output_text.delta", **where, "delta": piece})
            size += len(piece)
            while pending and pending[0][1]["end_index"] <= size:
                k, annotation = pending.pop(0)
                events.append(
                    {
                        "type": "response.output_text.annotation.added",
                        **where,
                        "annotation_index": k,
                        "annotation": annotation,
                    }
                )
        events.append({"type": "response.output_text.done", **where, "text": part["text"]})
        events.append({"type": "response.content_part.done", **where, "part": part})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    events.append({"type": "response.completed", "response": response})
    return _sse(events)


def anthropic_stream(groups: int) -> str:
    """The raw event stream of `anthropic_payload`: one block after the other, text in deltas."""
    message = anthropic_payload(groups)
    head = {k: v for k, v in message.items() if k != "content"}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**head, "content": [], "stop_reason": None}}
    ]
    for n, block in enumerate(message["content"]):
        if block["type"] != "text":
            events.append({"type": "content_block_start", "index": n, "content_block": block})
        else:
            start = {
                "type": "text",
                "text": "",
                **({"citations": []} if "citations" in block else {}),
            }
            events.append({"type": "content_block_start", "index": n, "content_block": start})
            for citation in block.get("citations", []):
                delta = {"type": "citations_delta", "citation": citation}
                events.append({"type": "content_block_delta", "index": n, "delta": delta})
            for piece in _pieces(block["text"]):
                delta = {"type": "text_delta", "text": piece}
                events.append({"type": "content_block_delta", "index": n, "delta": delta})
        events.append({"type": "content_block_stop", "index": n})
    events.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}})
    events.append({"type": "message_stop"})
    return _sse(events)


def gemini_stream(sentences: int) -> str:
    """A ``streamGenerateContent`` log of `gemini_payload`: text chunks, grounding at the end.

    The stream carries one text part, so the supports index the UTF-8 bytes of all its text.
    """
    response = gemini_payload(sentences)
    candidate = response["candidates"][0]
    grounding = candidate["groundingMetadata"]
    parts = candidate["content"]["parts"]
    offsets = [0]
    for part in parts:
        offsets.append(offsets[-1] + len(part["text"].encode("utf-8")))
    supports = []
    for support in grounding["groundingSupports"]:
        segment = dict(support["segment"])
        base = offsets[segment.pop("partIndex")]
        segment["startIndex"] += base
        segment["endIndex"] += base
        supports.append({**support, "segment": segment})
    text = "".join(part["text"] for part in parts)
    chunks: list[dict[str, Any]] = [
        {"candidates": [{"content": {"parts": [{"text": piece}], "role": "model"}, "index": 0}]}
        for piece in [text[k : k + 5 * DELTA] for k in range(0, len(text), 5 * DELTA)]
    ]
    last = chunks[-1]["candidates"][0]
    last["finishReason"] = "STOP"
    last["groundingMetadata"] = {**grounding, "groundingSupports": supports}
    for chunk in chunks:
        chunk["modelVersion"] = response["modelVersion"]
    return _sse(chunks)


# --- the measuring ------------------------------------------------------------------------------


@dataclass
class Workload:
    """One operation over the inputs of a `Group`."""

    name: str
    unit: str  # what is counted: "MB", "1k citations", ...
    amount: Callable[[Any], float]  # how many units an input holds
    run: Callable[[Any], object]
    check: Callable[[Any, object], None] | None = None


@dataclass
class Group:
    """Workloads sharing one input, built once per size."""

    sizes: tuple[int, int, int]  # the `build` argument at each size; the last is the issue's
    build: Callable[[int], Any]
    workloads: list[Workload]


@dataclass
class Measured:
    """One workload at one size: units of input, CPU seconds, tracemalloc peak in bytes."""

    units: float
    seconds: float
    peak: int


def _timed(run: Callable[[], object], rounds: int) -> tuple[float, object]:
    """Least CPU time of `rounds` runs, with the cyclic collector paused (see `GC_NOTE`)."""
    best = float("inf")
    result: object = None
    for n in range(rounds):
        _clear_caches()
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            result = run()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
        if n < rounds - 1:
            result = None
    return best, result


def _peak(run: Callable[[], object]) -> int:
    _clear_caches()
    gc.collect()
    gc.disable()
    tracemalloc.start()
    try:
        result = run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
    del result
    return peak


def measure(group: Group) -> dict[str, list[Measured]]:
    """Time of every workload at the three sizes, and its memory at the smallest and largest."""
    rows: dict[str, list[Measured]] = {work.name: [] for work in group.workloads}
    for k, size in enumerate(group.sizes):
        data = group.build(size)
        for work in group.workloads:
            call = functools.partial(work.run, data)
            seconds, result = _timed(call, rounds=2 if k == 0 else 1)
            if work.check is not None:
                work.check(data, result)
            del result
            peak = _peak(call) if k != 1 else 0
            rows[work.name].append(Measured(work.amount(data), seconds, peak))
        del data
        gc.collect()
    return rows


def figures_of(work: Workload, rows: list[Measured]) -> list[Figure]:
    """A time and a memory figure: per unit at the largest size against the smallest."""
    small, _, large = rows
    per = [row.seconds / row.units for row in rows]
    scale = 1e3 if per[-1] < 1e-2 else 1.0
    unit = "ms" if scale == 1e3 else "s"
    times = ", ".join(f"{row.units:,.3g} → {row.seconds:.2f} s" for row in rows)
    return [
        Figure(
            name=f"{work.name}: CPU time per {work.unit}",
            value=per[-1] * scale,
            unit=unit,
            baseline=per[0] * scale,
            baseline_name=f"the same at {small.units:,.3g} {work.unit} (a tenth of the size)",
            target=LINEAR,
            note=f"{times}; middle size {per[1] * scale:.3f} {unit} per {work.unit}",
        ),
        Figure(
            name=f"{work.name}: peak memory per {work.unit}",
            value=large.peak / large.units / 2**20,
            unit="MiB",
            baseline=small.peak / small.units / 2**20,
            baseline_name=f"the same at {small.units:,.3g} {work.unit}",
            target=BOUNDED,
            note=f"tracemalloc peak {large.peak / 2**20:,.1f} MiB at {large.units:,.3g}"
            f" {work.unit}, {small.peak / 2**20:,.1f} MiB at {small.units:,.3g}",
        ),
    ]


# --- workloads ----------------------------------------------------------------------------------


def _mb(data: str) -> float:
    return len(data.encode("utf-8")) / 1e6


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _check_extract(needle: str, copies: int = 1) -> Callable[[Any, object], None]:
    """No diagnostics, and a citation for each cited item (`needle` is in each `copies` times)."""

    def check(data: Any, result: object) -> None:
        assert isinstance(result, CitedAnswer)
        _expect(not result.diagnostics, f"unexpected diagnostics: {result.diagnostics[:3]}")
        _expect(len(result.citations) >= data.count(needle) // copies, "citations went missing")

    return check


@dataclass
class Marked:
    """An answer with ``[n]`` markers, its sources, and its parse (built before the clock)."""

    text: str
    sources: list[Source]
    answer: CitedAnswer


def _marked(markers: int, sources: int) -> Marked:
    text, listed = _marked_text(markers, sources), _sources(sources)
    return Marked(text, listed, parse_markers(text, listed))


def _parse(data: Marked) -> CitedAnswer:
    return parse_markers(data.text, data.sources)


def _check_parse(data: Marked, result: object) -> None:
    assert isinstance(result, CitedAnswer)
    _expect(len(result.citations) == data.text.count("."), "markers went missing")
    _expect(result == data.answer, "parsing the same text twice differs")


def _citations(data: Marked) -> float:
    return len(data.answer.citations) / 1e3


def _source_count(data: Marked) -> float:
    return len(data.sources) / 1e3


def _ledger_input(count: int) -> list[Source]:
    """``count`` search results, 30% of them repeating earlier pages as URL variants."""
    rng = random.Random(21)
    out: list[Source] = []
    for n in range(count):
        page = rng.randrange(n) if n and rng.random() < 0.3 else n
        url = _url(page)
        if page != n:
            url = rng.choice(
                (
                    url + "&utm_source=agent",
                    url + "#top",
                    url.replace("https://www.", "https://WWW.", 1),
                    url.replace(".com/", ".com:443/", 1),
                )
            )
        out.append(Source(url=url, title=f"Result {n}", snippet=_sentence(rng, 12), rank=n % 10))
    return out


def _ledger_run(sources: list[Source]) -> list[Source]:
    ledger = SourceLedger()
    for source in sources:
        ledger.add(source)
    return ledger.footnotes()


def _check_ledger(data: list[Source], result: object) -> None:
    assert isinstance(result, list)
    pages = {s.url.split("?id=", 1)[1].split("&")[0].split("#")[0] for s in data if s.url}
    _expect(len(result) == len(pages), f"{len(result)} sources kept for {len(pages)} pages")


_SOURCES_100 = _sources(100)


def _stream(text: str, size: int = 16) -> CitedAnswer:
    stream = MarkerStream(_SOURCES_100)
    shown = [stream.feed(text[k : k + size]) for k in range(0, len(text), size)]
    shown.append(stream.close())
    _expect("".join(shown) == stream.answer.text, "streamed text differs from the answer")
    return stream.answer


def _long_text(chars: int) -> str:
    """A ``chars``-character answer: paragraphs and bullets, a marker every other sentence."""
    rng = random.Random(31)
    parts: list[str] = []
    size = 0
    while size < chars:
        paragraph = " ".join(
            _sentence(rng, rng.randint(8, 20))
            + ("." if rng.random() < 0.5 else f" [{rng.randrange(100) + 1}].")
            for _ in range(rng.randint(2, 6))
        )
        if rng.random() < 0.1:
            paragraph = "- " + paragraph
        parts.append(paragraph + "\n\n")
        size += len(paragraph) + 2
    return "".join(parts)[:chars]


def _offsets(text: str) -> int:
    """Every kind of conversion, at one in 16 positions of the text."""
    index = OffsetIndex(text)
    total = 0
    for position in range(0, len(text), 16):
        b = index.to_bytes(position)
        u = index.to_utf16(position)
        total += index.from_bytes(b) + index.from_utf16(u, ceil=True)
    return total


def _kchars(text: str) -> float:
    return len(text) / 1e3


def groups() -> list[Group]:
    """Every workload, grouped by input, at sizes whose largest is the issue's."""
    citations = (10_000, 31_600, 100_000)
    chars = (100_000, 316_000, 1_000_000)
    # Markers name sources by up to four digits: 9,999 is the most a ``[n]`` marker can cite.
    sources = (1_000, 3_160, 9_999)
    long_answer = functools.partial(parse_markers, sources=_SOURCES_100)
    listed = [
        # (a) a 10 MB provider response
        Group(
            (600, 1_900, 6_000),
            openai_response,
            [Workload("extract OpenAI Responses", "MB", _mb, extract, _check_extract('"url_c'))],
        ),
        Group(
            (1_100, 3_500, 11_000),
            anthropic_response,
            [
                Workload(
                    "extract Anthropic Message", "MB", _mb, extract, _check_extract("_location")
                )
            ],
        ),
        # (a) the same as streams: SSE logs of about 10 MB, text in 20-character deltas
        Group(
            (80, 250, 800),
            openai_stream,
            [
                Workload(
                    "extract OpenAI Responses stream (SSE)",
                    "MB",
                    _mb,
                    extract,
                    _check_extract('"url_citation"', copies=4),
                )
            ],
        ),
        Group(
            (350, 1_100, 3_500),
            anthropic_stream,
            [
                Workload(
                    "extract Anthropic stream (SSE)",
                    "MB",
                    _mb,
                    extract,
                    _check_extract("_location"),
                )
            ],
        ),
        Group(
            (2_100, 6_600, 21_000),
            gemini_stream,
            [
                Workload(
                    "extract Gemini stream (SSE)",
                    "MB",
                    _mb,
                    extract,
                    _check_extract('"segment"'),
                )
            ],
        ),
        # (a) and (b): the middle size is a 10 MB response, the largest has 100k citations
        Group(
            citations,
            gemini_response,
            [
                Workload(
                    "extract Gemini, 10 MB / 100k supports",
                    "1k citations",
                    lambda data: data.count('"segment"') / 1e3,
                    extract,
                    _check_extract('"segment"'),
                )
            ],
        ),
        # (b) an answer with 100,000 citations
        Group(
            citations,
            lambda n: _marked(n, 1_000),
            [
                Workload(
                    "parse_markers, 100k markers", "1k citations", _citations, _parse, _check_parse
                ),
                Workload(
                    "renumber, 100k citations",
                    "1k citations",
                    _citations,
                    lambda data: renumber(data.answer),
                ),
                Workload(
                    "render markdown, 100k citations",
                    "1k citations",
                    _citations,
                    lambda data: render(data.answer, "markdown"),
                ),
                Workload(
                    "render html, 100k citations",
                    "1k citations",
                    _citations,
                    lambda data: render(data.answer, "html"),
                ),
                Workload(
                    "render json, 100k citations",
                    "1k citations",
                    _citations,
                    lambda data: render(data.answer, "json"),
                ),
                Workload(
                    "to_json + from_json, 100k citations",
                    "1k citations",
                    _citations,
                    lambda data: CitedAnswer.from_json(data.answer.to_json()),
                    lambda data, result: _expect(
                        result == data.answer, "the JSON round trip changed the answer"
                    ),
                ),
            ],
        ),
        # (c) 10,000 sources
        Group(
            sources,
            _ledger_input,
            [
                Workload(
                    "SourceLedger add + dedup + footnotes",
                    "1k sources",
                    lambda data: len(data) / 1e3,
                    _ledger_run,
                    _check_ledger,
                )
            ],
        ),
        Group(
            sources,
            lambda n: _marked(n * 3, n),
            [
                Workload(
                    "parse_markers citing 10k sources",
                    "1k sources",
                    _source_count,
                    _parse,
                    _check_parse,
                ),
                Workload(
                    "renumber across 10k sources",
                    "1k sources",
                    _source_count,
                    lambda data: renumber(data.answer),
                ),
            ],
        ),
        # (d) a 1,000,000-character answer
        Group(
            chars,
            _long_text,
            [
                Workload("parse_markers, 1M chars", "1k chars", _kchars, long_answer),
                Workload("segment, 1M chars", "1k chars", _kchars, segment),
                Workload(
                    "claim spans of every marker, 1M chars",
                    "1k chars",
                    _kchars,
                    lambda text: claim_spans(text, find_markers(text)),
                ),
                Workload(
                    "claim_span of one marker in 50, 1M chars",
                    "1k chars",
                    _kchars,
                    lambda text: [claim_span(text, s, e) for s, e in find_markers(text)[::50]],
                ),
                Workload(
                    "OffsetIndex conversions, 1M chars",
                    "1k chars",
                    _kchars,
                    _offsets,
                ),
                Workload("MarkerStream, 16-char chunks, 1M chars", "1k chars", _kchars, _stream),
            ],
        ),
        Group(
            chars,
            lambda n: parse_markers(_long_text(n), _SOURCES_100),
            [
                Workload(
                    "render terminal, 1M chars",
                    "1k chars",
                    lambda a: len(a.text) / 1e3,
                    lambda a: render(a, "terminal", hyperlinks=True, width=100),
                )
            ],
        ),
    ]
    for group in listed:
        group.sizes = (_sized(group.sizes[0]), _sized(group.sizes[1]), _sized(group.sizes[2]))
    return listed


def _sized(size: int) -> int:
    return max(1, round(size * SCALE))


def run(names: Iterable[str] | None = None) -> list[Figure]:
    figures: list[Figure] = []
    wanted = set(names) if names else None
    for group in groups():
        if wanted is not None:
            group.workloads = [w for w in group.workloads if any(n in w.name for n in wanted)]
            if not group.workloads:
                continue
        started = time.perf_counter()
        rows = measure(group)
        for work in group.workloads:
            figures.extend(figures_of(work, rows[work.name]))
        names_run = ", ".join(work.name for work in group.workloads)
        print(f"  {names_run}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
    return figures
