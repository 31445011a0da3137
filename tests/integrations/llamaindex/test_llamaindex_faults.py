"""Faults: a raising retriever or tool, garbage nodes, a broken stream, a provider error.

Each fault runs through the same chain with and without unicite: LlamaIndex's
`CitationQueryEngine` against `CitedQueryEngine`, and against itself under a
`CitationEventHandler`. What the caller sees (the return value, or the exception's type and
message) must be the same; where there is a result, its `CitedAnswer` says in ``diagnostics``
what went wrong, and the handler keeps no state of the failed run.
"""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

import asyncio
import gc
import importlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from _llamaindex_fakes import CORPUS, ScriptedLLM, corpus_nodes
from llama_index.core import get_response_synthesizer
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.base.response.schema import AsyncStreamingResponse, StreamingResponse
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms import (
    ChatMessage,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.query_engine.citation_query_engine import (
    CITATION_QA_TEMPLATE,
    CITATION_REFINE_TEMPLATE,
)
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode
from llama_index.core.tools import FunctionTool

from unicite import CitedAnswer
from unicite_llamaindex import CitationEventHandler, CitationPostprocessor, CitedQueryEngine

QUERY = "Quelle est l’amplitude des marées au Mont-Saint-Michel ?"
# Cites the first node shown: renumbering leaves it as the model wrote it.
REPLY = "Les marées atteignent 14 mètres [1]. Le pont date de 2014."
MAREES = CORPUS[0][0]

# llama-index-workflows inspects agents' members, touching pydantic's deprecated attributes.
IGNORE_V20 = pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
IGNORE_V211 = pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211")


# --- running a chain with and without unicite ------------------------------------------------


class Retriever(BaseRetriever):
    """Returns what it is given (garbage included), or raises what it is given."""

    def __init__(self, items: Sequence[Any] = (), error: Exception | None = None) -> None:
        super().__init__()
        self.items = list(items)
        self.error = error

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.error is not None:
            raise self.error
        return list(self.items)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        await asyncio.sleep(0)
        return self._retrieve(query_bundle)

    def _handle_recursive_retrieval(
        self, query_bundle: QueryBundle, nodes: list[NodeWithScore]
    ) -> list[NodeWithScore]:
        # Duplicates are dropped by node id, as llama-index-core does from 0.14.19 on: before,
        # it hashed each node with its metadata printed, so odd metadata failed in the
        # retriever itself, before any adapter saw it.
        seen: set[str] = set()
        return [n for n in nodes if not (n.node.node_id in seen or seen.add(n.node.node_id))]


@dataclass
class Trial:
    """What one chain did: its outcome as the caller sees it, and what unicite made of it."""

    outcome: tuple[Any, ...]
    response: Any = None
    events: list[CitedAnswer] = field(default_factory=list)
    """The answers the handler published."""
    error: BaseException | None = None

    @property
    def answer(self) -> CitedAnswer:
        """The cited answer: the engine's, else the last one the handler published."""
        if self.response is not None and "citations" in (self.response.metadata or {}):
            answer = self.response.metadata["citations"]
        else:
            answer = self.events[-1]
        assert isinstance(answer, CitedAnswer)
        return answer


def _seen(response: Any) -> tuple[Any, ...]:
    """What a caller sees of a result: a response's text and the text of its source nodes."""
    if not hasattr(response, "source_nodes"):
        return ("returned", response)
    nodes = [n.node.get_content() for n in response.source_nodes]
    return ("returned", response.response, nodes)


def _raised(error: BaseException) -> tuple[Any, ...]:
    return ("raised", type(error), str(error))


def attempt(run: Callable[[], Any], *, handler: bool = False) -> Trial:
    """Run a chain, recording what it returned or raised (and, with a handler, its answers)."""
    events: list[CitedAnswer] = []
    watcher = CitationEventHandler(on_citations=events.append) if handler else None
    if watcher is not None:
        watcher.attach()
    try:
        response = run()
    except Exception as err:
        return Trial(_raised(err), events=events, error=err)
    finally:
        if watcher is not None:
            watcher.detach()
            assert watcher._state_size() == 0
    return Trial(_seen(response), response, events)


def three_ways(
    retriever: BaseRetriever, make_llm: Callable[[], Any], **kwargs: Any
) -> tuple[Trial, Trial, Trial]:
    """`CitationQueryEngine`, `CitedQueryEngine`, and `CitationQueryEngine` under the handler."""
    plain = attempt(
        lambda: CitationQueryEngine(retriever=retriever, llm=make_llm(), **kwargs).query(QUERY)
    )
    cited = attempt(
        lambda: CitedQueryEngine(retriever=retriever, llm=make_llm(), **kwargs).query(QUERY)
    )
    watched = attempt(
        lambda: CitationQueryEngine(retriever=retriever, llm=make_llm(), **kwargs).query(QUERY),
        handler=True,
    )
    assert cited.outcome == plain.outcome
    assert watched.outcome == plain.outcome
    return plain, cited, watched


def corpus() -> list[NodeWithScore]:
    return [NodeWithScore(node=node, score=1.0) for node in corpus_nodes()]


# --- a retriever (the query engine's tool) that raises ---------------------------------------


def test_a_raising_retriever_propagates_unchanged() -> None:
    error = ConnectionError("the vector store is unreachable")
    plain, cited, watched = three_ways(Retriever(error=error), lambda: ScriptedLLM(reply=REPLY))
    assert plain.outcome == _raised(error)
    # The very exception object reaches the caller, not a wrapper or a copy.
    assert cited.error is error
    assert watched.error is error
    assert watched.events == []

    async def run(engine: Any) -> Any:
        return await engine.aquery(QUERY)

    for make in (CitationQueryEngine, CitedQueryEngine):
        engine = make(retriever=Retriever(error=error), llm=ScriptedLLM(reply=REPLY))
        with pytest.raises(ConnectionError) as caught:
            asyncio.run(run(engine))
        assert caught.value is error


# --- a retriever that returns garbage --------------------------------------------------------


def _node(**fields: Any) -> NodeWithScore:
    """A node built without validation, as a careless retriever can."""
    fields.setdefault("id_", "odd")
    fields.setdefault("text", "Les marées atteignent quatorze mètres.")
    fields.setdefault("metadata", {})
    return NodeWithScore(node=TextNode.model_construct(**fields), score=1.0)


GARBAGE_THAT_FAILS: dict[str, list[Any]] = {
    "text is None": [_node(text=None)],
    "text is an int": [_node(text=12345)],
    "metadata is None": [_node(metadata=None)],
    "None among the nodes": [*corpus()[:1], None],
    "a str among the nodes": ["Les marées atteignent 14 mètres."],
}


@pytest.mark.parametrize("items", GARBAGE_THAT_FAILS.values(), ids=GARBAGE_THAT_FAILS.keys())
def test_garbage_llamaindex_refuses_fails_the_same_way(items: list[Any]) -> None:
    llm = ScriptedLLM(reply=REPLY)
    plain, _, watched = three_ways(Retriever(items), lambda: llm)
    assert plain.outcome[0] == "raised"
    assert watched.events == []
    assert llm.prompts == []  # it failed before asking the model


def test_metadata_of_the_wrong_types_is_reported() -> None:
    odd = _node(
        metadata={
            "url": 42,
            "title": ["Les", "marées"],
            "page_label": {"n": 7},
            "published": math.nan,
            "author": None,
        }
    )
    odd.score = math.nan
    _, cited, watched = three_ways(Retriever([odd]), lambda: ScriptedLLM(reply=REPLY))
    assert cited.outcome[1] == REPLY
    for answer in (cited.answer, watched.answer):
        [source] = answer.sources
        assert (source.id, source.url, source.title) == ("odd", None, None)
        assert [c.source_ids for c in answer.citations] == [["odd"]]
        assert answer.diagnostics == [
            "node odd: metadata 'url' is not text (type int); ignored",
            "node odd: metadata 'title' is not text (type list); ignored",
            "node odd: metadata 'page_label' is not a page (type dict); ignored",
        ]


def test_huge_metadata() -> None:
    huge = _node(
        id_="huge",
        metadata={
            "url": "https://www.ot-montsaintmichel.com/decouvrir/les-marees",
            "blob": "marée " * 5_000,
            "tags": list(range(2_000)),
            "nested": {"level": {"deeper": {"values": ["x"] * 1_000}}},
        },
    )
    _, cited, watched = three_ways(Retriever([huge]), lambda: ScriptedLLM(reply=REPLY))
    assert cited.outcome[1] == REPLY
    for answer in (cited.answer, watched.answer):
        [source] = answer.sources
        assert source.url == "https://www.ot-montsaintmichel.com/decouvrir/les-marees"
        assert [c.source_ids for c in answer.citations] == [["huge"]]
        assert answer.diagnostics == []


class _Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("this value cannot be printed")

    __repr__ = __str__


def test_metadata_that_cannot_be_printed() -> None:
    def evil() -> list[NodeWithScore]:
        return [_node(id_="evil", metadata={"title": _Unprintable(), "url": _Unprintable()})]

    # LlamaIndex prints node metadata in its prompt: it fails, under the handler as without.
    plain = attempt(
        lambda: CitationQueryEngine(retriever=Retriever(evil()), llm=ScriptedLLM()).query(QUERY)
    )
    watched = attempt(
        lambda: CitationQueryEngine(retriever=Retriever(evil()), llm=ScriptedLLM()).query(QUERY),
        handler=True,
    )
    assert (
        plain.outcome == watched.outcome == ("raised", RuntimeError, "this value cannot be printed")
    )
    # Told to show metadata in the prompt, the cited engine fails the same way.
    shown = attempt(
        lambda: CitedQueryEngine(
            retriever=Retriever(evil()), llm=ScriptedLLM(), metadata_mode=MetadataMode.LLM
        ).query(QUERY)
    )
    assert shown.outcome == plain.outcome
    # By default its prompt shows no metadata (see CitationPostprocessor): it answers, and says
    # which metadata it could not read.
    cited = attempt(
        lambda: CitedQueryEngine(retriever=Retriever(evil()), llm=ScriptedLLM(reply=REPLY)).query(
            QUERY
        )
    )
    assert cited.outcome[:2] == ("returned", REPLY)
    assert cited.answer.diagnostics == [
        "node evil: metadata 'url' is not text (type _Unprintable); ignored",
        "node evil: metadata 'title' is not text (type _Unprintable); ignored",
    ]
    assert [c.source_ids for c in cited.answer.citations] == [["evil"]]


def test_the_postprocessor_reports_garbage_instead_of_failing() -> None:
    nodes = [
        _node(id_="none-text", text=None),
        _node(id_="int-text", text=12345),
        _node(id_="no-metadata", metadata=None),
        _node(id_="evil", metadata={"title": _Unprintable()}),
        None,
    ]
    labelled = CitationPostprocessor()._label_nodes(nodes)  # type: ignore[arg-type]
    assert [n.node.node_id for n in labelled.nodes] == [
        "none-text",
        "int-text",
        "no-metadata",
        "evil",
    ]
    assert [n.node.get_content().split("\n")[0] for n in labelled.nodes] == [
        f"Source {k}:" for k in range(1, 5)
    ]
    assert labelled.diagnostics == [
        "node 4 is a NoneType, not a NodeWithScore; skipped",
        "node none-text: its text is not a str (type NoneType); no content",
        "node int-text: its text is not a str (type int); no content",
        "node no-metadata: its metadata is not a dict (type NoneType); ignored",
        "node evil: metadata 'title' is not text (type _Unprintable); ignored",
    ]


# --- an agent tool that raises ---------------------------------------------------------------


def _agent(tool: Callable[..., Any], reply: str) -> FunctionAgent:
    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        if not any(m.role == "tool" for m in messages):
            call = ToolCallBlock(
                tool_call_id="call_1", tool_name="search_docs", tool_kwargs={"query": "marées"}
            )
            return ChatMessage(role="assistant", blocks=[call])
        return ChatMessage(role="assistant", content=reply)

    llm = MockFunctionCallingLLM(response_generator=respond, is_chat_model=True)
    return FunctionAgent(tools=[FunctionTool.from_defaults(tool, name="search_docs")], llm=llm)


@IGNORE_V20
@IGNORE_V211
def test_a_tool_that_raises() -> None:
    def search_docs(query: str) -> str:
        """Search the Mont-Saint-Michel documents."""
        raise ValueError("the search index is offline")

    reply = "La recherche a échoué [1]."

    async def main() -> str:
        return str(await _agent(search_docs, reply).run(QUERY))

    def run() -> Any:
        return asyncio.run(main())

    plain = attempt(run)
    watched = attempt(run, handler=True)
    # LlamaIndex hands the error to the model, which answers: the same answer either way.
    assert plain.outcome == watched.outcome
    assert plain.response == reply
    [answer] = watched.events
    # The error message is no source, so the model's [1] cites nothing; the answer says why.
    assert answer.sources == []
    assert answer.citations == []
    assert answer.diagnostics == [
        "tool 'search_docs' (call call_1) failed (ValueError: the search index is offline); "
        "its error message went to the model and is not a source",
        f"marker '[1]' at {reply.index('[1]')}: source 1 out of range (0 sources given)",
    ]


# --- a stream that breaks off ----------------------------------------------------------------


class BreakingLLM(ScriptedLLM):
    """Streams the first `give` tokens of its reply, then raises `error`."""

    give: int = 5
    _error: Exception = PrivateAttr(default_factory=lambda: ConnectionError("connection reset"))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        pieces = [REPLY[n : n + 7] for n in range(0, len(REPLY), 7)][: self.give]
        error = self._error

        def gen() -> CompletionResponseGen:
            text = ""
            for delta in pieces:
                text += delta
                yield CompletionResponse(text=text, delta=delta)
            raise error

        return gen()

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        pieces = [REPLY[n : n + 7] for n in range(0, len(REPLY), 7)][: self.give]
        error = self._error

        async def gen() -> CompletionResponseAsyncGen:
            text = ""
            for delta in pieces:
                await asyncio.sleep(0)
                text += delta
                yield CompletionResponse(text=text, delta=delta)
            raise error

        return gen()


def _streaming(make: type[CitationQueryEngine], llm: Any, *, use_async: bool = False) -> Any:
    synthesizer = get_response_synthesizer(
        llm=llm,
        text_qa_template=CITATION_QA_TEMPLATE,
        refine_template=CITATION_REFINE_TEMPLATE,
        streaming=True,
        use_async=use_async,
    )
    return make(retriever=Retriever(corpus()), llm=llm, response_synthesizer=synthesizer)


def _read(stream: StreamingResponse) -> tuple[Any, ...]:
    """Read a stream as a caller does: the text streamed, how it ended, and the final text.

    The cited engine streams the text in pieces of its own (a marker is held back until it
    is complete), so the pieces are joined.
    """
    tokens: list[str] = []
    try:
        for token in stream.response_gen:
            tokens.append(token)
    except Exception as err:
        end = _raised(err)
    else:
        end = ("ended",)
    return ("".join(tokens), end, stream.get_response().response)


def test_a_stream_that_raises_midway() -> None:
    plain = _read(_streaming(CitationQueryEngine, BreakingLLM()).query(QUERY))
    cited_stream = _streaming(CitedQueryEngine, BreakingLLM()).query(QUERY)
    cited = _read(cited_stream)
    events: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=events.append) as handler:
        watched = _read(_streaming(CitationQueryEngine, BreakingLLM()).query(QUERY))
    assert handler._state_size() == 0
    # Same text, same error, same (empty) text afterwards, as LlamaIndex gives it.
    assert cited == plain == watched
    partial, end, _ = plain
    assert end == ("raised", ConnectionError, "connection reset")
    assert partial == REPLY[:35]
    # The answer so far is cited, and says the stream broke off.
    assert cited_stream.metadata is not None
    answer = cited_stream.metadata["citations"]
    assert answer.text == partial
    assert [c.source_ids for c in answer.citations] == [[MAREES]]
    assert answer.diagnostics == [
        "the LLM stream broke off after 35 characters: ConnectionError: connection reset"
    ]
    [watched_answer] = events
    assert watched_answer.text == partial
    assert [c.source_ids for c in watched_answer.citations] == [[MAREES]]
    assert watched_answer.diagnostics == [
        "the LLM stream broke off: ConnectionError: connection reset"
    ]


def test_an_async_stream_that_raises_midway() -> None:
    async def read(make: type[CitationQueryEngine]) -> tuple[Any, ...]:
        stream = await _streaming(make, BreakingLLM(), use_async=True).aquery(QUERY)
        assert isinstance(stream, AsyncStreamingResponse)
        tokens: list[str] = []
        try:
            async for token in stream.async_response_gen():
                tokens.append(token)
        except Exception as err:
            end = _raised(err)
        else:
            end = ("ended",)
        return "".join(tokens), end, stream.metadata

    plain = asyncio.run(read(CitationQueryEngine))
    cited = asyncio.run(read(CitedQueryEngine))
    assert cited[:2] == plain[:2]
    assert plain[1] == ("raised", ConnectionError, "connection reset")
    answer = cited[2]["citations"]
    assert answer.text == plain[0]
    assert answer.diagnostics == [
        "the LLM stream broke off after 35 characters: ConnectionError: connection reset"
    ]


def test_an_abandoned_stream_leaves_nothing_behind() -> None:
    events: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=events.append) as handler:
        stream = _streaming(CitationQueryEngine, ScriptedLLM(reply=REPLY)).query(QUERY)
        tokens = stream.response_gen
        next(tokens)
        tokens.close()
        del stream, tokens
        gc.collect()
        # The reader walked away: nothing is cited, and nothing of the run is kept.
        assert handler._state_size() == 0
    assert events == []


# A Responses stream as the OpenAI API sends it, cut before response.completed.
_EVENTS: list[dict[str, Any]] = [
    {
        "type": "response.created",
        "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []},
    },
    {
        "type": "response.output_item.added",
        "output_index": 0,
        "item": {"id": "msg_1", "type": "message", "role": "assistant", "content": []},
    },
    {
        "type": "response.content_part.added",
        "output_index": 0,
        "content_index": 0,
        "item_id": "msg_1",
        "part": {"type": "output_text", "text": "", "annotations": []},
    },
    *(
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "item_id": "msg_1",
            "delta": REPLY[n : n + 9],
        }
        for n in range(0, 36, 9)
    ),
]


class CutStreamLLM(ScriptedLLM):
    """Streams OpenAI Responses events that stop early.

    As llama-index-llms-openai does, each chunk keeps its event in ``raw`` and holds only its
    own delta as text: the whole answer is in no chunk.
    """

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        def gen() -> CompletionResponseGen:
            for event in _EVENTS:
                delta = event.get("delta", "")
                yield CompletionResponse(text=delta, delta=delta, raw=event)

        return gen()


def test_a_provider_stream_that_stops_early() -> None:
    plain = _read(_streaming(CitationQueryEngine, CutStreamLLM()).query(QUERY))
    stream = _streaming(CitedQueryEngine, CutStreamLLM()).query(QUERY)
    cited = _read(stream)
    events: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=events.append):
        _read(_streaming(CitationQueryEngine, CutStreamLLM()).query(QUERY))
    assert cited[:2] == plain[:2]
    assert plain[0] == REPLY[:36]
    assert stream.metadata is not None
    for answer in (stream.metadata["citations"], events[0]):
        assert answer.text == REPLY[:36]
        assert answer.provider == "openai"
        assert "stream ended before response.completed" in answer.diagnostics
        assert [c.source_ids for c in answer.citations] == [[MAREES]]


# --- provider errors -------------------------------------------------------------------------


def _sdk_client(sdk_class: Any, status: int, body: dict[str, Any]) -> Any:
    """An SDK client whose HTTP transport answers every request with `status` and `body`.

    SDK releases use ``httpx`` or its successor ``httpx2``: the first one the client takes.
    """
    for name in ("httpx2", "httpx"):
        try:
            http = importlib.import_module(name)
        except ImportError:
            continue

        def respond(request: Any, http: Any = http) -> Any:
            return http.Response(status, json=body, headers={"request-id": "req_test"})

        try:
            client = http.Client(transport=http.MockTransport(respond))
            return sdk_class(api_key="test-key", max_retries=0, http_client=client)
        except TypeError:
            continue
    pytest.skip(f"no HTTP client {sdk_class.__name__} accepts")


def _sdk_error_llm(provider: str, status: int, body: dict[str, Any]) -> Callable[[], Any]:
    """A model calling the provider's SDK, whose HTTP transport answers `status` with `body`."""
    sdk = pytest.importorskip(provider)
    sdk_class = sdk.OpenAI if provider == "openai" else sdk.Anthropic

    class SDKLLM(CustomLLM):
        _client: Any = PrivateAttr()

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(model_name=f"{provider}-over-mock-transport")

        @llm_completion_callback()
        def complete(
            self, prompt: str, formatted: bool = False, **kwargs: Any
        ) -> CompletionResponse:
            if provider == "openai":
                response = self._client.responses.create(model="gpt-5.2", input=prompt)
                return CompletionResponse(text=response.output_text, raw=response)
            message = self._client.messages.create(
                model="claude-opus-4-7",
                max_tokens=512,
                messages=[{"role": "user", "content": prompt}],
            )
            text = "".join(b.text for b in message.content if b.type == "text")
            return CompletionResponse(text=text, raw=message)

        @llm_completion_callback()
        def stream_complete(
            self, prompt: str, formatted: bool = False, **kwargs: Any
        ) -> CompletionResponseGen:
            raise NotImplementedError

    def make() -> SDKLLM:
        llm = SDKLLM()
        llm._client = _sdk_client(sdk_class, status, body)
        return llm

    return make


_ERRORS = {
    "openai 429": (
        "openai",
        429,
        {
            "error": {
                "message": "Rate limit reached for gpt-5.2 on tokens per min (TPM): "
                "Limit 30000, Used 30000, Requested 1200.",
                "type": "tokens",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
    ),
    "openai 400": (
        "openai",
        400,
        {
            "error": {
                "message": "Invalid value: 'web_searc'. Supported values are: 'web_search'.",
                "type": "invalid_request_error",
                "param": "tools[0].type",
                "code": "invalid_value",
            }
        },
    ),
    "anthropic 529": (
        "anthropic",
        529,
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ),
}


def _sdk_outcome(trial: Trial) -> tuple[Any, ...]:
    error = trial.error
    assert error is not None
    return (*trial.outcome, getattr(error, "status_code", None), getattr(error, "body", None))


@pytest.mark.parametrize(("provider", "status", "body"), _ERRORS.values(), ids=_ERRORS.keys())
def test_a_provider_error_body_propagates_unchanged(
    provider: str, status: int, body: dict[str, Any]
) -> None:
    make = _sdk_error_llm(provider, status, body)
    plain, cited, watched = three_ways(Retriever(corpus()), make)
    assert plain.error is not None
    assert type(plain.error).__module__.split(".")[0] == provider
    assert getattr(plain.error, "status_code", None) == status
    assert _sdk_outcome(cited) == _sdk_outcome(watched) == _sdk_outcome(plain)
    assert watched.events == []
    # A grounding policy does not replace the provider's error with its own.
    strict = attempt(
        lambda: CitedQueryEngine(
            retriever=Retriever(corpus()), llm=make(), require="citations"
        ).query(QUERY)
    )
    assert _sdk_outcome(strict) == _sdk_outcome(plain)


@IGNORE_V20
@IGNORE_V211
def test_a_provider_error_inside_an_agent() -> None:
    httpx = pytest.importorskip("httpx")
    openai = pytest.importorskip("openai")
    request = httpx.Request("POST", "https://api.openai.com/v1/responses")
    body = {"error": {"message": "The server is overloaded.", "type": "server_error"}}

    def respond(messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        response = httpx.Response(503, json=body, request=request)
        raise openai.APIStatusError("Error code: 503", response=response, body=body)

    async def main() -> Any:
        agent = FunctionAgent(
            tools=[],
            llm=MockFunctionCallingLLM(response_generator=respond, is_chat_model=True),
        )
        return await agent.run(QUERY)

    def run() -> Any:
        return asyncio.run(main())

    plain = attempt(run)
    watched = attempt(run, handler=True)
    assert plain.outcome == watched.outcome
    assert plain.outcome[:2] == ("raised", openai.APIStatusError)
    assert getattr(watched.error, "status_code", None) == 503
    assert watched.events == []


# --- the real OpenAI integration over a transport that fails ---------------------------------


def _sse(events: Sequence[dict[str, Any]]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


@pytest.fixture
def openai_llm() -> Callable[[int, str], Any]:
    """llama-index-llms-openai's `OpenAIResponses`, its HTTP answered in-process."""
    httpx = pytest.importorskip("httpx")
    integration = pytest.importorskip("llama_index.llms.openai")

    def make(status: int, body: str) -> Any:
        kind = "text/event-stream" if status == 200 else "application/json"

        def respond(request: Any) -> Any:
            return httpx.Response(status, content=body.encode(), headers={"content-type": kind})

        return integration.OpenAIResponses(
            model="gpt-5.2",
            api_key="test-key",
            max_retries=0,
            http_client=httpx.Client(transport=httpx.MockTransport(respond)),
            async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(respond)),
        )

    return make


def test_openai_integration_rate_limited(openai_llm: Callable[[int, str], Any]) -> None:
    body = json.dumps(_ERRORS["openai 429"][2])
    plain, cited, watched = three_ways(Retriever(corpus()), lambda: openai_llm(429, body))
    assert _sdk_outcome(cited) == _sdk_outcome(watched) == _sdk_outcome(plain)
    assert getattr(plain.error, "status_code", None) == 429

    async def run(make: type[CitationQueryEngine]) -> tuple[Any, ...]:
        engine = make(retriever=Retriever(corpus()), llm=openai_llm(429, body))
        try:
            await engine.aquery(QUERY)
        except Exception as err:
            return _raised(err)
        return ("returned",)

    assert asyncio.run(run(CitedQueryEngine)) == asyncio.run(run(CitationQueryEngine))


def test_openai_integration_stream_cut_mid_event(openai_llm: Callable[[int, str], Any]) -> None:
    body = _sse(_EVENTS)
    # The connection drops in the middle of the next event's data line.
    body += 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","del'
    plain = _read(_streaming(CitationQueryEngine, openai_llm(200, body)).query(QUERY))
    stream = _streaming(CitedQueryEngine, openai_llm(200, body)).query(QUERY)
    cited = _read(stream)
    events: list[CitedAnswer] = []
    with CitationEventHandler(on_citations=events.append) as handler:
        _read(_streaming(CitationQueryEngine, openai_llm(200, body)).query(QUERY))
    assert handler._state_size() == 0
    assert cited[:2] == plain[:2]
    assert plain[0] == REPLY[:36]
    assert stream.metadata is not None
    for answer in (stream.metadata["citations"], events[0]):
        assert answer.text == REPLY[:36]
        assert "stream ended before response.completed" in answer.diagnostics
        assert [c.source_ids for c in answer.citations] == [[MAREES]]
