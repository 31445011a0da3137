"""`cite_result`, `with_citations`, `cite_tools` and `citation_instructions` on scripted agents."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai.agent")

from integrations.pydantic_ai.scripted import prompt_text, run, scripted_model
from pydantic_ai import Agent, RunContext, Tool, ToolReturn
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import unicite
from unicite import CitePolicy, Source, UsageError
from unicite_pydantic_ai import (
    CitedAgentRun,
    __version__,
    citation_instructions,
    cite_result,
    cite_tools,
    with_citations,
)

PAGES = [
    {
        "url": "https://de.wikipedia.org/wiki/K%C3%B6hlbrandbr%C3%BCcke",
        "title": "Köhlbrandbrücke – Wikipedia",
        "content": "Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang und wurde 1974 eröffnet.",
    },
    {
        "url": "https://ja.wikipedia.org/wiki/明石海峡大橋",
        "title": "明石海峡大橋 - Wikipedia",
        "content": "明石海峡大橋は全長3,911メートルの吊り橋で、1998年4月5日に開通しました。",
    },
]
ANSWER = "明石海峡大橋は1998年に開通しました [2]。Die Köhlbrandbrücke ist 3 618 Meter lang [1]."


def search(query: str) -> list[dict[str, Any]]:
    """Search the encyclopaedia."""
    return PAGES


def test_version_is_the_distributions() -> None:
    assert __version__ == unicite.__version__


def test_plain_tool_documents_are_numbered_in_order() -> None:
    agent = Agent(scripted_model(lambda _: ANSWER), tools=[search])
    result = run(agent, "Wann wurden die Brücken eröffnet ?")
    answer = cite_result(result)
    want = unicite.cite(ANSWER, [Source(**page) for page in PAGES])
    assert answer.text == want.text
    assert answer.text.startswith("明石海峡大橋は1998年に開通しました [1]。")
    assert [s.url for s in answer.sources] == [PAGES[1]["url"], PAGES[0]["url"]]
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (c.start, c.end, c.text) for c in want.citations
    ]


def test_cite_tools_numbers_across_calls_and_keeps_numbers() -> None:
    calls = iter(["Brücke", "吊り橋", "Brücke"])

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        query = next(calls, None)
        if query is not None:
            return ModelResponse(parts=[ToolCallPart("lookup", {"query": query})])
        return ModelResponse(parts=[TextPart("Der Köhlbrand [1]; 明石 [2]; Millau [3].")])

    def lookup(query: str) -> list[dict[str, Any]]:
        """One page per query."""
        return [PAGES[0]] if query == "Brücke" else [PAGES[1]]

    agent = Agent(FunctionModel(respond), tools=cite_tools([lookup]))
    result = run(agent, "Brücken ?")
    shown = prompt_text(result.all_messages())
    assert shown.count("[sid:1] Köhlbrandbrücke – Wikipedia") == 2  # found twice, one number
    assert "[sid:2] 明石海峡大橋 - Wikipedia" in shown
    answer = cite_result(result)
    assert [s.url for s in answer.sources] == [PAGES[0]["url"], PAGES[1]["url"]]
    assert "[3]" not in answer.text
    assert any("3" in note for note in answer.diagnostics)


def test_cite_tools_takes_tool_objects_with_context_and_keeps_their_metadata() -> None:
    def lookup(ctx: RunContext[None], query: str) -> ToolReturn:
        """A tool returning a ToolReturn."""
        return ToolReturn(return_value=PAGES, metadata={"trace": "é"})

    (tool,) = cite_tools([Tool(lookup, name="lexikon")])
    assert tool.name == "lexikon"
    agent = Agent(scripted_model(lambda _: ANSWER, tool="lexikon"), tools=[tool])
    result = run(agent, "?")
    returns = [
        part
        for message in result.all_messages()
        for part in getattr(message, "parts", [])
        if getattr(part, "part_kind", "") == "tool-return"
    ]
    assert returns[0].metadata["trace"] == "é"
    assert returns[0].content.startswith("[sid:1] Köhlbrandbrücke – Wikipedia")
    assert cite_result(result).text.startswith("明石海峡大橋は1998年に開通しました [1]。")


def test_a_text_result_is_one_source_under_its_number() -> None:
    def note(query: str) -> str:
        """A note."""
        return "Le viaduc de Millau culmine à 343 mètres."

    agent = Agent(
        scripted_model(lambda _: "Il culmine à 343 mètres [1].", tool="note"),
        tools=cite_tools([note]),
    )
    result = run(agent, "?")
    assert "[sid:1] note\nLe viaduc de Millau culmine à 343 mètres." in prompt_text(
        result.all_messages()
    )
    answer = cite_result(result)
    assert answer.citations[0].text == "Il culmine à 343 mètres"
    assert answer.sources[0].kind == "tool"


def test_given_sources_replace_the_runs() -> None:
    agent = Agent(scripted_model(lambda _: "Millau [1]."), tools=[search])
    result = run(agent, "?")
    mine = [Source(url="https://fr.wikipedia.org/wiki/Viaduc_de_Millau", title="Millau")]
    answer = cite_result(result, mine, policy=CitePolicy(sources="all"), renumber=False)
    assert [s.title for s in answer.sources] == ["Millau"]


def test_bad_input_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        cite_result("not a result")
    agent = Agent(scripted_model(lambda _: ANSWER), tools=[search])
    result = run(agent, "?")
    with pytest.raises(UsageError):
        cite_result(result, policy="strict")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        cite_result(result, colour="blue")
    with pytest.raises(UsageError):
        cite_tools(search)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        cite_tools([42])  # type: ignore[list-item]
    with pytest.raises(UsageError):
        with_citations("agent")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        citation_instructions("json")


def test_instructions_are_unicites_with_where_the_sources_are() -> None:
    text = citation_instructions()
    assert text.startswith(unicite.citation_instructions())
    assert "[sid:N]" in text
    assert "tool calls" in text


def test_a_streamed_result_is_cited_once_finished() -> None:
    agent = Agent(scripted_model(lambda _: ANSWER, lambda: 5), tools=[search])

    async def go() -> None:
        async with agent.run_stream("?") as stream:
            with pytest.raises(UsageError):
                cite_result(stream)
            raw = [text async for text in stream.stream_text(delta=True, debounce_by=None)]
            assert "".join(raw) == ANSWER
            answer = cite_result(stream)
            assert answer.text.startswith("明石海峡大橋は1998年に開通しました [1]。")

    asyncio.run(go())


def test_iter_run_carries_citations() -> None:
    agent = with_citations(Agent(scripted_model(lambda _: ANSWER), tools=cite_tools([search])))

    async def go() -> None:
        async with agent.iter("?") as run:
            assert isinstance(run, CitedAgentRun)
            assert run.citations is None
            nodes = [node async for node in run]
            assert nodes
            answer = run.citations
            assert answer is not None
            assert answer.text.startswith("明石海峡大橋は1998年に開通しました [1]。")

    asyncio.run(go())


def test_streamed_text_is_the_final_text() -> None:
    agent = with_citations(
        Agent(scripted_model(lambda _: ANSWER, lambda: 2), tools=cite_tools([search]))
    )

    async def go() -> None:
        async with agent.run_stream("?") as stream:
            seen = [text async for text in stream.stream_text(debounce_by=None)]
            assert stream.citations is not None
            assert seen[-1] == stream.citations.text
            assert all(stream.citations.text.startswith(text) for text in seen)
            assert await stream.get_output() == ANSWER

    asyncio.run(go())


def test_a_failure_to_cite_leaves_the_run_alone() -> None:
    agent = Agent(scripted_model(lambda _: "Sans source aucune."), tools=cite_tools([search]))
    result = run(with_citations(agent, require="citations"), "?")
    assert result.output == "Sans source aucune."
    assert result.citations.text == "Sans source aucune."
    assert result.citations.citations == []
    assert any("GroundingRequiredError" in note for note in result.citations.diagnostics)


def test_a_raising_callback_leaves_the_run_alone(caplog: pytest.LogCaptureFixture) -> None:
    def explode(answer: Any) -> None:
        raise RuntimeError("callback failed")

    agent = Agent(scripted_model(lambda _: ANSWER), tools=cite_tools([search]))
    result = run(with_citations(agent, on_citations=explode), "?")
    assert result.output == ANSWER
    assert result.citations.citations
    assert "callback failed" in caplog.text


def test_test_model_calls_the_cited_tool_and_answers_with_markers() -> None:
    from pydantic_ai.models.test import TestModel

    model = TestModel(custom_output_text="Die Köhlbrandbrücke [1]; 明石海峡大橋 [2]; [5].")
    result = run(with_citations(Agent(model, tools=cite_tools([search]))), "?")
    answer = result.citations
    assert answer.text == "Die Köhlbrandbrücke [1]; 明石海峡大橋 [2];."
    assert [s.title for s in answer.sources] == [p["title"] for p in PAGES]
    assert [c.text for c in answer.citations] == ["Die Köhlbrandbrücke", "明石海峡大橋"]


def test_numbers_run_on_in_a_continued_conversation() -> None:
    other = {
        "url": "https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
        "title": "Viaduc de Millau — Wikipédia",
        "content": "Le viaduc de Millau culmine à 343 mètres.",
    }
    pages = iter([PAGES, [other, PAGES[0]]])

    def lookup(query: str) -> list[dict[str, Any]]:
        """The next pages."""
        return next(pages)

    first = run(
        Agent(scripted_model(lambda _: ANSWER, tool="lookup"), tools=cite_tools([lookup])), "?"
    )

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == len(first.all_messages()) + 1:
            return ModelResponse(parts=[ToolCallPart("lookup", {"query": "Millau"})])
        return ModelResponse(parts=[TextPart("Millau culmine à 343 mètres [3], Köhlbrand [1].")])

    agent = Agent(FunctionModel(respond), tools=cite_tools([lookup]))
    second = asyncio.run(agent.run("Et Millau ?", message_history=first.all_messages()))
    shown = prompt_text(second.new_messages())
    assert "[sid:3] Viaduc de Millau — Wikipédia" in shown
    assert "[sid:1] Köhlbrandbrücke – Wikipedia" in shown  # found again, same number
    answer = cite_result(second)
    assert answer.text == "Millau culmine à 343 mètres [1], Köhlbrand [2]."
    assert [s.title for s in answer.sources] == [other["title"], PAGES[0]["title"]]
