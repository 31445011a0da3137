"""`CitedSynthesizer`: cited generation as the response synthesizer of LlamaIndex query engines.

Scripted runs on real LlamaIndex objects: a `VectorStoreIndex` over `Document`s with
`MockEmbedding`, and a `CustomLLM` that answers first with a marker naming no source
(``[[S:7]]``), then validly, so every query retries once. The scripted answers cite sources by
the numbers the prompt gave them (``[sid:N] Title``), whatever order the retriever returned.
"""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.base.response.schema import Response
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.instrumentation.event_handlers import BaseEventHandler
from llama_index.core.instrumentation.events import BaseEvent
from llama_index.core.llms import (
    CompletionResponse,
    CompletionResponseGen,
    CustomLLM,
    LLMMetadata,
)
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.query_engine import RetrieverQueryEngine

from unicite import CitedAnswer, CitedGeneration, UsageError
from unicite.generation import Retry
from unicite_llamaindex import (
    AsyncCitedStreamingResponse,
    CitationsEvent,
    CitedStreamingResponse,
    CitedSynthesizer,
    dispatcher,
)

MAREES = "https://www.ot-montsaintmichel.com/decouvrir/les-marees"
ABBAYE = "https://fr.wikipedia.org/wiki/Abbaye_du_Mont-Saint-Michel"
HAMBURG = "https://de.wikipedia.org/wiki/K%C3%B6hlbrandbr%C3%BCcke"

TITLES = {
    "marees": "Les marées – Office de tourisme",
    "abbaye": "Abbaye du Mont-Saint-Michel — Wikipédia",
    "hamburg": "Köhlbrandbrücke – Wikipedia",
}

DOCUMENTS = [
    Document(
        id_="marees",
        text="Les marées de la baie atteignent jusqu’à 14 mètres lors des grandes marées.",
        metadata={"url": MAREES, "title": TITLES["marees"]},
    ),
    Document(
        id_="abbaye",
        text="L’abbaye bénédictine a été fondée en 966 ; la « Merveille » date du XIIIe siècle.",
        metadata={"url": ABBAYE, "title": TITLES["abbaye"]},
    ),
    Document(
        id_="hamburg",
        text="Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang.",
        metadata={"url": HAMBURG, "title": TITLES["hamburg"]},
    ),
]

QUESTION = "Que sait-on du Mont-Saint-Michel ?"

WRONG = "L’abbaye date de 966 [[S:7]]."
RIGHT = (
    "L’abbaye bénédictine date de 966 [[S:{abbaye}]] ; les marées atteignent 14 mètres "
    "[[S:{marees}]]."
)
CONTENT = "L’abbaye bénédictine date de 966 [[S:1]] ; les marées atteignent 14 mètres [[S:2]]."
"""`RIGHT` as the generation's content: first-cited numbering makes the abbey 1."""

_LISTED = re.compile(r"\[sid:(\d+)\] (.+)")


def numbers(prompt: str) -> dict[str, str]:
    """The number the prompt gave each document, by its key in `TITLES`."""
    by_title = {title: key for key, title in TITLES.items()}
    return {
        by_title[title.strip()]: number
        for number, title in _LISTED.findall(prompt)
        if title.strip() in by_title
    }


class ScriptedLLM(CustomLLM):
    """Answers each call with the next reply, its ``{key}`` fields the prompt's numbers."""

    replies: list[str]
    chunk: int = 4
    _calls: list[str] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted")

    @property
    def prompts(self) -> list[str]:
        return list(self._calls)

    def _reply(self, prompt: str) -> str:
        with self._lock:
            self._calls.append(prompt)
            reply = self.replies[min(len(self._calls), len(self.replies)) - 1]
        return reply.format(**numbers(prompt))

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._reply(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        reply, size = self._reply(prompt), self.chunk

        def gen() -> CompletionResponseGen:
            text = ""
            for start in range(0, len(reply), size):
                delta = reply[start : start + size]
                text += delta
                yield CompletionResponse(text=text, delta=delta)

        return gen()


class Events(BaseEventHandler):
    """Collects the `CitationsEvent`s dispatched."""

    seen: list[CitationsEvent] = Field(default_factory=list)

    @classmethod
    def class_name(cls) -> str:
        return "Events"

    def handle(self, event: BaseEvent, **kwargs: Any) -> None:
        if isinstance(event, CitationsEvent):
            self.seen.append(event)


@pytest.fixture(scope="module")
def index() -> VectorStoreIndex:
    return VectorStoreIndex.from_documents(DOCUMENTS, embed_model=MockEmbedding(embed_dim=8))


@pytest.fixture
def events() -> Any:
    handler = Events()
    dispatcher.add_event_handler(handler)
    yield handler
    dispatcher.event_handlers.remove(handler)


def check_generation(generation: CitedGeneration) -> None:
    assert isinstance(generation, CitedGeneration)
    assert generation.content == CONTENT
    assert generation.finished
    assert generation.retries == 1
    # Why the first round was asked again: in the reason or the answer's diagnostics.
    assert "[[S:7]]" in " ".join([generation.reason, *generation.answer.diagnostics])
    assert [s.url for s in generation.sources_used] == [ABBAYE, MAREES]
    answer = generation.answer
    assert [c.text for c in answer.citations] == [
        answer.text[c.start : c.end] for c in answer.citations
    ]


def check(response: Any, generation: CitedGeneration) -> None:
    """The finished response: content, cited nodes in citation order, metadata."""
    check_generation(generation)
    assert response.metadata["generation"] is generation
    assert response.metadata["citations"] is generation.answer
    assert isinstance(response.metadata["citations"], CitedAnswer)
    # [n] in the text is source_nodes[n - 1]: the cited nodes, in first-cited order.
    assert [n.node.ref_doc_id for n in response.source_nodes] == ["abbaye", "marees"]
    assert [n.node.metadata["url"] for n in response.source_nodes] == [ABBAYE, MAREES]
    for node in response.source_nodes:  # LlamaIndex's own metadata, by node id
        assert response.metadata[node.node.node_id] == node.node.metadata


def check_prompts(llm: ScriptedLLM) -> None:
    first, second = llm.prompts
    assert QUESTION in first
    assert "Die Köhlbrandbrücke in Hamburg" in first
    assert set(numbers(first)) == set(TITLES)
    assert WRONG in second


def test_query_engine_sync(index: VectorStoreIndex, events: Events) -> None:
    llm = ScriptedLLM(replies=[WRONG, RIGHT])
    engine = index.as_query_engine(
        llm=llm, response_synthesizer=CitedSynthesizer(llm=llm), similarity_top_k=3
    )
    response = engine.query(QUESTION)
    assert isinstance(response, Response)
    assert response.response == CONTENT
    check(response, response.metadata["generation"])
    check_prompts(llm)
    assert [e.answer for e in events.seen] == [response.metadata["citations"]]
    assert events.seen[0].origin == "marker"


def test_query_engine_async(index: VectorStoreIndex) -> None:
    llm = ScriptedLLM(replies=[WRONG, RIGHT])
    engine = index.as_query_engine(
        llm=llm, response_synthesizer=CitedSynthesizer(llm=llm), similarity_top_k=3
    )
    response = asyncio.run(engine.aquery(QUESTION))
    assert isinstance(response, Response)
    assert response.response == CONTENT
    check(response, response.metadata["generation"])
    check_prompts(llm)


def test_retriever_query_engine_streaming(index: VectorStoreIndex) -> None:
    llm = ScriptedLLM(replies=[WRONG, RIGHT])
    engine = RetrieverQueryEngine(
        index.as_retriever(similarity_top_k=3),
        response_synthesizer=CitedSynthesizer(llm=llm, streaming=True),
    )
    response = engine.query(QUESTION)
    assert isinstance(response, CitedStreamingResponse)
    assert response.generation is None  # nothing asked yet: the stream is lazy
    deltas = list(response.response_gen)
    assert all(isinstance(d, str) for d in deltas)
    assert "".join(deltas).endswith(CONTENT)  # the first round's text, then the answer
    assert len(response.retries) == 1
    assert response.retries[0].round == 2
    assert response.generation is not None
    assert response.response_txt == CONTENT
    assert str(response) == CONTENT
    assert response.get_response().response == CONTENT
    check(response, response.generation)
    check_prompts(llm)


def test_streaming_cited_gen_shows_the_retry(index: VectorStoreIndex) -> None:
    llm = ScriptedLLM(replies=[WRONG, RIGHT])
    engine = index.as_query_engine(
        llm=llm,
        response_synthesizer=CitedSynthesizer(llm=llm, streaming=True),
        similarity_top_k=3,
    )
    response = engine.query(QUESTION)
    assert isinstance(response, CitedStreamingResponse)
    assert response.cited_gen is not None
    items = list(response.cited_gen)
    kinds = [type(item).__name__ for item in items]
    assert kinds.count("Retry") == 1
    assert kinds[-1] == "CitedGeneration"
    after = items[kinds.index("Retry") + 1 : -1]
    assert "".join(after) == CONTENT  # type: ignore[arg-type]
    assert items[-1] is response.generation
    check(response, items[-1])  # type: ignore[arg-type]


def test_query_engine_async_streaming(index: VectorStoreIndex) -> None:
    llm = ScriptedLLM(replies=[WRONG, RIGHT])
    engine = index.as_query_engine(
        llm=llm,
        response_synthesizer=CitedSynthesizer(llm=llm, streaming=True),
        similarity_top_k=3,
    )

    async def run() -> tuple[Any, list[str], Response]:
        response = await engine.aquery(QUESTION)
        deltas = [delta async for delta in response.async_response_gen()]
        return response, deltas, await response.get_response()

    response, deltas, final = asyncio.run(run())
    assert isinstance(response, AsyncCitedStreamingResponse)
    assert "".join(deltas).endswith(CONTENT)
    assert len(response.retries) == 1
    assert isinstance(response.retries[0], Retry)
    assert response.response_txt == CONTENT
    assert final.response == CONTENT
    assert response.generation is not None
    check(response, response.generation)


def test_any_llm_unicite_knows(index: VectorStoreIndex) -> None:
    """A model that is no LlamaIndex LLM (here a callable) is asked by unicite directly."""
    replies = iter([WRONG, RIGHT])
    asked: list[str] = []

    def llm(prompt: str) -> str:
        asked.append(prompt)
        return next(replies).format(**numbers(prompt))

    engine = RetrieverQueryEngine(
        index.as_retriever(similarity_top_k=3), response_synthesizer=CitedSynthesizer(llm)
    )
    response = engine.query(QUESTION)
    check(response, response.metadata["generation"])
    assert len(asked) == 2


def test_options_reach_generate_cited(index: VectorStoreIndex) -> None:
    llm = ScriptedLLM(replies=[WRONG])
    synthesizer = CitedSynthesizer(llm=llm, max_retries=0, format="text")
    assert synthesizer.llm is llm
    assert synthesizer.options == {"max_retries": 0, "format": "text"}
    response = index.as_query_engine(
        llm=llm, response_synthesizer=synthesizer, similarity_top_k=3
    ).query(QUESTION)
    generation = response.metadata["generation"]
    assert not generation.finished
    assert generation.retries == 0
    assert generation.format == "text"
    assert response.source_nodes == []  # nothing cited


def test_no_nodes_gives_the_empty_response() -> None:
    llm = ScriptedLLM(replies=[RIGHT])
    synthesizer = CitedSynthesizer(llm=llm)
    response = synthesizer.synthesize(QUESTION, [])
    assert isinstance(response, Response)
    assert response.response == "Empty Response"
    assert response.metadata["citations"].diagnostics
    assert llm.prompts == []


def test_get_response_from_text_chunks() -> None:
    llm = ScriptedLLM(replies=["Die Brücke ist 3 618 Meter lang [[S:1]]."])
    text = CitedSynthesizer(llm=llm).get_response(
        "Wie lang ist die Köhlbrandbrücke?", [DOCUMENTS[2].text]
    )
    assert text == "Die Brücke ist 3 618 Meter lang [[S:1]]."


def test_bad_options() -> None:
    llm = ScriptedLLM(replies=[RIGHT])
    with pytest.raises(UsageError, match="temperature"):
        CitedSynthesizer(llm=llm, temperature=0)
    with pytest.raises(UsageError):
        CitedSynthesizer(llm=object())
