"""extract() against the SDKs' own parsing and LangChain's own translation of the same response.

For each provider's typical cited response (from the project's cassettes): the median time of
`unicite.extract(dict)` against the SDK's `model_validate` of the same dict (target: ≤ 0.5×), and
against LangChain's translation of the equivalent message into v1 content blocks
(`AIMessage.content_blocks`), which is what a LangChain user pays to see citations.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from _harness import Figure, median_time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "providers"))

from _fixtures import cassette_bodies  # noqa: E402

from unicite.providers import extract  # noqa: E402

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
    return figures
