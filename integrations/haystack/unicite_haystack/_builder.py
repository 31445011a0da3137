"""`CitedAnswerBuilder`: Haystack's `AnswerBuilder`, with markers validated by `unicite.cite`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

from haystack import Document, GeneratedAnswer, component, default_from_dict, default_to_dict
from haystack.components.builders.answer_builder import AnswerBuilder
from haystack.dataclasses.chat_message import ChatMessage
from haystack.utils import deserialize_callable, serialize_callable

import unicite
from unicite import CitedAnswer, CitePolicy
from unicite.providers import extract_content
from unicite_haystack._documents import cited_documents, to_sources, uncited_documents

__all__ = ["CitedAnswerBuilder"]

DEFAULT_REFERENCE_PATTERN = r"\[(\d+)\]"
EXPANDED_REFERENCE_PATTERN = r"\[(\d+(?:[,-]\d+)*)\]"
_NATIVE_PATTERNS = (None, DEFAULT_REFERENCE_PATTERN, EXPANDED_REFERENCE_PATTERN)
_REFERENCE = re.compile(r"\d+(?:\s*[,-]\s*\d+)*")

OnCitations = Callable[[CitedAnswer], object]


@component
class CitedAnswerBuilder:
    """A drop-in `AnswerBuilder` whose answers carry validated, renumbered citations.

    Takes the same init parameters and run inputs as Haystack's `AnswerBuilder` and returns
    the same ``{"answers": [GeneratedAnswer]}``, with each answer decided by `unicite.cite`
    over the run's ``documents`` (numbered 1..n in input order, as a prompt lists them):

    - ``data`` is the cited text: markers that name no document are dropped (each with a
      diagnostic), the rest renumbered in first-cited order (``[3] … [1]`` reads
      ``[1] … [2]``);
    - ``documents`` are copies of the cited documents, first-cited first, so the document
      with ``citation_number`` n is the one ``[n]`` names; with
      ``return_only_referenced_documents=False`` the uncited ones follow, ``referenced``
      False. ``source_index`` is still the 1-based place in the input list;
    - ``meta`` keeps what `AnswerBuilder` puts there (the reply's meta, the given meta,
      ``all_messages``) and adds ``citations``: the `unicite.CitedAnswer`.

    Where it differs from `AnswerBuilder`: markers are always read (unicite's ``[1]``,
    ``[1, 3]``, ``[2-4]``, ``[[S:1]]``, ``[^1]`` styles) whether or not a
    ``reference_pattern`` is given, ranges included whatever ``expand_reference_ranges``
    says; an index in prose (``row[0]``, ``x[1] = 0``) is not a citation; an out-of-range
    marker is removed from the text with a diagnostic instead of a logged warning. A
    ``reference_pattern`` other than Haystack's two built-in ones is honoured by rewriting
    each of its matches as a ``[n]`` marker (its first group holds the numbers) before
    citing. Disabled (``policy.enabled`` False), it is exactly `AnswerBuilder`.

    Example:
        ```python
        from haystack import Document
        from unicite_haystack import CitedAnswerBuilder

        builder = CitedAnswerBuilder()
        docs = [Document(content="Berlin est à l'est."), Document(content="Paris est en France.")]
        answer = builder.run(
            query="Où est Paris ?", replies=["Paris est en France [2]."], documents=docs
        )["answers"][0]
        assert answer.data == "Paris est en France [1]."
        assert answer.documents[0].content == "Paris est en France."
        ```
    """

    # Saved pipelines name the component by its public path, not this private module.
    __module__ = "unicite_haystack"

    def __init__(
        self,
        pattern: str | None = None,
        reference_pattern: str | None = None,
        last_message_only: bool = False,
        *,
        return_only_referenced_documents: bool = True,
        expand_reference_ranges: bool = False,
        policy: CitePolicy | dict[str, Any] | None = None,
        on_citations: OnCitations | None = None,
    ) -> None:
        """Create the builder.

        Args:
            pattern: As `AnswerBuilder`'s: a regex (one capture group at most) picking the
                answer out of each reply.
            reference_pattern: As `AnswerBuilder`'s; see the class docstring for how it maps
                onto unicite's markers.
            last_message_only: As `AnswerBuilder`'s: only the last reply becomes an answer.
            return_only_referenced_documents: Only the cited documents (default), or all.
            expand_reference_ranges: Accepted for compatibility: unicite always reads
                ranges such as ``[6-10]``.
            policy: The `unicite.CitePolicy` (or a dict of its fields) every answer is cited
                with.
            on_citations: Called with each `unicite.CitedAnswer`; what it raises becomes a
                diagnostic.
        """
        if pattern:
            AnswerBuilder._check_num_groups_in_regex(pattern)
        if isinstance(policy, dict):
            policy = CitePolicy(**policy)
        self.pattern = pattern
        self.reference_pattern = reference_pattern
        self.last_message_only = last_message_only
        self.return_only_referenced_documents = return_only_referenced_documents
        self.expand_reference_ranges = expand_reference_ranges
        self.policy: CitePolicy = policy or CitePolicy()
        self.on_citations = on_citations
        self._plain = AnswerBuilder(
            pattern=pattern,
            reference_pattern=reference_pattern,
            last_message_only=last_message_only,
            return_only_referenced_documents=return_only_referenced_documents,
            expand_reference_ranges=expand_reference_ranges,
        )
        # Meta and the pattern's answer without reading references (nor logging about them).
        self._base = AnswerBuilder(pattern=pattern, last_message_only=last_message_only)

    def to_dict(self) -> dict[str, Any]:
        """Serialize the component (the policy as its fields, callables by import path)."""
        policy = {
            field.name: getattr(self.policy, field.name)
            for field in dataclasses.fields(self.policy)
            if field.name != "llm"
        }
        if self.policy.llm is not None:
            policy["llm"] = serialize_callable(self.policy.llm)
        return default_to_dict(
            self,
            pattern=self.pattern,
            reference_pattern=self.reference_pattern,
            last_message_only=self.last_message_only,
            return_only_referenced_documents=self.return_only_referenced_documents,
            expand_reference_ranges=self.expand_reference_ranges,
            policy=policy,
            on_citations=serialize_callable(self.on_citations) if self.on_citations else None,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CitedAnswerBuilder:
        """Deserialize a component saved by `to_dict`."""
        params = data.get("init_parameters", {})
        policy = params.get("policy")
        if isinstance(policy, dict) and isinstance(policy.get("llm"), str):
            params["policy"] = {**policy, "llm": deserialize_callable(policy["llm"])}
        if isinstance(params.get("on_citations"), str):
            params["on_citations"] = deserialize_callable(params["on_citations"])
        return default_from_dict(cls, data)

    @component.output_types(answers=list[GeneratedAnswer])
    def run(
        self,
        query: str,
        replies: list[str] | list[ChatMessage],
        meta: list[dict[str, Any]] | None = None,
        documents: list[Document] | None = None,
        pattern: str | None = None,
        reference_pattern: str | None = None,
        expand_reference_ranges: bool | None = None,
    ) -> dict[str, Any]:
        """Turn the Generator's replies into cited `GeneratedAnswer`s.

        Args:
            query: The query the Generator answered.
            replies: The Generator's replies: strings or `ChatMessage`s.
            meta: The Generator's metadata, one dict per reply.
            documents: The documents the prompt numbered 1..n; markers are validated
                against them.
            pattern: Overrides the init ``pattern`` for this run.
            reference_pattern: Overrides the init ``reference_pattern`` for this run.
            expand_reference_ranges: Accepted for compatibility (ranges are always read).

        Returns:
            ``{"answers": [GeneratedAnswer]}``.

        Raises:
            ValueError: As `AnswerBuilder`: replies and meta differ in length, or a pattern
                has more than one capture group.
        """
        if not self.policy.enabled:
            return self._plain.run(
                query=query,
                replies=replies,
                meta=meta,
                documents=documents,
                pattern=pattern,
                reference_pattern=reference_pattern,
                expand_reference_ranges=expand_reference_ranges,
            )
        plain = self._base.run(query=query, replies=replies, meta=meta, pattern=pattern)
        pattern = pattern or self.pattern
        reference_pattern = reference_pattern or self.reference_pattern
        chosen: list[str | ChatMessage] = list(
            replies[-1:] if self.last_message_only and replies else replies
        )
        answers: list[GeneratedAnswer] = []
        for reply, built in zip(chosen, plain["answers"], strict=True):
            answers.append(
                self._cite(reply, built, list(documents or []), pattern, reference_pattern)
            )
        return {"answers": answers}

    def _cite(
        self,
        reply: str | ChatMessage,
        built: GeneratedAnswer,
        documents: list[Document],
        pattern: str | None,
        reference_pattern: str | None,
    ) -> GeneratedAnswer:
        notes: list[str] = []
        try:
            sources, notes = to_sources(documents)
            given, lost = _reply_answer(reply, built.data, pattern)
            notes = [*lost, *notes]
            if reference_pattern not in _NATIVE_PATTERNS:
                given = _as_markers(given, reference_pattern or "")
            answer = unicite.cite(given, sources, policy=self.policy)
            if notes:
                answer = answer.model_copy(update={"diagnostics": [*answer.diagnostics, *notes]})
            docs = cited_documents(
                answer,
                documents,
                sources,
                only_cited=self.return_only_referenced_documents,
            )
        except Exception as err:
            # Uncited, with every document, as AnswerBuilder without a reference pattern.
            answer = CitedAnswer(text=built.data, diagnostics=[*notes, f"internal error: {err!r}"])
            docs = uncited_documents(documents)
        answer = self._deliver(answer)
        return GeneratedAnswer(
            data=answer.text,
            query=built.query,
            documents=docs,
            meta={**built.meta, "citations": answer},
        )

    def _deliver(self, answer: CitedAnswer) -> CitedAnswer:
        if self.on_citations is None:
            return answer
        try:
            self.on_citations(answer)
        except Exception as err:
            note = f"on_citations raised {type(err).__name__}: {err}"
            return answer.model_copy(update={"diagnostics": [*answer.diagnostics, note]})
        return answer


def _reply_answer(
    reply: str | ChatMessage, text: str, pattern: str | None
) -> tuple[str | CitedAnswer, list[str]]:
    """What `cite` reads for one reply (its text, or its native citations), and what was lost.

    A `ChatMessage`'s text and meta are read as a provider's content and response fields
    (`unicite.providers.extract_content`); only an answer whose text is the whole reply (no
    ``pattern`` cut it) keeps native citations, as their offsets index the whole reply.
    """
    if not isinstance(reply, ChatMessage):
        return text, []
    fields = reply.meta if isinstance(reply.meta, dict) else {}
    native = extract_content(reply.text or "", fields=fields)
    if native.provider is None and not native.citations:
        return text, []
    if pattern:
        lost = len(native.citations)
        note = f"pattern cut the reply: its {lost} native citation(s) were dropped"
        return text, [note] if lost else []
    return native, []


def _as_markers(answer: str | CitedAnswer, reference_pattern: str) -> str | CitedAnswer:
    """A custom reference pattern's matches rewritten as ``[n]`` markers."""
    if not isinstance(answer, str):
        return answer
    regex = re.compile(reference_pattern)

    def marker(match: re.Match[str]) -> str:
        numbers = match.group(1) if regex.groups else match.group(0)
        found = _REFERENCE.search(numbers or "")
        return f"[{found.group(0)}]" if found else match.group(0)

    return regex.sub(marker, answer)
