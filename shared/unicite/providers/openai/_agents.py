"""OpenAI Agents SDK runs, as the Responses response the OpenAI reader reads.

A run (``Runner.run`` / ``run_sync``, or ``Runner.run_streamed`` once its events are read) calls
the model once per turn, across the agents of a handoff chain; `unicite._data.to_data` turns its
result into ``{"object": "agents.run_result", "agent": name, "model": name, "responses": [{"id",
"output"}, ...]}`` (``raw_responses``: each model call's Responses output items, in order), and
a streamed run's events carry the same responses (``raw_response_event``) and agents
(``agent_updated_stream_event``), so both read alike.

**The answer** is the run's final output: the last message item of the run's last model call,
which is what the SDK takes ``final_output`` from (the text of that message's parts). Messages
of earlier turns (an agent saying it will search, a triage agent handing off) are not the
answer: their texts are kept in ``extras["earlier_messages"]``, in order. When the last call
holds no message (a run whose final output came from a tool), the answer text is empty and a
diagnostic says so; a last call that also asks for function calls (a run stopped early, or a
stream cut between calls) is read with a diagnostic too.

**Sources** are the items of every model call that are not messages, in order: the hosted
``web_search_call`` (its ``action.sources``) and ``file_search_call`` (its ``results``, when
the agent asked for them) of every agent of the run, and function calls (which hold none); the
answer's ``url_citation`` / ``file_citation`` annotations cite them as in any Responses answer.
``extras["agent"]`` names the agent that answered (the last one of a handoff chain), and
``answer.model`` is its model's name as the agent gives it (the run keeps no response's own).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "AGENT_EVENTS",
    "RUN_OBJECT",
    "is_run",
    "run_response",
    "settles_run",
]

RUN_OBJECT = "agents.run_result"
"""The ``object`` of a run result as `unicite._data.to_data` gives it."""

AGENT_EVENTS = frozenset(
    {"raw_response_event", "run_item_stream_event", "agent_updated_stream_event"}
)
"""The types of the Agents SDK's stream events, as data."""

# Items a model call can end with and still be the run's last: the SDK runs nothing for them.
_FINAL_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "web_search_call",
        "file_search_call",
        "code_interpreter_call",
        "image_generation_call",
        "mcp_call",
        "mcp_list_tools",
    }
)


def is_run(data: Mapping[str, Any]) -> bool:
    """Whether `data` is an Agents SDK run result (as `to_data` gives it)."""
    return data.get("object") == RUN_OBJECT


def _message_text(item: Mapping[str, Any]) -> str:
    content = item.get("content")
    parts = content if isinstance(content, list) else []
    return "".join(
        p["text"]
        for p in parts
        if isinstance(p, Mapping) and p.get("type") == "output_text" and isinstance(p["text"], str)
    )


def run_response(
    data: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """The Responses response a run adds up to, the run's extras, and its diagnostics.

    See the module doc: every non-message item of every call in order, then the run's last
    message. ``id`` is the last call's response id.
    """
    notes: list[str] = []
    responses = data.get("responses")
    if not isinstance(responses, list):
        notes.append("run result: responses is not a list")
        responses = []
    items: list[Any] = []
    messages: list[tuple[int, Mapping[str, Any]]] = []
    last_id: str | None = None
    for n, call in enumerate(responses):
        if not isinstance(call, Mapping):
            notes.append(f"run result.responses[{n}]: expected an object")
            continue
        response_id = call.get("id")
        last_id = response_id if isinstance(response_id, str) else None
        output = call.get("output")
        if not isinstance(output, list):
            notes.append(f"run result.responses[{n}].output: expected a list")
            continue
        for item in output:
            if isinstance(item, Mapping) and item.get("type") == "message":
                messages.append((n, item))
            else:
                items.append(item)
    final: Mapping[str, Any] | None = None
    if messages and messages[-1][0] == len(responses) - 1:
        final = messages.pop()[1]
    elif not responses:
        notes.append("run result: no model call: no answer text")
    else:
        notes.append(
            "run result: its last model call holds no message (the final output came from a "
            "tool?): no answer text"
        )
    last = responses[-1] if responses else None
    if final is not None and isinstance(last, Mapping) and not settles_run(last):
        notes.append(
            "run result: its last model call also asks for tools the agent runs: the run "
            "stopped before its final output (the answer is that call's message)"
        )
    response: dict[str, Any] = {"object": "response", "output": [*items]}
    if final is not None:
        response["output"].append(final)
    if last_id is not None:
        response["id"] = last_id
    model = data.get("model")
    if isinstance(model, str):
        response["model"] = model
    earlier = [_message_text(item) for _, item in messages]
    extras: dict[str, Any] = {}
    agent = data.get("agent")
    if isinstance(agent, str):
        extras["agent"] = agent
    if any(earlier):
        extras["earlier_messages"] = [text for text in earlier if text]
    return response, extras, notes


def settles_run(response: Mapping[str, Any]) -> bool:
    """Whether a model call's completed response ends the run.

    It does when it has a message and nothing the SDK runs afterwards (no function, computer
    or shell call, no approval request).
    """
    output = response.get("output")
    if not isinstance(output, list):
        return False
    kinds = [item.get("type") if isinstance(item, Mapping) else None for item in output]
    return "message" in kinds and all(kind in _FINAL_ITEMS for kind in kinds)
