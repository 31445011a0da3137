"""`CitationMiddleware`: cited answers from agents built with `langchain.agents.create_agent`.

The middleware only translates an agent run into `unicite.cite`'s inputs and its answer back
into the agent's state:

- ``wrap_model_call`` adds the citation instructions to the system prompt;
- ``wrap_tool_call`` reads the sources of each tool result (through the `unicite.sources`
  extractor registry: each search result or retrieved document its own source, the documents
  a retriever returned inside the call included) and leaves them with the ``ToolMessage``;
- ``before_model`` numbers them in the run's ledger (the ``citation_sources`` state key, in
  tool-call order, so the numbers are the same on every run) and rewrites each ``ToolMessage``
  to the numbered form the model reads, ``[sid:N] Title`` and the text, keeping its artifact;
- ``after_agent`` cites the final answer with `unicite.cite` against those numbers, stores
  the `unicite.CitedAnswer` under the ``citations`` state key and publishes the
  ``unicite_citations`` event (see `unicite_langchain.CITATIONS_EVENT`).

This module needs ``langchain>=1`` (``pip install 'unicite-langchain[agents]'``); the rest of
the adapter needs only ``langchain-core``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, Literal

try:
    from langchain.agents.middleware.types import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
        OmitFromInput,
        PrivateStateAttr,
    )
except ImportError as err:  # pragma: no cover - the adapter's own tests run with langchain
    raise ImportError(
        "CitationMiddleware needs langchain>=1: pip install 'unicite-langchain[agents]'"
    ) from err
from langchain_core.callbacks import adispatch_custom_event, dispatch_custom_event
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.config import get_config
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command
from typing_extensions import NotRequired

from unicite import CitedAnswer, CitePolicy, GroundingRequiredError, Source, UsageError, cite
from unicite.exceptions import describe_error
from unicite.markers import InstructionFormat, InstructionStyle
from unicite.sources import ExtractorRegistry, SourceLedger, as_source
from unicite_langchain._capture import collect_retrieved, tool_sources
from unicite_langchain._handler import _origin
from unicite_langchain._messages import from_ai_message
from unicite_langchain._options import citation_policy
from unicite_langchain._prompt import agent_instructions, numbered_result
from unicite_langchain._publish import CITATIONS_EVENT, MIDDLEWARE_KEY, event_data

__all__ = ["CitationMiddleware", "CitationState"]

logger = logging.getLogger("unicite.langchain")

PENDING_KEY = "unicite_sources"
"""``ToolMessage.response_metadata`` key holding a result's sources until they are numbered."""
NUMBERS_KEY = "unicite_sids"
"""``ToolMessage.response_metadata`` key listing the numbers a numbered result shows."""
_SHORT = 300


class CitationState(AgentState[Any]):
    """The agent state `CitationMiddleware` adds to.

    ``citations`` holds the cited final answer of the last run (None when it ended without an
    answer); ``citation_sources`` the sources the model was shown, as plain data: entry ``n-1``
    is the source numbered ``[sid:n]``, for the whole conversation (a checkpointed thread keeps
    its numbers from one run to the next).
    """

    citations: NotRequired[Annotated[CitedAnswer | None, OmitFromInput]]
    citation_sources: NotRequired[Annotated[list[dict[str, Any]], OmitFromInput]]
    citation_notes: NotRequired[Annotated[list[str], PrivateStateAttr]]


class CitationMiddleware(AgentMiddleware[CitationState, Any, Any]):
    """Agent middleware that numbers tool results as sources and cites the final answer.

    Give it to `langchain.agents.create_agent` with plain tools (retriever tools, search
    tools, any tool whose output the `unicite.sources` registry reads). Each search result or
    retrieved document a tool returns becomes its own source, numbered once for the whole run
    (a page found twice keeps its number); the model reads each result as ``[sid:N] Title``
    and its text, and the system prompt asks it to cite ``[N]``. When the agent ends,
    `unicite.cite` cites its final message against those numbers (native provider citations
    first, then markers, then attribution if asked): a number naming no source stays uncited
    and a diagnostic says so. The `unicite.CitedAnswer` goes to the ``citations`` state key,
    to the ``"custom"`` stream as ``{"unicite_citations": data}``, and to callback handlers
    and ``astream_events`` as the ``unicite_citations`` custom event, whose data is
    ``{"run_id": str | None, "origin": str | None, "answer": CitedAnswer}``.

    The numbers come from the state, not from the middleware: one instance serves concurrent
    runs, and a checkpointed conversation keeps numbering where it left off. A checkpointer that
    allows only registered types needs ``("unicite.model", "CitedAnswer")`` in its
    ``allowed_msgpack_modules``. Put the middleware before others that read or rewrite tool
    messages before the model call (summarization, context editing), so they see the numbers.

    Example:
        ```python
        agent = create_agent(model, tools, middleware=[CitationMiddleware()])
        state = agent.invoke({"messages": [{"role": "user", "content": question}]})
        print(unicite.render(state["citations"], "markdown"))
        ```

    Args:
        policy: The `unicite.CitePolicy`; the keyword options below override its fields.
        persistent: A persistent on/off setting (``/set``-style), below ``enabled``.
        registry: The `unicite.sources.ExtractorRegistry` reading tool outputs.
        format: The answer's format for the instructions: ``"markdown"`` or ``"html"``.
        style: The marker style asked for; None for the format's default (``[1]``).
        instructions: Add citation instructions to the system prompt (True), not (False:
            the prompt asks for markers itself), or add this text instead.
        budget_tokens: The most tokens one tool result may take as numbered sources; None
            for no limit.
        prefer: Show each source's full text or its snippet.
        **options: `CitePolicy` fields: ``enabled`` (None follows ``persistent``, then on),
            ``markers``, ``renumber``, ``attribute`` (also a chat model or ``str -> reply``
            callable), ``llm``, ``require`` (``"citations"`` or ``"grounding"``: the run
            fails with `unicite.GroundingRequiredError`, the answer in the error, after the
            answer was published), ``exclude_inline``, ``sources``, ``on_invalid``,
            ``all_supporting``.

    Raises:
        UsageError: An unknown option, or an invalid value.
    """

    state_schema = CitationState

    def __init__(
        self,
        *,
        policy: CitePolicy | None = None,
        persistent: bool | None = None,
        registry: ExtractorRegistry | None = None,
        format: InstructionFormat = "markdown",
        style: InstructionStyle | None = None,
        instructions: bool | str = True,
        budget_tokens: int | None = None,
        prefer: Literal["content", "snippet"] = "content",
        **options: Any,
    ) -> None:
        if registry is not None and not isinstance(registry, ExtractorRegistry):
            raise UsageError("registry must be a unicite.sources.ExtractorRegistry")
        if not isinstance(instructions, (bool, str)):
            raise UsageError(f"instructions must be a bool or a str, got {instructions!r}")
        if budget_tokens is not None and (
            isinstance(budget_tokens, bool)
            or not isinstance(budget_tokens, int)
            or budget_tokens < 0
        ):
            raise UsageError(
                f"budget_tokens must be a non-negative int or None, got {budget_tokens!r}"
            )
        if prefer not in ("content", "snippet"):
            raise UsageError(f"prefer must be 'content' or 'snippet', got {prefer!r}")
        default = agent_instructions(format, style)
        self._instructions = (
            default if instructions is True else instructions if instructions else ""
        )
        self._policy = citation_policy(policy, options, persistent=persistent)
        self._registry = registry
        self._budget = budget_tokens
        self._prefer: Literal["content", "snippet"] = prefer

    # --- settings -------------------------------------------------------------------------------

    @property
    def policy(self) -> CitePolicy:
        """The citation policy the final answer is cited with."""
        return self._policy

    @property
    def enabled(self) -> bool:
        """Whether the middleware does anything (disabled, the agent runs as without it)."""
        return self._policy.enabled

    @property
    def registry(self) -> ExtractorRegistry | None:
        """The extractor registry reading tool outputs (None: the default one)."""
        return self._registry

    @property
    def instructions(self) -> str:
        """What the middleware adds to the system prompt (empty: nothing)."""
        return self._instructions

    # --- the model call: instructions -----------------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Call the model with the citation instructions in its system prompt."""
        return handler(self._instructed(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """`wrap_model_call`, asynchronously."""
        return await handler(self._instructed(request))

    def _instructed(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        text = self._instructions
        if not self.enabled or not text:
            return request
        system = request.system_message
        if system is None:
            message = SystemMessage(text)
        elif isinstance(system.content, str):
            joined = f"{system.content}\n\n{text}" if system.content else text
            message = system.model_copy(update={"content": joined})
        else:
            blocks = [*system.content, {"type": "text", "text": text}]
            message = system.model_copy(update={"content": blocks})
        return request.override(system_message=message)

    # --- tool calls: their sources --------------------------------------------------------------

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool and keep the sources of its result with the ``ToolMessage``."""
        if not self.enabled:
            return handler(request)
        with collect_retrieved() as documents:
            result = handler(request)
        return self._read(request, result, documents)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """`wrap_tool_call`, asynchronously."""
        if not self.enabled:
            return await handler(request)
        with collect_retrieved() as documents:
            result = await handler(request)
        return self._read(request, result, documents)

    def _read(
        self, request: ToolCallRequest, result: ToolMessage | Command[Any], documents: list[Any]
    ) -> ToolMessage | Command[Any]:
        """The result with its sources (as plain data) in its response metadata.

        A tool returning a ``Command`` updates the state itself: it is passed on unread.
        """
        if not isinstance(result, ToolMessage):
            return result
        call = request.tool_call
        name = result.name or str(call.get("name") or "tool")
        notes: list[str] = []
        sources: list[Source] = []
        if result.status == "error":
            notes.append(f"{name} failed: {_short(result.text)}")
        else:
            arguments = call.get("args")
            try:
                sources = tool_sources(
                    name,
                    result,
                    documents,
                    notes,
                    call_id=call.get("id"),
                    arguments=arguments if isinstance(arguments, Mapping) else None,
                    registry=self._registry,
                )
            except Exception as err:
                notes.append(f"{name}: its result could not be read ({describe_error(err)})")
        pending = {"sources": _dump(sources), "notes": notes}
        metadata = {**result.response_metadata, PENDING_KEY: pending}
        return result.model_copy(update={"response_metadata": metadata})

    # --- before each model call: the numbers ----------------------------------------------------

    def before_model(self, state: CitationState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Number the sources of new tool results and show the model the numbered results."""
        if not self.enabled:
            return None
        return _Numbering(state).number(self._budget, self._prefer)

    async def abefore_model(
        self, state: CitationState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """`before_model`, asynchronously."""
        return self.before_model(state, runtime)

    # --- the end of the run: the cited answer ---------------------------------------------------

    def after_agent(self, state: CitationState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Cite the final answer, store it under ``citations`` and publish it."""
        if not self.enabled:
            return None
        update, answer, failure = self._finish(state)
        if answer is not None:
            data = self._publish(answer, runtime)
            try:
                dispatch_custom_event(CITATIONS_EVENT, data)
            except Exception as err:
                logger.debug("unicite-langchain: the custom event failed: %s", describe_error(err))
        if failure is not None:
            raise failure
        return update

    async def aafter_agent(
        self, state: CitationState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """`after_agent`, asynchronously."""
        if not self.enabled:
            return None
        update, answer, failure = self._finish(state)
        if answer is not None:
            data = self._publish(answer, runtime)
            try:
                await adispatch_custom_event(CITATIONS_EVENT, data)
            except Exception as err:
                logger.debug("unicite-langchain: the custom event failed: %s", describe_error(err))
        if failure is not None:
            raise failure
        return update

    def _finish(
        self, state: CitationState
    ) -> tuple[dict[str, Any], CitedAnswer | None, GroundingRequiredError | None]:
        """The state update, the cited answer (None without one) and a ``require`` failure."""
        numbering = _Numbering(state)
        update = numbering.number(self._budget, self._prefer) or {}
        messages: list[AnyMessage] = numbering.messages
        notes = numbering.notes
        update["citation_notes"] = []
        message = _final_answer(messages)
        if message is None:
            update["citations"] = None
            return update, None, None
        failure: GroundingRequiredError | None = None
        try:
            answer = cite(from_ai_message(message), numbering.shown, policy=self._policy)
        except GroundingRequiredError as err:
            if err.answer is None:
                raise
            answer, failure = err.answer, err
        except Exception as err:
            # The agent's answer stands, uncited: a failure to cite never fails the agent.
            note = f"unicite-langchain: the answer could not be cited: {describe_error(err)}"
            logger.debug(note)
            answer = CitedAnswer(text=str(message.text), diagnostics=[note])
        run_id = _run_id()
        answer = answer.model_copy(
            update={
                "diagnostics": list(dict.fromkeys([*answer.diagnostics, *notes])),
                "extras": {
                    **answer.extras,
                    "citation_origin": _origin(answer),
                    "langchain_run_id": run_id,
                    MIDDLEWARE_KEY: self.name,
                },
            }
        )
        if numbering.sourced_this_turn() and not answer.citations:
            logger.warning(
                "%s: %d sources were captured but no citation could be extracted",
                self.name,
                len(numbering.shown),
            )
        update["citations"] = answer
        if failure is not None:
            failure = GroundingRequiredError(
                str(failure), provider=failure.provider, reason=failure.reason, answer=answer
            )
        return update, answer, failure

    @staticmethod
    def _publish(answer: CitedAnswer, runtime: Runtime[Any]) -> dict[str, object]:
        """The event's data, written to the graph's ``"custom"`` stream too."""
        data = event_data(answer.extras.get("langchain_run_id"), answer)
        try:
            runtime.stream_writer({CITATIONS_EVENT: data})
        except Exception as err:
            logger.debug("unicite-langchain: the custom stream failed: %s", describe_error(err))
        return data


class _Numbering:
    """The run's numbered sources (from the state) and the results still to number."""

    def __init__(self, state: Mapping[str, Any]) -> None:
        self.messages: list[AnyMessage] = list(state.get("messages") or [])
        self.notes: list[str] = list(state.get("citation_notes") or [])
        # Entry n-1 is the source shown as [sid:n]; the ledger only recognises a source seen
        # before (by id, URL or text), so a result repeating it shows its number again.
        self.sources: list[Source] = [
            as_source(item) for item in state.get("citation_sources") or []
        ]
        self._ledger = SourceLedger()
        self._numbers: dict[str, int] = {}
        for number, source in enumerate(self.sources, start=1):
            self._numbers.setdefault(self._ledger.add(source), number)

    @property
    def shown(self) -> dict[int, Source]:
        """The numbers shown to the model and their sources, as `unicite.cite` reads them."""
        return dict(enumerate(self.sources, start=1))

    def number(
        self, budget: int | None, prefer: Literal["content", "snippet"]
    ) -> dict[str, Any] | None:
        """Number the sources of results read since the last call; None when there are none.

        Results are numbered in the order the state holds them (the order of the model's tool
        calls), so a run numbers the same way however its tools interleave.
        """
        rewritten: list[AnyMessage] = []
        for index, message in enumerate(self.messages):
            if not isinstance(message, ToolMessage):
                continue
            pending = message.response_metadata.get(PENDING_KEY)
            if not isinstance(pending, Mapping):
                continue
            listed = self._add([as_source(item) for item in pending.get("sources") or []])
            self.notes.extend(str(note) for note in pending.get("notes") or [])
            metadata = {k: v for k, v in message.response_metadata.items() if k != PENDING_KEY}
            update: dict[str, Any] = {"response_metadata": metadata}
            if listed:
                metadata[NUMBERS_KEY] = [number for number, _ in listed]
                update["content"] = _numbered_content(
                    message.content,
                    numbered_result(
                        listed,
                        message.name or "tool",
                        message.text,
                        budget_tokens=budget,
                        prefer=prefer,
                    ),
                )
            message = message.model_copy(update=update)
            self.messages[index] = message
            rewritten.append(message)
        if not rewritten:
            return None
        return {
            "messages": rewritten,
            "citation_sources": _dump(self.sources),
            "citation_notes": self.notes,
        }

    def _add(self, sources: Sequence[Source]) -> list[tuple[int, Source]]:
        """Give each source its number (a known one keeps its own); ``(number, source)``."""
        listed: dict[int, Source] = {}
        for source in sources:
            kept = self._ledger.add(source)
            number = self._numbers.get(kept)
            merged = self._ledger.get(kept) or source
            if number is None:
                self.sources.append(merged)
                number = self._numbers[kept] = len(self.sources)
            else:
                self.sources[number - 1] = merged
            listed.setdefault(number, merged)
        return list(listed.items())

    def sourced_this_turn(self) -> bool:
        """Whether a tool result since the user's last message listed sources."""
        for message in reversed(self.messages):
            if isinstance(message, HumanMessage):
                return False
            if isinstance(message, ToolMessage) and message.response_metadata.get(NUMBERS_KEY):
                return True
        return False


def _final_answer(messages: Sequence[AnyMessage]) -> AIMessage | None:
    """The agent's final answer: its last message, when the model wrote it with no tool call."""
    if not messages:
        return None
    last = messages[-1]
    if not isinstance(last, AIMessage) or last.tool_calls:
        return None
    if not last.text and (last.response_metadata or {}).get("grounding_metadata") is None:
        return None
    return last


def _numbered_content(content: str | list[Any], numbered: str) -> str | list[Any]:
    """A tool message's content with its text replaced by the numbered sources.

    Blocks that are not text (images, files) stay, after the numbered text.
    """
    if isinstance(content, str):
        return numbered
    kept = [
        block
        for block in content
        if not isinstance(block, str)
        and not (isinstance(block, Mapping) and block.get("type") == "text")
    ]
    return [{"type": "text", "text": numbered}, *kept] if kept else numbered


def _dump(sources: Sequence[Source]) -> list[dict[str, Any]]:
    """Sources as plain JSON data (what any checkpointer stores), read back by `as_source`.

    ``raw`` (the object a tool returned, kept for forensics) is left out: the state keeps what
    cites and renders.
    """
    if not sources:
        return []
    plain = [source.model_copy(update={"raw": None}) for source in sources]
    data: list[dict[str, Any]] = json.loads(CitedAnswer(sources=plain).to_json())["sources"]
    return data


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SHORT else text[: _SHORT - 1] + "…"


def _run_id() -> str | None:
    """The id of the run the middleware's node runs in (its step in the agent's run)."""
    try:
        callbacks = get_config().get("callbacks")
    except Exception:
        return None
    parent = getattr(callbacks, "parent_run_id", None)
    return None if parent is None else str(parent)
