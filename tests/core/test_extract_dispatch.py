import logging

import pytest

from unicite import CitationError, GroundingRequiredError, UsageError
from unicite.providers import (
    PROVIDER_NAMES,
    StreamCollector,
    collect_stream,
    detect_provider,
    extract,
    extract_content,
)


def test_unknown_shapes_give_an_empty_answer_and_a_diagnostic() -> None:
    for response in ({"hello": "world"}, "[]", "null", 42, "{broken", b"\xff", object()):
        answer = extract(response)
        assert answer.text == ""
        assert answer.citations == []
        assert answer.diagnostics
        with pytest.raises(CitationError):
            extract(response, strict=True)


def test_caller_mistakes_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown provider"):
        extract({}, provider="nope")
    with pytest.raises(UsageError):
        extract({}, provider=3)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="require"):
        extract({}, require="sources")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        StreamCollector(provider="nope")


def test_provider_names_and_aliases() -> None:
    assert set(PROVIDER_NAMES) == {
        "xai",
        "openai",
        "anthropic",
        "gemini",
        "perplexity",
        "azure",
        "mistral",
        "cohere",
        "bedrock",
    }
    assert extract({}, provider="vertex").provider == "gemini"
    assert extract({}, provider="Google").provider == "gemini"
    assert extract({}, provider="grok").provider == "xai"
    assert detect_provider({"nothing": True}) is None


def test_require_citations_without_grounding() -> None:
    with pytest.raises(GroundingRequiredError) as info:
        extract({"hello": 1}, require="citations")
    assert info.value.reason == "no grounding"


def test_empty_and_unrecognised_streams() -> None:
    assert collect_stream([]).diagnostics == ["empty stream"]
    answer = collect_stream([{"type": "mystery"}, 5])
    assert answer.citations == []
    assert any("no recognisable stream events" in d for d in answer.diagnostics)
    assert collect_stream("").diagnostics == ["empty stream"]


def test_no_log_output_on_ordinary_input(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="unicite"):
        extract({"hello": "world"})
        collect_stream([])
    assert caplog.records == []


def test_content_no_reader_takes_is_its_text_uncited() -> None:
    blocks = ["Bonjour ", {"type": "text", "text": "à tous 👋"}, {"type": "image", "url": "x"}]
    for answer in (extract_content(blocks), extract_content(blocks, "perplexity")):
        assert (answer.text, answer.provider, answer.citations) == ("Bonjour à tous 👋", None, [])
        assert answer.diagnostics == []


def test_content_caller_mistakes_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="content"):
        extract_content({"type": "text"})
    with pytest.raises(UsageError, match="fields"):
        extract_content("x", "openai", fields=["id"])  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="unknown provider"):
        extract_content("x", "nope")
    with pytest.raises(UsageError, match="require"):
        extract_content("x", require="sources")  # type: ignore[arg-type]
