"""`CitationCallbackHandler` on real LangChain chains and agents driven by fake chat models."""

from __future__ import annotations

import asyncio
import logging
import threading
import tracemalloc
from typing import Any
from uuid import uuid4

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    GenericFakeChatModel,
    ParrotFakeChatModel,
)
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    ToolMessage,
)
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, LLMResult
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough, chain
from langchain_core.tools import BaseTool, ToolException, tool

from unicite import CitedAnswer, GroundingRequiredError, UsageError
from unicite_langchain import (
    CITATIONS_EVENT,
    CitationCallbackHandler,
    citation_prompt,
    cite_tools,
    number_sources,
)

ANSWER = (
    "Le pont de Normandie date de 1995 [2]. Le viaduc de Millau culmine à 343 mètres [1]. "
    "Il a été inauguré le 14 décembre 2004 [1]."
)


def fake_model(*texts: str, repeat: int = 1) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=t) for t in texts] * repeat))


def rag(retriever: Runnable[Any, Any], model: Runnable[Any, Any]) -> Runnable[Any, str]:
    return (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | citation_prompt()
        | model
        | StrOutputParser()
    )


def shuffled_retriever(retriever: Runnable[Any, Any]) -> Runnable[Any, list[Document]]:
    """The retriever's documents in another order: [2] in the answer must follow the prompt."""
    return retriever | RunnableLambda(lambda docs: [docs[1], docs[0], docs[2]])


def cited_urls(answer: CitedAnswer) -> list[list[str | None]]:
    return [[answer.source(sid).url for sid in c.source_ids] for c in answer.citations]  # type: ignore[union-attr]


def comparable(answer: CitedAnswer) -> dict[str, Any]:
    data = answer.model_dump(mode="json", exclude={"extras"})
    for source in data["sources"]:
        source.pop("origin")
        source.pop("raw")
    return data


MILLAU = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"
NORMANDIE = "https://fr.wikipedia.org/wiki/Pont_de_Normandie"


# --- markers --------------------------------------------------------------------------------


def test_marker_chain_cites_the_numbered_sources(retriever: Any, question: str) -> None:
    handler = CitationCallbackHandler()
    text = rag(retriever, fake_model(ANSWER)).invoke(question, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert text == ANSWER

    # The prompt listed Millau as [sid:1] and Normandie as [sid:2].
    assert cited_urls(answer) == [[NORMANDIE], [MILLAU], [MILLAU]]
    assert [c.text for c in answer.citations] == [
        "Le pont de Normandie date de 1995",
        "Le viaduc de Millau culmine à 343 mètres",
        "Il a été inauguré le 14 décembre 2004",
    ]
    assert {c.origin for c in answer.citations} == {"marker"}
    assert answer.extras["citation_origin"] == "marker"
    # Renumbered in first-cited order: Normandie is now [1], Millau [2]; the third retrieved
    # document, never cited, is not listed (sources="cited", the default).
    assert answer.text == (
        "Le pont de Normandie date de 1995 [1]. Le viaduc de Millau culmine à 343 mètres [2]. "
        "Il a été inauguré le 14 décembre 2004 [2]."
    )
    assert [s.url for s in answer.sources] == [NORMANDIE, MILLAU]
    assert answer.sources[0].origin is not None
    assert answer.sources[0].origin.tool == "VectorStoreRetriever"
    assert handler.answers[answer.extras["langchain_run_id"]] == answer
    assert handler.active_runs == 0


def test_prompt_numbers_are_ledger_sids(retriever: Any, question: str) -> None:
    """Documents reordered after retrieval keep their numbers: [2] names what the prompt named."""
    prompts: list[str] = []

    class Spy(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
            prompts.append(messages[0][0].content)

    handler = CitationCallbackHandler()
    rag(shuffled_retriever(retriever), fake_model("Le pont date de 1995 [2].")).invoke(
        question, config={"callbacks": [handler, Spy()]}
    )
    [prompt] = prompts
    assert prompt.index("[sid:2] Pont de Normandie") < prompt.index("[sid:1] Viaduc de Millau")
    assert handler.answer is not None
    assert cited_urls(handler.answer) == [[NORMANDIE]]


def test_invalid_markers_are_dropped_and_reported(retriever: Any, question: str) -> None:
    handler = CitationCallbackHandler(renumber=False)
    rag(retriever, fake_model("Le viaduc culmine à 343 mètres [1]. Faux [9].")).invoke(
        question, config={"callbacks": [handler]}
    )
    answer = handler.answer
    assert answer is not None
    assert answer.text == "Le viaduc culmine à 343 mètres [1]. Faux."
    assert any("[9]" in d for d in answer.diagnostics)
    assert cited_urls(answer) == [[MILLAU]]


def test_stream_gives_the_invoke_answer(retriever: Any, question: str) -> None:
    invoked = CitationCallbackHandler()
    streamed = CitationCallbackHandler()
    rag(retriever, fake_model(ANSWER)).invoke(question, config={"callbacks": [invoked]})
    chunks = list(
        rag(retriever, fake_model(ANSWER)).stream(question, config={"callbacks": [streamed]})
    )
    assert len(chunks) > 10
    assert "".join(chunks) == ANSWER
    assert invoked.answer is not None
    assert streamed.answer is not None
    assert comparable(streamed.answer) == comparable(invoked.answer)


def test_tokens_stand_in_when_the_model_run_ends_without_a_message() -> None:
    """A model run whose end carries no generation: the streamed chunks are the answer."""
    handler = CitationCallbackHandler()
    manager = CallbackManager.configure(inheritable_callbacks=[handler])
    run = manager.on_chain_start(None, {"question": "?"})
    child = run.get_child()
    [llm] = child.on_chat_model_start(None, [[HumanMessage("?")]])
    for piece in ("Le viaduc ", "culmine ", "à 343 mètres."):
        llm.on_llm_new_token(
            piece, chunk=ChatGenerationChunk(message=AIMessageChunk(content=piece))
        )
    llm.on_llm_end(LLMResult(generations=[[]]))
    run.on_chain_end({"output": None})
    assert handler.answer is not None
    assert handler.answer.text == "Le viaduc culmine à 343 mètres."


@pytest.mark.parametrize("mode", ["async", "events"])
def test_async_runs_and_astream_events(retriever: Any, question: str, mode: str) -> None:
    handler = CitationCallbackHandler()
    chain_ = rag(retriever, fake_model(ANSWER))

    async def go() -> list[dict[str, Any]]:
        if mode == "async":
            await chain_.ainvoke(question, config={"callbacks": [handler]})
            return []
        return [
            event
            async for event in chain_.astream_events(
                question, config={"callbacks": [handler]}, version="v2"
            )
        ]

    events = asyncio.run(go())
    answer = handler.answer
    assert answer is not None
    assert cited_urls(answer) == [[NORMANDIE], [MILLAU], [MILLAU]]
    if mode == "events":
        custom = [e for e in events if e["event"] == "on_custom_event"]
        assert [e["name"] for e in custom] == [CITATIONS_EVENT]
        data = custom[0]["data"]
        assert data["answer"] == answer
        assert data["origin"] == "marker"
        root_end = next(
            n for n, e in enumerate(events) if e["event"] == "on_chain_end" and not e["parent_ids"]
        )
        # The event belongs to the root run and comes before the root run's end.
        assert custom[0]["run_id"] == events[root_end]["run_id"]
        assert events.index(custom[0]) < root_end


def test_sync_stream_events_reach_other_handlers(retriever: Any, question: str) -> None:
    seen: list[tuple[str, Any]] = []

    class Listener(BaseCallbackHandler):
        def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
            seen.append((name, data))

    handler = CitationCallbackHandler()
    rag(retriever, fake_model(ANSWER)).invoke(question, config={"callbacks": [handler, Listener()]})
    assert [name for name, _ in seen] == [CITATIONS_EVENT]
    assert seen[0][1]["answer"] == handler.answer


# --- native citations win over markers --------------------------------------------------------


def anthropic_message() -> AIMessage:
    """What langchain-anthropic makes of a response citing a web search result."""
    return AIMessage(
        content=[
            {
                "type": "text",
                "text": "Le viaduc culmine à 343 mètres [1].",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": MILLAU,
                        "title": "Viaduc de Millau — Wikipédia",
                        "cited_text": "Le viaduc de Millau culmine à 343 mètres",
                        "encrypted_index": "EqQBCioIBBgC",
                    }
                ],
            }
        ],
        response_metadata={"model_provider": "anthropic", "model_name": "claude-sonnet-4-6"},
    )


def test_native_citations_come_first(retriever: Any, question: str) -> None:
    handler = CitationCallbackHandler()
    model = GenericFakeChatModel(messages=iter([anthropic_message()]))
    rag(retriever, model).invoke(question, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert answer.extras["citation_origin"] == "native"
    native = [c for c in answer.citations if c.origin == "native"]
    assert [c.quote for c in native] == ["Le viaduc de Millau culmine à 343 mètres"]
    # The cited page is the retrieved document: merged into one source with its text.
    first = answer.sources[0]
    assert first.url == MILLAU
    assert first.content is not None
    assert answer.provider == "anthropic"
    assert answer.model == "claude-sonnet-4-6"
    # The "[1]" the model wrote names the same retrieved page; only cited sources are listed.
    assert cited_urls(answer) == [[MILLAU], [MILLAU]]
    assert [s.url for s in answer.sources] == [MILLAU]


# --- post-hoc attribution ---------------------------------------------------------------------


def test_lexical_attribution_when_nothing_is_cited(retriever: Any, question: str) -> None:
    text = "Le viaduc de Millau culmine à 343 mètres au sommet de son pylône le plus haut."
    handler = CitationCallbackHandler(attribute="lexical")
    rag(retriever, fake_model(text)).invoke(question, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert answer.extras["citation_origin"] == "posthoc-lexical"
    assert answer.text == text
    assert cited_urls(answer)[0][0] == MILLAU
    assert {c.origin for c in answer.citations} == {"posthoc-lexical"}


def test_llm_attribution_with_a_chat_model(retriever: Any, question: str) -> None:
    text = "Le viaduc de Millau a été inauguré en 2004."
    judge = FakeListChatModel(
        responses=[
            '{"citations": [{"claim": "Le viaduc de Millau a été inauguré en 2004.", '
            '"sourceIndex": 1, "confidence": "full"}]}'
        ]
    )
    handler = CitationCallbackHandler(attribute=judge)
    rag(retriever, fake_model(text)).invoke(question, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert answer.extras["citation_origin"] == "posthoc-llm"
    assert cited_urls(answer) == [[MILLAU]]
    # The judge's own call is not part of the cited run.
    assert handler.active_runs == 0


def test_attribute_llm_needs_a_model() -> None:
    with pytest.raises(UsageError, match="needs a model"):
        CitationCallbackHandler(attribute="llm")
    with pytest.raises(UsageError):
        CitationCallbackHandler(attribute=42)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        CitationCallbackHandler(require="always")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        CitationCallbackHandler(keep=0)


# --- policy, callbacks, errors ----------------------------------------------------------------


def test_require_citations_raises_at_the_end_of_the_root_run(retriever: Any, question: str) -> None:
    handler = CitationCallbackHandler(require="citations")
    with pytest.raises(GroundingRequiredError) as caught:
        rag(retriever, fake_model("Je ne sais pas.")).invoke(
            question, config={"callbacks": [handler]}
        )
    assert caught.value.reason == "no citations"
    # The answer was still recorded, and the run forgotten.
    assert handler.answer is not None
    assert handler.answer.text == "Je ne sais pas."
    assert handler.active_runs == 0
    # A cited answer passes.
    rag(retriever, fake_model(ANSWER)).invoke(question, config={"callbacks": [handler]})
    assert handler.answer.citations


def test_on_citations_gets_each_answer_and_its_errors_stay_out(
    retriever: Any, question: str, caplog: pytest.LogCaptureFixture
) -> None:
    got: list[CitedAnswer] = []
    handler = CitationCallbackHandler(on_citations=got.append)
    rag(retriever, fake_model(ANSWER)).invoke(question, config={"callbacks": [handler]})
    assert got == [handler.answer]

    def broken(answer: CitedAnswer) -> None:
        raise RuntimeError("display failed")

    handler = CitationCallbackHandler(on_citations=broken)
    assert rag(retriever, fake_model(ANSWER)).invoke(question, config={"callbacks": [handler]})
    assert handler.answer is not None
    assert any("display failed" in r.getMessage() for r in caplog.records)


def test_internal_errors_become_diagnostics() -> None:
    handler = CitationCallbackHandler()
    manager = CallbackManager.configure(inheritable_callbacks=[handler])
    run = manager.on_chain_start(None, {"question": "?"})
    retriever_run = run.get_child().on_retriever_start(None, "?")
    # Not a sequence of documents: reading it fails inside the handler, not in the chain.
    retriever_run.on_retriever_end(42)  # type: ignore[arg-type]
    [llm] = run.get_child().on_chat_model_start(None, [[HumanMessage("?")]])
    llm.on_llm_end(LLMResult(generations=[[ChatGeneration(message=AIMessage("Réponse."))]]))
    run.on_chain_end({})
    assert handler.answer is not None
    assert any("internal error in on_retriever_end" in d for d in handler.answer.diagnostics)


def test_a_failed_chain_leaves_no_answer_and_no_state(retriever: Any, question: str) -> None:
    def explode(_: Any) -> str:
        raise ValueError("boom")

    handler = CitationCallbackHandler()
    chain_ = rag(retriever, fake_model(ANSWER)) | RunnableLambda(explode)
    with pytest.raises(ValueError, match="boom"):
        chain_.invoke(question, config={"callbacks": [handler]})
    assert handler.answer is None
    assert handler.active_runs == 0


def test_bare_model_call_is_a_root_run() -> None:
    handler = CitationCallbackHandler()
    fake_model(ANSWER).invoke("?", config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    # No sources were captured: the markers name nothing, so they leave the text, each noted.
    assert answer.text == (
        "Le pont de Normandie date de 1995. Le viaduc de Millau culmine à 343 mètres. "
        "Il a été inauguré le 14 décembre 2004."
    )
    assert answer.citations == []
    assert len([d for d in answer.diagnostics if "out of range" in d]) == 3


def test_handler_on_a_sub_chain_sees_that_sub_chain_as_the_root(
    retriever: Any, question: str
) -> None:
    handler = CitationCallbackHandler()
    inner = rag(retriever, fake_model(ANSWER)).with_config(callbacks=[handler])
    outer = RunnableLambda(lambda q: q) | inner | RunnableLambda(str.upper)
    assert outer.invoke(question) == ANSWER.upper()
    assert handler.answer is not None
    assert cited_urls(handler.answer) == [[NORMANDIE], [MILLAU], [MILLAU]]


# --- concurrency ----------------------------------------------------------------------------

QUESTIONS = {
    "Le viaduc de Millau culmine à 343 mètres [1].": MILLAU,
    "Le pont de Normandie relie Le Havre à Honfleur [1].": NORMANDIE,
    "Die Köhlbrandbrücke in Hamburg wurde 1974 eröffnet [1].": (
        "https://de.wikipedia.org/wiki/K%C3%B6hlbrandbr%C3%BCcke"
    ),
}


def parrot_rag(retriever: Any) -> Runnable[Any, str]:
    """The parrot repeats the question, markers included: each run cites its own top hit."""
    prompt = ChatPromptTemplate.from_messages([("system", "{sources}"), ("human", "{question}")])
    return (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | prompt
        | ParrotFakeChatModel()
        | StrOutputParser()
    )


def test_batch_with_concurrency_keeps_runs_apart(retriever: Any) -> None:
    handler = CitationCallbackHandler()
    questions = list(QUESTIONS) * 4
    outputs = parrot_rag(retriever).batch(
        questions, config={"callbacks": [handler], "max_concurrency": 6}
    )
    assert outputs == questions
    answers = list(handler.answers.values())
    assert len(answers) == len(questions)
    for answer in answers:
        original = answer.text
        assert cited_urls(answer) == [[QUESTIONS[original]]]
    assert handler.active_runs == 0


def test_threads_share_one_handler(retriever: Any) -> None:
    handler = CitationCallbackHandler()
    chain_ = parrot_rag(retriever)
    failures: list[BaseException] = []

    def work(question: str) -> None:
        try:
            for _ in range(5):
                chain_.invoke(question, config={"callbacks": [handler]})
        except BaseException as err:  # reported below
            failures.append(err)

    threads = [threading.Thread(target=work, args=(q,)) for q in QUESTIONS for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(handler.answers) == 30
    for answer in handler.answers.values():
        assert cited_urls(answer) == [[QUESTIONS[answer.text]]]


def test_abatch_runs_concurrently(retriever: Any) -> None:
    handler = CitationCallbackHandler()
    questions = list(QUESTIONS) * 3
    asyncio.run(
        parrot_rag(retriever).abatch(
            questions, config={"callbacks": [handler], "max_concurrency": 5}
        )
    )
    assert len(handler.answers) == len(questions)
    for answer in handler.answers.values():
        assert cited_urls(answer) == [[QUESTIONS[answer.text]]]


# --- disabled -------------------------------------------------------------------------------


class FirstDocuments(BaseRetriever):
    """The first documents of a list (the vector store logs at DEBUG; this retriever does not)."""

    documents: list[Document]

    def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
        return self.documents[:3]


@pytest.mark.parametrize("options", [{"enabled": False}, {"persistent": False}])
def test_disabled_does_nothing_at_all(
    corpus: list[Document],
    question: str,
    caplog: pytest.LogCaptureFixture,
    options: dict[str, Any],
) -> None:
    caplog.set_level(logging.DEBUG)
    got: list[CitedAnswer] = []
    handler = CitationCallbackHandler(require="citations", on_citations=got.append, **options)
    chain_ = rag(FirstDocuments(documents=corpus), fake_model("Pas de citation.", repeat=2))

    async def events() -> list[dict[str, Any]]:
        return [
            e
            async for e in chain_.astream_events(
                question, config={"callbacks": [handler]}, version="v2"
            )
        ]

    caplog.clear()
    assert chain_.invoke(question, config={"callbacks": [handler]}) == "Pas de citation."
    streamed = asyncio.run(events())
    # (asyncio logs its selector choice when a loop starts; that line is not ours.)
    assert [r for r in caplog.records if r.name != "asyncio"] == []
    assert not [e for e in streamed if e["event"] == "on_custom_event"]
    assert handler.answer is None
    assert got == []
    assert handler.active_runs == 0
    assert handler.enabled is False


# --- memory ---------------------------------------------------------------------------------


def one_run(manager: CallbackManager, documents: list[Document]) -> None:
    """The callbacks of one RAG run (chain, retriever, model), as LangChain sends them."""
    run = manager.on_chain_start(None, {"question": "?"})
    child = run.get_child()
    retrieval = child.on_retriever_start(None, "?")
    retrieval.on_retriever_end(documents)
    [llm] = child.on_chat_model_start(None, [[HumanMessage("?")]])
    message = AIMessage("Le viaduc de Millau culmine à 343 mètres [1]. Ouvert en 2004 [2].")
    llm.on_llm_end(LLMResult(generations=[[ChatGeneration(message=message)]]))
    run.on_chain_end({"output": message.text})


def test_documents_read_before_are_told_apart_by_their_metadata_values() -> None:
    # A document is read once and remembered; one whose metadata differs only in a value's
    # type (1, "1", True, 1.0) or order is not the one remembered.
    variants = [{"page": 1}, {"page": "1"}, {"page": True}, {"page": 1.0}, {"page": 1}]
    seen = CitationCallbackHandler()
    manager = CallbackManager.configure(inheritable_callbacks=[seen])
    for extra in variants:
        metadata = {"source": "https://example.org/millau", "title": "Millau", **extra}
        document = Document(id="doc-1", page_content="Le viaduc culmine à 343 mètres.")
        document.metadata = metadata
        one_run(manager, [document])
        fresh = CitationCallbackHandler()
        one_run(CallbackManager.configure(inheritable_callbacks=[fresh]), [document])
        assert seen.answer is not None
        assert fresh.answer is not None
        # repr: 1 == 1.0 == True, their sources must still differ as the values do.
        assert repr(seen.answer.sources) == repr(fresh.answer.sources)


def test_ten_thousand_runs_do_not_grow_the_handler(corpus: list[Document]) -> None:
    handler = CitationCallbackHandler(keep=50)
    manager = CallbackManager.configure(inheritable_callbacks=[handler])
    for _ in range(7_000):
        one_run(manager, corpus)
    # A leak grows with every run: the last 3,000 runs are traced (tracing is slow). By then
    # the kept answers were all replaced under tracing, so the window measures only growth.
    tracemalloc.start()
    try:
        for _ in range(1_000):
            one_run(manager, corpus)
        settled, _ = tracemalloc.get_traced_memory()
        for _ in range(2_000):
            one_run(manager, corpus)
        final, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert handler.active_runs == 0
    assert len(handler.answers) == 50
    assert final - settled < 16 * 1024, f"grew by {final - settled} bytes over 2,000 runs"


# --- agents ---------------------------------------------------------------------------------

SEARCH_RESULTS = {
    "millau": [
        {"url": MILLAU, "title": "Viaduc de Millau", "content": "Le viaduc culmine à 343 mètres."},
        {
            "url": "https://www.leviaducdemillau.com/fr/histoire",
            "title": "Histoire du viaduc",
            "content": "Inauguré le 14 décembre 2004 par Jacques Chirac.",
        },
    ],
    "normandie": [
        {"url": NORMANDIE, "title": "Pont de Normandie", "content": "Ouvert le 20 janvier 1995."},
        # The same page again, with tracking parameters: it keeps its number.
        {"url": MILLAU + "?utm_source=agent", "title": "Viaduc de Millau", "content": "343 m."},
    ],
}


@tool
def web_search(query: str) -> list[dict[str, str]]:
    """Search the web (a fixed index, offline)."""
    return SEARCH_RESULTS[query]


@tool
def broken_search(query: str) -> str:
    """A search engine that is down."""
    raise ToolException("HTTP 503: service unavailable")


broken_search.handle_tool_error = True


def tool_call(name: str, query: str, call_id: str) -> dict[str, Any]:
    return {"name": name, "args": {"query": query}, "id": call_id, "type": "tool_call"}


def agent_model(final: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[tool_call("web_search", "millau", "call_1")]),
                AIMessage(
                    "",
                    tool_calls=[
                        tool_call("broken_search", "normandie", "call_2"),
                        tool_call("web_search", "normandie", "call_3"),
                    ],
                ),
                AIMessage(final),
            ]
        )
    )


def make_agent(
    model: GenericFakeChatModel, tools: list[BaseTool], transcript: list[BaseMessage] | None = None
) -> Runnable[str, str]:
    """A tool-calling loop built from LangChain primitives: model, tool calls, tool messages."""
    by_name = {t.name: t for t in tools}
    messages: list[BaseMessage] = transcript if transcript is not None else []

    @chain
    def agent(question: str, config: Any) -> str:
        messages.append(HumanMessage(question))
        while True:
            reply = model.invoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.text)
            for call in reply.tool_calls:
                messages.append(by_name[call["name"]].invoke(call, config))

    @chain
    async def aagent(question: str, config: Any) -> str:
        messages.append(HumanMessage(question))
        while True:
            reply = await model.ainvoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.text)
            for call in reply.tool_calls:
                messages.append(await by_name[call["name"]].ainvoke(call, config))

    agent.aagent = aagent  # type: ignore[attr-defined]
    return agent


FINAL = (
    "Le viaduc culmine à 343 mètres [1] et fut inauguré en 2004 [2]. "
    "Le pont de Normandie a ouvert en 1995 [3]."
)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_agent_with_cited_tools(mode: str) -> None:
    tools = cite_tools([web_search, broken_search])
    transcript: list[BaseMessage] = []
    agent = make_agent(agent_model(FINAL), tools, transcript)
    handler = CitationCallbackHandler()
    config = {"callbacks": [handler]}
    if mode == "sync":
        assert agent.invoke("Millau et Normandie ?", config=config) == FINAL
    else:
        assert asyncio.run(agent.aagent.ainvoke("Millau et Normandie ?", config=config)) == FINAL  # type: ignore[attr-defined]

    # What the agent saw: results numbered by their sid in the run's ledger, stable across calls.
    first, failed, second = [m for m in transcript if isinstance(m, ToolMessage)]
    assert isinstance(first.content, str)
    assert isinstance(second.content, str)
    assert first.content.startswith("[sid:1] Viaduc de Millau\n")
    assert "[sid:2] Histoire du viaduc" in first.content
    assert failed.status == "error"
    assert "503" in failed.content
    assert second.content.startswith("[sid:3] Pont de Normandie\n")
    assert "[sid:1] Viaduc de Millau" in second.content  # the repeated page kept its number
    assert second.artifact == SEARCH_RESULTS["normandie"]

    answer = handler.answer
    assert answer is not None
    assert cited_urls(answer) == [
        [MILLAU],
        ["https://www.leviaducdemillau.com/fr/histoire"],
        [NORMANDIE],
    ]
    assert [s.origin.call_id for s in answer.sources] == ["call_1", "call_1", "call_3"]  # type: ignore[union-attr]
    assert any("broken_search failed" in d or "503" in d for d in answer.diagnostics)
    assert handler.active_runs == 0


def test_uncited_tools_still_give_sources(question: str) -> None:
    """Plain tools: their outputs are read on on_tool_end, and markers match them in order."""
    model = agent_model("Le viaduc culmine à 343 mètres [1].")
    agent = make_agent(model, [web_search, broken_search])
    handler = CitationCallbackHandler(sources="all")
    agent.invoke(question, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert cited_urls(answer) == [[MILLAU]]
    # sources="all": the uncited results are listed after the cited one.
    assert len(answer.sources) == 3
    assert any("503" in d for d in answer.diagnostics)


def test_tool_artifacts_are_read(question: str) -> None:
    """A ``content_and_artifact`` tool: the ToolMessage's artifact holds the structured results."""

    @tool(response_format="content_and_artifact")
    def lookup(query: str) -> tuple[str, dict[str, Any]]:
        """Look pages up."""
        return "2 pages found", {"results": SEARCH_RESULTS["millau"]}

    model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage("", tool_calls=[tool_call("lookup", "millau", "call_7")]),
                AIMessage("Inauguré en 2004 [2]."),
            ]
        )
    )
    handler = CitationCallbackHandler()
    make_agent(model, [lookup]).invoke(question, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert cited_urls(answer) == [["https://www.leviaducdemillau.com/fr/histoire"]]
    assert [s.origin.call_id for s in answer.sources] == ["call_7"]  # type: ignore[union-attr]


def test_a_tool_raising_fails_the_run_cleanly(question: str) -> None:
    @tool
    def crash(query: str) -> str:
        """Always crashes."""
        raise RuntimeError("disk on fire")

    model = GenericFakeChatModel(
        messages=iter([AIMessage("", tool_calls=[tool_call("crash", "x", "call_9")])])
    )
    handler = CitationCallbackHandler()
    with pytest.raises(RuntimeError, match="disk on fire"):
        make_agent(model, cite_tools([crash])).invoke(question, config={"callbacks": [handler]})
    assert handler.answer is None
    assert handler.active_runs == 0


def test_answers_mapping_accepts_string_ids(retriever: Any, question: str) -> None:
    handler = CitationCallbackHandler()
    run_id = uuid4()
    rag(retriever, fake_model(ANSWER)).invoke(
        question, config={"callbacks": [handler], "run_id": run_id}
    )
    assert handler.answers[run_id] == handler.answers[str(run_id)] == handler.answer
    with pytest.raises(KeyError):
        handler.answers["not-a-uuid"]
