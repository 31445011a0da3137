"""The provider registry: a small provider of our own, replacing a built-in, the detection order."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from unicite import UsageError
from unicite.providers import (
    PROVIDER_NAMES,
    AnswerBuilder,
    Provider,
    RebuildingStream,
    StreamCollector,
    StreamReader,
    collect_stream,
    detect_provider,
    extract,
    register,
    registered,
    unregister,
)
from unicite.providers.anthropic import AnthropicProvider
from unicite.providers.openai import OpenAIChatProvider


@pytest.fixture(autouse=True)
def restore_registry() -> Iterator[None]:
    saved = registered()
    yield
    for provider in registered():
        unregister(provider)
    for provider in saved:
        register(provider)


# --- a provider of our own: an imaginary gateway answering {"acme": {...}} ---------------------


def _read_acme(data: Mapping[str, Any], builder: AnswerBuilder) -> None:
    body = builder.read.obj(data, "acme", "response") or {}
    text = builder.read.text(body, "answer", "response.acme") or ""
    builder.append_text(text)
    for n, ref in enumerate(builder.read.items(body, "refs", "response.acme")):
        where = f"response.acme.refs[{n}]"
        sid = builder.add_source({"kind": "web", "url": ref["url"], "title": ref.get("title")})
        builder.cite(ref["start"], ref["end"], [sid], where=where)


class _AcmeStream(RebuildingStream):
    def __init__(self, provider: Provider, **options: Any) -> None:
        super().__init__(provider, **options)
        self._text: list[str] = []
        self._refs: list[Any] = []
        self._done = False

    def take(self, event: Mapping[str, Any]) -> bool:
        self._text.append(event.get("acme_delta", ""))
        self._refs.extend(event.get("acme_refs", []))
        self._done = self._done or bool(event.get("acme_done"))
        return "acme_refs" in event

    def response(self) -> dict[str, Any]:
        return {"acme": {"answer": "".join(self._text), "refs": list(self._refs)}}

    def problems(self) -> list[str]:
        return [] if self._done else ["acme stream ended early"]


class AcmeProvider(Provider):
    name = "acme"

    def detect(self, data: Mapping[str, Any]) -> bool:
        return isinstance(data.get("acme"), Mapping)

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        return any(key.startswith("acme_") for key in event)

    def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
        _read_acme(data, builder)

    def stream(self, **options: Any) -> StreamReader:
        return _AcmeStream(self, **options)


CLAIM = "Ça coûte 3 €"
ACME = {
    "acme": {
        "answer": f"{CLAIM}, dit-on 🙂.",
        "refs": [{"url": "https://prix.example.fr/café", "title": "Prix", "start": 0, "end": 12}],
    }
}
ACME_EVENTS = [
    {"acme_delta": f"{CLAIM}, "},
    {"acme_delta": "dit-on 🙂."},
    {"acme_refs": ACME["acme"]["refs"]},
    {"acme_done": True},
]


def test_a_registered_provider_is_detected_and_read() -> None:
    assert detect_provider(ACME) is None
    register(AcmeProvider())
    assert [p.name for p in registered()][-1] == "acme"
    assert detect_provider(ACME) == "acme"
    answer = extract(ACME)
    assert (answer.provider, answer.citations[0].text) == ("acme", CLAIM)
    assert extract(ACME, provider="ACME") == answer
    assert extract(ACME, strict=True) == answer


def test_a_registered_provider_streams_through_the_rebuilding_base() -> None:
    register(AcmeProvider())
    collector = StreamCollector()
    announced = [item.citation for event in ACME_EVENTS for item in collector.feed(event)]
    answer = collector.result()
    assert answer == extract(ACME)
    assert announced == answer.citations
    assert collect_stream(ACME_EVENTS[:2]).diagnostics == ["acme stream ended early"]


def test_the_built_ins_come_first_in_their_documented_order() -> None:
    names = [(p.name, p.api) for p in registered()]
    assert names == [
        ("xai", "responses"),
        ("openai", "responses"),
        ("xai", "chat"),
        ("perplexity", None),
        ("azure", None),
        ("mistral", None),
        ("openai", "chat"),
        ("anthropic", None),
        ("gemini", None),
        ("cohere", None),
        ("bedrock", "converse"),
        ("bedrock", "knowledge_bases"),
    ]
    assert set(PROVIDER_NAMES) == {name for name, _ in names}


def test_a_provider_with_a_built_ins_name_replaces_it_where_it_stands() -> None:
    class QuietAnthropic(AnthropicProvider):
        def read(self, data: Mapping[str, Any], builder: AnswerBuilder, **options: Any) -> None:
            super().read(data, builder, **options)
            builder.extras["read_by"] = "quiet"

    before = [p.name for p in registered()]
    register(QuietAnthropic())
    assert [p.name for p in registered()] == before
    message = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "Oui."}],
    }
    assert extract(message).extras["read_by"] == "quiet"


def test_before_puts_a_gateway_ahead_of_the_reader_that_would_claim_its_shape() -> None:
    class Gateway(OpenAIChatProvider):
        name = "gateway"
        api = None

        def detect(self, data: Mapping[str, Any]) -> bool:
            return "gateway_trace" in data and super().detect(data)

    completion = {
        "object": "chat.completion",
        "gateway_trace": "t-1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Déjà vu."}}],
    }
    register(Gateway())
    assert detect_provider(completion) == "openai"  # last: the Chat reader claims it first
    unregister("gateway")
    register(Gateway(), before="openai")
    assert detect_provider(completion) == "gateway"
    assert extract(completion).text == "Déjà vu."


def test_unregister_removes_every_reader_of_a_name() -> None:
    removed = unregister("openai")
    assert [p.api for p in removed] == ["responses", "chat"]
    assert "openai" not in {p.name for p in registered()}
    with pytest.raises(UsageError, match="unknown provider"):
        extract({}, provider="openai")
    assert unregister("openai") == ()


def test_registering_something_else_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        register(object())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="names no registered provider"):
        register(AcmeProvider(), before="nobody")
    with pytest.raises(UsageError):
        unregister(3)  # type: ignore[arg-type]
    assert "acme" not in {p.name for p in registered()}
