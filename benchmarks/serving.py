"""Serving cited answers under load: many concurrent streams through a `Relay`, on loopback.

A uvicorn server in its own process (`_serving_app.py`) answers 2,000 requests, 200 at a time,
each a 20-delta answer paced like a model, half of them through a `unicite.wire.Relay` and
`relay_response` (``/relay``), half as hand-written SSE events (``/bare``), the least any SSE
server does; the two take turns within one load. Reported: time to the first frame (p50, p99)
against the bare stream's in the same run (target: within 1.2×), errors (target 0), and the
server's resident memory, threads and asyncio tasks after a warm-up round and at the end (flat:
nothing kept per answer). Then 200 clients hang up after their first frame: the tasks and
threads must come back to where they were.

    python benchmarks/serving.py
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from _harness import Figure

HERE = Path(__file__).resolve().parent
CONCURRENCY = 200
TOTAL = int(2_000 * float(os.environ.get("UNICITE_BENCH_SCALE", "1")))
WARMUP = CONCURRENCY


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen(  # noqa: S603 - this folder's own server script
        [sys.executable, str(HERE / "_serving_app.py"), str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/stats", timeout=1)
            return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("the benchmark server did not start")


async def _one(port: int, path: str, *, leave: bool = False) -> float:
    """Seconds to the first frame of one stream, read to its end (or left there).

    A bare HTTP/1.1 client on a socket: the client's own cost stays far below the server's.
    """
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(head.split(b"\r\n", 1)[0].decode())
        seen = b""
        while b"data:" not in seen:
            chunk = await reader.read(4096)
            if not chunk:
                raise RuntimeError("no frame")
            seen = seen[-8:] + chunk
        first = time.perf_counter() - start
        if not leave:
            while await reader.read(65536):
                pass
        return first
    finally:
        writer.close()


async def _load(
    client: httpx.AsyncClient, port: int, paths: list[str]
) -> tuple[dict[str, list[float]], int, list[dict[str, Any]]]:
    """First-frame times of a stream per path, `CONCURRENCY` at a time; errors; stats samples.

    The paths take turns in one load, so that each sees the same machine at the same moment.
    """
    gate = asyncio.Semaphore(CONCURRENCY)
    times: dict[str, list[float]] = {path: [] for path in paths}
    errors = 0
    samples: list[dict[str, Any]] = []
    done = 0

    async def run(path: str) -> None:
        nonlocal errors, done
        async with gate:
            try:
                times[path].append(await _one(port, path))
            except (OSError, RuntimeError, asyncio.IncompleteReadError):
                errors += 1
            done += 1
            if done == WARMUP:
                samples.append((await client.get("/stats")).json())

    await asyncio.gather(*(run(path) for path in paths))
    samples.append((await client.get("/stats")).json())
    return times, errors, samples


async def _hang_ups(client: httpx.AsyncClient, port: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Stats before 200 clients that leave after their first frame, and once they are gone."""
    before = (await client.get("/stats")).json()
    await asyncio.gather(*(_one(port, "/relay", leave=True) for _ in range(CONCURRENCY)))
    await asyncio.sleep(1.0)  # the relays finish the answers their readers left
    return before, (await client.get("/stats")).json()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def _measure(port: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        # Relayed and bare streams take turns in one load of TOTAL streams.
        paths = ["/relay" if n % 2 else "/bare" for n in range(TOTAL)]
        times, errors, samples = await _load(client, port, paths)
        before, after = await _hang_ups(client, port)
    return {
        "bare": times["/bare"],
        "relay": times["/relay"],
        "errors": errors,
        "warm": samples[0],
        "end": samples[-1],
        "before_hangups": before,
        "after_hangups": after,
    }


def measure() -> dict[str, Any]:
    """One load against a server of its own: first-frame times per path, errors, stats."""
    port = _free_port()
    server = _start(port)
    try:
        return asyncio.run(_measure(port))
    finally:
        server.terminate()
        server.wait(timeout=10)


def run() -> list[Figure]:
    result = measure()
    bare, relay = result["bare"], result["relay"]
    ms = 1000.0
    warm, end = result["warm"], result["end"]
    before, after = result["before_hangups"], result["after_hangups"]
    return [
        Figure(
            f"time to first frame p50, Relay, {TOTAL:,} streams {CONCURRENCY} at a time, half bare",
            statistics.median(relay) * ms,
            "ms",
            baseline=statistics.median(bare) * ms,
            baseline_name="the same answer as hand-written SSE events",
            target="≤ 1.2×",
        ),
        Figure(
            "time to first frame p99, Relay",
            _percentile(relay, 0.99) * ms,
            "ms",
            baseline=_percentile(bare, 0.99) * ms,
            baseline_name="hand-written SSE events",
            target="≤ 1.2×",
        ),
        Figure(
            "failed streams",
            float(result["errors"]),
            "streams",
            target="0",
            met=result["errors"] == 0,
        ),
        Figure(
            "server RSS growth from warm-up to the end",
            (end["rss"] - warm["rss"]) / 2**20,
            "MiB",
            note=f"{warm['rss'] / 2**20:.0f} MiB after {WARMUP} streams",
        ),
        Figure(
            "server threads at the end, and after warm-up",
            float(end["threads"]),
            "threads",
            baseline=float(warm["threads"]),
            baseline_name="after warm-up",
            target="≤ 1.0×",
        ),
        Figure(
            f"asyncio tasks after {CONCURRENCY} clients hung up mid-answer",
            float(after["tasks"]),
            "tasks",
            baseline=float(before["tasks"]),
            baseline_name="before they came",
            target="≤ 1.0×",
        ),
        Figure(
            "threads after the hang-ups",
            float(after["threads"]),
            "threads",
            baseline=float(before["threads"]),
            baseline_name="before they came",
            target="≤ 1.0×",
        ),
    ]


if __name__ == "__main__":
    for figure in run():
        print(figure)
