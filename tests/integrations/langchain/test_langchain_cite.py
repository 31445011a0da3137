"""Every LangChain entry point hands what it holds to `unicite.cite` and takes its answer.

The handler, `with_citations` and `CitationOutputParser` take the same `CitePolicy` options;
native citations and ``[n]`` markers are kept together and renumbered; streamed text already
carries the final numbers.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.callbacks import BaseCallbackHandler, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnablePassthrough

from unicite import CitedAnswer, CitePolicy, GroundingRequiredError, Source, UsageError
from unicite_langchain import (
    CITATIONS_EVENT,
    CitationCallbackHandler,
    CitationOutputParser,
    citation_prompt,
    number_sources,
    with_citations,
)

MILLAU = "https://fr.wikipedia.org/wiki/Viaduc_de_Millau"
NORMANDIE = "https://fr.wikipedia.org/wiki/Pont_de_Normandie"
OFFICIAL = "https://www.leviaducdemillau.com/fr/histoire"

MARKED = (
    "Le pont de Normandie date de 1995 [2]. Le viaduc de Millau culmine à 343 mètres [1][2]; "
    "il a été inauguré le 14 décembre 2004 [1]. Ce pont n'existe pas [9]."
)
"""Cites out of first-cited order, with a glued marker pair and an invalid marker."""


class ChunkedChatModel(BaseChatModel):
    """Answers `text`, streamed in deltas of `size` characters."""

    text: str
    size: int = 1

    @property
    def _llm_type(self) -> str:
        return "chunked-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.text))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for start in range(0, len(self.text), self.size):
            piece = self.text[start : start + self.size]
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece))
            if run_manager is not None:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


def rag(retriever: Any, model: Runnable[Any, Any]) -> Runnable[Any, str]:
    return (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | citation_prompt()
        | model
        | StrOutputParser()
    )


def cited_urls(answer: CitedAnswer) -> list[list[str | None]]:
    return [[answer.source(sid).url for sid in c.source_ids] for c in answer.citations]  # type: ignore[union-attr]


# --- native citations and markers in one answer -----------------------------------------------


def native_and_marked() -> AIMessage:
    """An Anthropic answer: a sentence with a ``[2]`` marker, then one cited natively."""
    return AIMessage(
        content=[
            {"type": "text", "text": "Le pont de Normandie date de 1995 [2]. "},
            {
                "type": "text",
                "text": "Le viaduc a été inauguré le 14 décembre 2004.",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": OFFICIAL,
                        "title": "Histoire du viaduc",
                        "cited_text": "Inauguré le 14 décembre 2004.",
                        "encrypted_index": "EqQBCioIBBgC",
                    }
                ],
            },
        ],
        response_metadata={"model_provider": "anthropic", "model_name": "claude-sonnet-4-6"},
    )


def test_markers_and_native_citations_are_both_kept(retriever: Any, question: str) -> None:
    """Markers next to native citations are cited too (they used to be dropped), renumbered."""
    handler = CitationCallbackHandler()
    model = GenericFakeChatModel(messages=iter([native_and_marked()]))
    rag(retriever, model).invoke(question, config={"callbacks": [handler]})
    answer = handler.answer
    assert answer is not None
    assert [c.origin for c in answer.citations] == ["marker", "native"]
    assert cited_urls(answer) == [[NORMANDIE], [OFFICIAL]]
    # The marker cites the source read first: it is [1] now.
    assert answer.text.startswith("Le pont de Normandie date de 1995 [1]. Le viaduc")
    assert [s.url for s in answer.sources] == [NORMANDIE, OFFICIAL]
    assert answer.extras["citation_origin"] == "native"


def test_the_parser_keeps_both_too() -> None:
    sources = [Source(url=MILLAU, title="Millau"), Source(url=NORMANDIE, title="Normandie")]
    answer = CitationOutputParser(sources=sources).invoke(native_and_marked())
    assert [c.origin for c in answer.citations] == ["marker", "native"]
    assert cited_urls(answer) == [[NORMANDIE], [OFFICIAL]]


# --- renumbering is the policy's, on every path ---------------------------------------------------

RENUMBERED = (
    "Le pont de Normandie date de 1995 [1]. Le viaduc de Millau culmine à 343 mètres [1][2]; "
    "il a été inauguré le 14 décembre 2004 [2]. Ce pont n'existe pas."
)
AS_WRITTEN = (
    "Le pont de Normandie date de 1995 [2]. Le viaduc de Millau culmine à 343 mètres [1][2]; "
    "il a été inauguré le 14 décembre 2004 [1]. Ce pont n'existe pas."
)


def texts(retriever: Any, question: str, **options: Any) -> dict[str, str]:
    """The answer's text from each entry point."""
    model = GenericFakeChatModel(messages=iter([AIMessage(MARKED)] * 4))
    handler = CitationCallbackHandler(**options)
    rag(retriever, model).invoke(question, config={"callbacks": [handler]})
    assert handler.answer is not None
    cited = with_citations(rag(retriever, model), **options)
    streamed = list(cited.stream(question))
    parser = (
        {"sources": retriever | number_sources(), "question": RunnablePassthrough()}
        | citation_prompt()
        | model
        | CitationOutputParser(**options)
    )
    parsed = parser.invoke(question, config={"callbacks": [CitationCallbackHandler()]})
    return {
        "handler": handler.answer.text,
        "with_citations": cited.invoke(question)["answer"],
        "stream": "".join(chunk.get("answer", "") for chunk in streamed),
        "parser": parsed.text,
    }


def test_renumbering_is_applied_on_every_path(retriever: Any, question: str) -> None:
    assert texts(retriever, question) == dict.fromkeys(
        ["handler", "with_citations", "stream", "parser"], RENUMBERED
    )
    assert texts(retriever, question, renumber=False) == dict.fromkeys(
        ["handler", "with_citations", "stream", "parser"], AS_WRITTEN
    )


# --- the options -------------------------------------------------------------------------------

VALUES: dict[str, Any] = {
    "enabled": True,
    "markers": "brackets",
    "renumber": False,
    "attribute": "lexical",
    "llm": str.upper,
    "require": "grounding",
    "exclude_inline": False,
    "sources": "all",
    "keep": 5,
    "on_invalid": "keep",
    "all_supporting": True,
}
"""A value other than the default for every `CitePolicy` field."""


def test_every_policy_field_is_an_option() -> None:
    assert set(VALUES) == {f.name for f in dataclasses.fields(CitePolicy)}
    want = CitePolicy(**VALUES)
    assert CitationCallbackHandler(**VALUES).policy == want
    assert with_citations(StrOutputParser(), **VALUES).policy == want
    # The parser's `sources` are the sources shown: the policy's go through policy=.
    parser = CitationOutputParser(**{k: v for k, v in VALUES.items() if k != "sources"})
    assert parser.policy.replace(sources="all", renumber=False, on_invalid="keep") == want
    assert parser.renumber is False
    assert parser.on_invalid == "keep"


def test_options_override_the_policy() -> None:
    policy = CitePolicy(renumber=False, sources="all")
    handler = CitationCallbackHandler(policy=policy, renumber=True)
    assert handler.policy == CitePolicy(sources="all")
    assert with_citations(StrOutputParser(), policy=policy).policy == policy
    parser = CitationOutputParser(policy=policy, style="sids")
    assert parser.policy == policy
    assert parser.style == "sids"


@pytest.mark.parametrize(
    "options",
    [
        {"renumbering": True},
        {"style": "brackets"},
        {"require": "always"},
        {"keep": 0},
        {"sources": "some"},
        {"attribute": 42},
        {"attribute": "llm"},
        {"policy": {"renumber": False}},
    ],
    ids=str,
)
def test_bad_options_are_usage_errors(options: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        CitationCallbackHandler(**options)
    with pytest.raises(UsageError):
        with_citations(StrOutputParser(), **options)


def test_a_chat_model_as_attribute_means_llm_attribution() -> None:
    judge = FakeListChatModel(responses=["{}"])
    for policy in (
        CitationCallbackHandler(attribute=judge).policy,
        CitationCallbackHandler(attribute="llm", llm=judge).policy,
        with_citations(StrOutputParser(), attribute=judge).policy,
    ):
        assert policy.attribute == "llm"
        assert policy.llm is not None
        assert policy.llm("?").content == "{}"


@pytest.mark.parametrize(
    ("options", "enabled"),
    [
        ({}, True),
        ({"persistent": False}, False),
        ({"persistent": False, "enabled": True}, True),
        ({"policy": CitePolicy(enabled=False)}, False),
        ({"policy": CitePolicy(enabled=False), "persistent": True}, False),
        ({"policy": CitePolicy(), "persistent": False}, False),
    ],
    ids=str,
)
def test_enabled_follows_resolve_enabled(options: dict[str, Any], enabled: bool) -> None:
    assert CitationCallbackHandler(**options).enabled is enabled
    assert with_citations(StrOutputParser(), **options).policy.enabled is enabled


def test_require_grounding(retriever: Any, question: str) -> None:
    """``"grounding"``: an answer resting on sources passes uncited; one on nothing fails."""
    handler = CitationCallbackHandler(require="grounding")
    model = GenericFakeChatModel(messages=iter([AIMessage("Je ne sais pas.")] * 2))
    rag(retriever, model).invoke(question, config={"callbacks": [handler]})
    assert handler.answer is not None
    assert handler.answer.citations == []
    with pytest.raises(GroundingRequiredError) as caught:
        model.invoke("?", config={"callbacks": [handler]})
    assert caught.value.reason == "no grounding"
    assert handler.answer.text == "Je ne sais pas."  # published before the check


def test_sources_all_lists_every_captured_source_after_the_cited(
    retriever: Any, question: str
) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(MARKED)] * 2))
    cited_only = CitationCallbackHandler()
    every = CitationCallbackHandler(sources="all")
    for handler in (cited_only, every):
        rag(retriever, model).invoke(question, config={"callbacks": [handler]})
    assert cited_only.answer is not None
    assert every.answer is not None
    assert [s.url for s in cited_only.answer.sources] == [NORMANDIE, MILLAU]
    assert [s.url for s in every.answer.sources][:2] == [NORMANDIE, MILLAU]
    assert len(every.answer.sources) == 3
    assert every.answer.text == cited_only.answer.text


# --- publication -------------------------------------------------------------------------------


def test_on_citations_takes_the_answer(retriever: Any, question: str) -> None:
    got: list[CitedAnswer] = []

    def on_citations(answer: CitedAnswer, /) -> None:
        got.append(answer)

    model = GenericFakeChatModel(messages=iter([AIMessage(MARKED)] * 2))
    handler = CitationCallbackHandler(on_citations=on_citations)
    rag(retriever, model).invoke(question, config={"callbacks": [handler]})
    result = with_citations(rag(retriever, model), on_citations=on_citations).invoke(question)
    assert got == [handler.answer, result["citations"]]
    assert all(isinstance(answer, CitedAnswer) for answer in got)
    with pytest.raises(UsageError):
        CitationCallbackHandler(on_citations="print")  # type: ignore[arg-type]


def test_the_event_payload(retriever: Any, question: str) -> None:
    seen: list[Any] = []

    class Listener(BaseCallbackHandler):
        def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
            if name == CITATIONS_EVENT:
                seen.append(data)

    handler = CitationCallbackHandler()
    model = GenericFakeChatModel(messages=iter([AIMessage(MARKED)]))
    rag(retriever, model).invoke(question, config={"callbacks": [handler, Listener()]})
    [data] = seen
    assert handler.answer is not None
    assert data == {
        "run_id": handler.answer.extras["langchain_run_id"],
        "origin": "marker",
        "answer": handler.answer,
    }


def test_one_warning_when_sources_were_captured_but_nothing_cited(
    retriever: Any, question: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="unicite")
    handler = CitationCallbackHandler()
    model = GenericFakeChatModel(messages=iter([AIMessage("Je ne sais pas.")]))
    rag(retriever, model).invoke(question, config={"callbacks": [handler]})
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "no citation could be extracted" in warnings[0].getMessage()
    assert handler.answer is not None
    assert any("attribute='lexical'" in d for d in handler.answer.diagnostics)


# --- live text is the final text -----------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 7])
@pytest.mark.parametrize(
    "options",
    [{}, {"renumber": False}, {"sources": "all"}, {"on_invalid": "keep"}],
    ids=str,
)
def test_streamed_deltas_are_the_final_text(
    retriever: Any, question: str, size: int, options: dict[str, Any]
) -> None:
    cited = with_citations(rag(retriever, ChunkedChatModel(text=MARKED, size=size)), **options)
    invoked = cited.invoke(question)["citations"]

    def check(chunks: list[dict[str, Any]]) -> None:
        deltas = [c["answer"] for c in chunks if "answer" in c]
        [final] = [c["citations"] for c in chunks if "citations" in c]
        assert len(deltas) > 10
        assert "".join(deltas) == final.text == invoked.text
        assert not any("streaming differs" in d for d in final.diagnostics)
        assert cited_urls(final) == cited_urls(invoked)

    async def astream() -> list[dict[str, Any]]:
        return [chunk async for chunk in cited.astream(question)]

    check(list(cited.stream(question)))
    check(asyncio.run(astream()))
    if options.get("renumber", True):
        assert invoked.text.startswith("Le pont de Normandie date de 1995 [1].")
