"""`cite_result`: the `CitedAnswer` of a finished agent run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.result import StreamedRunResult

try:
    from pydantic_ai.result import StreamedRunResultSync
except ImportError:  # pydantic-ai before run_stream_sync

    class StreamedRunResultSync:  # type: ignore[no-redef]
        """Stands for a class this pydantic-ai does not have."""


import unicite
from unicite import CitedAnswer, CitePolicy, UsageError
from unicite_pydantic_ai._native import native_answer
from unicite_pydantic_ai._sources import shown_sources

__all__ = ["answer_of", "cite_result", "final_text"]


def _messages(result: Any) -> list[ModelMessage]:
    all_messages = getattr(result, "all_messages", None)
    if not callable(all_messages):
        raise UsageError(
            f"cite_result takes an agent run result (AgentRunResult, StreamedRunResult), "
            f"got {type(result).__name__}"
        )
    messages = all_messages()
    if not isinstance(messages, list):
        raise UsageError(f"{type(result).__name__}.all_messages() returned no message list")
    return messages


def settled(result: Any) -> Any:
    """A streamed run's `AgentRunResult`; any other result as it is."""
    if isinstance(result, StreamedRunResultSync):
        result = getattr(result, "_streamed_run_result", result)
    if isinstance(result, StreamedRunResult):
        if not hasattr(type(result), "result"):  # pydantic-ai before 2.44
            if not getattr(result, "is_complete", False):
                raise UsageError("the streamed run has not finished")
            return _Finished(result.all_messages())
        try:
            return result.result
        except UserError as err:
            raise UsageError(f"the streamed run has not finished: {err}") from err
    return result


class _Finished:
    """A finished stream's messages, its output being its final response's text."""

    output: object = None

    def __init__(self, messages: list[ModelMessage]) -> None:
        self._messages = messages

    def all_messages(self) -> list[ModelMessage]:
        return self._messages


def _response(messages: Sequence[ModelMessage]) -> ModelResponse | None:
    return next((m for m in reversed(messages) if isinstance(m, ModelResponse)), None)


def final_text(output: object, response: ModelResponse | None) -> str:
    """The answer text: the output when it is text, else the final response's text."""
    if isinstance(output, str):
        return output
    return (response.text or "") if response is not None else ""


def answer_of(
    text: str,
    messages: Sequence[ModelMessage],
    sources: object,
    policy: CitePolicy,
) -> CitedAnswer:
    """`unicite.cite` on the run's text, native citations and the sources it was shown."""
    notes: list[str] = []
    shown = shown_sources(messages, notes) if sources is None else sources
    answer: object = text
    if policy.enabled:
        response = _response(messages)
        native = native_answer(response, text, notes) if response is not None else None
        if native is not None and native.citations:
            answer = native
    cited = unicite.cite(answer, shown, policy=policy)  # type: ignore[arg-type]
    if notes and policy.enabled:
        cited = cited.model_copy(
            update={"diagnostics": [*cited.diagnostics, *dict.fromkeys(notes)]}
        )
    return cited


def cite_result(
    result: Any,
    sources: object = None,
    *,
    policy: CitePolicy | None = None,
    **options: Any,
) -> CitedAnswer:
    """The cited answer of a finished pydantic-ai run, as `unicite.cite` decides it.

    Native citations are read from the final model response (what pydantic-ai keeps of the
    provider's payload: OpenAI ``url_citation`` annotations, Anthropic text block citations,
    Gemini grounding supports); ``[n]`` markers are read against the sources the run's tools
    returned: the numbers `cite_tools` showed, else each source in the order the run got them
    (every retrieved document its own source).

    Args:
        result: An `AgentRunResult`, or a `StreamedRunResult` whose stream has finished.
        sources: What the model was shown, as `unicite.cite` takes it, instead of the sources
            read from the run's tool returns.
        policy: A `unicite.CitePolicy`; defaults to ``CitePolicy()``.
        **options: `unicite.CitePolicy` fields overriding ``policy``'s.

    Returns:
        The cited answer; what could not be read is in its ``diagnostics``.

    Raises:
        UsageError: `result` is not a run result, or an option is invalid.
    """
    if policy is not None and not isinstance(policy, CitePolicy):
        raise UsageError(f"policy must be a CitePolicy, got {type(policy).__name__}")
    policy = (policy or CitePolicy()).replace(**options)
    result = settled(result)
    messages = _messages(result)
    output = getattr(result, "output", None)
    if output is None and not hasattr(result, "output"):
        raise UsageError(f"{type(result).__name__} has no output")
    return answer_of(final_text(output, _response(messages)), messages, sources, policy)
