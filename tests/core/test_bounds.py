"""Size bounds: the work and memory of each operation grow linearly with its input.

Nothing here is timed. Work is counted as the Python line events an operation executes
(`sys.settrace`), which depends on the input only, never on the machine: for each operation
it is measured on an input and on one four times larger, and a quadratic path (a rescan per
item, a list searched per item) shows as a ratio near 16 instead of 4. Copies made inside C
functions produce no line events: joining the whole answer text once per cited block is
counted directly, and the stream readers' text joins are measured by ``benchmarks/scale.py``.
Memory is what a ``unicite stats`` run holds and its tracemalloc peak, compared between a log
and one eight times longer.
"""

from __future__ import annotations

import functools
import gc
import json
import random
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import pytest

from unicite import (
    CitedAnswer,
    MarkerStream,
    OffsetIndex,
    Source,
    StreamCollector,
    collect_stream,
    extract,
    parse_markers,
    render,
    renumber,
)
from unicite.analytics import Summary, TopCounter, analyze
from unicite.providers import AnswerBuilder
from unicite.sources import SourceLedger

GROWTH = 4
LINEAR = GROWTH * 1.3
"""Work may grow a little faster than the input (fixed costs shrink, ids get longer)."""

WORDS = ("river", "city", "stone", "light", "report", "shows", "café", "東京", "data", "😀")


def _clear_caches() -> None:
    """Empty every bounded cache of the package, so both sizes start equally cold."""
    for name, module in list(sys.modules.items()):
        if name == "unicite" or name.startswith("unicite."):
            for value in vars(module).values():
                clear = getattr(value, "cache_clear", None)
                if callable(clear) and isinstance(value, functools._lru_cache_wrapper):
                    clear()


def work(run: Callable[[], object]) -> int:
    """Python line events executed by ``run()`` (any tracer in place is restored after)."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return tracer

    _clear_caches()
    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(previous)
    return count


def _sentence(rng: random.Random, words: int = 9) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize()


def _url(n: int) -> str:
    return f"https://www.site{n}.example.org/page/{n}?id={n}"


# --- inputs of n units ----------------------------------------------------------------------


def marked(n: int) -> tuple[str, list[Source]]:
    """An answer with n ``[k]`` markers over n // 4 + 1 sources, in paragraphs and bullets."""
    rng = random.Random(n)
    count = n // 4 + 1
    parts = []
    for k in range(n):
        a = rng.randrange(count) + 1
        marker = f"[{a}]" if k % 5 else f"[{a}, {a % count + 1}]"
        parts.append(f"{_sentence(rng)} {marker}." + ("\n\n- " if k % 7 == 6 else " "))
    sources = [Source(id=f"s{k}", url=_url(k), title=f"Page {k}") for k in range(count)]
    return "".join(parts), sources


def openai_paragraph(n: int) -> dict[str, Any]:
    """A Responses payload whose text is one paragraph (no blank line) with n inline links."""
    rng = random.Random(n)
    text = ""
    annotations = []
    for k in range(n):
        sentence = _sentence(rng, 40) + ". "
        url = _url(k % 50) + "&utm_source=openai"
        link = f"([site{k % 50}]({url}))"
        start = len(text) + len(sentence)
        annotations.append(
            {"type": "url_citation", "start_index": start, "end_index": start + len(link)}
            | {"url": url, "title": f"Site {k % 50}"}
        )
        text += sentence + link + ("\n" if k % 3 == 2 else " ")
    message = {"type": "output_text", "text": text, "annotations": annotations}
    return {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": [{"type": "message", "role": "assistant", "content": [message]}],
    }


def openai_events(n: int) -> list[dict[str, Any]]:
    """A Responses stream: searches between messages, text deltas, annotations as text ends."""
    rng = random.Random(n)
    output: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": "r"}}]
    for m in range(max(1, n // 8)):
        found = [{"type": "url", "url": _url(8 * m + k)} for k in range(8)]
        search = {
            "type": "web_search_call",
            "id": f"ws_{m}",
            "status": "completed",
            "action": {"type": "search", "query": f"q{m}", "sources": found},
        }
        i = len(output)
        output.append(search)
        events.append({"type": "response.output_item.done", "output_index": i, "item": search})
        i = len(output)
        where = {"output_index": i, "content_index": 0}
        text, annotations = "", []
        events.append({"type": "response.content_part.added", **where, "part": {"text": ""}})
        for k in range(8):
            sentence = _sentence(rng) + ". "
            url = found[k]["url"]
            link = f"([site]({url}))"
            start = len(text) + len(sentence)
            annotation = {"type": "url_citation", "start_index": start}
            annotation |= {"end_index": start + len(link), "url": url, "title": "t"}
            annotations.append(annotation)
            for piece in (sentence[:10], sentence[10:], link + " "):
                events.append({"type": "response.output_text.delta", **where, "delta": piece})
            text += sentence + link + " "
            events.append(
                {"type": "response.output_text.annotation.added", **where}
                | {"annotation_index": k, "annotation": annotation}
            )
        part = {"type": "output_text", "text": text, "annotations": annotations}
        item = {"type": "message", "role": "assistant", "content": [part]}
        output.append(item)
        events.append({"type": "response.output_text.done", **where, "text": text})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    events.append({"type": "response.completed", "response": {"id": "r", "output": output}})
    return events


def anthropic_message(n: int) -> dict[str, Any]:
    """A Message with n text blocks, each cited by a web search result location."""
    rng = random.Random(n)
    content: list[dict[str, Any]] = []
    for k in range(n):
        url = _url(k % 40)
        citation = {"type": "web_search_result_location", "url": url, "title": "t"}
        citation["cited_text"] = _sentence(rng)
        content.append({"type": "text", "text": _sentence(rng), "citations": [citation]})
        content.append({"type": "text", "text": ". "})
    return {"id": "msg_1", "type": "message", "role": "assistant", "content": content}


def anthropic_events(n: int) -> list[dict[str, Any]]:
    """The raw event stream of `anthropic_message`, text in small deltas."""
    message = anthropic_message(n)
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "content": []}}
    ]
    for index, block in enumerate(message["content"]):
        start: dict[str, Any] = {"type": "text", "text": ""}
        if "citations" in block:
            start["citations"] = []
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        for citation in block.get("citations", []):
            delta = {"type": "citations_delta", "citation": citation}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        for k in range(0, len(block["text"]), 12):
            delta = {"type": "text_delta", "text": block["text"][k : k + 12]}
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"}})
    events.append({"type": "message_stop"})
    return events


def gemini_chunks(n: int) -> list[dict[str, Any]]:
    """A Gemini stream: n sentences, one chunk each, grounding on the last chunk."""
    rng = random.Random(n)
    chunks_of_sources = [{"web": {"uri": _url(k), "title": f"site{k}.org"}} for k in range(20)]
    supports = []
    offset = 0
    out: list[dict[str, Any]] = []
    for _ in range(n):
        sentence = _sentence(rng) + "."
        size = len(sentence.encode("utf-8"))
        supports.append(
            {
                "segment": {"startIndex": offset, "endIndex": offset + size},
                "groundingChunkIndices": [rng.randrange(20)],
            }
        )
        offset += size + 1
        content = {"parts": [{"text": sentence + " "}], "role": "model"}
        out.append({"candidates": [{"content": content, "index": 0}]})
    last = out[-1]["candidates"][0]
    last["finishReason"] = "STOP"
    last["groundingMetadata"] = {
        "groundingChunks": chunks_of_sources,
        "groundingSupports": supports,
    }
    return out


def gemini_response(n: int) -> dict[str, Any]:
    """The final response `gemini_chunks` adds up to."""
    chunks = gemini_chunks(n)
    text = "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks)
    final = dict(chunks[-1]["candidates"][0])
    final["content"] = {"parts": [{"text": text}], "role": "model"}
    return {"candidates": [final]}


def cohere_events(n: int) -> list[dict[str, Any]]:
    """A Cohere v2 chat stream: n sentences in small deltas, each cited once it has arrived."""
    rng = random.Random(n)
    events: list[dict[str, Any]] = [
        {"type": "message-start", "id": "m", "delta": {"message": {"role": "assistant"}}},
        {
            "type": "content-start",
            "index": 0,
            "delta": {"message": {"content": {"type": "text", "text": ""}}},
        },
    ]
    length = 0
    for k in range(n):
        sentence = _sentence(rng) + ". "
        for j in range(0, len(sentence), 9):
            piece = {"text": sentence[j : j + 9]}
            events.append(
                {"type": "content-delta", "index": 0, "delta": {"message": {"content": piece}}}
            )
        document = {"id": f"doc:{k % 20}", "text": f"Document {k % 20}", "url": _url(k % 20)}
        citation = {
            "start": length,
            "end": length + len(sentence) - 2,
            "text": sentence[:-2],
            "sources": [{"type": "document", "id": document["id"], "document": document}],
        }
        events.append(
            {"type": "citation-start", "index": k, "delta": {"message": {"citations": citation}}}
        )
        events.append({"type": "citation-end", "index": k})
        length += len(sentence)
    events.append({"type": "content-end", "index": 0})
    events.append({"type": "message-end", "delta": {"finish_reason": "COMPLETE"}})
    return events


def ledger_input(n: int) -> list[Source]:
    """n search results, a third of them the same pages written differently."""
    out = []
    for k in range(n):
        if k % 3 == 2:
            url = _url(k // 3).replace("https://www.", "https://WWW.") + "&utm_source=x#top"
        else:
            url = _url(k)
        out.append(Source(url=url, title=f"Result {k}", rank=k % 10))
    return out


def log_lines(n: int, first: int = 0) -> list[str]:
    """n JSONL lines of Gemini responses, each citing pages of its own sites."""
    lines = []
    for k in range(first, first + n):
        chunks = [{"web": {"uri": f"https://www.s{k}x{j}.org/a", "title": "t"}} for j in range(3)]
        supports = [
            {"segment": {"startIndex": 0, "endIndex": 5}, "groundingChunkIndices": [j]}
            for j in range(3)
        ]
        grounding = {"groundingChunks": chunks, "groundingSupports": supports}
        candidate = {
            "content": {"parts": [{"text": "Hello world."}]},
            "groundingMetadata": grounding,
        }
        lines.append(json.dumps({"candidates": [candidate]}))
    return lines


def _stream(text: str) -> CitedAnswer:
    stream = MarkerStream([Source(id=f"s{k}", url=_url(k)) for k in range(200)])
    for k in range(0, len(text), 8):
        stream.feed(text[k : k + 8])
    stream.close()
    return stream.answer


def _stats(lines: list[str]) -> Summary:
    stats = Summary()
    stats.add_rows(analyze(lines))
    return stats


def _ledger(sources: list[Source]) -> list[Source]:
    ledger = SourceLedger()
    for source in sources:
        ledger.add(source)
    return ledger.footnotes()


def _offsets(text: str) -> int:
    index = OffsetIndex(text)
    return sum(
        index.from_bytes(index.to_bytes(p)) + index.from_utf16(index.to_utf16(p))
        for p in range(0, len(text), 7)
    )


@functools.cache
def _parsed(n: int) -> CitedAnswer:
    return parse_markers(*marked(n))


CASES: dict[str, tuple[int, Callable[[int], Any], Callable[[Any], object]]] = {
    # name: (n, input of n units, operation)
    "parse_markers": (60, marked, lambda data: parse_markers(*data)),
    "renumber": (60, _parsed, renumber),
    "render markdown": (60, _parsed, lambda a: render(a, "markdown")),
    "render html": (60, _parsed, lambda a: render(a, "html")),
    "render terminal": (60, _parsed, lambda a: render(a, "terminal", width=60)),
    "MarkerStream": (60, lambda n: marked(n)[0], _stream),
    "OffsetIndex": (150, lambda n: marked(n)[0], _offsets),
    "SourceLedger": (150, ledger_input, _ledger),
    "extract OpenAI, one long paragraph": (40, openai_paragraph, extract),
    "extract Anthropic": (40, anthropic_message, extract),
    "extract Gemini": (60, gemini_response, extract),
    "stream OpenAI Responses": (32, openai_events, collect_stream),
    "stream Anthropic": (120, anthropic_events, collect_stream),
    "stream Gemini": (60, gemini_chunks, collect_stream),
    "stream Cohere": (60, cohere_events, collect_stream),
    "unicite stats": (30, log_lines, _stats),
}


@pytest.fixture(scope="module", autouse=True)
def _warm() -> Iterator[None]:
    # Load lazily built tables (the public suffix list, compiled patterns) before counting.
    for size, build, run in CASES.values():
        run(build(max(1, size // 10)))
    yield
    _parsed.cache_clear()


@pytest.mark.parametrize("name", list(CASES))
def test_work_grows_linearly(name: str) -> None:
    size, build, run = CASES[name]
    small, large = build(size), build(size * GROWTH)
    counts = [work(functools.partial(run, data)) for data in (small, large)]
    assert counts[0] > 1_000, "the operation did too little to measure"
    assert counts[1] <= LINEAR * counts[0], f"{name}: work grew {counts[1] / counts[0]:.1f}×"


def test_work_counting_sees_a_quadratic_loop() -> None:
    # The yardstick itself: a rescan per item is caught, a single pass is not.
    def rescans(items: list[int]) -> int:
        return sum(1 for k in range(len(items)) for _ in items[:k])

    def one_pass(items: list[int]) -> int:
        return sum(1 for _ in items)

    ratio_quadratic = work(lambda: rescans(list(range(400)))) / work(
        lambda: rescans(list(range(100)))
    )
    ratio_linear = work(lambda: one_pass(list(range(4000)))) / work(
        lambda: one_pass(list(range(1000)))
    )
    assert ratio_quadratic > 12
    assert ratio_linear < LINEAR


def test_cited_blocks_do_not_join_the_whole_text_each(monkeypatch: pytest.MonkeyPatch) -> None:
    # Anthropic cites whole blocks: reading the text of each citation from the block just
    # appended, not from the whole answer joined anew, keeps a long message linear.
    joins = 0
    joined = vars(AnswerBuilder)["text"].fget

    def counting(self: AnswerBuilder) -> str:
        nonlocal joins
        joins += self._text is None
        text: str = joined(self)
        return text

    monkeypatch.setattr(AnswerBuilder, "text", property(counting))
    for events in (anthropic_message(300), anthropic_events(300)):
        joins = 0
        answer = extract(events) if isinstance(events, dict) else collect_stream(events)
        assert len(answer.citations) == 300
        assert joins <= 3, f"the text was joined {joins} times"


def test_span_text_reads_any_span_of_the_appended_pieces() -> None:
    builder = AnswerBuilder(None)
    pieces = ["Héllo ", "", "wörld 😀", ". ", "Next."]
    for piece in pieces:
        builder.append_text(piece)
    whole = "".join(pieces)
    for start in range(len(whole) + 1):
        for end in range(start, len(whole) + 1):
            assert builder.span_text(start, end) == whole[start:end]
    assert builder.text == whole
    assert builder.span_text(3, 12) == whole[3:12]


def test_stream_citations_match_the_final_answer_for_long_streams() -> None:
    # The stream readers keep state between events instead of rescanning; what they
    # announce must still be what the final answer holds.
    for events, final in (
        (openai_events(48), None),
        (anthropic_events(60), anthropic_message(60)),
        (gemini_chunks(80), gemini_response(80)),
    ):
        announced = []
        collector = StreamCollector()
        for event in events:
            for item in collector.feed(event):
                assert [s.id for s in item.sources] == item.citation.source_ids
                announced.append(item.citation)
        answer = collector.result()
        assert not answer.diagnostics, answer.diagnostics[:3]
        assert sorted(announced, key=lambda c: (c.start, c.end)) == answer.citations
        if final is not None:
            assert answer.citations == extract(final).citations


def _stats_small_counters(lines: list[str]) -> Summary:
    stats = Summary(capacity=64)
    for line in lines:
        stats.add_rows(analyze([line]))
    return stats


def test_stats_memory_does_not_grow_with_the_log() -> None:
    short, long = log_lines(100), log_lines(800, first=100)
    gc.collect()
    tracemalloc.start()
    try:
        # What a run keeps, its bounded caches emptied before and after: the statistics only.
        held = []
        for lines in (short, long):
            _clear_caches()
            gc.collect()
            base, _ = tracemalloc.get_traced_memory()
            kept = _stats_small_counters(lines)
            _clear_caches()
            gc.collect()
            held.append(tracemalloc.get_traced_memory()[0] - base)
            del kept
        # The peak of a run with its caches full: entries turn over and a cache's table may be
        # rebuilt (a few hundred KiB), nothing grows per line.
        for k in range(9_000):
            Source(url=f"https://s{k}.warm{k}.org/a")
        peaks = []
        for lines in (short, long):
            gc.collect()
            base, _ = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            kept = _stats_small_counters(lines)
            peaks.append(tracemalloc.get_traced_memory()[1] - base)
            del kept
    finally:
        tracemalloc.stop()
    assert held[1] <= 1.5 * held[0] + 16 * 1024, f"held {held[0]:,} B → {held[1]:,} B"
    assert peaks[1] <= 1.5 * peaks[0] + 2**20, f"peak {peaks[0]:,} B → {peaks[1]:,} B"
    summary = _stats_small_counters(long).as_dict()
    assert summary["responses"] == 800
    assert summary["citations"] == 3 * 800
    assert not summary["counts_exact"]


def test_top_counter_keeps_heavy_hitters_within_its_capacity() -> None:
    counter = TopCounter(capacity=50)
    rng = random.Random(1)
    for k in range(20_000):
        counter.add("popular.org" if k % 4 == 0 else f"rare{rng.randrange(10**9)}.com")
        assert len(counter.counts) <= 2 * 50
    (top, count), *_ = counter.top(1)
    assert top == "popular.org"
    assert 5_000 - counter.error <= count <= 5_000
    assert not counter.exact


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deeply_nested_log_lines_are_counted_unreadable(depth: int) -> None:
    stats = _stats(["[" * depth + "]" * depth, '{"a":' * depth + "1" + "}" * depth])
    assert stats.as_dict()["unreadable"] == 2
