"""`CitationMiddleware` in real `create_agent` graphs over scripted models and ChatOpenAI.

The agents retrieve from the multilingual corpus (French, German, Japanese) through
LangChain's own ``create_retriever_tool`` and search a fixed web index; the scripted model
calls the tools, then answers citing the numbers it was shown.
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langgraph")

from integrations.langchain.scripted import ScriptedChatModel, calls, scripted, tool_call
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessageChunk, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, ToolException, create_retriever_tool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from unicite import CitedAnswer, GroundingRequiredError, UsageError
from unicite_langchain import (
    CITATIONS_EVENT,
    CitationCallbackHandler,
    CitationMiddleware,
    cite_tools,
    with_citations,
)

MILLAU = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"
NORMANDIE = "https://fr.wikipedia.org/wiki/Pont_de_Normandie"
AKASHI = "https://ja.wikipedia.org/wiki/明石海峡大橋"
KOEHLBRAND = "https://de.wikipedia.org/wiki/K%C3%B6hlbrandbr%C3%BCcke"
HISTOIRE = "https://www.leviaducdemillau.com/fr/histoire"

QUESTION = {"messages": [{"role": "user", "content": "Parle-moi des ponts de Millau et d'Akashi."}]}


def search_tool(retriever: Any, response_format: str = "content") -> BaseTool:
    return create_retriever_tool(
        retriever,
        "search_bridges",
        "Search the encyclopedia of bridges.",
        response_format=response_format,  # type: ignore[arg-type]
    )


WEB = {
    "viaduc": [
        {
            "url": HISTOIRE,
            "title": "Histoire du viaduc",
            "content": "Inauguré le 14 décembre 2004.",
        },
        {"url": MILLAU + "?utm_source=agent", "title": "Viaduc de Millau", "content": "343 m."},
    ],
}


@tool
def web_search(query: str) -> list[dict[str, str]]:
    """Search the web (a fixed index, offline)."""
    return WEB.get(query, [])


def urls(answer: CitedAnswer) -> list[list[str | None]]:
    return [[answer.source(sid).url for sid in c.source_ids] for c in answer.citations]  # type: ignore[union-attr]


def tool_messages(state: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)]


def comparable(answer: CitedAnswer) -> dict[str, Any]:
    data = answer.model_dump(mode="json", exclude={"extras"})
    for source in data["sources"]:
        source.pop("raw")
    return data


# --- numbering and citing -----------------------------------------------------------------------

FINAL = (
    "Le viaduc de Millau culmine à 343 mètres [1]. Le pont de Normandie relie Le Havre à "
    "Honfleur [4]. 明石海峡大橋は1998年に開通しました [2]。"
)


def two_searches(final: str = FINAL) -> ScriptedChatModel:
    return scripted(
        calls(tool_call("search_bridges", "call_1", query="viaduc de Millau")),
        calls(tool_call("search_bridges", "call_2", query="pont de Normandie")),
        final,
    )


@pytest.mark.parametrize("response_format", ["content", "content_and_artifact"])
def test_results_are_numbered_and_the_answer_is_cited(retriever: Any, response_format: str) -> None:
    model = two_searches()
    agent = create_agent(
        model,
        [search_tool(retriever, response_format)],
        system_prompt="Réponds en français.",
        middleware=[CitationMiddleware()],
    )
    state = agent.invoke(QUESTION)

    # Each retrieved document is its own source, numbered once for the run: the second search
    # found two documents again, which keep their numbers.
    first, second = tool_messages(state)
    assert first.content == (
        "[sid:1] Viaduc de Millau — Wikipédia\n"
        "Le viaduc de Millau culmine à 343 mètres au sommet de son pylône le plus haut. Il a "
        "été inauguré le 14 décembre 2004.\n\n"
        "[sid:2] 明石海峡大橋 - Wikipedia\n"
        "明石海峡大橋は全長3,911メートルの吊り橋で、1998年4月5日に開通しました。\n\n"
        "[sid:3] Köhlbrandbrücke – Wikipedia\n"
        "Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang und wurde 1974 eröffnet."
    )
    assert isinstance(second.content, str)
    assert second.content.startswith("[sid:4] Pont de Normandie — Wikipédia\n")
    assert "[sid:2] 明石海峡大橋 - Wikipedia" in second.content
    assert first.response_metadata["unicite_sids"] == [1, 2, 3]
    assert second.response_metadata["unicite_sids"] == [4, 2, 3]
    assert "unicite_sources" not in second.response_metadata
    # The tool's artifact is kept: the documents of a content_and_artifact tool, else none.
    if response_format == "content_and_artifact":
        assert [d.id for d in first.artifact] == ["millau", "akashi", "koehlbrand"]
    else:
        assert first.artifact is None

    # The model read the numbered results, and the instructions after the agent's prompt.
    last_request = model.requests[-1]
    system = last_request[0]
    assert isinstance(system, SystemMessage)
    assert system.text.startswith("Réponds en français.\n\nCite your sources.")
    assert system.text.endswith("N stays the same for the whole conversation.")
    seen = [m for m in last_request if isinstance(m, ToolMessage)]
    assert [m.content for m in seen] == [first.content, second.content]

    answer = state["citations"]
    assert isinstance(answer, CitedAnswer)
    assert answer.text == (
        "Le viaduc de Millau culmine à 343 mètres [1]. Le pont de Normandie relie Le Havre à "
        "Honfleur [2]. 明石海峡大橋は1998年に開通しました [3]。"
    )
    assert urls(answer) == [[MILLAU], [NORMANDIE], [AKASHI]]
    assert [c.text for c in answer.citations] == [
        "Le viaduc de Millau culmine à 343 mètres",
        "Le pont de Normandie relie Le Havre à Honfleur",
        "明石海峡大橋は1998年に開通しました",
    ]
    assert [s.title for s in answer.sources] == [
        "Viaduc de Millau — Wikipédia",
        "Pont de Normandie — Wikipédia",
        "明石海峡大橋 - Wikipedia",
    ]
    assert [(s.origin.tool, s.origin.call_id) for s in answer.sources] == [  # type: ignore[union-attr]
        ("search_bridges", "call_1"),
        ("search_bridges", "call_2"),
        ("search_bridges", "call_1"),
    ]
    assert answer.extras["citation_origin"] == "marker"
    assert answer.extras["citation_middleware"] == "CitationMiddleware"
    assert answer.diagnostics == []
    # The sources the model was shown, as plain data, numbered by position.
    assert [s["url"] for s in state["citation_sources"]] == [MILLAU, AKASHI, KOEHLBRAND, NORMANDIE]


def test_parallel_tool_calls_are_numbered_in_call_order(retriever: Any) -> None:
    """Results are numbered in the order of the model's calls, not the order they finish."""

    @tool
    def slow_search(query: str) -> list[dict[str, str]]:
        """Search the web, slowly."""
        time.sleep(0.2)
        return WEB[query]

    model = scripted(
        calls(
            tool_call("slow_search", "call_1", query="viaduc"),
            tool_call("search_bridges", "call_2", query="pont de Normandie"),
        ),
        "Inauguré en 2004 [1]. Le pont relie Le Havre à Honfleur [3].",
    )
    agent = create_agent(
        model, [slow_search, search_tool(retriever)], middleware=[CitationMiddleware()]
    )
    state = agent.invoke(QUESTION)
    slow, fast = tool_messages(state)
    assert slow.content.startswith("[sid:1] Histoire du viaduc\n")  # type: ignore[union-attr]
    assert "[sid:2] Viaduc de Millau" in slow.content
    assert fast.response_metadata["unicite_sids"] == [3, 4, 5]
    assert urls(state["citations"]) == [[HISTOIRE], [NORMANDIE]]


def test_a_number_naming_no_source_stays_uncited(retriever: Any) -> None:
    model = scripted(
        calls(tool_call("search_bridges", "call_1", query="viaduc de Millau")),
        "Le viaduc culmine à 343 mètres [1]. Il a coûté 400 millions d'euros [7].",
    )
    agent = create_agent(model, [search_tool(retriever)], middleware=[CitationMiddleware()])
    answer = agent.invoke(QUESTION)["citations"]
    assert answer.text == "Le viaduc culmine à 343 mètres [1]. Il a coûté 400 millions d'euros."
    assert urls(answer) == [[MILLAU]]
    assert answer.diagnostics == ["marker '[7]' at 68: source 7 out of range (3 sources given)"]

    kept = scripted(
        calls(tool_call("search_bridges", "call_1", query="viaduc de Millau")),
        "Il a coûté 400 millions d'euros [7].",
    )
    middleware = CitationMiddleware(on_invalid="keep")
    agent = create_agent(kept, [search_tool(retriever)], middleware=[middleware])
    answer = agent.invoke(QUESTION)["citations"]
    assert answer.text == "Il a coûté 400 millions d'euros [7]."
    assert answer.citations == []
    assert any("[7]" in d for d in answer.diagnostics)


def test_an_answer_citing_nothing_says_why(
    retriever: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="unicite")
    model = scripted(
        calls(tool_call("search_bridges", "call_1", query="viaduc de Millau")),
        "Le viaduc de Millau culmine à 343 mètres.",
    )
    agent = create_agent(model, [search_tool(retriever)], middleware=[CitationMiddleware()])
    answer = agent.invoke(QUESTION)["citations"]
    assert answer.citations == []
    assert answer.diagnostics == [
        "3 source(s) were given but the answer cites none: number the sources in the prompt "
        "and ask for [n] markers, or pass attribute='lexical'"
    ]
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        "CitationMiddleware: 3 sources were captured but no citation could be extracted"
    ]

    lexical = scripted(
        calls(tool_call("search_bridges", "call_1", query="viaduc de Millau")),
        "Le viaduc de Millau culmine à 343 mètres.",
    )
    middleware = CitationMiddleware(attribute="lexical")
    agent = create_agent(lexical, [search_tool(retriever)], middleware=[middleware])
    answer = agent.invoke(QUESTION)["citations"]
    assert {c.origin for c in answer.citations} == {"posthoc-lexical"}
    assert urls(answer) == [[MILLAU]]


def test_require_citations_fails_the_run_after_publishing(retriever: Any) -> None:
    seen: list[Any] = []

    class Listener(BaseCallbackHandler):
        def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
            seen.append(data)

    model = scripted(
        calls(tool_call("search_bridges", "call_1", query="viaduc de Millau")),
        "Le viaduc de Millau culmine à 343 mètres.",
    )
    middleware = CitationMiddleware(require="citations")
    agent = create_agent(model, [search_tool(retriever)], middleware=[middleware])
    with pytest.raises(GroundingRequiredError) as failure:
        agent.invoke(QUESTION, config={"callbacks": [Listener()]})
    assert failure.value.answer is not None
    assert failure.value.answer.text == "Le viaduc de Millau culmine à 343 mètres."
    assert [data["answer"] for data in seen] == [failure.value.answer]


def test_a_failed_tool_is_a_diagnostic(retriever: Any) -> None:
    @tool
    def broken_search(query: str) -> str:
        """A search engine that is down."""
        raise ToolException("HTTP 503: service unavailable")

    broken_search.handle_tool_error = True
    model = scripted(
        calls(
            tool_call("broken_search", "call_1", query="Millau"),
            tool_call("search_bridges", "call_2", query="viaduc de Millau"),
        ),
        "Le viaduc culmine à 343 mètres [1].",
    )
    agent = create_agent(
        model, [broken_search, search_tool(retriever)], middleware=[CitationMiddleware()]
    )
    state = agent.invoke(QUESTION)
    failed, found = tool_messages(state)
    assert failed.status == "error"
    assert failed.content == "HTTP 503: service unavailable"  # left as the tool said it
    assert found.response_metadata["unicite_sids"] == [1, 2, 3]
    answer = state["citations"]
    assert urls(answer) == [[MILLAU]]
    assert answer.diagnostics == ["broken_search failed: HTTP 503: service unavailable"]


def test_plain_text_results_are_one_source_each() -> None:
    @tool
    def notes(topic: str) -> str:
        """Plain-text notes."""
        return f"Notes sur {topic} : ouvert en 2004, 343 m."

    model = scripted(
        calls(tool_call("notes", "call_1", topic="Millau")),
        "Ouvert en 2004 [1].",
    )
    agent = create_agent(model, [notes], middleware=[CitationMiddleware()])
    state = agent.invoke(QUESTION)
    [message] = tool_messages(state)
    assert message.content == "[sid:1] notes\nNotes sur Millau : ouvert en 2004, 343 m."
    answer = state["citations"]
    assert [s.kind for s in answer.sources] == ["tool"]
    assert answer.sources[0].content == "Notes sur Millau : ouvert en 2004, 343 m."
    assert [c.text for c in answer.citations] == ["Ouvert en 2004"]


def test_an_answer_without_tools() -> None:
    agent = create_agent(scripted("Bonjour !"), [], middleware=[CitationMiddleware()])
    state = agent.invoke(QUESTION)
    assert state["citations"] == CitedAnswer(
        text="Bonjour !",
        extras={
            "citation_origin": None,
            "langchain_run_id": state["citations"].extras["langchain_run_id"],
            "citation_middleware": "CitationMiddleware",
        },
    )


# --- the state across runs ----------------------------------------------------------------------


def test_a_checkpointed_conversation_keeps_its_numbers(retriever: Any) -> None:
    # Registered, the answer is read back from the checkpoint without LangGraph's warning.
    serde = JsonPlusSerializer(allowed_msgpack_modules=[("unicite.model", "CitedAnswer")])
    model = scripted(
        calls(tool_call("search_bridges", "call_1", query="viaduc de Millau")),
        "Le viaduc culmine à 343 mètres [1].",
        calls(tool_call("web_search", "call_2", query="viaduc")),
        "Inauguré le 14 décembre 2004 [4], il culmine à 343 mètres [1].",
    )
    agent = create_agent(
        model,
        [search_tool(retriever), web_search],
        middleware=[CitationMiddleware()],
        checkpointer=InMemorySaver(serde=serde),
    )
    config: Any = {"configurable": {"thread_id": "millau"}}
    first = agent.invoke(QUESTION, config)["citations"]
    assert urls(first) == [[MILLAU]]

    state = agent.invoke({"messages": [{"role": "user", "content": "Et quand ?"}]}, config)
    # The second run's results continue the first run's numbers; Millau's page keeps [1].
    latest = tool_messages(state)[-1]
    assert latest.response_metadata["unicite_sids"] == [4, 1]
    answer = state["citations"]
    assert answer.text == "Inauguré le 14 décembre 2004 [1], il culmine à 343 mètres [2]."
    assert urls(answer) == [[HISTOIRE], [MILLAU]]
    assert agent.get_state(config).values["citations"] == answer


def test_one_middleware_serves_concurrent_runs(retriever: Any) -> None:
    middleware = CitationMiddleware()

    def run(query: str, final: str) -> CitedAnswer:
        model = scripted(calls(tool_call("search_bridges", "call_1", query=query)), final)
        agent = create_agent(model, [search_tool(retriever)], middleware=[middleware])
        return agent.invoke(QUESTION)["citations"]  # type: ignore[no-any-return]

    async def both() -> list[CitedAnswer]:
        return list(
            await asyncio.gather(
                asyncio.to_thread(run, "viaduc de Millau", "343 mètres [1]."),
                asyncio.to_thread(run, "Köhlbrandbrücke Hamburg", "3 618 Meter [1]."),
            )
        )

    millau, koehlbrand = asyncio.run(both())
    assert urls(millau) == [[MILLAU]]
    assert urls(koehlbrand) == [[KOEHLBRAND]]


# --- events and streams -------------------------------------------------------------------------


def test_the_event_arrives_in_the_custom_stream(retriever: Any) -> None:
    agent = create_agent(
        two_searches(), [search_tool(retriever)], middleware=[CitationMiddleware()]
    )
    parts = list(agent.stream(QUESTION, stream_mode=["custom", "values"]))
    custom = [data for mode, data in parts if mode == "custom"]
    final_state = [data for mode, data in parts if mode == "values"][-1]
    assert custom == [
        {
            CITATIONS_EVENT: {
                "run_id": final_state["citations"].extras["langchain_run_id"],
                "origin": "marker",
                "answer": final_state["citations"],
            }
        }
    ]
    only = list(
        create_agent(
            two_searches(), [search_tool(retriever)], middleware=[CitationMiddleware()]
        ).stream(QUESTION, stream_mode="custom")
    )
    assert [list(part) for part in only] == [[CITATIONS_EVENT]]
    assert comparable(only[0][CITATIONS_EVENT]["answer"]) == comparable(final_state["citations"])


def test_the_event_reaches_handlers_and_astream_events(retriever: Any) -> None:
    seen: list[tuple[str, Any]] = []

    class Listener(BaseCallbackHandler):
        def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
            seen.append((name, data))

    agent = create_agent(
        two_searches(), [search_tool(retriever)], middleware=[CitationMiddleware()]
    )
    state = agent.invoke(QUESTION, config={"callbacks": [Listener()]})
    assert seen == [
        (
            CITATIONS_EVENT,
            {
                "run_id": state["citations"].extras["langchain_run_id"],
                "origin": "marker",
                "answer": state["citations"],
            },
        )
    ]

    async def events() -> list[dict[str, Any]]:
        agent = create_agent(
            two_searches(), [search_tool(retriever)], middleware=[CitationMiddleware()]
        )
        return [event async for event in agent.astream_events(QUESTION, version="v2")]

    got = asyncio.run(events())
    [custom] = [e for e in got if e["event"] == "on_custom_event"]
    assert custom["name"] == CITATIONS_EVENT
    root = next(e for e in got if e["event"] == "on_chain_end" and not e["parent_ids"])
    # The event names the run it was published in (the middleware's step in the agent's
    # run), and comes before the agent's run ends.
    assert custom["data"]["run_id"] == custom["run_id"]
    assert custom["parent_ids"] == [root["run_id"]]
    assert custom["data"]["answer"] == root["data"]["output"]["citations"]
    assert urls(custom["data"]["answer"]) == [[MILLAU], [NORMANDIE], [AKASHI]]
    assert got.index(custom) < got.index(root)


def test_streaming_messages_still_works(retriever: Any) -> None:
    agent = create_agent(
        two_searches(), [search_tool(retriever)], middleware=[CitationMiddleware()]
    )
    tokens: list[str] = []
    final: dict[str, Any] = {}
    for mode, data in agent.stream(QUESTION, stream_mode=["messages", "values"]):
        if mode == "messages":
            message, metadata = data
            if isinstance(message, AIMessageChunk) and metadata["langgraph_node"] == "model":
                tokens.append(message.text)
        else:
            final = data
    assert len(tokens) > 10
    assert "".join(tokens) == FINAL  # the model's own text, markers as it wrote them
    assert urls(final["citations"]) == [[MILLAU], [NORMANDIE], [AKASHI]]


def test_async_runs(retriever: Any) -> None:
    async def go() -> tuple[dict[str, Any], list[Any]]:
        agent = create_agent(
            two_searches(), [search_tool(retriever)], middleware=[CitationMiddleware()]
        )
        state = await agent.ainvoke(QUESTION)
        streamed = create_agent(
            two_searches(), [search_tool(retriever)], middleware=[CitationMiddleware()]
        )
        parts = [part async for part in streamed.astream(QUESTION, stream_mode="custom")]
        return state, parts

    state, parts = asyncio.run(go())
    assert urls(state["citations"]) == [[MILLAU], [NORMANDIE], [AKASHI]]
    assert tool_messages(state)[0].response_metadata["unicite_sids"] == [1, 2, 3]
    [part] = parts
    assert comparable(part[CITATIONS_EVENT]["answer"]) == comparable(state["citations"])


# --- with_citations and the handler ---------------------------------------------------------------


def test_with_citations_streams_the_text_then_the_citations(retriever: Any) -> None:
    def agent() -> Any:
        return create_agent(
            two_searches(), [search_tool(retriever)], middleware=[CitationMiddleware()]
        )

    invoked = with_citations(agent()).invoke(QUESTION)
    chunks = list(with_citations(agent()).stream(QUESTION))
    assert len(chunks) > 10
    assert [set(c) for c in chunks[:-1]] == [{"answer"}] * (len(chunks) - 1)
    assert set(chunks[-1]) == {"citations"}
    answer = chunks[-1]["citations"]
    # The text already reads as the answer: markers renumbered as they stream.
    assert "".join(c["answer"] for c in chunks[:-1]) == answer.text == invoked["answer"]
    assert answer.text.startswith("Le viaduc de Millau culmine à 343 mètres [1]. Le pont")
    assert comparable(answer) == comparable(invoked["citations"])
    assert answer.extras["citation_middleware"] == "CitationMiddleware"
    assert not any("streaming differs" in d for d in answer.diagnostics)

    async def astream() -> list[dict[str, Any]]:
        return [chunk async for chunk in with_citations(agent()).astream(QUESTION)]

    achunks = asyncio.run(astream())
    assert "".join(c.get("answer", "") for c in achunks) == answer.text
    assert comparable(achunks[-1]["citations"]) == comparable(answer)
    with pytest.raises(UsageError):
        list(with_citations(agent()).stream(QUESTION, stream_mode="values"))


def test_with_citations_streams_an_agent_without_the_middleware() -> None:
    """cite_tools numbers the results through the handler with_citations runs the agent under."""
    model = scripted(
        calls(tool_call("web_search", "call_1", query="viaduc"), text="Je cherche."),
        "Le viaduc a été inauguré en 2004 [1] et culmine à 343 mètres [2].",
    )
    agent = create_agent(model, cite_tools([web_search]))
    chunks = list(with_citations(agent).stream(QUESTION))
    answer = chunks[-1]["citations"]
    assert urls(answer) == [[HISTOIRE], [MILLAU + "?utm_source=agent"]]
    # What the model wrote before calling the tool streamed too; the answer is its last text.
    assert "".join(c.get("answer", "") for c in chunks) == "Je cherche." + answer.text
    assert not any("streaming differs" in d for d in answer.diagnostics)


def test_a_handler_takes_the_middleware_answer(retriever: Any) -> None:
    """The handler watching an agent with the middleware reports the middleware's answer.

    Read on its own, the handler would number the parallel results as they finish (the slow
    search last), and its ledger would not match the numbers the model saw.
    """

    @tool
    def slow_search(query: str) -> list[dict[str, str]]:
        """Search the web, slowly."""
        time.sleep(0.2)
        return WEB[query]

    model = scripted(
        calls(
            tool_call("slow_search", "call_1", query="viaduc"),
            tool_call("search_bridges", "call_2", query="pont de Normandie"),
        ),
        "Inauguré en 2004 [1]. Le pont relie Le Havre à Honfleur [3].",
    )
    agent = create_agent(
        model, [slow_search, search_tool(retriever)], middleware=[CitationMiddleware()]
    )
    handler = CitationCallbackHandler()
    state = agent.invoke(QUESTION, config={"callbacks": [handler]})
    assert handler.answer is not None
    assert comparable(handler.answer) == comparable(state["citations"])
    assert urls(handler.answer) == [[HISTOIRE], [NORMANDIE]]
    assert handler.answer.extras["citation_middleware"] == "CitationMiddleware"
    assert handler.answers[handler.answer.extras["langchain_run_id"]] == handler.answer


# --- options --------------------------------------------------------------------------------------


def test_disabled_the_agent_runs_as_without_it(retriever: Any) -> None:
    seen: list[Any] = []

    class Listener(BaseCallbackHandler):
        def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
            seen.append(data)

    model = two_searches()
    middleware = CitationMiddleware(enabled=False)
    assert not middleware.enabled
    agent = create_agent(model, [search_tool(retriever)], middleware=[middleware])
    state = agent.invoke(QUESTION, config={"callbacks": [Listener()]})
    assert "citations" not in state
    assert not any(isinstance(m, SystemMessage) for m in model.requests[0])
    first = tool_messages(state)[0]
    assert isinstance(first.content, str)
    assert first.content.startswith("Le viaduc de Millau culmine")
    assert first.response_metadata == {}
    assert seen == []


def test_instructions_and_options() -> None:
    assert "[[S:1]]" in CitationMiddleware(style="sids").instructions
    assert CitationMiddleware(instructions=False).instructions == ""
    assert CitationMiddleware(instructions="Cite [n].").instructions == "Cite [n]."
    html = CitationMiddleware(format="html", renumber=False)
    assert 'data-sids="1"' in html.instructions
    assert html.policy.renumber is False

    model = scripted("Bonjour.")
    agent = create_agent(
        model,
        [],
        system_prompt=SystemMessage(content=[{"type": "text", "text": "Sois bref."}]),
        middleware=[CitationMiddleware(instructions="Cite [n].")],
    )
    agent.invoke(QUESTION)
    assert model.requests[0][0].content == [
        {"type": "text", "text": "Sois bref."},
        {"type": "text", "text": "Cite [n]."},
    ]
    for bad in (
        {"format": "json"},
        {"style": "sup"},
        {"require": "yes"},
        {"budget_tokens": -1},
        {"prefer": "all"},
        {"instructions": 3},
        {"registry": object()},
        {"colour": "red"},
    ):
        with pytest.raises(UsageError):
            CitationMiddleware(**bad)


def test_budget_shortens_each_result(retriever: Any) -> None:
    model = two_searches()
    agent = create_agent(
        model, [search_tool(retriever)], middleware=[CitationMiddleware(budget_tokens=60)]
    )
    state = agent.invoke(QUESTION)
    first = tool_messages(state)[0]
    assert isinstance(first.content, str)
    assert first.content.startswith("[sid:1] Viaduc de Millau — Wikipédia\n")
    assert "[sid:3] Köhlbrandbrücke – Wikipedia" in first.content
    assert len(first.content) < 300
    # Shortened for the model only: the sources keep their text.
    assert state["citations"].sources[0].content.endswith("inauguré le 14 décembre 2004.")


def test_importing_the_adapter_needs_no_langchain() -> None:
    """Only CitationMiddleware needs ``langchain``; it says how to get it."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'langchain' or name.startswith('langchain.'):\n"
        "            raise ImportError('no langchain here')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import unicite_langchain\n"
        "print(unicite_langchain.CitationCallbackHandler.__name__)\n"
        "try:\n"
        "    unicite_langchain.CitationMiddleware\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "error"},
    )
    assert done.stdout.splitlines() == [
        "CitationCallbackHandler",
        "CitationMiddleware needs langchain>=1: pip install 'unicite-langchain[agents]'",
    ]


# --- a real provider ------------------------------------------------------------------------------


@pytest.mark.vcr
def test_openai_agent_cites_retrieved_documents(vcr: Any, retriever: Any) -> None:
    """ChatOpenAI (Chat Completions) calls the retriever tool, then cites what it read."""
    openai = pytest.importorskip("langchain_openai")
    requests: list[list[Any]] = []

    class Spy(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            requests.append(messages[0])

    model = openai.ChatOpenAI(
        model="gpt-5.2", api_key=os.getenv("OPENAI_API_KEY", "mock-api-key"), temperature=0
    )
    agent = create_agent(
        model,
        [search_tool(retriever)],
        system_prompt="Réponds en français.",
        middleware=[CitationMiddleware()],
    )
    question = "Quand le viaduc de Millau a-t-il été inauguré, et quelle est sa hauteur ?"
    state = agent.invoke(
        {"messages": [{"role": "user", "content": question}]}, config={"callbacks": [Spy()]}
    )
    answer = state["citations"]
    assert answer.provider == "openai"
    assert answer.text == (
        "Le viaduc de Millau a été inauguré le 14 décembre 2004 [1]. Il culmine à 343 mètres "
        "au sommet de son pylône le plus haut [1]."
    )
    assert urls(answer) == [[MILLAU], [MILLAU]]
    assert [s.title for s in answer.sources] == ["Viaduc de Millau — Wikipédia"]
    assert answer.diagnostics == []
    # The second request showed the model the numbered documents, after the instructions.
    first, second = requests
    assert first[0].text.startswith("Réponds en français.\n\nCite your sources.")
    [result] = [m for m in second if isinstance(m, ToolMessage)]
    assert result.content == tool_messages(state)[0].content
    assert isinstance(result.content, str)
    assert result.content.startswith("[sid:1] Viaduc de Millau — Wikipédia\n")
    assert "[sid:2] 明石海峡大橋 - Wikipedia" in result.content


def test_a_failure_to_cite_leaves_the_answer_uncited(retriever: Any) -> None:
    """An attribution model that fails: the agent still answers, and the answer says why."""

    def down(prompt: str) -> str:
        raise ConnectionError("attribution model unreachable")

    model = scripted(
        calls(tool_call("search_bridges", "call_1", query="viaduc de Millau")),
        "Le viaduc de Millau culmine à 343 mètres.",
    )
    middleware = CitationMiddleware(attribute=down)
    agent = create_agent(model, [search_tool(retriever)], middleware=[middleware])
    answer = agent.invoke(QUESTION)["citations"]
    assert answer.text == "Le viaduc de Millau culmine à 343 mètres."
    assert answer.citations == []
    assert answer.diagnostics == [
        "unicite-langchain: the answer could not be cited: "
        "ConnectionError: attribution model unreachable"
    ]
