"""Fuzzing `extract` with recorded provider responses, mutated and cut short.

Contract: `extract` returns a valid `CitedAnswer` for anything; only `CitationError` (with
``strict=True``, exactly when the lenient answer has diagnostics), `GroundingRequiredError`
(with ``require="citations"``, exactly when the answer has no citations) and `UsageError`
(caller mistakes) may escape.
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

import pytest
from _fuzz import (
    HUGE,
    WRONG_VALUES,
    Payload,
    check_answer,
    fuzz_settings,
    json_payloads,
    json_values,
    mutate,
    nested,
    nested_json,
    outcome,
)
from hypothesis import given
from hypothesis import strategies as st

from unicite import (
    CitationError,
    CitedAnswer,
    GroundingRequiredError,
    UsageError,
    detect_provider,
    extract,
)

PROVIDERS = (None, "openai", "anthropic", "gemini", "perplexity", "cohere")


def assert_modes_agree(response: object, answer: CitedAnswer, provider: str | None = None) -> None:
    """Strict mode raises exactly on diagnostics; the grounding policy exactly on no citations."""
    strict = outcome(lambda: extract(response, provider, strict=True), CitationError)
    if answer.diagnostics:
        assert isinstance(strict, CitationError), answer.diagnostics
        assert strict.diagnostics == answer.diagnostics
    else:
        assert strict == answer
    required = outcome(
        lambda: extract(response, provider, require="citations"), GroundingRequiredError
    )
    if answer.citations:
        assert required == answer
    else:
        assert isinstance(required, GroundingRequiredError)
        assert required.reason in ("no grounding", "no citations")


@st.composite
def mutated_responses(draw: st.DrawFn) -> tuple[str, Any]:
    payload: Payload = draw(st.sampled_from(json_payloads()))
    return payload.name, draw(mutate(payload.data))


@fuzz_settings()
@given(mutated_responses(), st.sampled_from(PROVIDERS))
def test_mutated_responses_give_valid_answers(case: tuple[str, Any], provider: str | None) -> None:
    _, data = case
    answer = check_answer(extract(data, provider))
    assert_modes_agree(data, answer, provider)


@fuzz_settings()
@given(mutated_responses())
def test_json_text_and_bytes_read_like_the_data(case: tuple[str, Any]) -> None:
    _, data = case
    answer = extract(data)
    text = json.dumps(data, ensure_ascii=False)
    assert extract(text).to_json() == answer.to_json()
    raw = text.encode("utf-8", "surrogatepass")
    from_bytes = check_answer(extract(raw), render=False)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        # A lone surrogate written as UTF-8 is not UTF-8: reported, never raised.
        assert any("UTF-8" in d for d in from_bytes.diagnostics), from_bytes.diagnostics
    else:
        assert from_bytes.to_json() == answer.to_json()


@fuzz_settings()
@given(json_values, st.sampled_from(PROVIDERS))
def test_arbitrary_json_gives_valid_answers(data: Any, provider: str | None) -> None:
    for response in (data, json.dumps(data)):
        answer = check_answer(extract(response, provider))
        assert_modes_agree(response, answer, provider)
        assert detect_provider(response) in (None, *PROVIDERS)


@fuzz_settings()
@given(st.binary(max_size=300) | st.text(max_size=300))
def test_arbitrary_bytes_and_text_give_valid_answers(response: bytes | str) -> None:
    answer = check_answer(extract(response))
    assert_modes_agree(response, answer)


def cuts(size: int, edge: int = 200, budget: int = 100) -> list[int]:
    """Every cut in the first and last `edge` positions, and an even sample in between."""
    edges = set(range(min(size, edge))) | set(range(max(0, size - edge), size))
    middle = range(edge, max(edge, size - edge), max(1, (size - 2 * edge) // budget))
    return sorted(edges | set(middle))


@pytest.mark.parametrize("payload", json_payloads(), ids=lambda p: p.name)
def test_every_prefix_of_a_json_body_is_reported(payload: Payload) -> None:
    """Bytes and text cut anywhere (mid-UTF-8 too) give diagnostics, never an exception."""
    full = extract(payload.text)
    check_answer(full)
    assert extract(payload.raw) == full
    prefixes: list[str | bytes] = [payload.raw[:cut] for cut in cuts(len(payload.raw))]
    prefixes += [payload.text[:cut] for cut in cuts(len(payload.text), edge=20, budget=40)]
    for n, prefix in enumerate(prefixes):
        answer = extract(prefix)
        assert not answer.citations
        assert answer.diagnostics, prefix
        if n % 8 == 0:
            check_answer(answer, render=False)
            with pytest.raises(CitationError):
                extract(prefix, strict=True)
            with pytest.raises(GroundingRequiredError):
                extract(prefix, require="citations")


ERROR_BODIES: dict[str, tuple[Any, str]] = {
    "openai": (
        {
            "error": {
                "message": "Incorrect API key provided: sk-xxxx.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
        "Incorrect API key provided",
    ),
    "anthropic": (
        {
            "type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"},
            "request_id": "req_1",
        },
        "Overloaded",
    ),
    "gemini": (
        {
            "error": {
                "code": 400,
                "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT",
                "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo"}],
            }
        },
        "API key not valid",
    ),
    "gemini-list": (
        [{"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}],
        "The model is overloaded.",
    ),
    "anthropic-stream": (
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        '"message": "Overloaded"}}\n\n',
        "Overloaded",
    ),
    "openai-stream": (
        'event: error\ndata: {"type": "error", "code": "server_error", '
        '"message": "The server had an error.", "param": null, "sequence_number": 0}\n\n',
        "The server had an error.",
    ),
    "anthropic-stream-midway": (
        'event: message_start\ndata: {"type": "message_start", "message": {"id": "msg_1", '
        '"type": "message", "role": "assistant", "model": "m", "content": []}}\n\n'
        'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", '
        '"message": "Overloaded"}}\n\n',
        "Overloaded",
    ),
}


@pytest.mark.parametrize("name", list(ERROR_BODIES))
def test_provider_error_bodies_are_reported_with_their_message(name: str) -> None:
    body, message = ERROR_BODIES[name]
    for response in (body, body if isinstance(body, str) else json.dumps(body)):
        answer = check_answer(extract(response))
        assert answer.citations == []
        assert any(message in d for d in answer.diagnostics), answer.diagnostics
        with pytest.raises(CitationError) as raised:
            extract(response, strict=True)
        assert raised.value.diagnostics == answer.diagnostics
        with pytest.raises(GroundingRequiredError):
            extract(response, require="citations")


def test_a_failed_responses_answer_keeps_its_error() -> None:
    failed = {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "failed",
        "error": {"code": "server_error", "message": "The server had an error."},
        "output": [],
    }
    answer = check_answer(extract(failed))
    assert answer.extras["status"] == "failed"
    assert answer.extras["error"]["message"] == "The server had an error."
    with pytest.raises(GroundingRequiredError):
        extract(failed, require="citations")


def test_deep_nesting_never_recurses_out() -> None:
    """Ten thousand levels of nesting anywhere: a diagnostic, not a RecursionError."""
    payload = next(p for p in json_payloads() if "gemini" in p.name)
    depth = 10_000
    texts = [nested_json(depth), nested_json(depth, "dict")]
    texts.append(payload.text[:-1] + ', "extra": ' + nested_json(depth) + "}")
    for text in texts:
        for response in (text, text.encode(), "data: " + text + "\n\n"):
            answer = check_answer(extract(response))
            assert answer.diagnostics
            with pytest.raises(CitationError):
                extract(response, strict=True)
    for kind in ("list", "dict"):
        deep = nested(depth, {"text": "x"}, kind)
        responses: list[Any] = [
            deep,
            {"candidates": deep},
            {"candidates": [{"content": {"parts": deep}}]},
            {"type": "message", "role": "assistant", "content": [{"type": "text", "text": deep}]},
            {"object": "response", "output": deep},
            {"choices": [{"message": {"content": "x", "annotations": deep}}]},
        ]
        for response in responses:
            for provider in PROVIDERS:
                check_answer(extract(response, provider))


def test_huge_strings_in_every_field() -> None:
    payload = next(p for p in json_payloads() if "plain_text_document" in p.name)
    from _fuzz import paths as every_path

    data = json.loads(payload.text)
    for path in list(every_path(data))[::7]:
        mutated = json.loads(payload.text)
        target = mutated
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = HUGE
        check_answer(extract(mutated), render=False)


def test_wrong_arguments_are_usage_errors() -> None:
    payload = json_payloads()[0]
    for bad in ({"provider": "nope"}, {"provider": 3}, {"require": "yes"}, {"require": True}):
        with pytest.raises(UsageError):
            extract(payload.data, **bad)
    for value in WRONG_VALUES:
        check_answer(extract(value), render=False)
    candidates: list[Any] = [-1, 99, 2**64, None, "1", 1.5, True]
    for candidate in candidates:
        result = outcome(partial(extract, payload.data, candidate=candidate), UsageError)
        if not isinstance(result, UsageError):
            check_answer(result, render=False)
