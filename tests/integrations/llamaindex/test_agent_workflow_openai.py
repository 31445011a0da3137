"""A `FunctionAgent` over llama-index-llms-openai, replaying a streamed Chat Completions run.

The agent streams (LlamaIndex's default): each turn is a server-sent-event stream, the tool
calls arriving in pieces. The model calls one tool, then the other, then streams its answer
citing the sources by the numbers `cite_tools` showed it.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")
pytest.importorskip("llama_index.llms.openai")

import asyncio
import os
from typing import Any

from _llamaindex_fakes import corpus_nodes
from llama_index.core.agent.workflow import AgentStream, FunctionAgent, ToolCallResult
from llama_index.core.schema import NodeWithScore
from llama_index.llms.openai import OpenAI

from unicite.markers import citation_instructions
from unicite_llamaindex import CitationEventHandler, citations_of, cite_tools

KEY = os.getenv("OPENAI_API_KEY", "mock-api-key")
QUESTION = "Que faut-il savoir des marées et de l’abbaye du Mont-Saint-Michel ?"
NODES = {node.node_id: node for node in corpus_nodes()}


def marees(requete: str) -> list[NodeWithScore]:
    """Cherche dans les pages sur les marées et la baie."""
    return [NodeWithScore(node=NODES[n], score=0.9) for n in ("msm-marees", "msm-pont")]


def histoire(requete: str) -> list[NodeWithScore]:
    """Cherche dans les pages d’histoire du Mont."""
    return [NodeWithScore(node=NODES[n], score=0.9) for n in ("msm-abbaye", "msm-marees")]


def agent() -> FunctionAgent:
    return FunctionAgent(
        tools=cite_tools([marees, histoire]),
        llm=OpenAI(model="gpt-4.1-mini", api_key=KEY, temperature=0),
        system_prompt="Réponds en français. Cherche avant de répondre.\n\n"
        + citation_instructions(),
    )


# llama-index-workflows inspects the agent's members, touching pydantic's deprecated attributes.
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211")
@pytest.mark.vcr
def test_streamed_function_agent_cites_its_tools_results() -> None:
    async def go() -> tuple[Any, list[Any]]:
        with CitationEventHandler() as handler:
            run = agent().run(user_msg=QUESTION)
            events = [event async for event in run.stream_events()]
            output = await run
        assert handler.answer is not None
        assert citations_of(run) == handler.answer
        return output, events

    output, events = asyncio.run(go())
    results = [e.tool_output.content for e in events if isinstance(e, ToolCallResult)]
    assert [r.splitlines()[0] for r in results] == [
        "[sid:1] Les marées – Office de tourisme du Mont-Saint-Michel",
        "[sid:3] Abbaye du Mont-Saint-Michel — Wikipédia",
    ]
    streamed = "".join(e.delta for e in events if isinstance(e, AgentStream))
    # The model cited [3], [1] and [2] as it saw them.
    assert streamed == str(output)
    assert str(output) == (
        "L’abbaye bénédictine a été fondée en 966 [3]. Dans la baie, l’écart entre basse et "
        "haute mer atteint 14 mètres [1] ; depuis 2014, le pont-passerelle laisse la mer "
        "entourer le Mont lors des grandes marées [2]."
    )
    answer = citations_of(output)
    assert answer is not None
    assert answer.text == (
        "L’abbaye bénédictine a été fondée en 966 [1]. Dans la baie, l’écart entre basse et "
        "haute mer atteint 14 mètres [2] ; depuis 2014, le pont-passerelle laisse la mer "
        "entourer le Mont lors des grandes marées [3]."
    )
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("L’abbaye bénédictine a été fondée en 966", ["msm-abbaye"]),
        ("Dans la baie, l’écart entre basse et haute mer atteint 14 mètres", ["msm-marees"]),
        (
            "depuis 2014, le pont-passerelle laisse la mer entourer le Mont lors des grandes "
            "marées",
            ["msm-pont"],
        ),
    ]
    for citation in answer.citations:
        assert answer.text[citation.start : citation.end] == citation.text
    assert [s.url for s in answer.sources] == [
        NODES[n].metadata["url"] for n in ("msm-abbaye", "msm-marees", "msm-pont")
    ]
    # Each source remembers the tool call that found it first.
    assert [(s.origin.tool, s.origin.call_id) for s in answer.sources if s.origin] == [
        ("histoire", "call_Tz7Np3Wq5XcK1mHb8RvL2FjD"),
        ("marees", "call_Lm4Qx8Zt2RbW6nVc9KdY3HsP"),
        ("marees", "call_Lm4Qx8Zt2RbW6nVc9KdY3HsP"),
    ]
    assert answer.diagnostics == []
