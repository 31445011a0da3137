"""OpenAI Agents SDK objects read duck-typed (by class name and attributes), without the SDK.

Stand-ins with the SDK's class names and attributes: a run result holds agents (with tools and
callables) that must not be dumped; only the answering agent's name and model are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from unicite.providers import collect_stream, extract, to_data

TEXT = "Der Rheinfall ist 23 m hoch. ([de.wikipedia.org](https://de.wikipedia.org/wiki/Rheinfall))"
LINK = "([de.wikipedia.org](https://de.wikipedia.org/wiki/Rheinfall))"
MESSAGE = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [
        {
            "type": "output_text",
            "text": TEXT,
            "annotations": [
                {
                    "type": "url_citation",
                    "url": "https://de.wikipedia.org/wiki/Rheinfall",
                    "title": "Rheinfall – Wikipedia",
                    "start_index": TEXT.index(LINK),
                    "end_index": len(TEXT),
                }
            ],
        }
    ],
}


class Unreadable:
    """What an agent holds that is no data: dumping it fails."""

    def model_dump(self, **kwargs: Any) -> Any:
        raise AssertionError("the agent was dumped")


@dataclass
class Agent:
    name: str
    model: str
    tools: list[Any] = field(default_factory=lambda: [Unreadable()])


@dataclass
class ModelResponse:
    output: list[Any]
    response_id: str | None


@dataclass
class RunResult:
    new_items: list[Any]
    raw_responses: list[ModelResponse]
    final_output: Any
    last_agent: Agent


@dataclass
class AgentUpdatedStreamEvent:
    new_agent: Agent
    type: str = "agent_updated_stream_event"


@dataclass
class RawResponsesStreamEvent:
    data: Any
    type: str = "raw_response_event"


@dataclass
class RunItemStreamEvent:
    name: str
    item: Any
    type: str = "run_item_stream_event"


def test_a_run_result_is_read_without_dumping_its_agents() -> None:
    agent = Agent("Wanderführer", "gpt-5.2")
    result = RunResult([Unreadable()], [ModelResponse([MESSAGE], "resp_1")], TEXT, agent)
    assert to_data(result) == {
        "object": "agents.run_result",
        "agent": "Wanderführer",
        "model": "gpt-5.2",
        "responses": [{"id": "resp_1", "output": [MESSAGE]}],
    }
    answer = extract(result, strict=True)
    assert (answer.provider, answer.model, answer.text) == ("openai", "gpt-5.2", TEXT)
    [citation] = answer.citations
    assert citation.text == "Der Rheinfall ist 23 m hoch."
    assert answer.extras["agent"] == "Wanderführer"


def test_stream_events_are_read_without_dumping_their_agents() -> None:
    agent = Agent("Wanderführer", "gpt-5.2")
    response = {"id": "resp_1", "object": "response", "output": [MESSAGE], "model": "gpt-5.2"}
    events = [
        AgentUpdatedStreamEvent(agent),
        RawResponsesStreamEvent(
            {"type": "response.created", "response": {**response, "output": []}}
        ),
        RawResponsesStreamEvent({"type": "response.completed", "response": response}),
        RunItemStreamEvent("message_output_created", Unreadable()),
    ]
    result = RunResult([], [ModelResponse([MESSAGE], "resp_1")], TEXT, agent)
    assert collect_stream(events, strict=True) == extract(result, strict=True)
    assert to_data(events[3]) == {
        "type": "run_item_stream_event",
        "name": "message_output_created",
        "item": {"type": None},
    }
