"""Cited generation: prompt a model with numbered sources, check its citations, retry, cite.

One `_Session` holds the decisions; the four public functions only drive it (sync or async,
whole or streamed), so every path asks, checks and finishes the same way.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, Literal

from unicite._cite import CitePolicy, cite
from unicite.exceptions import GroundingRequiredError, UsageError
from unicite.generation._formats import Checked, Shaped, Structured, TextFormat, pick
from unicite.generation._llm import ChatModel, Reply, as_chat_model
from unicite.generation._result import (
    CitedGeneration,
    GenerationFormat,
    GenerationStats,
    Retry,
    Strategy,
)
from unicite.markers import MarkerStream, MarkerStyle, format_sources, inject_markers
from unicite.model import Citation, CitedAnswer, Source
from unicite.providers import capabilities, extract
from unicite.sources import SourceLedger, as_source, shown_numbers

__all__ = ["agenerate_cited", "astream_cited", "generate_cited", "stream_cited"]

Require = bool | Literal["raise"]

_ANSWER_RULES = (
    "Answer the request below from the numbered sources listed after it. Use what the sources "
    "say; when they do not cover something, say so rather than guessing."
)
_PLAIN_RULES = (
    "Answer the request below from the sources listed after it. Use what the sources say; "
    "when they do not cover something, say so rather than guessing. Do not write citations, "
    "source numbers or a list of sources: they are added for you."
)


def _checked_sources(
    sources: object,
) -> Sequence[Source | Mapping[str, Any]] | SourceLedger | Mapping[int, Source]:
    if isinstance(sources, (str, bytes)) or not isinstance(
        sources, (SourceLedger, Mapping, Sequence)
    ):
        raise UsageError(
            "sources must be a list of sources, a SourceLedger or a map from the numbers shown "
            f"to sources, got {type(sources).__name__}"
        )
    return sources


def _listed(sources: object) -> list[Source]:
    """The sources in the order shown, for the provider's own citation API."""
    if isinstance(sources, SourceLedger):
        return list(sources.sources)
    numbered = shown_numbers(sources)
    if numbered is not None:
        return [numbered[n] for n in sorted(numbered)]
    if isinstance(sources, (str, bytes)) or not isinstance(sources, Sequence):
        raise UsageError(
            "sources must be a list of sources, a SourceLedger or a map from the numbers shown "
            f"to sources, got {type(sources).__name__}"
        )
    return [as_source(source) for source in sources]


class _Session:
    """One generation: its settings, the rounds so far, and the result."""

    def __init__(
        self,
        llm: object,
        prompt: str,
        sources: object,
        *,
        format: GenerationFormat,
        schema: dict[str, Any] | None,
        strategy: Strategy,
        require: Require,
        max_retries: int,
        budget_tokens: int,
        prefer: Literal["content", "snippet"],
        policy: CitePolicy | None,
        model: str | None,
    ) -> None:
        if not isinstance(prompt, str) or not prompt.strip():
            raise UsageError("prompt must be a non-empty string")
        if require not in (True, False, "raise"):
            raise UsageError(f"require must be True, False or 'raise', got {require!r}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise UsageError(f"max_retries must be an int >= 0, got {max_retries!r}")
        if strategy not in ("auto", "native", "markers", "posthoc"):
            raise UsageError(
                f"strategy must be 'auto', 'native', 'markers' or 'posthoc', got {strategy!r}"
            )
        if policy is not None and not isinstance(policy, CitePolicy):
            raise UsageError(f"policy must be a CitePolicy, got {type(policy).__name__}")
        if schema is not None and not isinstance(schema, Mapping):
            raise UsageError(f"schema must be a JSON Schema dict, got {type(schema).__name__}")
        self.policy = (policy or CitePolicy()).replace(require=None)
        self.form: TextFormat | Structured = pick(
            format, self.policy.markers, None if schema is None else dict(schema)
        )
        self.format = format
        self.required = require is not False
        self.raise_on_failure = require == "raise"
        self.max_retries = max_retries
        self.sources = _checked_sources(sources)
        self.listed = _listed(sources)
        self.model: ChatModel = as_chat_model(llm, model=model)
        self.strategy = self._strategy(llm, model, strategy)
        self.notes: list[str] = []
        digest = format_sources(self.sources, budget_tokens, prefer=prefer, diagnostics=self.notes)
        if self.strategy == "posthoc":
            self.system = _PLAIN_RULES
            self.prompt = f"{prompt}\n\nSources:\n\n{digest}" if digest else prompt
        elif self.strategy == "native":
            self.system = _PLAIN_RULES
            self.prompt = prompt
        else:
            self.system = f"{_ANSWER_RULES}\n\n{self.form.instructions(required=self.required)}"
            self.prompt = f"{prompt}\n\nSources:\n\n{digest}" if digest else prompt
        self.feedback = ""
        self.rounds = 0
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self.raw = ""
        self.reply: Reply | None = None
        self.checked = Checked()
        self.reasons: list[str] = []

    def _strategy(self, llm: object, model: str | None, strategy: Strategy) -> str:
        native_ok = isinstance(self.form, TextFormat) and self.format != "html"
        if strategy == "auto":
            if not native_ok or not self.listed:
                return "markers"
            try:
                can = capabilities(llm, model=model).native_citations
            except UsageError:
                can = False
            return "native" if can else "markers"
        if strategy == "native":
            if not native_ok:
                raise UsageError(f"strategy='native' gives markdown or text, not {self.format!r}")
            if not capabilities(llm, model=model).native_citations:
                raise UsageError(
                    f"strategy='native': {self.model.provider} has no native citation API for "
                    "given sources; use 'markers' or 'auto'"
                )
        if strategy == "posthoc" and not isinstance(self.form, TextFormat):
            raise UsageError(
                f"strategy='posthoc' gives markdown, text or html, not {self.format!r}"
            )
        return strategy

    # --- rounds -----------------------------------------------------------------------------

    def request(self) -> str:
        """The user prompt of the next round: the request, and the last round's problems."""
        if not self.feedback:
            return self.prompt
        return f"{self.prompt}\n\n{self.feedback}"

    @property
    def text_form(self) -> TextFormat:
        """The format, for the strategies that only take text formats."""
        if not isinstance(self.form, TextFormat):
            raise UsageError(f"{self.strategy} answers are markdown, text or html")
        return self.form

    @property
    def streams_markers(self) -> bool:
        """Whether the rounds stream through a `MarkerStream` (markers in a text format)."""
        return self.strategy == "markers" and isinstance(self.form, TextFormat)

    def marker_stream(self) -> MarkerStream:
        return MarkerStream(
            self.sources,
            style=self.text_form.style,
            on_invalid=self.policy.on_invalid,
            renumber=self.policy.renumber,
            keep_unused=self.policy.sources == "all",
        )

    def take(self, reply: Reply) -> bool:
        """Check one round's reply; True when no further round is needed."""
        self.rounds += 1
        self.reply = reply
        self.raw = reply.text
        if reply.tokens_in is not None:
            self.tokens_in = (self.tokens_in or 0) + reply.tokens_in
        if reply.tokens_out is not None:
            self.tokens_out = (self.tokens_out or 0) + reply.tokens_out
        if self.strategy == "markers":
            self.checked = self.form.check(reply.text, self.sources, required=self.required)
        else:
            self.checked = Checked(cited=True)  # judged once finished
        errors = self.checked.errors
        if not errors or self.rounds > self.max_retries:
            return True
        self.reasons.append("; ".join(errors))
        listed = "\n".join(f"- {error}" for error in errors)
        self.feedback = (
            "Your previous answer was:\n<<<\n"
            f"{reply.text}\n>>>\n\nIt has these problems:\n{listed}\n\n"
            "Write the whole answer again, fixing them."
        )
        return False

    # --- the result -------------------------------------------------------------------------

    def shaped(self) -> Shaped:
        if self.strategy == "native":
            if self.reply is None:
                raise UsageError("no round was run")
            return self._native(extract(self.reply.raw))
        if self.strategy == "posthoc":
            attribute = self.policy.attribute if self.policy.attribute is not None else "lexical"
            llm = self.policy.llm
            if attribute == "llm" and llm is None:
                llm = self._complete_text
            answer = cite(
                self.raw, self.sources, policy=self.policy.replace(attribute=attribute, llm=llm)
            )
            style = self.text_form.style
            return Shaped(
                answer,
                answer.text if not answer.citations else _with_markers(answer, style),
            )
        return self.form.finish(self.raw, self.sources, self.policy, self.checked)

    def _complete_text(self, prompt: str) -> str:
        return self.model.complete("", prompt).text

    def _native(self, answer: CitedAnswer) -> Shaped:
        """The provider's document citations turned into citations of the given sources."""
        by_index = {f"document:{n}": source for n, source in enumerate(self.listed)}
        citations: list[Citation] = []
        for citation in answer.citations:
            index = getattr(citation.location, "document_index", None)
            given = (
                self.listed[index] if isinstance(index, int) and index < len(self.listed) else None
            )
            ids = (
                [given.id]
                if given is not None
                else [by_index[sid].id for sid in citation.source_ids if sid in by_index]
            )
            if ids:
                citations.append(citation.model_copy(update={"source_ids": ids}))
        draft = answer.replace(sources=list(self.listed), citations=citations)
        cited = cite(draft, self.sources, policy=self.policy)
        return Shaped(cited, _with_markers(cited, self.text_form.style))

    def result(self, shaped: Shaped | None = None) -> CitedGeneration:
        shaped = shaped or self.shaped()
        answer = shaped.answer
        if self.notes:
            answer = answer.replace(diagnostics=[*answer.diagnostics, *self.notes])
        cited = bool(answer.citations)
        errors = list(self.checked.errors)
        if self.required and not cited and not errors:
            errors.append("the answer cites no source")
        finished = not errors if self.required else self.checked.schema_ok is not False
        reason = "" if finished else "; ".join(errors)
        if self.reasons:
            asked = [f"round {n} was asked again: {why}" for n, why in enumerate(self.reasons, 1)]
            answer = answer.replace(diagnostics=[*answer.diagnostics, *asked])
        schema_ok = self.checked.schema_ok
        if self.strategy != "markers":
            validated = "citations" if cited else "none"
        elif schema_ok is None:
            validated = "citations" if cited and not errors else "none"
        elif schema_ok and cited and not errors:
            validated = "both"
        else:
            validated = "schema" if schema_ok else ("citations" if cited else "none")
        stats = GenerationStats(
            rounds=max(1, self.rounds),
            validated=validated,
            citations="present" if cited else ("missing" if self.required else "not_required"),
            bytes=len(shaped.content.encode("utf-8")),
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
        )
        cited_ids = {sid for c in answer.citations for sid in c.source_ids}
        cited_ids.update(answer.sources_used or ())
        generation = CitedGeneration(
            answer=answer,
            content=shaped.content,
            format=self.format,
            finished=finished,
            retries=max(0, self.rounds - 1),
            reason=reason,
            stats=stats,
            sources_used=[s for s in answer.sources if s.id in cited_ids],
            strategy=self.strategy,
            document=shaped.document,
        )
        if self.raise_on_failure and not finished:
            raise GroundingRequiredError(
                f"{self.model.provider}: no valid citations after {generation.stats.rounds} "
                f"round(s): {reason}",
                provider=self.model.provider,
                reason=reason,
                answer=answer,
            )
        return generation

    # --- whole runs ---------------------------------------------------------------------------

    def run(self) -> CitedGeneration:
        """Every round, unstreamed, then the result."""
        while not self.take(self.call()):
            pass
        return self.result()

    async def arun(self) -> CitedGeneration:
        """`run`, awaiting the model."""
        while not self.take(await self.acall()):
            pass
        return self.result()

    # --- one round, by strategy -------------------------------------------------------------

    def call(self) -> Reply:
        if self.strategy == "native":
            return self.model.complete_native(self.system, self.request(), self.listed)
        return self.model.complete(self.system, self.request())

    async def acall(self) -> Reply:
        if self.strategy == "native":
            return await self.model.acomplete_native(self.system, self.request(), self.listed)
        return await self.model.acomplete(self.system, self.request())


def _with_markers(answer: CitedAnswer, style: MarkerStyle) -> str:
    """The answer's text with a marker for every citation that has none written."""
    return inject_markers(answer, style).text


def generate_cited(
    llm: object,
    prompt: str,
    sources: object,
    *,
    format: GenerationFormat = "markdown",
    schema: dict[str, Any] | None = None,
    strategy: Strategy = "auto",
    require: Require = True,
    max_retries: int = 2,
    budget_tokens: int = 10_000,
    prefer: Literal["content", "snippet"] = "content",
    policy: CitePolicy | None = None,
    model: str | None = None,
) -> CitedGeneration:
    """Ask ``llm`` for an answer citing ``sources``; check its citations, retry, cite it.

    The sources are shown numbered (``[sid:N]``, within ``budget_tokens``) with instructions
    for the format; the reply is checked (unknown numbers, markers in code or in another
    style, sidecar paths that name no string, schema violations, no citation while required)
    and, while a check fails and retries remain, the model is asked again with the problems.
    The last reply goes through `unicite.cite`.

    Args:
        llm: The model: a LangChain chat model, a LlamaIndex LLM, an ``openai``,
            ``anthropic`` or ``google-genai`` client (sync or async) with ``model=`` (or as a
            ``(client, model)`` pair), or any callable from a prompt to the reply text.
        prompt: What to write.
        sources: The sources to write it from: `Source` objects or dicts (seed-004 rows are
            shown under their ``sid``), a `SourceLedger`, or a map ``{n: source}``.
        format: ``"markdown"`` or ``"text"`` (markers ``[[S:n]]``, or the policy's marker
            style), ``"html"`` (``<sup class="cite" data-sids="…">``), ``"json"`` or
            ``"yaml"`` (a ``_citations`` sidecar of JSON Pointers).
        schema: For json and yaml, a JSON Schema the document must meet (needs
            ``unicite[schema]``).
        strategy: ``"native"`` (the provider's own citation API: Anthropic documents),
            ``"markers"`` (the model writes markers or a sidecar, checked and retried),
            ``"posthoc"`` (a clean answer, then attribution: the policy's ``attribute``,
            ``"lexical"`` by default; seed 001) or ``"auto"`` (native where the model has it
            for markdown or text, else markers).
        require: True: the answer must cite; after ``max_retries`` without valid citations
            it comes back with ``finished=False`` and a ``reason``. ``"raise"``: raise
            `GroundingRequiredError` instead. False: citations are optional and the model
            declares the sources it used (``[[USAGE:…]]``, stripped from the content).
        max_retries: Rounds after the first when the answer fails its checks.
        budget_tokens: The most tokens the sources may take in the prompt.
        prefer: Show each source's ``content`` (else its snippet) or its ``snippet``.
        policy: How `unicite.cite` cites the answer (marker style, renumbering, attribution,
            which sources are listed).
        model: The model name, for SDK clients.

    Returns:
        The `CitedGeneration`; ``.envelope()`` gives seed 004's envelope.

    Raises:
        UsageError: A bad argument or an ``llm`` unicite does not know.
        GroundingRequiredError: With ``require="raise"``, when no valid citations came.
    """
    session = _Session(
        llm, prompt, sources, format=format, schema=schema, strategy=strategy, require=require,
        max_retries=max_retries, budget_tokens=budget_tokens, prefer=prefer, policy=policy,
        model=model,
    )  # fmt: skip
    return session.run()


async def agenerate_cited(
    llm: object,
    prompt: str,
    sources: object,
    *,
    format: GenerationFormat = "markdown",
    schema: dict[str, Any] | None = None,
    strategy: Strategy = "auto",
    require: Require = True,
    max_retries: int = 2,
    budget_tokens: int = 10_000,
    prefer: Literal["content", "snippet"] = "content",
    policy: CitePolicy | None = None,
    model: str | None = None,
) -> CitedGeneration:
    """`generate_cited` for async code: the same arguments; async clients are awaited."""
    session = _Session(
        llm, prompt, sources, format=format, schema=schema, strategy=strategy, require=require,
        max_retries=max_retries, budget_tokens=budget_tokens, prefer=prefer, policy=policy,
        model=model,
    )  # fmt: skip
    return await session.arun()


def stream_cited(
    llm: object,
    prompt: str,
    sources: object,
    *,
    format: GenerationFormat = "markdown",
    schema: dict[str, Any] | None = None,
    strategy: Strategy = "auto",
    require: Require = True,
    max_retries: int = 2,
    budget_tokens: int = 10_000,
    prefer: Literal["content", "snippet"] = "content",
    policy: CitePolicy | None = None,
    model: str | None = None,
) -> StreamedGeneration:
    """`generate_cited`, streamed: text deltas, a `Retry` between rounds, the result last.

    The deltas' markers already carry their final numbers, so the text shown is the final
    content. A `Retry` means the round failed its checks and the model is asked again:
    discard what was shown. Markdown, text and HTML answers stream as written (markers
    strategy); json, yaml, native and post-hoc answers come as one piece once finished.
    The stream is a `StreamedGeneration`: when it is stopped early, its `partial_answer`
    cites the text generated so far.
    """
    make = functools.partial(
        _Session, llm, prompt, sources, format=format, schema=schema, strategy=strategy,
        require=require, max_retries=max_retries, budget_tokens=budget_tokens, prefer=prefer,
        policy=policy, model=model,
    )  # fmt: skip
    stream = StreamedGeneration()
    stream.start(make)
    return stream


def astream_cited(
    llm: object,
    prompt: str,
    sources: object,
    *,
    format: GenerationFormat = "markdown",
    schema: dict[str, Any] | None = None,
    strategy: Strategy = "auto",
    require: Require = True,
    max_retries: int = 2,
    budget_tokens: int = 10_000,
    prefer: Literal["content", "snippet"] = "content",
    policy: CitePolicy | None = None,
    model: str | None = None,
) -> AsyncStreamedGeneration:
    """`stream_cited` for async code (an async iterator with the same `partial_answer`)."""
    make = functools.partial(
        _Session, llm, prompt, sources, format=format, schema=schema, strategy=strategy,
        require=require, max_retries=max_retries, budget_tokens=budget_tokens, prefer=prefer,
        policy=policy, model=model,
    )  # fmt: skip
    stream = AsyncStreamedGeneration()
    stream.start(make)
    return stream


class _Progress:
    """What a streamed generation has produced so far, for `partial_answer`."""

    def __init__(self) -> None:
        self.session: _Session | None = None
        self.round: _Round | None = None

    def partial_answer(self) -> CitedAnswer:
        """The text the model streamed in the current round, cited through `unicite.cite`.

        As the stream would have ended had the model stopped there: its text begins with what
        was shown. Before the first round, or for answers that do not stream (json, yaml,
        native, post-hoc), an empty answer.
        """
        session, round_ = self.session, self.round
        if session is None or round_ is None:
            return CitedAnswer(text="")
        policy = session.policy.replace(markers=session.text_form.style)
        return cite("".join(round_.raw), session.sources, policy=policy)


class StreamedGeneration(Iterator["str | Retry | CitedGeneration"]):
    """What `stream_cited` returns: its items, lazily, and the answer so far when stopped.

    Iterate it as any iterator; `close` stops it (the model stream is closed).
    `partial_answer` cites the text generated so far, which a server stopping an answer
    (`unicite.wire.Relay.cancel`) keeps as the stopped message.
    """

    def __init__(self) -> None:
        self._progress = _Progress()
        self._items: Iterator[str | Retry | CitedGeneration] = iter(())

    def start(self, session: Callable[[], _Session]) -> None:
        """Begin with the session `session` makes, on the first item (arguments checked then)."""
        self._items = _stream_items(session, self._progress)

    def __iter__(self) -> StreamedGeneration:
        return self

    def __next__(self) -> str | Retry | CitedGeneration:
        return next(self._items)

    def close(self) -> None:
        """Stop the stream: the model's stream is closed."""
        close = getattr(self._items, "close", None)
        if close is not None:
            close()

    def partial_answer(self) -> CitedAnswer:
        """The text generated so far, cited through `unicite.cite` (see `StreamedGeneration`)."""
        return self._progress.partial_answer()


class AsyncStreamedGeneration(AsyncIterator["str | Retry | CitedGeneration"]):
    """What `astream_cited` returns: `StreamedGeneration` for async code.

    Cancelling the task that iterates it cancels the model call; `partial_answer` then cites
    the text generated so far.
    """

    def __init__(self) -> None:
        self._progress = _Progress()
        self._items: AsyncIterator[str | Retry | CitedGeneration] | None = None

    def start(self, session: Callable[[], _Session]) -> None:
        """Begin with the session `session` makes, on the first item."""
        self._items = _astream_items(session, self._progress)

    def __aiter__(self) -> AsyncStreamedGeneration:
        return self

    async def __anext__(self) -> str | Retry | CitedGeneration:
        if self._items is None:
            raise StopAsyncIteration
        return await anext(self._items)

    async def aclose(self) -> None:
        """Stop the stream: the model's stream is closed."""
        close = getattr(self._items, "aclose", None)
        if close is not None:
            await close()

    def partial_answer(self) -> CitedAnswer:
        """The text generated so far, cited through `unicite.cite` (see `StreamedGeneration`)."""
        return self._progress.partial_answer()


def _stream_items(
    make: Callable[[], _Session], progress: _Progress
) -> Iterator[str | Retry | CitedGeneration]:
    session = progress.session = make()
    if not session.streams_markers:
        generation = session.run()
        if generation.content:
            yield generation.content
        yield generation
        return
    while True:
        round_ = progress.round = _Round(session)
        for piece in session.model.stream(session.system, session.request()):
            shown = round_.feed(piece)
            if shown:
                yield shown
        rest, outcome = round_.end()
        if rest:
            yield rest
        yield outcome
        if isinstance(outcome, CitedGeneration):
            return


async def _astream_items(
    make: Callable[[], _Session], progress: _Progress
) -> AsyncIterator[str | Retry | CitedGeneration]:
    session = progress.session = make()
    if not session.streams_markers:
        generation = await session.arun()
        if generation.content:
            yield generation.content
        yield generation
        return
    while True:
        round_ = progress.round = _Round(session)
        async for piece in session.model.astream(session.system, session.request()):
            shown = round_.feed(piece)
            if shown:
                yield shown
        rest, outcome = round_.end()
        if rest:
            yield rest
        yield outcome
        if isinstance(outcome, CitedGeneration):
            return


class _Round:
    """One streamed round: the deltas through a `MarkerStream`, then the check."""

    def __init__(self, session: _Session) -> None:
        self.session = session
        self.markers = session.marker_stream()
        self.reply: Reply | None = None
        self.raw: list[str] = []

    def feed(self, piece: str | Reply) -> str:
        """Take what the model streamed; return the text now certain."""
        if isinstance(piece, Reply):
            self.reply = piece
            return ""
        if not piece:
            return ""
        self.raw.append(piece)
        return self.markers.feed(piece)

    def end(self) -> tuple[str, Retry | CitedGeneration]:
        """The rest of the text, and the result or the `Retry` that starts the next round."""
        rest = self.markers.close()
        text = "".join(self.raw)
        reply = self.reply
        if reply is None or reply.text != text:
            # What streamed is what is checked and cited: the deltas are the answer shown.
            reply = Reply(
                text=text,
                tokens_in=None if reply is None else reply.tokens_in,
                tokens_out=None if reply is None else reply.tokens_out,
                raw=None if reply is None else reply.raw,
            )
        session = self.session
        if session.take(reply):
            return rest, _streamed(session, self.markers)
        return rest, Retry(session.rounds + 1, session.reasons[-1])


def _streamed(session: _Session, markers: MarkerStream) -> CitedGeneration:
    """The result of a streamed round: what streamed is the content, by construction."""
    shaped = session.shaped()
    if shaped.content != markers.text:
        diagnostics = [
            *shaped.answer.diagnostics,
            "stream: the streamed text differs from the final answer",
        ]
        shaped = Shaped(shaped.answer.replace(diagnostics=diagnostics), shaped.content)
    return session.result(shaped)
