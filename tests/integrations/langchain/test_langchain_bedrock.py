"""langchain-aws's ``ChatBedrockConverse`` (boto3 underneath) on cassettes.

langchain-aws keeps a ``citationsContent`` block as a text block with the Bedrock
``citations`` (snake_case keys), invoked and streamed (a streamed citation is a text chunk of
its block's index, merged with the block's text), and says ``model_provider:
"bedrock_converse"``: the message reads like the raw Converse response, in langchain-aws's
blocks and in LangChain's standard (v1) ones (the location kept in an annotation's
``extras``). What it loses: a
message whose content is one text block is flattened into a string, citations and all; and an
invoked message drops a ``citationsContent`` block that has no text (Amazon Nova's web
grounding), so only a streamed Nova answer keeps its citations.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langchain_aws")
pytest.importorskip("vcr")

from langchain_aws import ChatBedrockConverse
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.output_parsers import StrOutputParser

from unicite import CharLocation, CitedAnswer, UrlLocation, collect_stream, extract
from unicite.providers import capabilities
from unicite_langchain import CitationCallbackHandler, from_ai_message

CLAUDE = "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"
NOVA = "us.amazon.nova-2-lite-v1:0"
GUIDE = (
    "Guide de Paris — édition 2025.\n"
    "La tour Eiffel mesure 330 mètres depuis 2022 ; elle accueille près de 7 millions "
    "de visiteurs par an. 🗼\n"
    "Le musée d’Orsay ferme le lundi.\n"
)
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"
WEATHER = "Quel temps fait-il à Zürich aujourd’hui et demain ?"


VERSIONS = pytest.mark.parametrize("version", [None, "v1"])
"""langchain-aws's own content blocks, and LangChain's standard (v1) ones."""


def model(name: str, region: str, version: str | None = None) -> ChatBedrockConverse:
    """The chat model over a boto3 client whose placeholder keys sign what cassettes answer."""
    return ChatBedrockConverse(
        model=name,
        region_name=region,
        aws_access_key_id="x",  # type: ignore[arg-type]
        aws_secret_access_key="y",  # type: ignore[arg-type]  # noqa: S106
        max_tokens=1024,
        output_version=version,
    )


def documents() -> list[HumanMessage]:
    """The question with two documents, citations enabled, in Bedrock's document format."""
    return [
        HumanMessage(
            content=[
                {
                    "type": "document",
                    "document": {
                        "format": "txt",
                        "name": "guide-paris",
                        "source": {"text": GUIDE},
                        "citations": {"enabled": True},
                    },
                },
                {
                    "type": "document",
                    "document": {
                        "format": "pdf",
                        "name": "tokyo-guide",
                        "source": {"bytes": PDF},
                        "citations": {"enabled": True},
                    },
                },
                {
                    "type": "text",
                    "text": (
                        "Quelle est la hauteur de la tour Eiffel et celle de la tour de Tokyo ?"
                    ),
                },
            ]
        )
    ]


def raw_answer(vcr: Any) -> CitedAnswer:
    """The raw response in the cassette (JSON, or the AWS event-stream bytes), read directly."""
    body = vcr.responses[0]["body"]["string"]
    if vcr.responses[0]["headers"]["content-type"] == ["application/vnd.amazon.eventstream"]:
        return collect_stream(body)
    return extract(body)


def same(answer: CitedAnswer, raw: CitedAnswer) -> None:
    assert answer.provider == "bedrock"
    assert answer.diagnostics == []
    assert answer.text == raw.text
    assert answer.citations == raw.citations
    assert answer.sources == raw.sources


def merged(chunks: list[Any]) -> AIMessageChunk:
    message = chunks[0]
    for chunk in chunks[1:]:
        message = message + chunk
    assert isinstance(message, AIMessageChunk)
    return message


@pytest.mark.vcr
@pytest.mark.default_cassette("test_documents_invoke.yaml")
@VERSIONS
def test_documents_invoke(vcr: Any, version: str | None) -> None:
    message = model(CLAUDE, "eu-west-3", version).invoke(documents())
    assert message.response_metadata["model_provider"] == "bedrock_converse"
    answer = from_ai_message(message)
    raw = raw_answer(vcr)
    same(answer, raw)
    assert answer.model == CLAUDE
    assert [c.text for c in answer.citations] == [
        "la tour Eiffel mesure 330 mètres",
        "東京タワーは333メートルです",
    ]
    location = answer.citations[0].location
    assert isinstance(location, CharLocation)
    assert GUIDE[location.start : location.end] == answer.citations[0].quote


@pytest.mark.vcr
@pytest.mark.default_cassette("test_documents_stream.yaml")
@VERSIONS
def test_documents_stream(vcr: Any, version: str | None) -> None:
    message = merged(list(model(CLAUDE, "eu-west-3", version).stream(documents())))
    answer = from_ai_message(message)
    same(answer, raw_answer(vcr))
    assert len(answer.citations) == 2


@pytest.mark.vcr
def test_a_single_cited_block_is_flattened(vcr: Any) -> None:
    # langchain-aws turns a content of one text block into a string: its citations are lost.
    message = model(CLAUDE, "eu-west-3").invoke(documents())
    assert message.content == "La tour Eiffel mesure 330 mètres 🗼"
    answer = from_ai_message(message)
    assert answer.text == message.content
    assert answer.citations == []
    assert len(raw_answer(vcr).citations) == 1


def nova_chain(version: str | None = None) -> Any:
    return model(NOVA, "us-east-1", version).bind_tools(["nova_grounding"]) | StrOutputParser()


def check_nova(answer: CitedAnswer, raw: CitedAnswer) -> None:
    assert answer.text == raw.text
    assert [(c.start, c.end, c.text, c.location) for c in answer.citations] == [
        (c.start, c.end, c.text, c.location) for c in raw.citations
    ]
    assert [s.url for s in answer.sources] == [s.url for s in raw.sources]
    assert [c.location for c in raw.citations] == [
        UrlLocation(url="https://www.météosuisse.admin.ch/prévisions/zürich?jour=lundi"),
        UrlLocation(url="https://天気.example.jp/チューリッヒ/週間"),
        UrlLocation(url="https://www.météosuisse.admin.ch/prévisions/zürich?jour=lundi"),
    ]


@pytest.mark.vcr
def test_nova_web_grounding_invoke(vcr: Any) -> None:
    # langchain-aws keeps a citationsContent block's text only: Nova's blocks hold citations
    # and no text, so an invoked message has none of them.
    handler = CitationCallbackHandler()
    text = nova_chain().invoke(WEATHER, config={"callbacks": [handler]})
    assert handler.answer is not None
    assert text == handler.answer.text == raw_answer(vcr).text
    assert handler.answer.citations == []
    assert len(raw_answer(vcr).citations) == 3


@pytest.mark.vcr
@pytest.mark.default_cassette("test_nova_web_grounding_stream.yaml")
@VERSIONS
def test_nova_web_grounding_stream(vcr: Any, version: str | None) -> None:
    # Streamed, Nova's citation-only blocks are text chunks with no text and their citations:
    # they reach the message, and cite the text before them.
    handler = CitationCallbackHandler()
    text = "".join(nova_chain(version).stream(WEATHER, config={"callbacks": [handler]}))
    assert handler.answer is not None
    # langchain-aws streams the search tool's result text as text chunks; the message's text
    # (and the answer) leave it out.
    assert text == "Résultats de recherche : 3 pages." + handler.answer.text
    check_nova(handler.answer, raw_answer(vcr))
    assert handler.answer.extras["search_queries"] == ["météo Zürich aujourd’hui demain"]


def test_capabilities_of_chat_bedrock_converse() -> None:
    claude = capabilities(model(CLAUDE, "eu-west-3"))
    assert (claude.provider, claude.model) == ("bedrock", CLAUDE)
    # Claude on Bedrock cites given documents, but unicite's native path does not reach them.
    assert (claude.native_citations, claude.grounding, claude.streaming_citations) == (
        False,
        False,
        True,
    )
    assert any("does not reach bedrock's citations" in note for note in claude.notes)
    nova = capabilities(model(NOVA, "us-east-1").bind_tools(["nova_grounding"]))
    assert (nova.provider, nova.grounding, nova.streaming_citations) == ("bedrock", True, True)
    older = capabilities(model("anthropic.claude-3-haiku-20240307-v1:0", "us-east-1"))
    assert (older.native_citations, older.grounding) == (False, False)
