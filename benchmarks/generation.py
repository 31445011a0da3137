"""Cited generation: rounds and tokens per answer, and the pipeline's own time per answer.

The model is the real ``openai`` SDK client whose HTTP transport replays Chat Completions
bodies (with ``usage``) written for three runs: an answer cited at once, one citing an unknown
source and then retried, and a JSON document whose sidecar is checked. The baseline for time
is the same number of bare ``client.chat.completions.create`` calls over the same transport:
the ratio is what `generate_cited` adds around the model calls it makes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from _harness import Figure, median_time

from unicite import Source, generate_cited

SOURCES = [
    Source(
        url=f"https://www.example-{n}.fr/page",
        title=f"Source {n} — Lyon",
        content=("La Fête des Lumières a lieu chaque année autour du 8 décembre à Lyon. " * 12),
    )
    for n in range(1, 9)
]

RUNS: dict[str, tuple[str, list[str]]] = {
    "cited at once": (
        "markdown",
        ["La fête a lieu autour du 8 décembre [[S:1]], et attire des millions de gens [[S:2,3]]."],
    ),
    "one retry": (
        "markdown",
        [
            "La fête a lieu autour du 8 décembre [[S:12]].",
            "La fête a lieu autour du 8 décembre [[S:1]].",
        ],
    ),
    "json sidecar": (
        "json",
        [
            json.dumps(
                {
                    "ville": "Lyon",
                    "date": "8 décembre",
                    "_citations": [{"path": "/date", "sids": [1, 4]}],
                },
                ensure_ascii=False,
            )
        ],
    ),
}


def _completion(text: str, n: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-bench-{n}",
        "object": "chat.completion",
        "created": 1764000000,
        "model": "gpt-4.1-mini-2025-04-14",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "annotations": []},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": 1_450 + 40 * n,
            "completion_tokens": 20 + len(text) // 4,
            "total_tokens": 1_470 + 40 * n + len(text) // 4,
        },
    }


def _client(replies: list[str]) -> tuple[Any, Callable[[], None]]:
    """An OpenAI client answering ``replies`` in turn, and a function to start over."""
    import httpx
    import openai

    bodies = [json.dumps(_completion(text, n)).encode() for n, text in enumerate(replies)]
    state = {"n": 0}

    def handler(request: httpx.Request) -> httpx.Response:
        body = bodies[min(state["n"], len(bodies) - 1)]
        state["n"] += 1
        return httpx.Response(200, content=body, headers={"content-type": "application/json"})

    client = openai.OpenAI(
        api_key="sk-bench", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )

    def reset() -> None:
        state["n"] = 0

    return client, reset


def run() -> list[Figure]:
    try:
        import httpx  # noqa: F401
        import openai  # noqa: F401
    except ImportError:
        return []
    figures: list[Figure] = []
    rounds: list[int] = []
    tokens: list[int] = []
    pipeline = 0.0
    bare = 0.0
    for name, (fmt, replies) in RUNS.items():
        client, reset = _client(replies)

        def generate(
            client: Any = client, reset: Callable[[], None] = reset, fmt: Any = fmt
        ) -> Any:
            reset()
            return generate_cited(
                client, "Quand a lieu la fête ?", SOURCES, model="gpt-4.1-mini", format=fmt
            )

        result = generate()
        if not result.finished:
            raise RuntimeError(f"{name}: {result.reason}")
        rounds.append(result.stats.rounds)
        tokens.append((result.stats.tokens_in or 0) + (result.stats.tokens_out or 0))
        calls = result.stats.rounds

        def calls_only(
            client: Any = client, reset: Callable[[], None] = reset, n: int = calls
        ) -> None:
            reset()
            for _ in range(n):
                client.chat.completions.create(
                    model="gpt-4.1-mini",
                    messages=[{"role": "user", "content": "Quand a lieu la fête ?"}],
                )

        pipeline += median_time(generate, repeat=9, number=20)
        bare += median_time(calls_only, repeat=9, number=20)
    figures.append(
        Figure(
            "rounds per answer (3 replayed runs)",
            sum(rounds) / len(rounds),
            "rounds",
            note="cited at once, one retry after an unknown source, JSON sidecar",
            target="report",
        )
    )
    figures.append(
        Figure(
            "tokens per answer, in + out, as the SDK reports (3 replayed runs)",
            sum(tokens) / len(tokens),
            "tokens",
            target="report",
        )
    )
    figures.append(
        Figure(
            "generate_cited per answer, over the model calls it makes (openai SDK, replayed)",
            pipeline / len(RUNS) * 1000,
            "ms",
            baseline=bare / len(RUNS) * 1000,
            baseline_name="the same chat.completions.create calls over the same transport",
            target="report",
        )
    )
    return figures
