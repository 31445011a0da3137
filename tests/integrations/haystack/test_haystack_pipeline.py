"""`CitedAnswerBuilder` and `CitationStreamingCallback` in real Haystack pipelines.

An `InMemoryDocumentStore` searched by `InMemoryBM25Retriever`, a `ChatPromptBuilder`
numbering the documents, a scripted chat generator and the builder; saved and loaded back.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("haystack.core")

from haystack import Document, Pipeline
from haystack.components.builders import ChatPromptBuilder
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack.document_stores.in_memory import InMemoryDocumentStore
from integrations.haystack.scripted import ScriptedChatGenerator

import unicite
from unicite import CitedAnswer, CitePolicy
from unicite_haystack import CitationStreamingCallback, CitedAnswerBuilder

DOCUMENTS = [
    Document(
        id="millau",
        content="Le viaduc de Millau culmine à 343 mètres ; il a été inauguré en 2004.",
        meta={"url": "https://fr.wikipedia.org/wiki/Viaduc_de_Millau", "title": "Viaduc"},
    ),
    Document(
        id="koehlbrand",
        content="Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang, eröffnet 1974.",
        meta={"url": "https://de.wikipedia.org/wiki/Köhlbrandbrücke", "title": "Brücke"},
    ),
    Document(
        id="akashi",
        content="明石海峡大橋は全長3,911メートルの吊り橋で、1998年に開通しました。",
        meta={"url": "https://ja.wikipedia.org/wiki/明石海峡大橋", "title": "明石海峡大橋"},
    ),
]
TEMPLATE = [
    ChatMessage.from_user(
        "{% for doc in documents %}[{{ loop.index }}] {{ doc.content }}\n{% endfor %}"
        "Question : {{ query }}"
    )
]
ALLOWED = ["unicite_haystack", "integrations.haystack", "test_haystack_pipeline"]
QUESTION = "viaduc Millau Köhlbrandbrücke mètres"


def answer_from(prompt: str) -> str:
    """Cites the Köhlbrandbrücke first, whatever number the prompt gave it, and one bad marker."""
    number = {
        doc_id: line[1 : line.index("]")]
        for line in prompt.splitlines()
        for doc_id, word in (("millau", "Millau"), ("koehlbrand", "Köhlbrand"))
        if line.startswith("[") and word in line
    }
    return (
        f"Die Köhlbrandbrücke ist 3 618 Meter lang [{number['koehlbrand']}]. "
        f"Le viaduc de Millau culmine à 343 mètres [{number['millau']}]. Erfunden [7]."
    )


def pipeline(builder: CitedAnswerBuilder) -> Any:
    store = InMemoryDocumentStore()
    store.write_documents(DOCUMENTS)
    pipe = Pipeline()
    pipe.add_component("retriever", InMemoryBM25Retriever(store, top_k=3))
    pipe.add_component("prompt", ChatPromptBuilder(template=TEMPLATE, required_variables="*"))
    pipe.add_component("llm", ScriptedChatGenerator(answer_from))
    pipe.add_component("answers", builder)
    pipe.connect("retriever.documents", "prompt.documents")
    pipe.connect("prompt.prompt", "llm.messages")
    pipe.connect("llm.replies", "answers.replies")
    pipe.connect("retriever.documents", "answers.documents")
    return pipe


def inputs(**llm: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "retriever": {"query": QUESTION},
        "prompt": {"query": QUESTION},
        "answers": {"query": QUESTION},
    }
    if llm:
        data["llm"] = llm
    return data


def retrieved() -> list[Document]:
    store = InMemoryDocumentStore()
    store.write_documents(DOCUMENTS)
    return list(InMemoryBM25Retriever(store, top_k=3).run(query=QUESTION)["documents"])


def test_pipeline_answer_is_cited_and_renumbered() -> None:
    result = pipeline(CitedAnswerBuilder()).run(inputs())
    answer = result["answers"]["answers"][0]
    assert answer.data == (
        "Die Köhlbrandbrücke ist 3 618 Meter lang [1]. "
        "Le viaduc de Millau culmine à 343 mètres [2]. Erfunden."
    )
    assert [d.id for d in answer.documents] == ["koehlbrand", "millau"]
    assert [d.meta["citation_number"] for d in answer.documents] == [1, 2]
    cited: CitedAnswer = answer.meta["citations"]
    assert [s.url for s in cited.sources] == [d.meta["url"] for d in answer.documents]
    assert any("[7]" in note for note in cited.diagnostics)
    assert answer.meta["model"] == "scripted"
    for citation in cited.citations:
        assert cited.text[citation.start : citation.end] == citation.text
    # Same as unicite.cite on the reply and the documents the prompt numbered.
    docs = retrieved()
    reply = result["llm"]["replies"][0].text if "llm" in result else None
    if reply is not None:
        want = unicite.cite(reply, [{"id": d.id, "content": d.content} for d in docs])
        assert want.text == answer.data


def test_pipeline_saves_and_loads() -> None:
    builder = CitedAnswerBuilder(
        reference_pattern=r"\[(\d+)\]",
        return_only_referenced_documents=False,
        policy=CitePolicy(on_invalid="keep", sources="all"),
    )
    pipe = pipeline(builder)
    loaded = Pipeline.loads(pipe.dumps(), allowed_modules=ALLOWED)
    restored = loaded.get_component("answers")
    assert isinstance(restored, CitedAnswerBuilder)
    assert restored.to_dict() == builder.to_dict()
    assert builder.to_dict()["type"] == "unicite_haystack.CitedAnswerBuilder"  # the public path
    assert restored.policy == builder.policy
    first = pipe.run(inputs())["answers"]["answers"][0]
    again = loaded.run(inputs())["answers"]["answers"][0]
    assert again.data == first.data
    assert "[7]" in again.data  # on_invalid="keep" survived the round trip
    assert [d.id for d in again.documents] == [d.id for d in first.documents]
    referenced = [d.meta["referenced"] for d in again.documents]
    assert referenced == [True, True] + [False] * (len(retrieved()) - 2)


def keep(answer: CitedAnswer) -> None:
    """An importable on_citations."""


def test_on_citations_is_saved_by_import_path() -> None:
    builder = CitedAnswerBuilder(on_citations=keep)
    data = builder.to_dict()
    assert data["init_parameters"]["on_citations"].endswith("test_haystack_pipeline.keep")
    loaded = Pipeline.loads(pipeline(builder).dumps(), allowed_modules=ALLOWED)
    assert loaded.get_component("answers").on_citations is keep


@pytest.mark.parametrize("chunk", [1, 3, 8])
def test_streaming_callback_live_text_is_final_text(chunk: int) -> None:
    shown: list[str] = []
    stream = CitationStreamingCallback(retrieved(), lambda c: shown.append(c.content))
    pipe = pipeline(CitedAnswerBuilder())
    pipe.get_component("llm").chunk = lambda: chunk
    answer = pipe.run(inputs(streaming_callback=stream))["answers"]["answers"][0]
    assert "".join(shown) == stream.answer.text == answer.data
    assert "[7]" not in "".join(shown)


def test_run_async_streams_through_an_async_callback() -> None:
    shown: list[str] = []

    async def show(chunk: StreamingChunk) -> None:
        shown.append(chunk.content)

    stream = CitationStreamingCallback(retrieved(), show)
    pipe = pipeline(CitedAnswerBuilder())

    async def main() -> Any:
        return await pipe.run_async(inputs(streaming_callback=stream.acall))

    answer = asyncio.run(main())["answers"]["answers"][0]
    assert "".join(shown) == answer.data == stream.answer.text
    assert answer.data.startswith("Die Köhlbrandbrücke ist 3 618 Meter lang [1].")


def test_streaming_callback_passes_other_chunks_and_closes_once() -> None:
    got: list[StreamingChunk] = []
    stream = CitationStreamingCallback(DOCUMENTS, got.append)
    stream(StreamingChunk(content="明石海峡大橋 [3"))
    stream(StreamingChunk(content="] ist lang \n"))
    rest = stream.close()
    assert stream.close() is None
    assert "".join(c.content for c in got) == "明石海峡大橋 [1] ist lang \n" == stream.answer.text
    assert rest is not None  # trailing whitespace waits for the end
    assert rest.content == got[-1].content
    stream(StreamingChunk(content=" après"))  # after the end: passed on as it is
    assert got[-1].content == " après"


def test_custom_reference_pattern_is_read_as_markers() -> None:
    builder = CitedAnswerBuilder(reference_pattern=r"<doc (\d+)>")
    answer = builder.run(
        query="Hauteur ?",
        replies=["Le viaduc culmine à 343 mètres <doc 1>; le pont est long <doc 9>."],
        documents=DOCUMENTS,
    )["answers"][0]
    assert answer.data == "Le viaduc culmine à 343 mètres [1]; le pont est long."
    assert [d.id for d in answer.documents] == ["millau"]


def test_a_raising_on_citations_leaves_the_answer() -> None:
    def explode(answer: CitedAnswer) -> None:
        raise RuntimeError("boom")

    docs = DOCUMENTS[:2]
    clean = CitedAnswerBuilder().run(query="q", replies=["Millau [2][1]."], documents=docs)
    faulty = CitedAnswerBuilder(on_citations=explode).run(
        query="q", replies=["Millau [2][1]."], documents=docs
    )
    one, two = clean["answers"][0], faulty["answers"][0]
    assert two.data == one.data == "Millau [1][2]."
    assert [d.id for d in two.documents] == ["koehlbrand", "millau"]
    assert any("boom" in note for note in two.meta["citations"].diagnostics)


def test_disabled_is_answer_builder() -> None:
    builder = CitedAnswerBuilder(reference_pattern=r"\[(\d+)\]", policy={"enabled": False})
    answer = builder.run(query="q", replies=["Millau [2]."], documents=DOCUMENTS)["answers"][0]
    assert answer.data == "Millau [2]."
    assert [d.id for d in answer.documents] == ["koehlbrand"]
    assert "citations" not in answer.meta


def test_the_finish_reason_comes_last_after_the_held_back_text() -> None:
    got: list[StreamingChunk] = []
    stream = CitationStreamingCallback(DOCUMENTS, got.append)
    stream(StreamingChunk(content="Köln ", index=0, start=True))
    stream(StreamingChunk(content="[2]  ", index=0))
    stream(StreamingChunk(content="", finish_reason="stop"))
    assert "".join(c.content for c in got) == "Köln [1]  " == stream.answer.text
    assert [c.finish_reason for c in got][-1] == "stop"
    assert [c.finish_reason for c in got][:-1] == [None] * (len(got) - 1)
    assert got[0].start


def test_disabled_streaming_passes_the_text_as_it_is() -> None:
    got: list[str] = []
    stream = CitationStreamingCallback(
        DOCUMENTS, lambda c: got.append(c.content), policy=CitePolicy(enabled=False)
    )
    for piece in ["Köln [", "9] [2]"]:
        stream(StreamingChunk(content=piece))
    stream.close()
    assert "".join(got) == "Köln [9] [2]" == stream.answer.text
    assert stream.answer.citations == []


GROUNDED = "Le viaduc de Millau culmine à 343 mètres."
GROUNDING = {
    "groundingChunks": [
        {"web": {"uri": "https://fr.wikipedia.org/wiki/Viaduc_de_Millau", "title": "Viaduc"}}
    ],
    "groundingSupports": [
        {
            "segment": {"startIndex": 0, "endIndex": len(GROUNDED.encode()), "text": GROUNDED},
            "groundingChunkIndices": [0],
        }
    ],
}


def test_native_citations_kept_in_meta_are_read() -> None:
    # A generator keeping the provider's grounding in meta (Haystack's own OpenAI ones keep
    # none) gets its native citations read, spans in str offsets despite the accents.
    reply = ChatMessage.from_assistant(GROUNDED, meta={"grounding_metadata": GROUNDING})
    answer = CitedAnswerBuilder().run(query="Millau", replies=[reply])["answers"][0]
    cited: CitedAnswer = answer.meta["citations"]
    assert cited.provider == "gemini"
    (citation,) = cited.citations
    assert citation.origin == "native"
    assert cited.text[citation.start : citation.end] == GROUNDED
    assert [s.url for s in cited.sources] == ["https://fr.wikipedia.org/wiki/Viaduc_de_Millau"]


def test_a_pattern_cutting_the_reply_drops_native_citations() -> None:
    reply = ChatMessage.from_assistant(GROUNDED, meta={"grounding_metadata": GROUNDING})
    builder = CitedAnswerBuilder(pattern=r"culmine (.*)")
    answer = builder.run(query="Millau", replies=[reply])["answers"][0]
    assert answer.data == "à 343 mètres."
    assert answer.meta["citations"].citations == []
    assert "1 native citation(s) were dropped" in answer.meta["citations"].diagnostics[0]


@pytest.mark.parametrize("return_all", [False, True])
def test_an_unreadable_document_never_breaks_the_run(return_all: bool) -> None:
    class Broken(Document):
        @property
        def meta(self) -> dict[str, Any]:  # type: ignore[override]
            raise RuntimeError("unreadable meta")

        @meta.setter
        def meta(self, value: dict[str, Any]) -> None:
            pass

    docs = [DOCUMENTS[0], Broken(id="broken", content="Texte illisible.")]
    builder = CitedAnswerBuilder(return_only_referenced_documents=not return_all)
    (result,) = builder.run(query="q", replies=["Millau [1]."], documents=docs)["answers"]
    cited: CitedAnswer = result.meta["citations"]
    assert result.data == cited.text
    assert any("document 2 could not be read" in note for note in cited.diagnostics)
    if return_all:
        # Copying the unreadable document failed: the answer is uncited, every document kept.
        assert result.data == "Millau [1]."
        assert [d.id for d in result.documents] == ["millau", "broken"]
        assert any("internal error" in note for note in cited.diagnostics)
    else:
        assert result.data == "Millau [1]."
        assert [d.id for d in result.documents] == ["millau"]
