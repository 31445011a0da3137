"""The adapter's options as a `unicite.CitePolicy`, and `unicite.cite` with the adapter's notes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from llama_index.core.llms.llm import LLM
from llama_index.core.settings import Settings

from unicite import CitedAnswer, CitePolicy, GroundingRequiredError, Source, UsageError, cite
from unicite.sources import SourceLedger

__all__ = [
    "ALIASES",
    "OPTION_NAMES",
    "Table",
    "answer_input",
    "asker",
    "cite_answer",
    "origin_of",
    "resolve_policy",
]

Table = list[Source] | SourceLedger | dict[int, Source]
"""The sources a prompt numbered: a list (``[1]`` is the first), a ledger (by sid), or a map
from the numbers shown to their sources."""

ALIASES: Mapping[str, str] = {"attribution_llm": "llm", "history": "keep"}
"""Older keyword names, still accepted: each stands for the `CitePolicy` field it maps to."""

OPTION_NAMES: frozenset[str] = frozenset(
    {f.name for f in dataclasses.fields(CitePolicy)} | set(ALIASES)
)
"""Every keyword that is a citation option (a `CitePolicy` field or an alias of one)."""


def resolve_policy(
    policy: CitePolicy | None,
    options: Mapping[str, Any],
    *,
    default_llm: Callable[[str], Any] | None = None,
) -> CitePolicy:
    """`policy` (default ``CitePolicy()``) with `options` applied, validated once.

    `options` are `CitePolicy` field names or their aliases (``attribution_llm`` for ``llm``,
    ``history`` for ``keep``); ``enabled=None`` means "not set"; ``llm`` may be a LlamaIndex
    `LLM`. `default_llm` is the attribution model when neither the policy nor the options
    name one.

    Raises:
        UsageError: ``policy`` is not a `CitePolicy`, an option is unknown, given twice under
            two names, or has a bad value.
    """
    if policy is not None and not isinstance(policy, CitePolicy):
        raise UsageError(f"policy must be a CitePolicy, got {type(policy).__name__}")
    base = policy if policy is not None else CitePolicy()
    changes: dict[str, Any] = {}
    for name, value in options.items():
        field = ALIASES.get(name, name)
        if field in changes:
            raise UsageError(f"{field} is given twice (as {name} and under its other name)")
        changes[field] = value
    if "enabled" in changes and changes["enabled"] is None:
        del changes["enabled"]
    if isinstance(changes.get("llm"), LLM):
        changes["llm"] = asker(changes["llm"])
    if default_llm is not None and changes.get("llm", base.llm) is None:
        changes["llm"] = default_llm
    return base.replace(**changes)


def asker(llm: LLM | None) -> Callable[[str], str]:
    """A LlamaIndex LLM (``Settings.llm`` when None) as a callable from a prompt to a reply."""

    def ask(prompt: str) -> str:
        return (llm or Settings.llm).complete(prompt).text

    return ask


def answer_input(native: CitedAnswer | None, text: str) -> str | CitedAnswer:
    """What `unicite.cite` is given for an answer LlamaIndex shows as `text`.

    The provider's answer when it has citations (their spans index its own text) or the same
    text; else the text LlamaIndex shows, keeping what the provider's answer says about itself
    (provider, model, diagnostics).
    """
    if native is None:
        return text
    if native.citations or native.text == text or not text:
        return native
    return native.replace(text=text)


def cite_answer(
    answer: object,
    table: Table | Sequence[Source | Mapping[str, Any]],
    policy: CitePolicy,
    notes: list[str],
) -> CitedAnswer:
    """`unicite.cite`, with what the adapter noticed on the way put before its diagnostics.

    Raises:
        GroundingRequiredError: ``policy.require`` was not met; its ``answer`` has the notes.
    """
    try:
        cited = cite(answer, table, policy=policy)
    except GroundingRequiredError as err:
        if err.answer is not None:
            err.answer = _with_notes(err.answer, notes)
        raise
    return _with_notes(cited, notes)


def _with_notes(answer: CitedAnswer, notes: list[str]) -> CitedAnswer:
    if not notes:
        return answer
    # Diagnostics bind no offsets: a plain copy needs no new validation.
    return answer.model_copy(update={"diagnostics": [*notes, *answer.diagnostics]})


def origin_of(answer: CitedAnswer) -> str | None:
    """The origin of an answer's citations: the first citation's, None without citations."""
    return answer.citations[0].origin if answer.citations else None
