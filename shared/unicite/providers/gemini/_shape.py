"""One shape for REST, SDK JSON dumps and SDK python dumps, and the field names read."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from unicite._data import to_plain
from unicite.providers.gemini._keys import EXTRA_KEYS

# Values of these fields are the caller's own data (function arguments, tool output): their keys
# are never renamed.
_OPAQUE_FIELDS = frozenset({"args", "response", "partMetadata"})

# Response fields read here, or SDK-side helpers that are not provider data.
_RESPONSE_FIELDS = frozenset(
    {"candidates", "modelVersion", "sdkHttpResponse", "automaticFunctionCallingHistory", "parsed"}
)
_CANDIDATE_FIELDS = frozenset(
    {"content", "groundingMetadata", "citationMetadata", "index", "groundingAttributions"}
)
_GROUNDING_FIELDS = frozenset(
    {
        "groundingChunks",
        "groundingSupports",
        "webSearchQueries",
        "searchEntryPoint",
        *EXTRA_KEYS,
    }
)
_SEARCH_RAN_FIELDS = ("webSearchQueries", "retrievalQueries", "imageSearchQueries")
# Fields of a response (not of its candidates), in the camelCase the reader normalises to.
_TOP_LEVEL_FIELDS = _RESPONSE_FIELDS | {
    "usageMetadata",
    "promptFeedback",
    "responseId",
    "createTime",
    "modelStatus",
}
_CANDIDATE_METADATA_KEYS = (
    "groundingMetadata",
    "grounding_metadata",
    "citationMetadata",
    "citation_metadata",
)
_GROUNDING_KEYS = ("grounding_metadata", "groundingMetadata")

_CHUNK_KINDS = ("web", "retrievedContext", "maps", "image")

_CAMEL_RE = re.compile(r"_([a-z0-9])")
_SNAKE_RE = re.compile(r"(?<=[a-z0-9])([A-Z])")


@functools.lru_cache(maxsize=2048)
def _camel(key: str) -> str:
    return _CAMEL_RE.sub(lambda m: m.group(1).upper(), key) if "_" in key else key


def _snake(key: str) -> str:
    return _SNAKE_RE.sub(r"_\1", key).lower()


def _plain(value: Any) -> Any:
    """REST-shaped copy of `value`: camelCase keys, no nulls, other values as `to_plain` makes them.

    The SDK's ``model_dump()`` gives snake_case keys and a null for every unset field; the REST
    API and ``model_dump(by_alias=True)`` give camelCase. Reading one shape makes them all give
    equal answers (``raw`` and extras included).
    """
    return renamed(value, _camel, _OPAQUE_FIELDS)


def renamed(value: Any, rename: Callable[[str], str], opaque: frozenset[str]) -> Any:
    """A copy of `value` with every key renamed by ``rename`` and nulls dropped.

    Values under an ``opaque`` key (after renaming) are copied as they are. When a mapping
    holds a key in both spellings, the one already in the target spelling wins.
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool:
        return value
    if kind is dict or isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if item is None:
                continue
            name = rename(key) if isinstance(key, str) else str(key)
            if name in out and name != key:
                continue  # the target spelling of a field wins over its twin
            out[name] = to_plain(item) if name in opaque else renamed(item, rename, opaque)
        return out
    if isinstance(value, (list, tuple)):
        return [renamed(item, rename, opaque) for item in value]
    plain = to_plain(value)
    return renamed(plain, rename, opaque) if isinstance(plain, (dict, list)) else plain


def _looks_like_response(data: Mapping[str, Any]) -> bool:
    if isinstance(data.get("candidates"), list) or _generate_answer(data) is not None:
        return True
    return any(
        isinstance(data.get(key), Mapping)
        for key in ("promptFeedback", "prompt_feedback", "usageMetadata", "usage_metadata")
    )


def _looks_like_candidate(data: Mapping[str, Any]) -> bool:
    """A bare candidate: model content (a ``parts`` list or a role) or candidate metadata."""
    if "candidates" in data:
        return False
    content = data.get("content")
    if isinstance(content, Mapping) and ("parts" in content or "role" in content):
        return True
    return any(isinstance(data.get(key), Mapping) for key in _CANDIDATE_METADATA_KEYS)


def _generate_answer(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The candidate of a Gemini API ``GenerateAnswerResponse`` (``answer`` and its odds)."""
    answer = data.get("answer")
    if not isinstance(answer, Mapping) or "candidates" in data:
        return None
    if not any(key in data for key in ("answerableProbability", "answerable_probability")):
        return None
    return answer if _looks_like_candidate(answer) else None


def _as_response(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A normalised response; a bare candidate wrapped, its response-level fields lifted out.

    A ``generateAnswer`` response reads as the response of its one candidate, ``answer``.
    """
    answer = _generate_answer(data)
    if answer is not None:
        rest = {key: value for key, value in data.items() if key != "answer"}
        return {**rest, "candidates": [answer]}
    if not _looks_like_candidate(data):
        return data
    top = {key: value for key, value in data.items() if key in _TOP_LEVEL_FIELDS}
    candidate = {key: value for key, value in data.items() if key not in _TOP_LEVEL_FIELDS}
    return {**top, "candidates": [candidate]}


def _is_empty(value: Any) -> bool:
    return isinstance(value, (Mapping, list, str)) and not value


def _type_name(value: Any) -> str:
    return type(value).__name__


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")
