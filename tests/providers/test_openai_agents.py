"""OpenAI Agents SDK runs: a real ``Agent`` and ``Runner`` over an ``AsyncOpenAI`` client
replaying cassettes (written from the Responses API's documented format), read by `extract`
(``RunResult``, a finished ``RunResultStreaming``) and by `collect_stream` /
`acollect_stream` (``result.stream_events()``).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

agents = pytest.importorskip("agents")
openai = pytest.importorskip("openai")

from agents import (  # noqa: E402
    Agent,
    FileSearchTool,
    ModelSettings,
    OpenAIResponsesModel,
    Runner,
    WebSearchTool,
    function_tool,
)
from providers._fixtures import cassette_bodies, sse_events  # noqa: E402
from providers.contract import ProviderContract  # noqa: E402

from unicite import CitedAnswer  # noqa: E402
from unicite.providers import (  # noqa: E402
    StreamCollector,
    acollect_stream,
    collect_stream,
    extract,
    to_data,
)

API_KEY = os.getenv("OPENAI_API_KEY", "mock-api-key")
ZURICH = "Wie spät ist es in Zürich, und wie hoch ist der Üetliberg?"
INARI = "伏見稲荷の千本鳥居について教えて。"


class Loop:
    """The thread's event loop (`Runner.run_sync` runs on it) and the clients made on it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.clients: list[Any] = []

    def model(self) -> Any:
        client = openai.AsyncOpenAI(api_key=API_KEY)
        self.clients.append(client)
        return OpenAIResponsesModel(model="gpt-5.2", openai_client=client)

    def run(self, coroutine: Any) -> Any:
        return self.loop.run_until_complete(coroutine)

    def close(self) -> None:
        for client in self.clients:
            self.run(client.close())
        self.run(self.loop.shutdown_asyncgens())
        self.loop.close()


@pytest.fixture
def loop() -> Iterator[Loop]:
    agents.set_tracing_disabled(True)
    harness = Loop()
    asyncio.set_event_loop(harness.loop)
    try:
        yield harness
    finally:
        harness.close()
        asyncio.set_event_loop(None)


@function_tool
def local_time(city: str) -> str:
    """Die Uhrzeit in einer Stadt."""
    return "14:05"


def zurich_agent(loop: Loop) -> Any:
    return Agent(
        name="Reiseführer",
        instructions="Antworte kurz und nenne deine Quellen.",
        model=loop.model(),
        tools=[WebSearchTool(), local_time],
        model_settings=ModelSettings(response_include=["web_search_call.action.sources"]),
    )


def inari_agents(loop: Loop) -> Any:
    guide = Agent(
        name="travel_guide",
        instructions="日本語で答え、出典を示してください。",
        model=loop.model(),
        tools=[WebSearchTool()],
    )
    return Agent(
        name="triage", instructions="旅行の質問は案内係へ。", model=loop.model(), handoffs=[guide]
    )


def cited(answer: CitedAnswer) -> list[tuple[str, str, str | None]]:
    """(claim, marker, url) of each citation."""
    out = []
    for c in answer.citations:
        marker = answer.text[c.marker_span[0] : c.marker_span[1]] if c.marker_span else ""
        out.append((c.text, marker, answer.source(c.source_ids[0]).url))
    return out


WIKI = "https://de.wikipedia.org/wiki/Uetliberg?utm_source=openai"
ZH = "https://www.zuerich.com/de/besuchen/natur/uetliberg?utm_source=openai"


def check_zurich(answer: CitedAnswer, final_output: str) -> None:
    assert answer.provider == "openai"
    assert answer.model == "gpt-5.2"
    # The answer is the run's final output: the last message, not the one before the tool call.
    assert answer.text == final_output
    assert cited(answer) == [
        (
            "Der Üetliberg ist mit 869 m der Hausberg der Stadt.",
            f"([de.wikipedia.org]({WIKI}))",
            WIKI,
        ),
        (
            "Bei klarem Wetter reicht der Blick vom Aussichtsturm bis zu den Glarner Alpen 🏔️.",
            f"([zuerich.com]({ZH}))",
            ZH,
        ),
    ]
    # The web search's third result is a source no annotation cites.
    assert [s.url for s in answer.sources] == [
        WIKI,
        ZH,
        "https://www.uetliberg.ch/?utm_source=openai",
    ]
    assert answer.extras["agent"] == "Reiseführer"
    assert answer.extras["earlier_messages"] == [
        "Ich schaue kurz nach, wie spät es in Zürich ist …"
    ]
    assert answer.extras["tool_calls"] == 1
    assert answer.extras["web_search_queries"] == ["Üetliberg Höhe Aussicht"]
    assert answer.diagnostics == []


@pytest.mark.vcr
def test_run_sync_with_hosted_and_function_tools(loop: Loop) -> None:
    result = Runner.run_sync(zurich_agent(loop), ZURICH)
    answer = extract(result, strict=True)
    check_zurich(answer, result.final_output)
    # The run as data names its agent and holds its model calls, not the agent objects.
    data = to_data(result)
    assert data["object"] == "agents.run_result"
    assert (data["agent"], data["model"], len(data["responses"])) == ("Reiseführer", "gpt-5.2", 2)
    # Logged as JSON and read back, it is the same answer.
    assert extract(json.dumps(data, ensure_ascii=False)) == answer


@pytest.mark.vcr
def test_run_streamed_equals_the_run(loop: Loop) -> None:
    async def run() -> tuple[Any, CitedAnswer, list[tuple[str, Any]], list[Any]]:
        result = Runner.run_streamed(zurich_agent(loop), ZURICH)
        collector = StreamCollector(strict=True)
        events: list[Any] = []
        announced = []
        async for event in result.stream_events():
            events.append(event)
            for item in collector.feed(event):
                announced.append((getattr(event.data, "type", ""), item.citation))
        return result, collector.result(), announced, events

    result, answer, announced, events = loop.run(run())
    assert result.is_complete
    assert answer == extract(result, strict=True)
    check_zurich(answer, result.final_output)
    # Announced once the last model call completed: the citations of the final answer.
    assert [c for _, c in announced] == answer.citations
    assert {kind for kind, _ in announced} == {"response.completed"}
    # The events kept and read again, as a list, give the same answer.
    assert collect_stream(events, strict=True) == answer


@pytest.mark.vcr
def test_file_search_results_are_the_sources(loop: Loop) -> None:
    agent = Agent(
        name="Atención al cliente",
        instructions="Responde con las políticas de la tienda.",
        model=loop.model(),
        tools=[
            FileSearchTool(vector_store_ids=["vs_68c1f0e2a9b84d7f"], include_search_results=True)
        ],
    )
    result = Runner.run_sync(agent, "¿Cómo devuelvo un pedido?")
    answer = extract(result, strict=True)
    assert answer.text == result.final_output
    assert [(c.text, answer.source(c.source_ids[0]).title) for c in answer.citations] == [
        ("Tienes 30 días naturales para devolver un artículo.", "política_de_devoluciones.pdf"),
        (
            "Los gastos de envío corren a tu cargo, salvo si el producto llegó dañado.",
            "envíos_y_gastos.md",
        ),
    ]
    first = answer.sources[0]
    assert (first.kind, first.provider_id) == ("file", "file-8Qm2Lx7Vb3Nc5Rt1Yp9Kd4")
    assert first.snippet == (
        "Dispones de 30 días naturales desde la entrega para devolver cualquier artículo."
    )
    assert answer.extras["file_search_queries"] == [
        "plazo de devolución",
        "gastos de envío devolución",
    ]
    assert "earlier_messages" not in answer.extras


JW = "https://ja.wikipedia.org/wiki/%E4%BC%8F%E8%A6%8B%E7%A8%B2%E8%8D%B7%E5%A4%A7%E7%A4%BE?utm_source=openai"
JI = "https://inari.jp/about/?utm_source=openai"


def check_inari(answer: CitedAnswer, final_output: str) -> None:
    assert answer.text == final_output
    assert answer.extras["agent"] == "travel_guide"
    # The triage agent's words before its handoff are not the answer.
    assert answer.extras["earlier_messages"] == ["旅行ガイドにおつなぎします。"]
    assert [(claim, url) for claim, _, url in cited(answer)] == [
        ("伏見稲荷大社の千本鳥居は、奉納された約一万基の鳥居が山頂まで続く参道です。", JW),
        ("お山めぐりは約2時間かかるので、歩きやすい靴がおすすめです⛩️。", JI),
    ]
    # The handoff is a function call: counted with the run's items, not as a search.
    assert answer.extras["tool_calls"] == 1


@pytest.mark.vcr
def test_handoff_answer_is_the_last_agents(loop: Loop) -> None:
    result = Runner.run_sync(inari_agents(loop), INARI)
    assert result.last_agent.name == "travel_guide"
    check_inari(extract(result, strict=True), result.final_output)


@pytest.mark.vcr
def test_handoff_streamed(loop: Loop) -> None:
    async def run() -> tuple[Any, CitedAnswer]:
        result = Runner.run_streamed(inari_agents(loop), INARI)
        return result, await acollect_stream(result.stream_events(), strict=True)

    result, answer = loop.run(run())
    check_inari(answer, result.final_output)
    assert answer == extract(result, strict=True)


# --- run results as data --------------------------------------------------------------------


def test_a_run_whose_last_call_holds_no_message_says_so() -> None:
    call = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "lookup",
        "arguments": "{}",
    }
    answer = extract(
        {"object": "agents.run_result", "agent": "a", "responses": [{"id": "r1", "output": [call]}]}
    )
    assert answer.text == ""
    assert answer.diagnostics == [
        "run result: its last model call holds no message (the final output came from a tool?): "
        "no answer text"
    ]


def test_a_damaged_run_result_never_raises() -> None:
    for responses in (None, 7, [None, {"output": 3}], [{"id": 5, "output": [None]}]):
        answer = extract({"object": "agents.run_result", "responses": responses})
        assert answer.provider == "openai"
        assert answer.diagnostics


# --- the contract, on runs as data -------------------------------------------------------------


def run_data(cassette: str, agent: str) -> tuple[dict[str, Any], list[Any]]:
    """A run as `to_data` gives it, from a cassette's model calls; and its stream as data."""
    bodies = cassette_bodies(f"providers/test_openai_agents/{cassette}.yaml")
    calls = [sse_events(body) if isinstance(body, str) else body for body in bodies]
    finals = [call[-1]["response"] if isinstance(call, list) else call for call in calls]
    run = {
        "object": "agents.run_result",
        "agent": agent,
        "model": "gpt-5.2",
        "responses": [{"id": r["id"], "output": r["output"]} for r in finals],
    }
    events: list[Any] = [
        {"type": "agent_updated_stream_event", "new_agent": {"name": agent, "model": "gpt-5.2"}}
    ]
    for call in calls:
        if isinstance(call, list):
            events.extend({"type": "raw_response_event", "data": event} for event in call)
    return run, events


class TestRunContract(ProviderContract):
    provider = "openai"
    mutation_budget = 150

    def final_cases(self) -> dict[str, Any]:
        return {
            "run-sync": run_data("test_run_sync_with_hosted_and_function_tools", "Reiseführer")[0],
            "file-search": run_data("test_file_search_results_are_the_sources", "Atención")[0],
        }

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        run, events = run_data("test_run_streamed_equals_the_run", "Reiseführer")
        return {"run-streamed": (events, run)}
