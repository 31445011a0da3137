"""Faults inside chains watched by unicite: the chain behaves exactly as it does without it.

A tool that raises, a retriever returning garbage, a model stream cut off mid-event, a provider
answering with an HTTP error body: each chain runs once bare and once with unicite (the
`CitationCallbackHandler`, `cite_tools`, `with_citations`), and what the caller sees, the
return value or the exception's type and message, must be the same. Where the run still ends
with an answer, the answer's diagnostics say what went wrong.

Provider calls go through the real OpenAI SDK and langchain-openai; only the HTTP transport is
replaced (`httpx.MockTransport`), serving the bodies and broken streams a server can send.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import AsyncIterator, Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest

pytest.importorskip("langchain_core")

import httpx
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import (
    GenericFakeChatModel,
    ParrotFakeChatModel,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough, chain
from langchain_core.tools import BaseTool, ToolException, tool

from unicite import CitedAnswer
from unicite_langchain import CitationCallbackHandler, cite_tools, number_sources, with_citations

MILLAU = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"
QUESTION = "Le viaduc de Millau culmine à 343 mètres [1]."


class Unprintable(Exception):
    """An error whose message cannot be read: ``str()`` raises."""

    def __str__(self) -> str:
        raise ValueError("this error cannot be printed")


class Unreadable:
    """A metadata value that raises on ``str()`` and ``repr()``."""

    def __str__(self) -> str:
        raise RuntimeError("no str")

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def described(error: BaseException) -> tuple[Any, ...]:
    """What a caller can see of an exception: type, message, HTTP status and body."""
    try:
        message = str(error)
    except Exception as err:
        message = f"<str() raised {type(err).__name__}>"
    return (
        type(error),
        message,
        getattr(error, "status_code", None),
        getattr(error, "body", None),
        getattr(error, "request_id", None),
    )


def outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("returned", call())
    except Exception as err:
        return ("raised", *described(err))


def cited_urls(answer: CitedAnswer) -> list[list[str | None]]:
    return [[answer.source(sid).url for sid in c.source_ids] for c in answer.citations]  # type: ignore[union-attr]


def config_of(handler: CitationCallbackHandler | None) -> Any:
    return {"callbacks": [handler]} if handler is not None else {}


# --- tools ------------------------------------------------------------------------------------


def tool_call(name: str, call_id: str = "call_1") -> dict[str, Any]:
    return {"name": name, "args": {"query": "millau"}, "id": call_id, "type": "tool_call"}


def scripted(*replies: AIMessage) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter(replies))


def make_agent(
    model: GenericFakeChatModel, tools: list[BaseTool], *, catch: bool = False
) -> tuple[Runnable[str, str], list[BaseMessage]]:
    """A tool-calling loop from LangChain primitives; with ``catch``, the loop itself handles
    a tool's exception by telling the model the tool failed."""
    by_name = {t.name: t for t in tools}
    messages: list[BaseMessage] = []

    def failed(call: Any) -> ToolMessage:
        return ToolMessage("the tool failed", tool_call_id=call["id"], status="error")

    @chain
    def agent(question: str, config: Any) -> str:
        messages.append(HumanMessage(question))
        while True:
            reply = model.invoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.text)
            for call in reply.tool_calls:
                try:
                    messages.append(by_name[call["name"]].invoke(call, config))
                except Exception:
                    if not catch:
                        raise
                    messages.append(failed(call))

    @chain
    async def aagent(question: str, config: Any) -> str:
        messages.append(HumanMessage(question))
        while True:
            reply = await model.ainvoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.text)
            for call in reply.tool_calls:
                try:
                    messages.append(await by_name[call["name"]].ainvoke(call, config))
                except Exception:
                    if not catch:
                        raise
                    messages.append(failed(call))

    return RunnableLambda(agent.invoke, afunc=aagent.ainvoke, name="agent"), messages


def crashing_tool(error: Callable[[], Exception]) -> BaseTool:
    @tool
    def lookup(query: str) -> str:
        """Look pages up."""
        raise error()

    return lookup


ERRORS: dict[str, Callable[[], Exception]] = {
    "runtime": lambda: RuntimeError("disk on fire"),
    "unprintable": Unprintable,
}


def invoke(runnable: Runnable[Any, Any], value: Any, config: Any, mode: str) -> Any:
    if mode == "sync":
        return runnable.invoke(value, config)
    return asyncio.run(runnable.ainvoke(value, config))


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("unicite", ["handler", "cite_tools", "with_citations"])
@pytest.mark.parametrize("error", sorted(ERRORS))
def test_a_raising_tool_fails_the_run_as_without_unicite(
    mode: str, unicite: str, error: str
) -> None:
    def run(cited: bool) -> tuple[tuple[Any, ...], CitationCallbackHandler]:
        handler = CitationCallbackHandler()
        tools = [crashing_tool(ERRORS[error])]
        if cited and unicite == "cite_tools":
            tools = list(cite_tools(tools))
        agent, _ = make_agent(scripted(AIMessage("", tool_calls=[tool_call("lookup")])), tools)
        runnable: Runnable[Any, Any] = agent
        if cited and unicite == "with_citations":
            runnable = with_citations(agent)
        config = config_of(handler if cited and unicite != "with_citations" else None)
        return outcome(lambda: invoke(runnable, "Millau ?", config, mode)), handler

    bare, _ = run(cited=False)
    seen, handler = run(cited=True)
    assert bare[0] == "raised"
    assert bare[1] is type(ERRORS[error]())
    assert seen == bare
    assert handler.answer is None
    assert handler.active_runs == 0


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_tool_error_the_agent_handles_reads_as_without_unicite(mode: str) -> None:
    """``handle_tool_error``: the agent sees the same error message, and the answer says so."""

    def run(cited: bool) -> tuple[Any, list[BaseMessage], CitationCallbackHandler]:
        @tool
        def lookup(query: str) -> str:
            """Look pages up."""
            raise ToolException("HTTP 503: service unavailable")

        lookup.handle_tool_error = True
        handler = CitationCallbackHandler()
        model = scripted(AIMessage("", tool_calls=[tool_call("lookup")]), AIMessage("Rien."))
        agent, transcript = make_agent(model, list(cite_tools([lookup])) if cited else [lookup])
        config = config_of(handler if cited else None)
        return invoke(agent, "Millau ?", config, mode), transcript, handler

    bare, bare_transcript, _ = run(cited=False)
    seen, transcript, handler = run(cited=True)
    assert seen == bare == "Rien."
    [bare_error] = [m for m in bare_transcript if isinstance(m, ToolMessage)]
    [error] = [m for m in transcript if isinstance(m, ToolMessage)]
    assert (error.content, error.status) == (bare_error.content, bare_error.status)
    assert error.status == "error"
    assert handler.answer is not None
    assert any("503" in d for d in handler.answer.diagnostics)
    assert handler.active_runs == 0


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("error", sorted(ERRORS))
def test_an_agent_that_catches_a_tool_failure_gets_a_diagnostic(mode: str, error: str) -> None:
    def run(cited: bool) -> tuple[Any, CitationCallbackHandler]:
        handler = CitationCallbackHandler()
        model = scripted(
            AIMessage("", tool_calls=[tool_call("lookup")]), AIMessage("Je ne sais pas.")
        )
        agent, _ = make_agent(model, [crashing_tool(ERRORS[error])], catch=True)
        return invoke(agent, "Millau ?", config_of(handler if cited else None), mode), handler

    bare, _ = run(cited=False)
    seen, handler = run(cited=True)
    assert seen == bare == "Je ne sais pas."
    answer = handler.answer
    assert answer is not None
    assert answer.text == "Je ne sais pas."
    expected = {
        "runtime": "lookup failed: RuntimeError: disk on fire",
        "unprintable": "lookup failed: Unprintable: (its message could not be read)",
    }[error]
    assert expected in answer.diagnostics


# --- a retriever returning garbage --------------------------------------------------------------


def good() -> Document:
    return Document(
        id="millau",
        page_content="Le viaduc de Millau culmine à 343 mètres.",
        metadata={"source": MILLAU, "title": "Viaduc de Millau"},
    )


def with_metadata(**extra: Any) -> Document:
    document = good()
    return Document(
        id=document.id, page_content=document.page_content, metadata={**document.metadata, **extra}
    )


GARBAGE: dict[str, Callable[[], list[Any]]] = {
    "none fields": lambda: [
        good(),
        Document.model_construct(id=None, page_content=None, metadata={"source": None}),
        Document.model_construct(id=None, page_content="Sans métadonnées.", metadata=None),
    ],
    "text not a string": lambda: [
        good(),
        Document.model_construct(
            id=7, page_content=12345, metadata={"source": "https://x.example.org/n"}
        ),
    ],
    "odd metadata types": lambda: [
        with_metadata(
            tags={"pont", "viaduc"},
            published_date=dt.datetime(2004, 12, 14, tzinfo=dt.timezone.utc),
            score=Decimal("0.87"),
            nested={"a": [1, {"b": None}], 2: "clé entière"},
            nan=float("nan"),
            raw=b"\xff\xfe",
            kind=Document,
        )
    ],
    "huge metadata": lambda: [
        with_metadata(blob="x" * 2_000_000, **{f"field_{n}": n for n in range(20_000)})
    ],
    "values that raise on str": lambda: [
        with_metadata(page=Unreadable()),
        Document(page_content="Un autre pont.", metadata={"source": Unreadable()}),
    ],
    "not documents": lambda: [good(), None, 42, "texte brut", Unreadable(), [good()]],
}
"""Each list holds the Millau page, readable, among garbage."""

CLEAN = {"huge metadata"}
"""Cases where nothing is lost: every document gives a source and nothing is reported."""


class GarbageRetriever(BaseRetriever):
    """A retriever whose output breaks LangChain's contract (it returns what it was given)."""

    items: list[Any]

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return self.items


def user_format(items: list[Any]) -> str:
    """The application's own formatting, which copes with anything."""
    return "\n".join(f"[{n}] {type(item).__name__}" for n, item in enumerate(items, start=1))


def garbage_rag(retriever: BaseRetriever) -> Runnable[str, str]:
    prompt = ChatPromptTemplate.from_messages([("system", "{sources}"), ("human", "{question}")])
    return (
        {"sources": retriever | user_format, "question": RunnablePassthrough()}
        | prompt
        | ParrotFakeChatModel()
        | StrOutputParser()
    )


def fingerprint(items: list[Any]) -> list[tuple[Any, ...]]:
    """Identity of each item and of its fields: the handler must not touch the documents."""
    prints = []
    for item in items:
        metadata = getattr(item, "metadata", None)
        values = [id(value) for value in (metadata or {}).values()]
        prints.append((id(item), id(getattr(item, "page_content", None)), id(metadata), *values))
    return prints


@pytest.mark.parametrize("case", sorted(GARBAGE))
def test_a_retriever_returning_garbage(case: str) -> None:
    items = GARBAGE[case]()
    chain_ = garbage_rag(GarbageRetriever(items=items))
    before = fingerprint(items)
    handler = CitationCallbackHandler()

    bare = outcome(lambda: chain_.invoke(QUESTION))
    seen = outcome(lambda: chain_.invoke(QUESTION, config={"callbacks": [handler]}))
    assert seen == bare == ("returned", QUESTION)
    assert fingerprint(items) == before

    answer = handler.answer
    assert answer is not None
    # The readable Millau page is never lost, and the marker resolves to it.
    assert cited_urls(answer) == [[MILLAU]]
    assert answer.sources[0].title == "Viaduc de Millau"
    if case in CLEAN:
        assert len(answer.sources) == len(items)
        assert answer.diagnostics == []
    else:
        assert any(d.startswith("GarbageRetriever: ") for d in answer.diagnostics)
    assert handler.active_runs == 0


@pytest.mark.parametrize("case", sorted(GARBAGE))
def test_number_sources_lists_the_readable_documents_of_garbage(case: str) -> None:
    """The prompt side reads the same garbage without failing the chain."""
    block = number_sources().invoke(GARBAGE[case]())
    assert block.startswith("[sid:1] Viaduc de Millau\nLe viaduc de Millau culmine à 343 mètres.")


def test_skipped_garbage_is_named() -> None:
    handler = CitationCallbackHandler()
    garbage_rag(GarbageRetriever(items=GARBAGE["not documents"]())).invoke(
        QUESTION, config={"callbacks": [handler]}
    )
    assert handler.answer is not None
    assert (
        "GarbageRetriever: 5 retrieved items are not documents "
        "(NoneType, Unreadable, int, list, str); skipped"
    ) in handler.answer.diagnostics


def test_unreadable_metadata_is_named() -> None:
    handler = CitationCallbackHandler()
    garbage_rag(GarbageRetriever(items=GARBAGE["odd metadata types"]())).invoke(
        QUESTION, config={"callbacks": [handler]}
    )
    answer = handler.answer
    assert answer is not None
    [note] = [d for d in answer.diagnostics if "metadata" in d]
    # Undecodable bytes and a class are left out; dates, sets, decimals and nested data stay.
    assert note.endswith("could not be read and was ignored: kind, raw")
    assert answer.sources[0].published_at == dt.datetime(2004, 12, 14, tzinfo=dt.timezone.utc)


# --- provider HTTP errors and broken streams (the real OpenAI SDK, a fake transport) ------------


def chat_chunk(text: str | None, finish: str | None = None) -> str:
    delta = {} if text is None else {"content": text}
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n"


STREAM_START = [chat_chunk("Le viaduc de Millau "), chat_chunk("culmine à 343 mètres [1]")]
CUT_EVENT = 'data: {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choi'
COMPLETE = [*STREAM_START, chat_chunk("."), chat_chunk(None, "stop"), "data: [DONE]\n\n"]


class Body:
    """A response body sent in parts; it may end with a transport error (a reset connection)."""

    def __init__(self, parts: list[str], error: Exception | None = None) -> None:
        self.parts = parts
        self.error = error

    def __iter__(self) -> Iterator[bytes]:
        for part in self.parts:
            yield part.encode("utf-8")
        if self.error is not None:
            raise self.error

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self:
            await asyncio.sleep(0)
            yield part


class Streamed(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A `Body` as the response stream of a sync or an async client."""

    def __init__(self, body: Body) -> None:
        self.body = body

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.body)

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self.body.__aiter__()


def openai_model(status: int, body: Body | dict[str, Any]) -> Any:
    """`ChatOpenAI` over a transport answering every request with `status` and `body`."""
    langchain_openai = pytest.importorskip("langchain_openai")

    def respond(request: httpx.Request) -> httpx.Response:
        headers = {"x-request-id": "req_fault_1"}
        if isinstance(body, Body):
            headers["content-type"] = "text/event-stream"
            return httpx.Response(status, headers=headers, stream=Streamed(body))
        return httpx.Response(status, json=body, headers=headers)

    transport = httpx.MockTransport(respond)
    return langchain_openai.ChatOpenAI(
        model="gpt-4o",
        api_key="mock-api-key",
        max_retries=0,
        http_client=httpx.Client(transport=transport),
        http_async_client=httpx.AsyncClient(transport=transport),
    )


ERROR_BODIES = {
    400: {
        "error": {
            "message": "Invalid 'messages[0].content': string too long.",
            "type": "invalid_request_error",
            "param": "messages[0].content",
            "code": "string_above_max_length",
        }
    },
    429: {
        "error": {
            "message": "Rate limit reached for gpt-4o: 30000 tokens per min.",
            "type": "tokens",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    },
}


def millau_retriever() -> BaseRetriever:
    return GarbageRetriever(items=[good()])


def provider_rag(model: Runnable[Any, Any]) -> Runnable[str, str]:
    prompt = ChatPromptTemplate.from_messages([("system", "{sources}"), ("human", "{question}")])
    return (
        {"sources": millau_retriever() | user_format, "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )


def consume(runnable: Runnable[Any, Any], config: Any, mode: str) -> tuple[Any, ...]:
    """Invoke or stream; a stream's outcome includes the chunks seen before any error."""
    chunks: list[Any] = []

    def stream() -> list[Any]:
        chunks.extend(runnable.stream(QUESTION, config))
        return chunks

    async def astream() -> list[Any]:
        async for chunk in runnable.astream(QUESTION, config):
            chunks.append(chunk)
        return chunks

    call: Callable[[], Any] = {
        "invoke": lambda: runnable.invoke(QUESTION, config),
        "ainvoke": lambda: asyncio.run(runnable.ainvoke(QUESTION, config)),
        "stream": stream,
        "astream": lambda: asyncio.run(astream()),
    }[mode]
    result = outcome(call)
    return (*result, list(chunks))


@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream", "astream"])
@pytest.mark.parametrize("status", sorted(ERROR_BODIES))
def test_a_provider_error_body_propagates_unchanged(status: int, mode: str) -> None:
    model = openai_model(status, ERROR_BODIES[status])
    handler = CitationCallbackHandler()
    bare = consume(provider_rag(model), {}, mode)
    seen = consume(provider_rag(model), {"callbacks": [handler]}, mode)
    assert bare[0] == "raised"
    assert bare[3] == status
    assert bare[4] == ERROR_BODIES[status]["error"]
    assert seen == bare
    assert handler.answer is None
    assert handler.active_runs == 0

    # with_citations raises the very same error.
    wrapped = outcome(lambda: with_citations(provider_rag(model)).invoke(QUESTION))
    assert wrapped == bare[:-1]


def test_a_fallback_model_answers_and_the_answer_says_why() -> None:
    """A 429 from the first model, a fallback model answers: the run's answer notes the 429."""

    def chain_() -> Runnable[str, str]:
        fallback = GenericFakeChatModel(messages=iter([AIMessage(QUESTION)]))
        return provider_rag(openai_model(429, ERROR_BODIES[429]).with_fallbacks([fallback]))

    handler = CitationCallbackHandler()
    bare = outcome(lambda: chain_().invoke(QUESTION))
    seen = outcome(lambda: chain_().invoke(QUESTION, config={"callbacks": [handler]}))
    assert seen == bare == ("returned", QUESTION)
    answer = handler.answer
    assert answer is not None
    assert cited_urls(answer) == [[MILLAU]]
    [note] = [d for d in answer.diagnostics if "model run failed" in d]
    assert note.startswith("a model run failed: ")
    assert "RateLimitError: Error code: 429" in note


BROKEN_STREAMS = {
    "connection reset mid-event": lambda: Body(
        [*STREAM_START, CUT_EVENT], httpx.ReadError("connection reset")
    ),
    "error event mid-stream": lambda: Body(
        [*STREAM_START, 'data: {"error": {"message": "The server had an error", "type": "x"}}\n\n']
    ),
}


@pytest.mark.parametrize("mode", ["stream", "astream", "invoke"])
@pytest.mark.parametrize("case", sorted(BROKEN_STREAMS))
def test_a_stream_cut_off_raises_as_without_unicite(case: str, mode: str) -> None:
    model = openai_model(200, BROKEN_STREAMS[case]()).bind(stream=True)
    handler = CitationCallbackHandler()
    bare = consume(provider_rag(model), {}, mode)
    seen = consume(provider_rag(model), {"callbacks": [handler]}, mode)
    assert bare[0] == "raised"
    if mode != "invoke":
        assert "".join(bare[-1]) == "Le viaduc de Millau culmine à 343 mètres [1]"
    assert seen == bare
    assert handler.answer is None
    assert handler.active_runs == 0


def test_with_citations_streams_what_arrived_then_raises_the_same_error() -> None:
    """The text shown before the cut is what the bare chain streamed, held-back markers aside."""
    model = openai_model(200, BROKEN_STREAMS["connection reset mid-event"]())
    bare = consume(provider_rag(model), {}, "stream")
    shown: list[str] = []

    def cited_stream() -> None:
        for chunk in with_citations(provider_rag(model)).stream(QUESTION):
            shown.append(chunk.get("answer", ""))

    assert outcome(cited_stream) == bare[:-1]
    # Only the marker at the cut (and the space before it) is held back.
    assert "".join(shown) == "Le viaduc de Millau culmine à 343 mètres"
    assert "".join(bare[-1]).startswith("".join(shown))


@pytest.mark.parametrize("case", sorted(BROKEN_STREAMS))
def test_a_cut_stream_the_chain_survives_keeps_the_partial_answer(case: str) -> None:
    """Code that catches the cut and returns what arrived: the answer cites it and says so."""
    openai = pytest.importorskip("openai")
    model = openai_model(200, BROKEN_STREAMS[case]())

    caught: list[Exception] = []

    @chain
    def partial(messages: Any, config: Any) -> str:
        text: list[str] = []
        try:
            for chunk in model.stream(messages, config):
                text.append(str(chunk.text))
        except openai.APIError as err:
            caught.append(err)
            text.append(" …")
        return "".join(text)

    prompt = ChatPromptTemplate.from_messages([("system", "{sources}"), ("human", "{question}")])
    chain_ = {
        "sources": millau_retriever() | user_format,
        "question": RunnablePassthrough(),
    } | (prompt | partial)
    handler = CitationCallbackHandler()
    bare = outcome(lambda: chain_.invoke(QUESTION))
    seen = outcome(lambda: chain_.invoke(QUESTION, config={"callbacks": [handler]}))
    assert seen == bare == ("returned", "Le viaduc de Millau culmine à 343 mètres [1] …")
    answer = handler.answer
    assert answer is not None
    assert answer.text == "Le viaduc de Millau culmine à 343 mètres [1]"
    assert cited_urls(answer) == [[MILLAU]]
    [note] = [d for d in answer.diagnostics if "mid-stream" in d]
    assert f"({type(caught[-1]).__name__}: {caught[-1]})" in note


@pytest.mark.parametrize("complete", [False, True], ids=["cut", "complete"])
def test_a_stream_that_just_stops_is_reported(complete: bool) -> None:
    """A stream ending mid-event without an error: the same text, and a diagnostic."""
    parts = COMPLETE if complete else [*STREAM_START, CUT_EVENT]
    model = openai_model(200, Body(parts))
    handler = CitationCallbackHandler()
    bare = consume(provider_rag(model), {}, "stream")
    seen = consume(provider_rag(model), {"callbacks": [handler]}, "stream")
    assert seen == bare
    assert bare[0] == "returned"
    answer = handler.answer
    assert answer is not None
    assert answer.text == "".join(bare[1])
    assert cited_urls(answer) == [[MILLAU]]
    cut = [d for d in answer.diagnostics if "ended before a finish reason" in d]
    assert len(cut) == (0 if complete else 1)


# --- a stream the caller stops reading ----------------------------------------------------------


def test_a_stream_the_caller_abandons_leaves_nothing_behind() -> None:
    handler = CitationCallbackHandler()
    model = GenericFakeChatModel(messages=iter([AIMessage(QUESTION)] * 2))
    chain_ = provider_rag(model)
    config: Any = {"callbacks": [handler]}

    stream: Any = chain_.stream(QUESTION, config)
    assert next(stream)
    assert handler.active_runs > 0
    stream.close()
    assert handler.active_runs == 0

    async def abandon() -> None:
        astream: Any = chain_.astream(QUESTION, config)
        assert await astream.__anext__()
        assert handler.active_runs > 0
        await astream.aclose()

    # Async generators nested inside LangChain's are finalized by the event loop at the latest.
    asyncio.run(abandon())
    assert handler.active_runs == 0
    assert handler._runs.roots == {}
