"""Retriever tools give one numbered source per retrieved document, whatever their format.

``create_retriever_tool`` joins the documents' texts into one string (``response_format=
"content"``, its default) or also returns them as the artifact (``"content_and_artifact"``).
Either way, `cite_tools` shows the model each document under its own number, titled and
linked from the document's metadata, and the handler cites each document, not the tool.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from integrations.langchain.scripted import calls, scripted, tool_call
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, chain
from langchain_core.tools import BaseTool, create_retriever_tool, tool

from unicite import CitedAnswer
from unicite.sources import ledger_scope
from unicite_langchain import CitationCallbackHandler, cite_tools, with_citations

FORMATS = pytest.mark.parametrize("response_format", ["content", "content_and_artifact"])

MILLAU = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"
AKASHI = "https://ja.wikipedia.org/wiki/明石海峡大橋"
KOEHLBRAND = "https://de.wikipedia.org/wiki/K%C3%B6hlbrandbr%C3%BCcke"
NORMANDIE = "https://fr.wikipedia.org/wiki/Pont_de_Normandie"

MILLAU_SHOWN = (
    "[sid:1] Viaduc de Millau — Wikipédia\n"
    "Le viaduc de Millau culmine à 343 mètres au sommet de son pylône le plus haut. Il a été "
    "inauguré le 14 décembre 2004.\n\n"
    "[sid:2] 明石海峡大橋 - Wikipedia\n"
    "明石海峡大橋は全長3,911メートルの吊り橋で、1998年4月5日に開通しました。\n\n"
    "[sid:3] Köhlbrandbrücke – Wikipedia\n"
    "Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang und wurde 1974 eröffnet."
)
"""What the model sees of the search for "viaduc de Millau"."""


def search_tool(retriever: Any, response_format: str) -> BaseTool:
    return create_retriever_tool(
        retriever,
        "search_bridges",
        "Search the encyclopedia of bridges.",
        response_format=response_format,  # type: ignore[arg-type]
    )


def call(query: str, call_id: str = "call_1") -> dict[str, Any]:
    return tool_call("search_bridges", call_id, query=query)


def urls(answer: CitedAnswer) -> list[list[str | None]]:
    return [[answer.source(sid).url for sid in c.source_ids] for c in answer.citations]  # type: ignore[union-attr]


def loop(model: Any, tools: list[BaseTool]) -> Runnable[str, str]:
    """A tool-calling loop built from LangChain primitives."""
    by_name = {t.name: t for t in tools}

    @chain
    def agent(question: str, config: Any) -> str:
        messages: list[BaseMessage] = [HumanMessage(question)]
        while True:
            reply = model.invoke(messages, config)
            messages.append(reply)
            if not reply.tool_calls:
                return str(reply.text)
            for tool_request in reply.tool_calls:
                messages.append(by_name[tool_request["name"]].invoke(tool_request, config))

    return agent


@FORMATS
def test_each_document_is_its_own_numbered_source(retriever: Any, response_format: str) -> None:
    raw = search_tool(retriever, response_format)
    [tool] = cite_tools([raw])
    message = tool.invoke(call("viaduc de Millau"))
    assert isinstance(message, ToolMessage)
    assert message.content == MILLAU_SHOWN
    # The artifact is what the wrapped tool returned: its documents, or its text.
    if response_format == "content_and_artifact":
        assert [d.id for d in message.artifact] == ["millau", "akashi", "koehlbrand"]
    else:
        assert isinstance(message.artifact, str)
        assert message.artifact.startswith("Le viaduc de Millau culmine à 343 mètres")
    # Called with plain arguments, the text is the same.
    assert tool.invoke({"query": "viaduc de Millau"}) == MILLAU_SHOWN


@FORMATS
def test_the_sources_carry_the_documents_metadata(retriever: Any, response_format: str) -> None:
    [tool] = cite_tools([search_tool(retriever, response_format)])
    with ledger_scope() as ledger:
        tool.invoke(call("viaduc de Millau"))
        second = tool.invoke(call("pont de Normandie", "call_2"))
    # The second search continues the numbering; documents found again keep their numbers.
    assert second.content.startswith("[sid:4] Pont de Normandie — Wikipédia\n")
    assert "[sid:2] 明石海峡大橋 - Wikipedia\n" in second.content
    assert [(s.kind, s.url, s.title) for s in ledger.sources] == [
        ("document", MILLAU, "Viaduc de Millau — Wikipédia"),
        ("document", AKASHI, "明石海峡大橋 - Wikipedia"),
        ("document", KOEHLBRAND, "Köhlbrandbrücke – Wikipedia"),
        ("document", NORMANDIE, "Pont de Normandie — Wikipédia"),
    ]
    origins = [s.origin for s in ledger.sources]
    assert {o.tool for o in origins if o is not None} == {"search_bridges"}
    call_ids = [o.call_id for o in origins if o is not None]
    assert len(set(call_ids[:3])) == 1
    assert call_ids[3] != call_ids[0]


@FORMATS
def test_an_agent_cites_the_documents(retriever: Any, response_format: str) -> None:
    model = scripted(
        calls(call("viaduc de Millau")),
        "Le viaduc culmine à 343 mètres [1]. 明石海峡大橋は1998年に開通しました [2]。",
    )
    handler = CitationCallbackHandler(sources="all")
    text = loop(model, cite_tools([search_tool(retriever, response_format)])).invoke(
        "Millau ?", config={"callbacks": [handler]}
    )
    assert text.endswith("[2]。")
    answer = handler.answer
    assert answer is not None
    assert urls(answer) == [[MILLAU], [AKASHI]]
    # No source stands for the tool's joined text: three documents, three sources.
    assert [s.kind for s in answer.sources] == ["document"] * 3
    assert [m.content for m in model.requests[-1] if isinstance(m, ToolMessage)] == [MILLAU_SHOWN]


def test_async_calls_read_the_documents_too(retriever: Any) -> None:
    [tool] = cite_tools([search_tool(retriever, "content")])
    message = asyncio.run(tool.ainvoke(call("viaduc de Millau")))
    assert message.content == MILLAU_SHOWN


@FORMATS
def test_an_uncited_retriever_tool_gives_its_documents(
    retriever: Any, response_format: str
) -> None:
    """Without cite_tools, the handler reads the same documents, and not the joined text."""
    model = scripted(calls(call("viaduc de Millau")), "Le viaduc culmine à 343 mètres [1].")
    cited = with_citations(
        loop(model, [search_tool(retriever, response_format)]), sources="all"
    ).invoke("Millau ?")
    answer = cited["citations"]
    assert urls(answer) == [[MILLAU]]
    assert [s.url for s in answer.sources] == [MILLAU, AKASHI, KOEHLBRAND]


def test_a_tool_that_returns_its_own_results_keeps_them(retriever: Any) -> None:
    """A tool reading a retriever but returning structured results: its results are the sources."""

    @tool
    def summarise(query: str) -> list[dict[str, str]]:
        """Search and return one structured result."""
        documents = retriever.invoke(query)
        return [
            {
                "url": "https://example.org/resume",
                "title": "Résumé",
                "content": documents[0].page_content,
            }
        ]

    [wrapped] = cite_tools([summarise])
    assert wrapped.invoke({"query": "viaduc de Millau"}).startswith("[sid:1] Résumé\nLe viaduc")


def test_documents_that_cannot_be_read_are_left_out() -> None:
    class Odd(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return [
                Document(
                    page_content="Texte ordinaire.", metadata={"title": "Bon", "source": MILLAU}
                ),
                Document(page_content="Autre texte.", metadata={"title": "Étrange", "n": object()}),
            ]

    [tool] = cite_tools([create_retriever_tool(Odd(), "odd", "Odd documents.")])
    text = tool.invoke({"query": "x"})
    assert text.startswith("[sid:1] Bon\nTexte ordinaire.\n\n[sid:2] Étrange\nAutre texte.")


def test_a_plain_answer_message(retriever: Any) -> None:
    """The wrapped tool's message keeps its call id and name."""
    [tool] = cite_tools([search_tool(retriever, "content")])
    message = tool.invoke(call("viaduc de Millau", "call_9"))
    assert (message.tool_call_id, message.name, message.status) == (
        "call_9",
        "search_bridges",
        "success",
    )
