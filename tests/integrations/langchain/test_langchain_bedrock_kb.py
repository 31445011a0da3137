"""langchain-aws's ``AmazonKnowledgeBasesRetriever`` in a RAG chain, on a cassette.

Its documents keep the ``Retrieve`` result as their metadata (``location``, ``score``,
``source_metadata``): the handler numbers one source per chunk, with the chunk's S3 file, web
page and page number, and cites the answer's ``[n]`` markers against them.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_core")
retrievers = pytest.importorskip("langchain_aws.retrievers")
boto3 = pytest.importorskip("boto3")

from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402
from langchain_core.output_parsers import StrOutputParser  # noqa: E402
from langchain_core.runnables import Runnable, RunnablePassthrough  # noqa: E402

from unicite_langchain import (  # noqa: E402
    CitationCallbackHandler,
    citation_prompt,
    number_sources,
)

PDF = "s3://handbuch-eu/de/Garantie-Handbuch.pdf"
QUESTION = "Wie lange gilt die Garantie? 保修多久?"


def retriever() -> Any:
    """The retriever over a boto3 client whose placeholder keys sign what the cassette answers."""
    client = boto3.client(
        "bedrock-agent-runtime",
        region_name="eu-central-1",
        aws_access_key_id="x",
        aws_secret_access_key="y",  # noqa: S106
    )
    return retrievers.AmazonKnowledgeBasesRetriever(knowledge_base_id="KBHANDBUCH1", client=client)


def rag(model: Runnable[Any, Any]) -> Runnable[Any, str]:
    return (
        {"sources": retriever() | number_sources(), "question": RunnablePassthrough()}
        | citation_prompt()
        | model
        | StrOutputParser()
    )


@pytest.mark.vcr
def test_a_rag_chain_cites_the_knowledge_base_chunks() -> None:
    prompts: list[str] = []

    class Model(FakeListChatModel):
        def _call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
            prompts.extend(str(m.content) for m in messages)
            return super()._call(messages, *args, **kwargs)

    answer_text = "Zwei Jahre ab Kauf [1]. 请保留发票 [2]. Ersatzteile gibt es online [3]."
    handler = CitationCallbackHandler()
    rag(Model(responses=[answer_text])).invoke(QUESTION, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    # The chunks were shown to the model under their numbers, the PDF by its file name.
    shown = "\n".join(prompts)
    assert "[sid:1] Garantie-Handbuch.pdf" in shown
    assert "所有设备保修两年。维修时请出示发票。" in shown
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("Zwei Jahre ab Kauf", ["1%3A0%3AgQ7tZ"]),
        ("请保留发票", ["1%3A0%3AwZ3kq"]),
        ("Ersatzteile gibt es online", ["1%3A0%3AeT5pn"]),
    ]
    pdf, web, shop = answer.sources
    assert (pdf.kind, pdf.url, pdf.title) == ("document", None, "Garantie-Handbuch.pdf")
    assert (pdf.extras["uri"], pdf.extras["page_number"], pdf.extras["score"]) == (PDF, 3, 0.71)
    assert (web.kind, web.url) == ("web", "https://hilfe.example.cn/baoxiu")
    assert shop.content == "Ersatzteile: Bestellung über den Online-Shop, Lieferung in 3 Tagen 🔧"
    assert {s.origin.tool for s in answer.sources if s.origin} == {"AmazonKnowledgeBasesRetriever"}
