"""The adapter contract for ``with_citations`` over a pydantic-ai agent.

The agent has one search tool returning the run's documents (`cite_tools` numbers them) and a
scripted `FunctionModel` that calls it, then answers from the prompt it got.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai.agent")

from integrations.contract import (
    Outcome,
    StreamingAdapterContract,
    dispatch,
    reply,
    retrieve,
    stream_chunk,
)
from integrations.pydantic_ai.scripted import scripted_model
from pydantic_ai import Agent

from unicite_pydantic_ai import citation_instructions, cite_tools, with_citations


def search(query: str) -> list[dict[str, Any]]:
    """Search the bridge encyclopaedia."""
    return [
        {"id": doc.id, "url": doc.url, "title": doc.title, "content": doc.text, **doc.metadata}
        for doc in retrieve(query)
    ]


class TestWithCitations(StreamingAdapterContract):
    """``with_citations(agent)``: ``result.citations`` from run, cited text from run_stream."""

    rewrites_result = False  # the run's output is pydantic-ai's; the cited text is .citations

    def build(self, **options: Any) -> Any:
        agent = Agent(
            scripted_model(reply, stream_chunk),
            tools=cite_tools([search]),
            instructions=citation_instructions(),
        )
        return with_citations(agent, on_citations=dispatch, **options)

    def invoke(self, adapter: Any, question: str, chunk: int | None) -> Outcome:
        if chunk is None:
            # asyncio.run closes its loop; run_sync keeps one per thread the pool started.
            result = asyncio.run(adapter.run(question))
            return Outcome(result=result.output, answer=result.citations)

        async def streamed() -> Outcome:
            live: list[str] = []
            async with adapter.run_stream(question) as stream:
                async for piece in stream.stream_text(delta=True, debounce_by=None):
                    live.append(piece)
                output = await stream.get_output()
                return Outcome(result=output, answer=stream.citations, live=live)

        return asyncio.run(streamed())
