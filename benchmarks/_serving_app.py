"""The service the serving benchmark loads: a bare SSE stream and the same answer relayed.

Run by `serving.py` in its own process (``python _serving_app.py PORT``) so that the load
generator and the server do not share an interpreter. ``/bare`` sends the deltas and the cited
message (`unicite.wire.history`) as hand-written SSE events; ``/relay`` sends them through a
`unicite.wire.Relay` and `relay_response`, as a chat service does; ``/stats`` reports the
server's resident memory, threads and asyncio tasks.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import uvicorn
from fastapi import FastAPI
from fastapi.responses import JSONResponse
from sse_starlette import EventSourceResponse, ServerSentEvent

import unicite
from unicite.wire import Relay, history
from unicite.wire.starlette import relay_response

DELTAS = 20
PAUSE = 0.005
"""Seconds between deltas: a model streaming about 200 tokens a second."""

SOURCES = [
    unicite.Source(url=f"https://example.org/{n}", title=f"Quelle {n}", content="Köln.")
    for n in range(1, 4)
]
TEXT = "Der Kölner Dom ist 157 Meter hoch [1]. Er wurde 1880 vollendet [2]. " * 2
ANSWER = unicite.cite(TEXT, SOURCES)
PIECES = [
    ANSWER.text[k : k + len(ANSWER.text) // DELTAS + 1]
    for k in range(0, len(ANSWER.text), len(ANSWER.text) // DELTAS + 1)
]

app = FastAPI()


async def _deltas() -> AsyncIterator[object]:
    for piece in PIECES:
        await asyncio.sleep(PAUSE)
        yield piece
    yield ANSWER


async def _bare() -> AsyncIterator[ServerSentEvent]:
    for n, piece in enumerate(PIECES, start=1):
        await asyncio.sleep(PAUSE)
        yield ServerSentEvent(data=json.dumps({"delta": piece}), event="delta", id=str(n))
    # The cited message last, as any server sending a cited answer does.
    document = json.dumps(history(ANSWER), ensure_ascii=False)
    yield ServerSentEvent(data=document, event="completed", id=str(len(PIECES) + 1))


@app.get("/bare")
async def bare() -> EventSourceResponse:
    return EventSourceResponse(_bare(), ping=None, sep="\n")


@app.get("/relay")
async def relay() -> EventSourceResponse:
    return relay_response(Relay(_deltas()), ping=None)


@app.get("/stats")
async def stats() -> JSONResponse:
    rss = 0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) * 1024
    return JSONResponse(
        {
            "rss": rss,
            "threads": threading.active_count(),
            "tasks": len(asyncio.all_tasks()),
        }
    )


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", backlog=4096)
