"""extract() against what a LangChain user pays to get the same response as an AIMessage.

For every recorded response of the project's cassettes that one of LangChain's partner packages
reads (OpenAI Responses and Chat Completions, Anthropic Messages, Gemini generateContent, each
final or streamed), the median time of `unicite.extract` of the raw body (the JSON object, or
the list of a stream's events) against the conversion LangChain does of the same body: the
provider SDK's parse (`model_validate` of the response, or of each stream event into the SDK's
event type), the partner package's own message building (``langchain-openai``,
``langchain-anthropic``, ``langchain-google-genai``: the functions their chat models call on
a response or on each stream event, chunks merged as `invoke` merges them) and
`AIMessage.content_blocks` of the result, which is where LangChain's citations are. The figure
the target is about is the worst ratio (≤ 1.0×); the median ratio and each provider's worst
are reported.

Responses no partner package here reads (Mistral, Bedrock, Cohere and other shapes) are left
out; those the SDK types or the partner package refuse are skipped and counted.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import statistics
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _harness import Figure, median_time
from pydantic import TypeAdapter, ValidationError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "providers"))

from _fixtures import CASSETTES, cassette_bodies  # noqa: E402

from unicite.providers import extract, iter_sse  # noqa: E402

PACKAGES = {
    "openai": "langchain-openai",
    "anthropic": "langchain-anthropic",
    "gemini": "langchain-google-genai",
}
# unicite's provider names, by the partner package family whose conversion is the baseline:
# Azure OpenAI and xAI answers go through langchain-openai's chat model code too.
READ_BY = {
    "openai": "openai",
    "azure": "openai",
    "xai": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
}
TARGET_SECONDS = 0.02


@dataclass
class Case:
    """One recorded response: the body extract() reads and LangChain's conversion of it."""

    name: str
    provider: str
    kind: str
    body: Any
    convert: Callable[[], object]
    constructed: int


class _Sdk:
    """The SDK's parse of each recorded value, chosen once before timing.

    `model_validate` (or the validator of the SDK's stream event union); where the current
    types refuse a recorded value (a field made required after recording, an item the stream
    sends before its final form), the SDK's own non-validating construction, which is what its
    client does with an HTTP body and what langchain-openai falls back to itself.
    """

    def __init__(self) -> None:
        self.constructed = 0

    def __call__(
        self, validate: Callable[[Any], Any], construct: Callable[[Any], Any], value: Any
    ) -> Callable[[], Any]:
        try:
            validate(value)
        except ValidationError:
            self.constructed += 1
            return lambda: construct(value)
        return lambda: validate(value)


def _sdk_complete(body: Any) -> None:
    """Complete a Responses body where the current SDK made a usage field required after recording.

    The same as the extract benchmark does; the completed body is the one both sides read.
    """
    for item in body if isinstance(body, list) else [body]:
        response = item.get("response", item) if isinstance(item, dict) else None
        usage = response.get("usage") if isinstance(response, dict) else None
        details = usage.get("input_tokens_details") if isinstance(usage, dict) else None
        if isinstance(details, dict):
            details.setdefault("cache_write_tokens", 0)


def _merged(chunks: Iterable[Any]) -> Any:
    """The chunks merged into one message, as `invoke` merges a streamed answer."""
    from langchain_core.language_models.chat_models import generate_from_stream

    return generate_from_stream(iter(chunks)).generations[0].message


def _openai_responses(body: dict[str, Any], sdk: _Sdk, reader: str) -> Callable[[], object]:
    from langchain_openai.chat_models.base import _construct_lc_result_from_responses_api
    from openai._models import construct_type_unchecked
    from openai.types.responses import Response

    parse = sdk(
        Response.model_validate,
        lambda value: construct_type_unchecked(value=value, type_=Response),
        body,
    )

    def convert() -> object:
        result = _construct_lc_result_from_responses_api(parse())
        return result.generations[0].message.content_blocks

    return convert


def _openai_responses_stream(
    events: list[dict[str, Any]], sdk: _Sdk, reader: str
) -> Callable[[], object]:
    from langchain_openai.chat_models.base import _convert_responses_chunk_to_generation_chunk
    from openai._models import construct_type
    from openai.types.responses import ResponseStreamEvent

    adapter: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    parses = [
        sdk(
            adapter.validate_python,
            lambda value: construct_type(value=value, type_=ResponseStreamEvent),
            event,
        )
        for event in events
    ]

    def chunks() -> Iterator[Any]:
        index, output_index, sub_index = -1, -1, -1
        has_reasoning = False
        item_output_indices: dict[str, int] = {}
        for parse in parses:
            index, output_index, sub_index, chunk = _convert_responses_chunk_to_generation_chunk(
                parse(),
                index,
                output_index,
                sub_index,
                metadata={},
                has_reasoning=has_reasoning,
                item_output_indices=item_output_indices,
            )
            if chunk is not None:
                has_reasoning = has_reasoning or "reasoning" in chunk.message.additional_kwargs
                yield chunk

    def convert() -> object:
        return _merged(chunks()).content_blocks

    return convert


def _chat_openai(reader: str) -> Any:
    """The chat model a LangChain user has for the answer: Azure's, or OpenAI's (xAI's too)."""
    from langchain_openai import AzureChatOpenAI, ChatOpenAI

    if reader == "azure":
        return AzureChatOpenAI(
            azure_endpoint="https://benchmark.openai.azure.com",
            azure_deployment="gpt-4o",
            api_version="2024-10-21",
            api_key="sk-benchmark",
        )
    return ChatOpenAI(model="gpt-4o", api_key="sk-benchmark")


def _openai_chat(body: dict[str, Any], sdk: _Sdk, reader: str) -> Callable[[], object]:
    from openai._models import construct_type_unchecked
    from openai.types.chat import ChatCompletion

    model = _chat_openai(reader)
    parse = sdk(
        ChatCompletion.model_validate,
        lambda value: construct_type_unchecked(value=value, type_=ChatCompletion),
        body,
    )

    def convert() -> object:
        result = model._create_chat_result(parse(), {})
        return result.generations[0].message.content_blocks

    return convert


def _openai_chat_stream(
    events: list[dict[str, Any]], sdk: _Sdk, reader: str
) -> Callable[[], object]:
    from langchain_core.messages import AIMessageChunk
    from openai._models import construct_type_unchecked
    from openai.types.chat import ChatCompletionChunk

    model = _chat_openai(reader)
    parses = [
        sdk(
            ChatCompletionChunk.model_validate,
            lambda value: construct_type_unchecked(value=value, type_=ChatCompletionChunk),
            event,
        )
        for event in events
    ]

    def chunks() -> Iterator[Any]:
        chunk_class: type = AIMessageChunk
        for parse in parses:
            chunk = model._convert_chunk_to_generation_chunk(parse().model_dump(), chunk_class, {})
            if chunk is not None:
                chunk_class = chunk.message.__class__
                yield chunk

    def convert() -> object:
        return _merged(chunks()).content_blocks

    return convert


def _chat_anthropic() -> Any:
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-benchmark")


def _anthropic(body: dict[str, Any], sdk: _Sdk, reader: str) -> Callable[[], object]:
    from anthropic._models import construct_type_unchecked
    from anthropic.types import Message

    model = _chat_anthropic()
    parse = sdk(
        Message.model_validate,
        lambda value: construct_type_unchecked(value=value, type_=Message),
        body,
    )

    def convert() -> object:
        result = model._format_output(parse())
        return result.generations[0].message.content_blocks

    return convert


def _anthropic_stream(events: list[dict[str, Any]], sdk: _Sdk, reader: str) -> Callable[[], object]:
    from anthropic._models import construct_type
    from anthropic.types import RawMessageStreamEvent
    from langchain_core.outputs import ChatGenerationChunk

    model = _chat_anthropic()
    adapter: TypeAdapter[Any] = TypeAdapter(RawMessageStreamEvent)
    parses = [
        sdk(
            adapter.validate_python,
            lambda value: construct_type(value=value, type_=RawMessageStreamEvent),
            event,
        )
        for event in events
        if event.get("type") != "ping"  # the SDK's stream drops them
    ]

    def chunks() -> Iterator[Any]:
        block_start = None
        for parse in parses:
            message, block_start = model._make_message_chunk_from_anthropic_event(
                parse(),
                stream_usage=True,
                coerce_content_to_string=False,
                block_start_event=block_start,
            )
            if message is not None:
                yield ChatGenerationChunk(message=message)

    def convert() -> object:
        return _merged(chunks()).content_blocks

    return convert


def _gemini(body: dict[str, Any], sdk: _Sdk, reader: str) -> Callable[[], object]:
    from google.genai.types import GenerateContentResponse
    from langchain_google_genai.chat_models import _response_to_result

    parse = sdk(
        GenerateContentResponse.model_validate, GenerateContentResponse.model_validate, body
    )

    def convert() -> object:
        result = _response_to_result(parse())
        return result.generations[0].message.content_blocks

    return convert


def _gemini_stream(events: list[dict[str, Any]], sdk: _Sdk, reader: str) -> Callable[[], object]:
    from google.genai.types import GenerateContentResponse
    from langchain_core.messages.ai import add_usage
    from langchain_google_genai.chat_models import _response_to_result, _StreamBlockIndexer

    validate = GenerateContentResponse.model_validate
    parses = [sdk(validate, validate, event) for event in events]

    def chunks() -> Iterator[Any]:
        previous = None
        indexer = _StreamBlockIndexer()
        for parse in parses:
            chunk = _response_to_result(parse(), stream=True, prev_usage=previous).generations[0]
            message: Any = chunk.message
            indexer.assign(message)
            usage = message.usage_metadata
            previous = usage if previous is None else add_usage(previous, usage)
            yield chunk

    def convert() -> object:
        return _merged(chunks()).content_blocks

    return convert


def _final_kind(body: dict[str, Any]) -> tuple[str, str] | None:
    if body.get("object") == "response":
        return "openai", "responses"
    if body.get("object") == "chat.completion":
        return "openai", "chat"
    if body.get("type") == "message" and body.get("role") == "assistant":
        return "anthropic", "message"
    if "candidates" in body or "promptFeedback" in body:
        return "gemini", "generateContent"
    return None


def _stream_kind(events: list[Any]) -> tuple[str, str] | None:
    first = events[0] if events and isinstance(events[0], dict) else {}
    if str(first.get("type", "")).startswith("response."):
        return "openai", "responses stream"
    if first.get("object") == "chat.completion.chunk" or (
        "choices" in first and first.get("object") == ""
    ):
        return "openai", "chat stream"
    if first.get("type") == "message_start":
        return "anthropic", "message stream"
    if "candidates" in first:
        return "gemini", "generateContent stream"
    return None


CONVERTERS: dict[str, Callable[[Any, _Sdk, str], Callable[[], object]]] = {
    "responses": _openai_responses,
    "responses stream": _openai_responses_stream,
    "chat": _openai_chat,
    "chat stream": _openai_chat_stream,
    "message": _anthropic,
    "message stream": _anthropic_stream,
    "generateContent": _gemini,
    "generateContent stream": _gemini_stream,
}


def _body(raw: Any) -> tuple[Any, bool] | None:
    """The body as extract() and the SDK take it, and whether it is a stream's events."""
    if isinstance(raw, dict):
        return raw, False
    if not isinstance(raw, str):
        return None
    try:
        return json.loads(raw), False
    except ValueError:
        pass
    problems: list[str] = []
    events = list(iter_sse(raw, problems))
    if problems or not events:
        return None
    return events, True


def cases() -> tuple[list[Case], list[str], list[str]]:
    """Every recorded response a partner package reads; those it refuses; the others."""
    found: list[Case] = []
    refused: list[str] = []
    left_out: list[str] = []
    for path in sorted(CASSETTES.rglob("*.yaml")):
        relative = str(path.relative_to(CASSETTES))
        for k, raw in enumerate(cassette_bodies(relative)):
            name = f"{relative}#{k}"
            read = _body(raw)
            shape = None
            if read is not None:
                body, streamed = read
                shape = (
                    _stream_kind(body)
                    if streamed
                    else _final_kind(body)
                    if isinstance(body, dict)
                    else None
                )
            if shape is not None and shape[1].startswith("responses"):
                _sdk_complete(body)
            reader = str(extract(body).provider) if shape is not None else ""
            if shape is None or READ_BY.get(reader) != shape[0]:
                left_out.append(name)
                continue
            provider, kind = shape
            sdk = _Sdk()
            try:
                convert = CONVERTERS[kind](body, sdk, reader)
                convert()
            except Exception:  # whatever the SDK or the partner package raises
                refused.append(name)
                continue
            found.append(Case(name, provider, kind, body, convert, sdk.constructed))
    return found, refused, left_out


def _time(fn: Callable[[], object]) -> float:
    """Median seconds per call, each round long enough (about 20 ms) to time a fast call."""
    once = median_time(fn, repeat=1)
    number = max(1, int(TARGET_SECONDS / max(once, 1e-9)))
    return median_time(fn, repeat=5, number=number)


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Without langchain-google-genai's warning on each blocked answer, logged at every call."""
    logger = logging.getLogger("langchain_google_genai")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def measure() -> tuple[list[tuple[float, float, float, Case]], list[str], list[str]]:
    """(ratio, extract seconds, LangChain seconds, case) per response; refused; left out."""
    with _quiet():
        found, refused, left_out = cases()
        measured = []
        for case in found:
            ours = _time(functools.partial(extract, case.body))
            theirs = _time(case.convert)
            measured.append((ours / theirs, ours, theirs, case))
    return measured, refused, left_out


def run() -> list[Figure]:
    measured, refused, left_out = measure()
    _, ours, theirs, worst = max(measured, key=lambda m: m[0])
    constructed = sum(m[3].constructed > 0 for m in measured)
    figures = [
        Figure(
            name=f"extract() vs LangChain's conversion, worst of {len(measured)} recorded "
            f"responses: {worst.name} ({worst.kind})",
            value=ours * 1e6,
            unit="µs",
            baseline=theirs * 1e6,
            baseline_name=f"SDK parse + {PACKAGES[worst.provider]} message building + "
            "AIMessage.content_blocks of the same body",
            target="≤ 1.0×",
            note=f"every cassette response a partner package reads, final or streamed "
            f"(streams as their list of events); {constructed} of them hold a value the "
            "current SDK types refuse, parsed as the SDK's client does (without validation); "
            f"{len(left_out)} other bodies left out (other providers, errors, AWS streams)",
        ),
        Figure(
            name=f"extract() vs LangChain's conversion, median ratio over {len(measured)} "
            f"responses ({len(refused)} skipped: the SDK or the partner package refuses them)",
            value=statistics.median(m[0] for m in measured),
            unit="×",
            target="report",
            note=("skipped: " + ", ".join(refused)) if refused else "none skipped",
        ),
    ]
    for provider, package in PACKAGES.items():
        own = [m for m in measured if m[3].provider == provider]
        if not own:
            continue
        _, ours, theirs, case = max(own, key=lambda m: m[0])
        figures.append(
            Figure(
                name=f"extract() vs {package}, worst of {len(own)} {provider} responses: "
                f"{case.name} ({case.kind})",
                value=ours * 1e6,
                unit="µs",
                baseline=theirs * 1e6,
                baseline_name=f"SDK parse + {package} message building + content_blocks",
                target="report",
            )
        )
    return figures
