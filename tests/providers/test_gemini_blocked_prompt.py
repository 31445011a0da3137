"""A prompt Gemini blocks: no candidates, only ``promptFeedback``, kept whole in the answer.

The fixtures follow the documented ``GenerateContentResponse.promptFeedback``: ``blockReason``
and ``safetyRatings`` (``category``, ``probability``, ``blocked``) on the Gemini API, with
``blockReasonMessage`` and the scores and severities Vertex AI adds. The command line explains a
blocked prompt from what the answer keeps here, so nothing of it may be dropped.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from providers._fixtures import load_json

from unicite import CitedAnswer, GroundingRequiredError
from unicite.providers import collect_stream, detect_provider, extract

FIXTURES = ("gemini_blocked_prompt", "vertex_blocked_prompt")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = load_json(f"providers/{name}.json")
    return data


def snake(value: Any) -> Any:
    """The response as the google-genai SDK dumps it: snake_case keys, same values."""
    if isinstance(value, dict):
        return {_CAMEL.sub(r"_\1", k).lower(): snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snake(v) for v in value]
    return value


@pytest.mark.parametrize("name", FIXTURES)
def test_blocked_prompt_keeps_its_feedback(name: str) -> None:
    response = fixture(name)
    answer = extract(response, strict=True)
    assert detect_provider(response) == "gemini"
    assert (answer.provider, answer.text, answer.citations, answer.sources) == (
        "gemini",
        "",
        [],
        [],
    )
    assert answer.diagnostics == []
    assert answer.model == response["modelVersion"]
    assert answer.extras["prompt_feedback"] == response["promptFeedback"]


def test_non_ascii_block_message_survives_json() -> None:
    answer = extract(fixture("vertex_blocked_prompt"))
    message = answer.extras["prompt_feedback"]["blockReasonMessage"]
    assert message == "Die Anfrage wurde blockiert: verbotene Inhalte – 禁止されたコンテンツ."
    assert CitedAnswer.from_json(answer.to_json()).extras == answer.extras


@pytest.mark.parametrize("name", FIXTURES)
def test_sdk_dump_reads_as_the_rest_response(name: str) -> None:
    response = fixture(name)
    assert extract(snake(response), strict=True).extras == extract(response).extras


@pytest.mark.parametrize("name", FIXTURES)
def test_blocked_stream_keeps_its_feedback(name: str) -> None:
    # A blocked prompt streams one chunk: the feedback, no candidate, no finishReason.
    response = fixture(name)
    log = f"data: {json.dumps(response, ensure_ascii=False)}\r\n\r\n"
    for answer in (extract(log), collect_stream([response], "gemini")):
        assert (answer.provider, answer.text, answer.diagnostics) == ("gemini", "", [])
        assert answer.extras["prompt_feedback"] == response["promptFeedback"]


def test_blocked_prompt_fails_require_citations() -> None:
    with pytest.raises(GroundingRequiredError) as info:
        extract(fixture("gemini_blocked_prompt"), require="citations")
    assert (info.value.provider, info.value.reason) == ("gemini", "no grounding")
