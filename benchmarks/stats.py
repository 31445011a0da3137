"""``unicite stats`` over JSONL logs of about 10 MB, 100 MB and 1 GB: throughput, scaling, memory.

Each log holds one provider response per line, the mix a production log would hold: OpenAI
Responses and Chat Completions, Anthropic, Gemini (redirect URLs named by their chunk titles),
Perplexity, plus a few unreadable and blank lines. Every line cites pages of its own sites, so
the logs name hundreds of thousands of distinct domains and the bounded heavy-hitters counter
runs far past its capacity; a handful of popular sites recur on most lines and must come out on
top.

The command runs in a fresh subprocess per log, with the local engine and one worker. Its CPU
time (user + system, read with ``os.wait4`` for that child alone, so other load on the machine
does not count) gives the throughput, and its peak resident set size (``ru_maxrss`` of the same
child) the memory. The baseline is the floor any JSONL reader pays: ``for line in f:
json.loads(line)`` over the same file, also in a fresh subprocess. On the largest log the
command also runs with two workers: the wall-clock time of one worker over that of two is the
scaling. Set ``UNICITE_BENCH_STATS_MB`` to change the largest size (default 1024).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _harness import Figure

from unicite import registrable_domain

SIZES_MB = (10, 100, int(os.environ.get("UNICITE_BENCH_STATS_MB", "1024")))
THROUGHPUT_TARGET = "≥ 0.25× json.loads loop"
"""At most four times the bare parse, with one worker: lines are decoded with orjson and read by
the provider readers into the analytics sink, which builds no citations and no answer."""
SCALING_TARGET = "≥ 1.8×"
"""Two workers on the two-core machine against one, wall clock."""
POPULAR = ("en.wikipedia.org", "www.bbc.co.uk", "docs.python.org", "www.nature.com")
TLDS = ("com", "org", "net", "io", "de", "fr", "co.uk", "com.au", "jp", "dev")
# Each line names its own sites through this token; the line number, written in as many
# digits, replaces it, so the offsets of the citations stay right.
PLACEHOLDER = "@@@@@@"
DISTINCT = 400_000  # line numbers wrap around here: this many distinct site families

LOOP = """
import json, sys
with open(sys.argv[1], "rb") as f:
    for line in f:
        try:
            json.loads(line)
        except ValueError:
            pass
"""


def _site(k: int, rng: random.Random) -> str:
    """The k-th site of a line, or (one time in three) a popular one."""
    if rng.random() < 0.3:
        return rng.choice(POPULAR)
    return f"www.s{PLACEHOLDER}x{k}.{TLDS[k % len(TLDS)]}"


def _sentence(rng: random.Random) -> str:
    words = ("tide", "harbour", "café", "report", "city", "data", "bridge", "opened", "東京")
    return " ".join(rng.choice(words) for _ in range(rng.randint(8, 16))).capitalize() + "."


def _openai(rng: random.Random) -> dict[str, Any]:
    text = ""
    annotations = []
    for k in range(rng.randint(2, 8)):
        url = f"https://{_site(k, rng)}/page/{k}?utm_source=openai"
        sentence = _sentence(rng) + " "
        link = f"([site]({url}))"
        annotations.append(
            {
                "type": "url_citation",
                "start_index": len(text) + len(sentence),
                "end_index": len(text) + len(sentence) + len(link),
                "title": f"Page {k}",
                "url": url,
            }
        )
        text += sentence + link + " "
    return {
        "id": "resp_log",
        "object": "response",
        "status": "completed",
        "model": "gpt-5.2",
        "output": [
            {
                "type": "web_search_call",
                "id": "ws_1",
                "status": "completed",
                "action": {"type": "search", "query": "q", "sources": []},
            },
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": annotations}],
            },
        ],
    }


def _chat(rng: random.Random) -> dict[str, Any]:
    body = _openai(rng)["output"][1]["content"][0]
    annotations = [
        {"type": "url_citation", "url_citation": {k: v for k, v in a.items() if k != "type"}}
        for a in body["annotations"]
    ]
    return {
        "id": "chatcmpl-log",
        "object": "chat.completion",
        "model": "gpt-4o-search-preview",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": body["text"],
                    "annotations": annotations,
                },
            }
        ],
    }


def _anthropic(rng: random.Random) -> dict[str, Any]:
    content: list[dict[str, Any]] = [
        {
            "type": "server_tool_use",
            "id": "srvtoolu_1",
            "name": "web_search",
            "input": {"query": "q"},
        }
    ]
    sites = [f"https://{_site(k, rng)}/article/{k}" for k in range(rng.randint(2, 6))]
    content.append(
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": [
                {"type": "web_search_result", "title": f"Result {k}", "url": url, "page_age": None}
                for k, url in enumerate(sites)
            ],
        }
    )
    for url in sites:
        content.append(
            {
                "type": "text",
                "text": _sentence(rng),
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "cited_text": _sentence(rng),
                        "url": url,
                        "title": "Result",
                        "encrypted_index": "Eo8BCioIBxgCIiQ",
                    }
                ],
            }
        )
        content.append({"type": "text", "text": " "})
    return {
        "id": "msg_log",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": "end_turn",
    }


def _gemini(rng: random.Random) -> dict[str, Any]:
    chunks = [
        {
            "web": {
                "uri": "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AUZIYQ"
                + f"{PLACEHOLDER}x{k}",
                "title": _site(k, rng).removeprefix("www."),
            }
        }
        for k in range(rng.randint(2, 6))
    ]
    text = ""
    supports = []
    for k in range(len(chunks)):
        sentence = _sentence(rng)
        start = len(text.encode("utf-8"))
        supports.append(
            {
                "segment": {"startIndex": start, "endIndex": start + len(sentence.encode())},
                "groundingChunkIndices": [k],
                "confidenceScores": [0.9],
            }
        )
        text += sentence + " "
    return {
        "candidates": [
            {
                "content": {"parts": [{"text": text}], "role": "model"},
                "finishReason": "STOP",
                "groundingMetadata": {
                    "webSearchQueries": ["q"],
                    "groundingChunks": chunks,
                    "groundingSupports": supports,
                },
            }
        ],
        "modelVersion": "gemini-2.5-flash",
    }


def _perplexity(rng: random.Random) -> dict[str, Any]:
    urls = [f"https://{_site(k, rng)}/news/{k}" for k in range(rng.randint(2, 6))]
    text = " ".join(f"{_sentence(rng)[:-1]} [{n}]." for n in range(1, len(urls) + 1))
    return {
        "id": "pplx-log",
        "model": "sonar-pro",
        "object": "chat.completion",
        "citations": urls,
        "search_results": [{"title": f"Result {n}", "url": url} for n, url in enumerate(urls)],
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }
        ],
    }


def templates(seed: int = 5) -> list[str]:
    """JSON lines with the site token in them, in a fixed shuffled order."""
    rng = random.Random(seed)
    makers = (_openai, _chat, _anthropic, _gemini, _perplexity)
    lines = [json.dumps(maker(rng), ensure_ascii=False) for _ in range(40) for maker in makers]
    lines += ['{"not": "a provider response"}', "not json at all", ""]
    rng.shuffle(lines)
    return lines


def write_log(path: Path, megabytes: int) -> int:
    """Write about `megabytes` MB of log lines; return the size in bytes."""
    lines = templates()
    target = megabytes * 1_000_000
    written = 0
    n = 0
    with path.open("w", encoding="utf-8") as f:
        while written < target:
            batch = []
            for _ in range(100):
                number = f"{n % DISTINCT:0{len(PLACEHOLDER)}d}"
                batch.append(lines[n % len(lines)].replace(PLACEHOLDER, number) + "\n")
                n += 1
            chunk = "".join(batch)
            f.write(chunk)
            written += len(chunk.encode("utf-8"))
    return path.stat().st_size


# A child's ru_maxrss counts the memory of the process it was forked from: a small wrapper
# starts each measured command, so that it is this small process, not the benchmark runner
# (which may hold gigabytes after other benchmarks), whose memory the command inherits.
WRAPPER = """
import json, os, subprocess, sys
with open(sys.argv[1], "wb") as out:
    import time
    started = time.perf_counter()
    child = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
print(json.dumps({
    "code": os.waitstatus_to_exitcode(status),
    "cpu": usage.ru_utime + usage.ru_stime,
    "wall": wall,
    "maxrss": usage.ru_maxrss * 1024,
}))
"""


def run_child(argv: list[str]) -> tuple[float, int, str, float]:
    """CPU seconds, peak RSS in bytes, stdout and wall seconds of a command (``wait4``)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "stdout"
        done = subprocess.run(  # noqa: S603
            [sys.executable, "-c", WRAPPER, str(out), *argv],
            capture_output=True,
            check=True,
            text=True,
        )
        report = json.loads(done.stdout)
        text = out.read_text(encoding="utf-8")
    if report["code"] != 0:
        raise RuntimeError(f"{argv[:4]} exited with {report['code']}")
    return report["cpu"], report["maxrss"], text, report["wall"]


@dataclass
class Row:
    """One log: its size, and the command's and the baseline loop's CPU time and peak RSS."""

    megabytes: int
    size: int
    cpu: float
    rss: int
    loop_cpu: float
    loop_rss: int
    summary: dict[str, Any]
    wall: float
    wall_two: float | None
    summary_two: dict[str, Any] | None


def _command(path: Path, workers: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "unicite",
        "stats",
        "--json",
        "--workers",
        str(workers),
        str(path),
    ]


def measure(megabytes: int, tmp: Path, *, scaling: bool) -> Row:
    """Write a log of about `megabytes` MB, run the command and the baseline over it."""
    path = tmp / f"log-{megabytes}.jsonl"
    started = time.perf_counter()
    size = write_log(path, megabytes)
    wrote = time.perf_counter() - started
    wall_two = summary_two = None
    try:
        cpu, rss, out, wall = run_child(_command(path, 1))
        loop_cpu, loop_rss, _, _ = run_child([sys.executable, "-c", LOOP, str(path)])
        if scaling:
            _, _, out_two, wall_two = run_child(_command(path, 2))
            summary_two = json.loads(out_two)
    finally:
        path.unlink()
    print(
        f"  {megabytes} MB: written in {wrote:.1f} s; stats {cpu:.1f} s CPU ({wall:.1f} s wall),"
        f" {rss / 2**20:.0f} MiB; json.loads loop {loop_cpu:.1f} s CPU"
        + (f"; two workers {wall_two:.1f} s wall" if wall_two is not None else ""),
        file=sys.stderr,
        flush=True,
    )
    return Row(
        megabytes, size, cpu, rss, loop_cpu, loop_rss, json.loads(out), wall, wall_two, summary_two
    )


def check(summary: dict[str, Any]) -> None:
    """The popular sites come out on top although the distinct domains overflow the counter."""
    top = {row["domain"] for row in summary["top_domains"][: len(POPULAR)]}
    popular = {registrable_domain(site) for site in POPULAR}
    if top != popular or summary["unreadable"] == 0 or summary["with_diagnostics"] != 0:
        raise AssertionError(f"unexpected summary: {json.dumps(summary)[:500]}")


def run() -> list[Figure]:
    with tempfile.TemporaryDirectory() as tmp:
        rows = [
            measure(megabytes, Path(tmp), scaling=megabytes == SIZES_MB[-1])
            for megabytes in SIZES_MB
        ]
    for row in rows:
        check(row.summary)
        if row.summary_two is not None:
            check(row.summary_two)
            # Past the counters' capacity the long tail is approximate, and depends on how the
            # log was split; every other figure is exact and must be equal.
            tails = ("top_domains", "top_tlds", "counts_exact")
            one = {k: v for k, v in row.summary.items() if k not in tails}
            two = {k: v for k, v in row.summary_two.items() if k not in tails}
            if one != two:
                raise AssertionError("two workers counted differently from one")
    small, large = rows[0], rows[-1]
    figures = [
        Figure(
            name=f"unicite stats throughput, {row.size / 1e6:,.0f} MB log",
            value=row.size / 1e6 / row.cpu,
            unit="MB/s",
            baseline=row.size / 1e6 / row.loop_cpu,
            baseline_name="for line in f: json.loads(line) over the same file",
            target=THROUGHPUT_TARGET if row is large else None,
            note=f"one worker: {row.cpu:,.1f} s CPU for {row.summary['responses']:,} responses,"
            f" {row.summary['sources']:,} sources; json.loads loop {row.loop_cpu:,.1f} s",
        )
        for row in rows
    ]
    if large.wall_two is not None:
        figures.append(
            Figure(
                name=f"unicite stats, two workers against one, {large.size / 1e6:,.0f} MB log",
                value=large.wall / large.wall_two,
                unit="×",
                baseline=1.0,
                baseline_name="one worker (wall clock)",
                target=SCALING_TARGET,
                note=f"one worker {large.wall:,.1f} s, two workers {large.wall_two:,.1f} s wall;"
                " equal summaries",
            )
        )
    figures.append(
        Figure(
            name=f"unicite stats peak RSS, {large.size / 1e6:,.0f} MB log",
            value=large.rss / 2**20,
            unit="MiB",
            baseline=small.rss / 2**20,
            baseline_name=f"the same over the {small.size / 1e6:,.0f} MB log",
            target="≤ 1.2× (constant)",
            note=f"json.loads loop peak {large.loop_rss / 2**20:,.0f} MiB; domain counts exact:"
            f" {large.summary['counts_exact']} (the distinct domains overflow the counter)",
        )
    )
    return figures
