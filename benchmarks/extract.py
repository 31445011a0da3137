"""extract() against the SDKs' own parsing and LangChain's own translation of the same response.

For each provider's typical cited response (from the project's cassettes): the median time of
`unicite.extract(dict)` against the SDK's `model_validate` of the same dict (target: ≤ 0.5×), and
against LangChain's translation of the equivalent message into v1 content blocks
(`AIMessage.content_blocks`), which is what a LangChain user pays to see citations.

Then every response body in the project's cassettes that a current SDK type parses (OpenAI
Responses and Chat Completions, Anthropic Message, Gemini GenerateContentResponse): the worst
ratio to the SDK's parse is the figure the target is about (≤ 3×), with the same payload against
`json.loads` of its bytes (the moonshot: ≤ 3×) and against the same reader reporting to the
analytics sink, which builds no citations and no answer and locates no claim that only places a
citation: what reading the payload costs before building the answer.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _harness import Figure, median_time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "providers"))

from _fixtures import CASSETTES, cassette_bodies, sse_events  # noqa: E402

from unicite.analytics import fast_row  # noqa: E402
from unicite.providers import StreamCollector, extract  # noqa: E402

CASES = {
    "openai": "providers/test_openai_sdk/test_responses_web_search.yaml",
    "anthropic": "providers/test_anthropic_sdk/test_web_search_server_tool.yaml",
    "gemini": "providers/test_gemini_sdk/test_generate_content_google_search.yaml",
}


def _sdk_parser(provider: str) -> Any:
    if provider == "openai":
        from openai.types.responses import Response

        return Response.model_validate
    if provider == "anthropic":
        from anthropic.types import Message

        return Message.model_validate
    from google.genai.types import GenerateContentResponse

    return GenerateContentResponse.model_validate


def _langchain_message(provider: str, body: dict[str, Any], parsed: Any) -> Any:
    from langchain_core.messages import AIMessage

    if provider == "openai":
        content = [
            {"type": "text", "text": part["text"], "annotations": part.get("annotations", [])}
            for item in body["output"]
            if item.get("type") == "message"
            for part in item["content"]
            if part.get("type") == "output_text"
        ]
        return AIMessage(content=content, response_metadata={"model_provider": "openai"})
    if provider == "anthropic":
        return AIMessage(content=body["content"], response_metadata={"model_provider": "anthropic"})
    # langchain-google-genai puts the snake_case grounding metadata in response_metadata.
    candidate = parsed.candidates[0]
    return AIMessage(
        content=parsed.text or "",
        response_metadata={
            "model_provider": "google_genai",
            "grounding_metadata": candidate.grounding_metadata.model_dump(exclude_none=True),
        },
    )


def _valid_for_sdk(provider: str, body: dict[str, Any]) -> dict[str, Any]:
    """The same payload, completed where the current SDK made a field required after recording."""
    if provider == "openai":
        details = body.get("usage", {}).get("input_tokens_details", {})
        details.setdefault("cache_write_tokens", 0)
    return body


def _sdk_type(body: object) -> Callable[[Any], Any] | None:
    """The SDK parser of a response body, by its shape; None for any other body."""
    if not isinstance(body, dict):
        return None
    if body.get("object") == "response":
        return _sdk_parser("openai")
    if body.get("object") == "chat.completion":
        from openai.types.chat import ChatCompletion

        return ChatCompletion.model_validate
    if body.get("type") == "message" and body.get("role") == "assistant":
        return _sdk_parser("anthropic")
    if "candidates" in body:
        return _sdk_parser("gemini")
    return None


def _cassette_responses() -> list[tuple[str, dict[str, Any], Callable[[Any], Any]]]:
    """Every JSON response of the project's cassettes that a current SDK type parses."""
    found = []
    for path in sorted(CASSETTES.rglob("*.yaml")):
        relative = str(path.relative_to(CASSETTES))
        for k, body in enumerate(cassette_bodies(relative)):
            if isinstance(body, str):
                try:
                    body = json.loads(body)
                except ValueError:
                    continue  # a stream or an empty body
            parse = _sdk_type(body)
            if parse is None:
                continue
            if body.get("object") == "response":
                body = _valid_for_sdk("openai", body)
            try:
                parse(body)
            except ValueError:
                continue  # older recording the current SDK types refuse
            found.append((f"{relative}#{k}", body, parse))
    return found


def _worst_payload() -> list[Figure]:
    measured = []
    for name, body, parse in _cassette_responses():
        ours = median_time(lambda body=body: extract(body), repeat=5, number=20)
        sdk = median_time(lambda body=body, parse=parse: parse(body), repeat=5, number=20)
        measured.append((ours / sdk, ours, sdk, name, body))
    _, ours, sdk, name, body = max(measured, key=lambda m: m[0])
    raw = json.dumps(body).encode("utf-8")
    loads = median_time(lambda: json.loads(raw), repeat=5, number=200)
    fast = median_time(lambda: fast_row(body), repeat=5, number=200)
    cited = len(extract(body).citations)
    count = len(measured)
    return [
        Figure(
            name=f"extract() worst of {count} cassette responses: {name}",
            value=ours * 1e6,
            unit="µs",
            baseline=sdk * 1e6,
            baseline_name="its SDK's model_validate of the same dict",
            target="≤ 3×",
            note=f"{len(raw):,} bytes, {cited} citations; every response body of the cassettes "
            "an SDK type parses, each against its own SDK parse",
        ),
        Figure(
            name=f"extract() median ratio over the {count} cassette responses",
            value=statistics.median(m[0] for m in measured),
            unit="×",
            target="report",
            note="extract() time over its SDK's model_validate time, per response",
        ),
        Figure(
            name="extract() worst payload vs json.loads of its bytes",
            value=ours * 1e6,
            unit="µs",
            baseline=loads * 1e6,
            baseline_name="json.loads of the same response's bytes",
            target="≤ 3×",
            note="the issue's moonshot",
        ),
        Figure(
            name="the same reader into the analytics sink, worst payload",
            value=fast * 1e6,
            unit="µs",
            baseline=sdk * 1e6,
            baseline_name="its SDK's model_validate of the same dict",
            target="report",
            note="the same reading, sources and checks, counted instead of built: no "
            "citations, no answer, no claim that only places a citation",
        ),
    ]


STREAM = "providers/test_openai_sdk/test_responses_web_search_stream.yaml"


def _streamed() -> list[Figure]:
    """A streamed OpenAI Responses answer read event by event, against its final response."""
    log = next(
        b for b in cassette_bodies(STREAM) if isinstance(b, str) and "response.completed" in b
    )
    events = sse_events(log)
    final = next(e["response"] for e in events if e.get("type") == "response.completed")

    def streamed() -> Any:
        collector = StreamCollector("openai")
        for event in events:
            collector.feed(event)
        return collector.result()

    answer = extract(final)
    assert answer.citations
    assert streamed() == answer
    ours = median_time(streamed, repeat=9, number=20)
    whole = median_time(lambda: extract(final), repeat=9, number=20)
    return [
        Figure(
            name=f"streamed OpenAI Responses answer, {len(events)} events fed one by one",
            value=ours * 1e6,
            unit="µs",
            baseline=whole * 1e6,
            baseline_name="extract() of its final response",
            target="report",
            note=f"StreamCollector.feed on each event (citations announced as they settle) and "
            f"result(); {len(answer.citations)} citations, each claim located once",
        )
    ]


def run() -> list[Figure]:
    figures = []
    for provider, cassette in CASES.items():
        body = _valid_for_sdk(provider, cassette_bodies(cassette)[0])
        answer = extract(body)
        assert answer.citations, provider
        ours = median_time(lambda body=body: extract(body), repeat=9, number=50)
        parse = _sdk_parser(provider)
        sdk = median_time(lambda body=body, parse=parse: parse(body), repeat=9, number=50)
        figures.append(
            Figure(
                name=f"extract() {provider}: {len(answer.citations)} citations",
                value=ours * 1e6,
                unit="µs",
                baseline=sdk * 1e6,
                baseline_name=f"{provider} SDK model_validate of the same dict",
                target="≤ 0.50×",
            )
        )
        message = _langchain_message(provider, body, parse(body))
        blocks = median_time(lambda m=message: m.content_blocks, repeat=9, number=50)
        figures.append(
            Figure(
                name=f"extract() {provider} vs LangChain content_blocks",
                value=ours * 1e6,
                unit="µs",
                baseline=blocks * 1e6,
                baseline_name="AIMessage.content_blocks (langchain-core v1 translation)",
                target="report",
            )
        )
    return figures + _worst_payload() + _streamed()
