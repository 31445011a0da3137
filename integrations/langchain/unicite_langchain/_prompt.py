"""The prompt side: numbered sources and citation instructions in a LangChain chat prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda

from unicite import Source, UsageError
from unicite.markers import InstructionFormat, InstructionStyle, citation_instructions
from unicite.sources import SourceLedger, build_digest, from_tool_output
from unicite_langchain._capture import read_documents
from unicite_langchain._context import run_ledgers

__all__ = [
    "AGENT_SOURCES_NOTE",
    "DEFAULT_SYSTEM_PROMPT",
    "agent_instructions",
    "citation_prompt",
    "number_sources",
    "numbered_result",
]

DEFAULT_SYSTEM_PROMPT = "Answer the question using only the sources below."
"""The opening of `citation_prompt`'s system message unless another is given."""


AGENT_SOURCES_NOTE = (
    "Your sources are the results of your tool calls: each result is listed under a label "
    "[sid:N], and N stays the same for the whole conversation."
)
"""Where an agent finds the sources the citation instructions speak of."""


def agent_instructions(
    format: InstructionFormat = "markdown", style: InstructionStyle | None = None
) -> str:
    """`unicite.markers.citation_instructions` for an agent, whose sources are its tool results.

    Raises:
        UsageError: A JSON format, or a style the format does not have.
    """
    if format == "json":
        raise UsageError("agents write text answers; use format='markdown' or 'html'")
    return f"{citation_instructions(format, style)}\n\n{AGENT_SOURCES_NOTE}"


def numbered_result(
    shown: Sequence[tuple[int, Source]],
    tool_name: str,
    content: Any,
    *,
    ledger: SourceLedger | None = None,
    budget_tokens: int | None = None,
    prefer: Literal["content", "snippet"] = "content",
) -> Any:
    """What a model sees of a tool result whose sources are `shown`, each with its number.

    Each source is listed as ``[sid:N] Title`` and its text (`unicite.sources.build_digest`),
    N the number it is cited by, in the tool's order (with ``budget_tokens``, in number order
    unless the numbers are `ledger`'s sids: the budget is shared over one digest); plain text
    read as one ``"tool"`` source is shown as it is under its number. A result with no
    sources is `content` unchanged.
    """
    if not shown:
        return content
    if len(shown) == 1 and isinstance(content, str) and shown[0][1].kind == "tool":
        return f"[sid:{shown[0][0]}] {tool_name}\n{content}"
    if ledger is not None:
        budget = (1 << 40) if budget_tokens is None else budget_tokens
        listed = [source for _, source in shown]
        return build_digest(listed, budget, prefer, ledger=ledger, tokenizer="estimate")
    if budget_tokens is not None:
        return build_digest(dict(shown), budget_tokens, prefer, tokenizer="estimate")
    return "\n\n".join(
        build_digest({number: source}, 1 << 40, prefer, tokenizer="estimate")
        for number, source in shown
    )


def _escape(text: str) -> str:
    """Text placed in an f-string prompt template literally."""
    return text.replace("{", "{{").replace("}", "}}")


def citation_prompt(
    system: str = DEFAULT_SYSTEM_PROMPT,
    human: str = "{question}",
    *,
    sources_key: str = "sources",
    format: InstructionFormat = "markdown",
    style: InstructionStyle | None = None,
    usage: bool = False,
) -> ChatPromptTemplate:
    """A chat prompt asking the model to cite numbered sources with markers unicite reads back.

    The system message is ``system``, then `unicite.markers.citation_instructions`, then the
    ``{sources}`` variable; fill it with `number_sources`, which numbers the sources as the
    `CitationCallbackHandler` will read the markers.

    Example:
        ```python
        chain = (
            {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
            | citation_prompt()
            | model
            | StrOutputParser()
        )
        chain.invoke("…", config={"callbacks": [handler]})
        ```

    Args:
        system: The system message's opening; a template (its ``{variables}`` are inputs).
        human: The human message template.
        sources_key: The input variable holding the numbered sources.
        format: ``"markdown"`` or ``"html"`` answers (see `citation_instructions`).
        style: The marker style; None for the format's default (``[1]`` for Markdown).
        usage: Also ask for a final ``[[USAGE:…]]`` line listing the sources used.

    Raises:
        UsageError: Bad arguments (a JSON format, an unknown style, an empty key).
    """
    if not isinstance(sources_key, str) or not sources_key.isidentifier():
        raise UsageError(f"sources_key must be an identifier, got {sources_key!r}")
    if format == "json":
        raise UsageError("citation_prompt writes text answers; use format='markdown' or 'html'")
    instructions = citation_instructions(format, style, usage=usage)
    system_template = f"{system}\n\n{_escape(instructions)}\n\nSources:\n{{{sources_key}}}"
    return ChatPromptTemplate.from_messages([("system", system_template), ("human", human)])


def number_sources(
    budget_tokens: int | None = None,
    *,
    name: str = "retriever",
    prefer: Literal["content", "snippet"] = "content",
    tokenizer: str | Callable[[str], int] | None = "estimate",
) -> Runnable[Any, str]:
    """A runnable turning documents (or sources, or tool output) into the numbered sources block.

    Inside a run watched by a `CitationCallbackHandler` each source is numbered by its ``sid``
    in that run's ledger, the numbers the handler reads markers with, even when several
    retrievers or tools fed the run; otherwise by its position. The block is
    ``[sid:N] Title`` and the source's text, per `unicite.sources.build_digest`.

    Args:
        budget_tokens: The most tokens the block may take (text is shared fairly); None for
            no limit.
        name: The tool name the input is read as (``Document`` lists need no special name).
        prefer: List each source's full ``content`` or its ``snippet``.
        tokenizer: How tokens are counted; ``"estimate"`` needs no download.
    """
    if budget_tokens is not None and (
        isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0
    ):
        raise UsageError(f"budget_tokens must be a non-negative int or None, got {budget_tokens!r}")
    if not isinstance(name, str) or not name.strip():
        raise UsageError("name must be a non-empty string")
    budget = (1 << 40) if budget_tokens is None else budget_tokens

    def number(value: Any, config: RunnableConfig) -> str:
        # The callbacks RunnableLambda hands its function belong to the lambda's own run.
        callbacks = config.get("callbacks")
        found = run_ledgers(callbacks, getattr(callbacks, "parent_run_id", None))
        ledger = found[0][0] if found else SourceLedger()
        ids = list(dict.fromkeys(ledger.add(source) for source in _sources(value, name)))
        listed = [s for s in (ledger.get(i) for i in ids) if s is not None]
        return build_digest(listed, budget, prefer, ledger=ledger, tokenizer=tokenizer)

    return RunnableLambda(number, name="number_sources")


def _sources(value: Any, name: str) -> list[Source]:
    if isinstance(value, Source):
        return [value]
    if (
        isinstance(value, Sequence)
        and not isinstance(value, (str, bytes))
        and value
        and all(isinstance(item, Source) for item in value)
    ):
        return list(value)
    if isinstance(value, (list, tuple)):
        # Retrieved documents: garbage among them is left out rather than losing the rest (the
        # run's handler reports it).
        return read_documents(name, list(value), [])
    return from_tool_output(name, value)
