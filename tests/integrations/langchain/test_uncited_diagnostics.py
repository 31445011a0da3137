"""An answer that cites none of the sources a run captured says why, and what to do.

The common mistake: a RAG chain puts the retrieved texts in its prompt without numbering them,
so the model cannot write markers. `unicite.cite` notes it; the note must reach the answer the
handler and `with_citations` give.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from unicite_langchain import CitationCallbackHandler, with_citations

NOTE = (
    "3 source(s) were given but the answer cites none: number the sources in the prompt and "
    "ask for [n] markers, or pass attribute='lexical'"
)
ANSWER = "Le viaduc de Millau culmine à 343 mètres et fut inauguré le 14 décembre 2004."


def joined(documents: list[Document]) -> str:
    return "\n\n".join(document.page_content for document in documents)


def unnumbered_rag(retriever: Any) -> Runnable[Any, str]:
    """The retrieved texts pasted into the prompt, with no numbers the model could cite."""
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Answer from this context:\n\n{context}"), ("human", "{question}")]
    )
    model = GenericFakeChatModel(messages=iter([AIMessage(ANSWER)] * 5))
    return (
        {"context": retriever | RunnableLambda(joined), "question": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )


def test_the_handler_answer_says_why_nothing_is_cited(
    retriever: Any, question: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="unicite")
    handler = CitationCallbackHandler()
    unnumbered_rag(retriever).invoke(question, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert answer.text == ANSWER
    assert answer.citations == []
    assert answer.diagnostics == [NOTE]
    # Every source the answer rests on stays listed.
    assert len(answer.sources) == 3
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].endswith("3 sources were captured but no citation could be extracted")


def test_with_citations_says_it_too_and_the_advice_works(retriever: Any, question: str) -> None:
    uncited = with_citations(unnumbered_rag(retriever)).invoke(question)["citations"]
    assert uncited.diagnostics == [NOTE]
    streamed = list(with_citations(unnumbered_rag(retriever)).stream(question))
    assert streamed[-1]["citations"].diagnostics == [NOTE]

    # Following the advice: lexical attribution cites the answer without markers.
    cited = with_citations(unnumbered_rag(retriever), attribute="lexical").invoke(question)
    answer = cited["citations"]
    assert {c.origin for c in answer.citations} == {"posthoc-lexical"}
    assert answer.sources[0].url == "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"
    assert answer.diagnostics == []
