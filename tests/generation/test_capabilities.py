"""`unicite.providers.capabilities`: what each llm offers for citations, per provider and family."""

from __future__ import annotations

from typing import Any

import pytest

from unicite import UsageError
from unicite.providers import Capabilities, capabilities, llm_kind


def flags(caps: Capabilities) -> tuple[str, str | None, bool, bool, bool]:
    return (
        caps.provider,
        caps.model,
        caps.native_citations,
        caps.grounding,
        caps.streaming_citations,
    )


def test_callables_offer_nothing() -> None:
    async def answer(prompt: str) -> str:
        return prompt

    for llm in (lambda prompt: prompt, answer):
        caps = capabilities(llm)
        assert flags(caps) == ("callable", None, False, False, False)
        assert caps.notes
    assert llm_kind(answer).async_only
    assert not llm_kind(print).async_only


@pytest.mark.parametrize("llm", [object(), "claude", 3, None, dict])
def test_unknown_llms_are_refused(llm: object) -> None:
    with pytest.raises(UsageError, match="cannot use a"):
        capabilities(llm)


def test_tuple_model_must_agree() -> None:
    with pytest.raises(UsageError, match="disagrees"):
        capabilities((lambda p: p, "a"), model="b")
    assert capabilities((lambda p: p, "a")).model == "a"


# --- SDK clients ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-6", (True, True, True)),
        ("claude-opus-4-1-20250805", (True, True, True)),
        ("claude-3-5-haiku-20241022", (True, True, True)),
        ("claude-3-7-sonnet-latest", (True, True, True)),
        ("claude-3-haiku-20240307", (False, False, False)),
        ("claude-3-opus-20240229", (False, False, False)),
        (None, (True, True, True)),
    ],
)
def test_anthropic_families(model: str | None, expected: tuple[bool, bool, bool]) -> None:
    anthropic = pytest.importorskip("anthropic")
    for client in (anthropic.Anthropic(api_key="k"), anthropic.AsyncAnthropic(api_key="k")):
        caps = capabilities(client, model=model)
        assert flags(caps) == ("anthropic", model, *expected)
    if model is None:
        assert any("no model given" in note for note in caps.notes)


@pytest.mark.parametrize(
    ("model", "grounding"),
    [
        ("gpt-4o-search-preview", True),
        ("gpt-4o-mini-search-preview-2025-03-11", True),
        ("gpt-5", True),
        ("gpt-5-mini", True),
        ("gpt-4.1", True),
        ("o4-mini", True),
        ("gpt-4.1-nano", False),
        ("gpt-3.5-turbo", False),
        (None, False),
    ],
)
def test_openai_families(model: str | None, grounding: bool) -> None:
    openai = pytest.importorskip("openai")
    caps = capabilities(openai.OpenAI(api_key="k"), model)
    assert flags(caps) == ("openai", model, False, grounding, grounding)


def test_openai_client_pointed_elsewhere() -> None:
    openai = pytest.importorskip("openai")
    sonar = openai.OpenAI(api_key="k", base_url="https://api.perplexity.ai")
    assert flags(capabilities((sonar, "sonar-pro"))) == (
        "perplexity",
        "sonar-pro",
        False,
        True,
        True,
    )
    local = openai.OpenAI(api_key="k", base_url="http://localhost:11434/v1")
    caps = capabilities(local, "gpt-5")
    assert flags(caps) == ("openai", "gpt-5", False, False, False)
    assert any("OpenAI-compatible server at localhost" in note for note in caps.notes)


@pytest.mark.parametrize(
    ("model", "grounding"),
    [("gemini-2.5-flash", True), ("gemini-3-pro-preview", True), ("gemma-3-27b-it", False)],
)
def test_gemini_families(model: str, grounding: bool) -> None:
    genai = pytest.importorskip("google.genai")
    client = genai.Client(api_key="k")
    for llm in (client, client.aio):
        assert flags(capabilities(llm, model)) == ("gemini", model, False, grounding, grounding)
    assert llm_kind(client.aio).async_only
    assert not llm_kind(client).async_only


# --- frameworks ----------------------------------------------------------------------------


def test_langchain_models_answer_like_their_provider() -> None:
    langchain_anthropic = pytest.importorskip("langchain_anthropic")
    langchain_openai = pytest.importorskip("langchain_openai")
    claude = langchain_anthropic.ChatAnthropic(model="claude-sonnet-4-6", api_key="k")
    caps = capabilities(claude)
    assert flags(caps) == ("anthropic", "claude-sonnet-4-6", True, True, True)
    assert caps.notes[0] == "through LangChain ChatAnthropic"
    # A bound model (``.bind(...)``) is the model it wraps.
    assert flags(capabilities(claude.bind(temperature=0))) == flags(caps)
    gpt = langchain_openai.ChatOpenAI(model="gpt-4o-mini-search-preview", api_key="k")
    assert flags(capabilities(gpt)) == ("openai", "gpt-4o-mini-search-preview", False, True, True)
    assert capabilities(gpt, model="gpt-3.5-turbo").grounding is False


def test_langchain_google_model() -> None:
    langchain_google = pytest.importorskip("langchain_google_genai")
    llm = langchain_google.ChatGoogleGenerativeAI(model="gemini-2.5-flash", api_key="k")
    assert flags(capabilities(llm)) == ("gemini", "gemini-2.5-flash", False, True, True)


def test_unknown_framework_models_offer_nothing() -> None:
    fakes = pytest.importorskip("langchain_core.language_models.fake_chat_models")
    caps = capabilities(fakes.GenericFakeChatModel(messages=iter([])))
    assert flags(caps) == ("langchain", None, False, False, False)
    llms = pytest.importorskip("llama_index.core.llms")
    caps = capabilities(llms.MockLLM())
    assert flags(caps)[0] == "llamaindex"
    assert flags(caps)[2:] == (False, False, False)


def test_llamaindex_anthropic_is_not_native_through_unicite() -> None:
    """LlamaIndex's Anthropic LLM is Claude, but unicite's native path does not go through it."""
    llms = pytest.importorskip("llama_index.core.llms")

    class Anthropic(llms.MockLLM):  # type: ignore[misc,name-defined]
        """Stands for llama_index.llms.anthropic.Anthropic (only its class name counts)."""

    caps = capabilities(Anthropic(), model="claude-sonnet-4-6")
    assert flags(caps) == ("anthropic", "claude-sonnet-4-6", False, True, True)
    assert any("native path does not reach" in note for note in caps.notes)


def test_capabilities_is_exported() -> None:
    import unicite.providers

    assert "capabilities" in unicite.providers.__all__
    caps: Any = capabilities(lambda p: p)
    with pytest.raises(AttributeError):
        caps.grounding = True  # frozen
