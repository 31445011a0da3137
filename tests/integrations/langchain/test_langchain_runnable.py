"""`with_citations`, `CitationOutputParser`, `citation_prompt`, `number_sources`, `cite_tools`."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import (
    GenericFakeChatModel,
    ParrotFakeChatModel,
)
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough
from langchain_core.tools import tool

from unicite import CitedAnswer, GroundingRequiredError, Source, UsageError
from unicite.sources import ledger_scope
from unicite_langchain import (
    CitationCallbackHandler,
    CitationOutputParser,
    citation_prompt,
    cite_tools,
    number_sources,
    with_citations,
)

MILLAU = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"
NORMANDIE = "https://fr.wikipedia.org/wiki/Pont_de_Normandie"
ANSWER = (
    "Le pont de Normandie date de 1995 [2]. Le viaduc de Millau culmine à 343 mètres [1]. Faux [7]."
)
SHOWN = "Le pont de Normandie date de 1995 [1]. Le viaduc de Millau culmine à 343 mètres [2]. Faux."
"""`ANSWER` cited: renumbered in first-cited order, the invalid marker gone."""


def fake_model(text: str = ANSWER, repeat: int = 20) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=text)] * repeat))


def rag(retriever: Any, model: Runnable[Any, Any]) -> Runnable[Any, str]:
    return (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | citation_prompt()
        | model
        | StrOutputParser()
    )


def urls(answer: CitedAnswer) -> list[list[str | None]]:
    return [[answer.source(sid).url for sid in c.source_ids] for c in answer.citations]  # type: ignore[union-attr]


def comparable(answer: CitedAnswer) -> dict[str, Any]:
    data = answer.model_dump(mode="json", exclude={"extras"})
    for source in data["sources"]:
        source.pop("origin")
        source.pop("raw")
    return data


# --- with_citations -------------------------------------------------------------------------


def test_invoke_returns_answer_and_citations(retriever: Any, question: str) -> None:
    result = with_citations(rag(retriever, fake_model())).invoke(question)
    assert set(result) == {"answer", "citations"}
    answer = result["citations"]
    assert result["answer"] == answer.text == SHOWN
    assert urls(answer) == [[NORMANDIE], [MILLAU]]
    assert [s.url for s in answer.sources] == [NORMANDIE, MILLAU]
    assert any("[7]" in d for d in answer.diagnostics)


def test_stream_adds_up_to_invoke(retriever: Any, question: str) -> None:
    cited = with_citations(rag(retriever, fake_model()))
    invoked = cited.invoke(question)
    chunks = list(cited.stream(question))
    assert [set(c) for c in chunks[:-1]] == [{"answer"}] * (len(chunks) - 1)
    assert set(chunks[-1]) == {"citations"}
    assert len(chunks) > 5
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    assert total["answer"] == invoked["answer"] == SHOWN  # the invalid [7] never appeared
    assert comparable(total["citations"]) == comparable(invoked["citations"])


def test_async_invoke_and_stream(retriever: Any, question: str) -> None:
    cited = with_citations(rag(retriever, fake_model()))

    async def go() -> tuple[dict[str, Any], list[dict[str, Any]]]:
        result = await cited.ainvoke(question)
        chunks = [chunk async for chunk in cited.astream(question)]
        return result, chunks

    result, chunks = asyncio.run(go())
    assert result["answer"] == SHOWN
    assert "".join(c.get("answer", "") for c in chunks) == SHOWN
    assert comparable(chunks[-1]["citations"]) == comparable(result["citations"])


def test_batch_with_concurrency(retriever: Any) -> None:
    prompt = ChatPromptTemplate.from_messages([("system", "{sources}"), ("human", "{question}")])
    parrot = (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | prompt
        | ParrotFakeChatModel()
        | StrOutputParser()
    )
    questions = [
        "Le viaduc de Millau culmine à 343 mètres [1].",
        "Le pont de Normandie relie Le Havre à Honfleur [1].",
    ] * 4
    results = with_citations(parrot).batch(questions, config={"max_concurrency": 4})
    assert [r["answer"] for r in results] == questions
    assert [urls(r["citations"]) for r in results] == [[[MILLAU]], [[NORMANDIE]]] * 4


def test_inside_lcel(retriever: Any, question: str) -> None:
    titles = with_citations(rag(retriever, fake_model())) | RunnableLambda(
        lambda result: [s.title for s in result["citations"].cited_sources()]
    )
    # In first-cited order: the answer cites Normandie first.
    assert titles.invoke(question) == [
        "Pont de Normandie — Wikipédia",
        "Viaduc de Millau — Wikipédia",
    ]


def test_options(retriever: Any, question: str) -> None:
    off = with_citations(rag(retriever, fake_model()), enabled=False).invoke(question)
    assert off["answer"] == ANSWER
    assert off["citations"] == CitedAnswer(text=ANSWER)
    strict = with_citations(rag(retriever, fake_model("Rien.")), require="citations")
    with pytest.raises(GroundingRequiredError):
        strict.invoke(question)
    with pytest.raises(UsageError):
        with_citations(lambda x: x)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        with_citations(rag(retriever, fake_model()), require="yes")  # type: ignore[arg-type]


def test_output_without_a_model() -> None:
    result = with_citations(RunnableLambda(lambda q: f"Écho : {q}")).invoke("bonjour")
    assert result == {"answer": "Écho : bonjour", "citations": result["citations"]}
    assert result["citations"].text == "Écho : bonjour"


# --- CitationOutputParser -------------------------------------------------------------------


def test_parser_with_given_sources() -> None:
    sources = [Source(url=MILLAU, title="Millau"), Source(url=NORMANDIE, title="Normandie")]
    parser = CitationOutputParser(sources=sources)
    answer = parser.invoke("Normandie, 1995 [2]. Millau, 343 m [1].")
    assert answer.text == "Normandie, 1995 [1]. Millau, 343 m [2]."  # renumbered
    assert urls(answer) == [[NORMANDIE], [MILLAU]]
    assert parser.parse("Millau [1].").citations[0].source_ids == [sources[0].id]
    kept = CitationOutputParser(sources=sources, renumber=False).invoke("Normandie [2].")
    assert kept.text == "Normandie [2]."


def test_parser_reads_the_runs_sources(retriever: Any, question: str) -> None:
    chain_ = (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | citation_prompt()
        | fake_model()
        | CitationOutputParser()
    )
    answer = chain_.invoke(question, config={"callbacks": [CitationCallbackHandler()]})
    assert isinstance(answer, CitedAnswer)
    assert urls(answer) == [[NORMANDIE], [MILLAU]]
    assert answer.text.startswith("Le pont de Normandie date de 1995 [1].")
    async_answer = asyncio.run(
        chain_.ainvoke(question, config={"callbacks": [CitationCallbackHandler()]})
    )
    assert comparable(async_answer) == comparable(answer)


def test_parser_without_sources_reads_markers_against_none() -> None:
    answer = CitationOutputParser().invoke("Millau [1].")
    assert answer.text == "Millau."
    assert answer.citations == []
    assert len(answer.diagnostics) == 1
    assert "out of range (0 sources given)" in answer.diagnostics[0]
    kept = CitationOutputParser(on_invalid="keep").invoke("Millau [1].")
    assert kept.text == "Millau [1]."


def test_parser_prefers_native_citations() -> None:
    message = AIMessage(
        content=[
            {
                "type": "text",
                "text": "Le viaduc culmine à 343 mètres [1].",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": MILLAU,
                        "title": "Viaduc",
                        "cited_text": "343 mètres",
                        "encrypted_index": "x",
                    }
                ],
            }
        ],
        response_metadata={"model_provider": "anthropic"},
    )
    answer = CitationOutputParser(sources=[Source(url=NORMANDIE)]).invoke(message)
    # The native citation, and the "[1]" naming the given source: both kept.
    assert sorted(c.origin for c in answer.citations) == ["marker", "native"]
    assert sorted(urls(answer)) == [[NORMANDIE], [MILLAU]]
    assert answer.text == "Le viaduc culmine à 343 mètres [1]."


# --- the prompt side --------------------------------------------------------------------------


def test_citation_prompt() -> None:
    prompt = citation_prompt()
    assert sorted(prompt.input_variables) == ["question", "sources"]
    messages = prompt.invoke({"sources": "[sid:1] A\ntext", "question": "Q?"}).to_messages()
    system = str(messages[0].content)
    assert system.startswith("Answer the question using only the sources below.")
    assert "[1]" in system
    assert system.endswith("Sources:\n[sid:1] A\ntext")
    assert messages[1].content == "Q?"

    custom = citation_prompt(
        "Tu réponds en {langue}.", style="sids", usage=True, sources_key="docs"
    )
    assert sorted(custom.input_variables) == ["docs", "langue", "question"]
    text = str(
        custom.invoke({"docs": "D", "question": "Q", "langue": "français"}).to_messages()[0].content
    )
    assert "[[S:1]]" in text
    assert "[[USAGE:" in text
    with pytest.raises(UsageError):
        citation_prompt(format="json")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        citation_prompt(sources_key="not a name")


def test_number_sources_without_a_handler(corpus: list[Any]) -> None:
    text = number_sources().invoke(corpus[:2])
    assert text.startswith("[sid:1] Viaduc de Millau — Wikipédia\nLe viaduc de Millau culmine")
    assert "\n\n[sid:2] Pont de Normandie — Wikipédia\n" in text
    short = number_sources(budget_tokens=30).invoke(corpus[:2])
    assert len(short) < len(text)
    assert "[sid:2]" in short
    sources = [Source(url=MILLAU, title="A", content="x"), Source(url=NORMANDIE, title="B")]
    assert number_sources().invoke(sources) == "[sid:1] A\nx\n\n[sid:2] B"
    with pytest.raises(UsageError):
        number_sources(budget_tokens=-1)


def test_number_sources_across_two_retrievals(retriever: Any) -> None:
    """A second retrieval in the same run continues the numbering; repeats keep theirs."""
    handler = CitationCallbackHandler()
    both = {
        "a": RunnableLambda(lambda _: "viaduc de Millau hauteur") | retriever | number_sources(),
        "b": RunnableLambda(lambda _: "Köhlbrandbrücke Hamburg") | retriever | number_sources(),
    }
    chain_ = RunnableLambda(lambda q: q) | both
    blocks = chain_.invoke("?", config={"callbacks": [handler]})
    numbers = {
        block: sorted(
            int(line[5:].split("]")[0]) for line in text.split("\n") if line.startswith("[sid:")
        )
        for block, text in blocks.items()
    }
    assert sorted(set(numbers["a"]) | set(numbers["b"])) == [1, 2, 3, 4]
    assert len(numbers["a"]) == len(numbers["b"]) == 3


# --- cite_tools -----------------------------------------------------------------------------


@tool
def search(query: str) -> list[dict[str, str]]:
    """Search a fixed index."""
    return [
        {"url": MILLAU, "title": "Millau", "content": f"{query}: 343 m."},
        {"url": NORMANDIE, "title": "Normandie", "content": "1995."},
    ]


@tool
def notes(topic: str) -> str:
    """Plain-text notes."""
    return f"Notes sur {topic} :\n  - ouvert en 2004"


@tool(response_format="content_and_artifact")
def lookup(query: str) -> tuple[str, dict[str, Any]]:
    """Returns a summary and the structured results."""
    return "2 results", {"results": [{"url": MILLAU, "title": "Millau", "content": "343 m."}]}


def test_cite_tools_without_a_handler_numbers_each_call() -> None:
    [wrapped] = cite_tools([search])
    call = {"name": "search", "args": {"query": "Millau"}, "id": "call_1", "type": "tool_call"}
    message = wrapped.invoke(call)
    assert isinstance(message, ToolMessage)
    assert message.content == "[sid:1] Millau\nMillau: 343 m.\n\n[sid:2] Normandie\n1995."
    assert message.artifact == search.invoke({"query": "Millau"})
    assert wrapped.invoke({"query": "x"}).startswith("[sid:1] Millau\n")


def test_cite_tools_in_a_ledger_scope() -> None:
    wrapped = cite_tools([search, notes, lookup])
    with ledger_scope() as ledger:
        wrapped[1].invoke({"topic": "Millau"})
        text = wrapped[0].invoke({"query": "Millau"})
        summary = wrapped[2].invoke(
            {"name": "lookup", "args": {"query": "q"}, "id": "c", "type": "tool_call"}
        )
    assert text.startswith("[sid:2] Millau\n")
    assert "[sid:3] Normandie" in text
    assert len(ledger) == 3
    # Plain text is shown as it is, under its number.
    assert ledger.get(ledger.by_sid(1).id).content == "Notes sur Millau :\n  - ouvert en 2004"  # type: ignore[union-attr]
    # A content_and_artifact tool: its artifact is read, and stays the artifact.
    # (The page was seen before: the ledger keeps its longer text.)
    assert summary.content == "[sid:2] Millau\nMillau: 343 m."
    assert summary.artifact == {
        "results": [{"url": MILLAU, "title": "Millau", "content": "343 m."}]
    }


def test_cite_tools_plain_text_shown_as_is() -> None:
    [wrapped] = cite_tools([notes])
    assert (
        wrapped.invoke({"topic": "Millau"})
        == "[sid:1] notes\nNotes sur Millau :\n  - ouvert en 2004"
    )


def test_cite_tools_arguments() -> None:
    def double(x: int) -> int:
        """Double a number."""
        return 2 * x

    [wrapped] = cite_tools([double])
    assert wrapped.name == "double"
    assert wrapped.invoke({"x": 21}) == "[sid:1] double\n42"
    assert cite_tools(cite_tools([search]))[0].tool is search
    with pytest.raises(UsageError):
        cite_tools(search)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        cite_tools([42])  # type: ignore[list-item]
    with pytest.raises(UsageError):
        cite_tools([search], budget_tokens=-5)
