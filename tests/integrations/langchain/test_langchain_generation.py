"""`cited_generation`: an LCEL runnable from a question and documents to a `CitedGeneration`.

Scripted runs on real LangChain objects: a `GenericFakeChatModel` answering first with a
marker naming no source (``[[S:7]]``), then with a valid answer, so every run retries once;
a `BaseRetriever` subclass returning fixed documents in French, German and Japanese.
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable, RunnablePassthrough
from pydantic import Field

from unicite import CitedGeneration, GroundingRequiredError, Source, UsageError
from unicite.generation import Retry
from unicite_langchain import (
    GENERATION_DELTA_EVENT,
    GENERATION_RETRY_EVENT,
    CitedGenerationRunnable,
    cited_generation,
)

MILLAU = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"
KOEHLBRAND = "https://de.wikipedia.org/wiki/K%C3%B6hlbrandbr%C3%BCcke"
AKASHI = "https://ja.wikipedia.org/wiki/明石海峡大橋"

DOCUMENTS = [
    Document(
        id="millau",
        page_content="Le viaduc de Millau culmine à 343 mètres ; il a été inauguré en 2004.",
        metadata={"source": MILLAU, "title": "Viaduc de Millau — Wikipédia"},
    ),
    Document(
        id="koehlbrand",
        page_content="Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang.",
        metadata={"url": KOEHLBRAND, "title": "Köhlbrandbrücke – Wikipedia"},
    ),
    Document(
        id="akashi",
        page_content="明石海峡大橋は全長3,911メートルの吊り橋です。",
        metadata={"source": AKASHI, "title": "明石海峡大橋 - Wikipedia"},
    ),
]
"""What the retriever returns, in this order: ``[[S:n]]`` in a prompt is ``DOCUMENTS[n-1]``."""

QUESTION = "Quel pont est le plus long, et de combien de mètres ?"

WRONG = "Le pont d’Akashi mesure 3 911 mètres [[S:7]]."
"""The first reply: its only marker names no source, so the round is retried."""

RIGHT = (
    "明石海峡大橋 mesure 3 911 mètres [[S:3]], la Köhlbrandbrücke 3 618 mètres [[S:2]] ; "
    "le viaduc de Millau culmine à 343 mètres [[S:1]]."
)
"""The second reply, valid; first-cited numbering makes Akashi 1, Köhlbrand 2, Millau 3."""

CONTENT = (
    "明石海峡大橋 mesure 3 911 mètres [[S:1]], la Köhlbrandbrücke 3 618 mètres [[S:2]] ; "
    "le viaduc de Millau culmine à 343 mètres [[S:3]]."
)
"""`RIGHT` as the generation's content: renumbered in first-cited order."""


class FixedRetriever(BaseRetriever):
    """Returns `DOCUMENTS`, whatever the query (recording the queries)."""

    queries: list[str] = Field(default_factory=list)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        self.queries.append(query)
        return list(DOCUMENTS)


class Prompts(BaseCallbackHandler):
    """Records the messages of each chat model call, and the custom events."""

    def __init__(self) -> None:
        self.calls: list[list[BaseMessage]] = []
        self.events: list[tuple[str, Any]] = []

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.calls.extend(messages)

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.events.append((name, data))


def model(*replies: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in replies]))


def chain(llm: GenericFakeChatModel, **options: Any) -> Runnable[str, CitedGeneration]:
    retriever = FixedRetriever()
    return {"question": RunnablePassthrough(), "documents": retriever} | cited_generation(
        llm, **options
    )


def check(generation: CitedGeneration) -> None:
    """The scripted run's result: retried once, finished, cited in first-cited order."""
    assert isinstance(generation, CitedGeneration)
    assert generation.content == CONTENT
    assert generation.finished
    assert generation.retries == 1
    assert generation.stats.rounds == 2
    # Why the first round was asked again: in the reason or the answer's diagnostics.
    assert "[[S:7]]" in " ".join([generation.reason, *generation.answer.diagnostics])
    assert [s.url for s in generation.sources_used] == [AKASHI, KOEHLBRAND, MILLAU]
    assert [s.title for s in generation.sources_used] == [
        "明石海峡大橋 - Wikipedia",
        "Köhlbrandbrücke – Wikipedia",
        "Viaduc de Millau — Wikipédia",
    ]
    assert generation.sources_used[0].content == DOCUMENTS[2].page_content
    answer = generation.answer
    assert [c.text for c in answer.citations] == [
        answer.text[c.start : c.end] for c in answer.citations
    ]
    assert len(answer.citations) == 3


def test_invoke_in_an_lcel_chain_retries_and_cites() -> None:
    prompts = Prompts()
    generation = chain(model(WRONG, RIGHT)).invoke(QUESTION, config={"callbacks": [prompts]})
    check(generation)
    # The chat model ran inside the chain's run (its callbacks saw both rounds); the sources
    # were numbered in the prompt, and the second round was told what was wrong.
    assert len(prompts.calls) == 2
    first, second = ("\n".join(str(m.content) for m in call) for call in prompts.calls)
    assert QUESTION in first
    assert "[sid:3] 明石海峡大橋 - Wikipedia" in first
    assert "Die Köhlbrandbrücke in Hamburg" in first
    assert WRONG in second
    assert "[[S:7]]" in second


def test_ainvoke() -> None:
    generation = asyncio.run(chain(model(WRONG, RIGHT)).ainvoke(QUESTION))
    check(generation)


def test_stream_yields_deltas_a_retry_and_the_generation() -> None:
    prompts = Prompts()
    chunks = list(chain(model(WRONG, RIGHT)).stream(QUESTION, config={"callbacks": [prompts]}))
    retries = [k for k, chunk in enumerate(chunks) if isinstance(chunk, Retry)]
    assert len(retries) == 1
    retry = chunks[retries[0]]
    assert isinstance(retry, Retry)
    assert retry.round == 2
    assert "[[S:7]]" in retry.reason
    before, after = chunks[: retries[0]], chunks[retries[0] + 1 :]
    assert all(isinstance(c, str) for c in before)
    assert all(isinstance(c, str) for c in after[:-1])
    # Deltas carry final numbers: what streamed after the retry is the content, exactly.
    assert "".join(after[:-1]) == CONTENT  # type: ignore[arg-type]
    check(after[-1])  # type: ignore[arg-type]
    # Each delta and the retry were dispatched as custom events too, in order.
    names = [name for name, _ in prompts.events]
    assert names.count(GENERATION_RETRY_EVENT) == 1
    deltas = [data["delta"] for name, data in prompts.events if name == GENERATION_DELTA_EVENT]
    assert deltas == [c for c in chunks if isinstance(c, str)]
    assert prompts.events[names.index(GENERATION_RETRY_EVENT)][1] == {
        "round": 2,
        "reason": retry.reason,
    }


def test_astream_events_carry_the_deltas_and_end_with_the_generation() -> None:
    runnable = chain(model(WRONG, RIGHT))

    async def events() -> list[dict[str, Any]]:
        return [event async for event in runnable.astream_events(QUESTION, version="v2")]

    seen = asyncio.run(events())
    custom = [e for e in seen if e["event"] == "on_custom_event"]
    names = [e["name"] for e in custom]
    assert names.count(GENERATION_RETRY_EVENT) == 1
    last_retry = names.index(GENERATION_RETRY_EVENT)
    shown = "".join(e["data"]["delta"] for e in custom[last_retry + 1 :])
    assert shown == CONTENT
    assert all(e["name"] == GENERATION_DELTA_EVENT for e in custom[last_retry + 1 :])
    # The generation runnable's own run: its output is the CitedGeneration, and so is the
    # chain's.
    ends = {
        e["name"]: e["data"]["output"]
        for e in seen
        if e["event"] == "on_chain_end"
        and e["name"] in ("CitedGenerationRunnable", "RunnableSequence")
    }
    check(ends["CitedGenerationRunnable"])
    check(ends["RunnableSequence"])
    # The custom events belong to the generation run; the model ran under it, both rounds.
    run = next(
        e["run_id"]
        for e in seen
        if e["event"] == "on_chain_start" and e["name"] == "CitedGenerationRunnable"
    )
    assert {e["run_id"] for e in custom} == {run}
    starts = [e for e in seen if e["event"] == "on_chat_model_start"]
    assert len(starts) == 2
    assert all(run in e["parent_ids"] for e in starts)


def test_astream_directly() -> None:
    runnable = cited_generation(model(WRONG, RIGHT))

    async def chunks() -> list[Any]:
        request = {"question": QUESTION, "documents": DOCUMENTS}
        return [chunk async for chunk in runnable.astream(request)]

    streamed = asyncio.run(chunks())
    assert sum(isinstance(c, Retry) for c in streamed) == 1
    check(streamed[-1])


@pytest.mark.parametrize("key", ["question", "input", "query"])
def test_question_keys(key: str) -> None:
    generation = cited_generation(model(WRONG, RIGHT)).invoke(
        {key: QUESTION, "documents": DOCUMENTS}
    )
    check(generation)


def test_sources_as_sources_and_dicts() -> None:
    sources: list[Any] = [
        Source(id="millau", url=MILLAU, title="Viaduc de Millau — Wikipédia", content="343 m"),
        {"id": "koehlbrand", "url": KOEHLBRAND, "title": "Köhlbrandbrücke", "content": "3 618 m"},
        DOCUMENTS[2],
    ]
    generation = CitedGenerationRunnable(model(RIGHT), max_retries=0).invoke(
        {"question": QUESTION, "sources": sources}
    )
    assert generation.content == CONTENT
    assert generation.retries == 0
    assert [s.url for s in generation.sources_used] == [AKASHI, KOEHLBRAND, MILLAU]
    assert [s.id for s in generation.sources_used][1:] == ["koehlbrand", "millau"]


def test_context_key_and_options() -> None:
    generation = cited_generation(model(WRONG), max_retries=0, format="text").invoke(
        {"input": QUESTION, "context": DOCUMENTS}
    )
    assert not generation.finished
    assert generation.retries == 0
    assert generation.format == "text"
    assert generation.reason


def test_require_raise_propagates() -> None:
    runnable = chain(model(WRONG, WRONG), require="raise", max_retries=1)
    with pytest.raises(GroundingRequiredError):
        runnable.invoke(QUESTION)


def test_batch() -> None:
    runnable = chain(model(WRONG, RIGHT, WRONG, RIGHT))
    first, second = runnable.batch([QUESTION, QUESTION], config={"max_concurrency": 1})
    check(first)
    check(second)


def test_unreadable_metadata_is_noted() -> None:
    odd = Document(
        page_content="Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang.",
        metadata={"url": KOEHLBRAND, "title": "Köhlbrandbrücke", "handle": object()},
    )
    generation = cited_generation(model("Die Brücke ist 3 618 Meter lang [[S:1]].")).invoke(
        {"question": "Wie lang?", "documents": [odd]}
    )
    assert generation.finished
    assert generation.sources_used[0].url == KOEHLBRAND
    assert any("handle" in note for note in generation.answer.diagnostics)


def test_bad_inputs_and_options() -> None:
    runnable = cited_generation(model(RIGHT))
    with pytest.raises(UsageError, match="dict"):
        runnable.invoke(QUESTION)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="question"):
        runnable.invoke({"documents": DOCUMENTS})
    with pytest.raises(UsageError, match="sources"):
        runnable.invoke({"question": QUESTION})
    with pytest.raises(UsageError, match="one key"):
        runnable.invoke({"question": QUESTION, "documents": DOCUMENTS, "context": DOCUMENTS})
    with pytest.raises(UsageError, match="temperature"):
        cited_generation(model(RIGHT), temperature=0)
    with pytest.raises(UsageError):
        cited_generation(object())
