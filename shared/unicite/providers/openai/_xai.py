"""What xAI's OpenAI-compatible answers (Grok) add to the OpenAI shapes.

xAI answers in the Responses and Chat Completions shapes with a few things of its own:

- a top-level ``citations`` list: every URL its search tools met, cited in the text or not;
- inline citations: ``[[n]](url)`` links the API writes into the text after the claim they
  support (``n`` is the source's display number, the same for every link to one URL); on the
  Responses API each also comes as a ``url_citation`` annotation titled ``n`` whose
  ``start_index`` / ``end_index`` (code points, end exclusive) enclose the link;
- its own tool call items: ``web_search_call`` and ``x_search_call`` with ``name`` and JSON
  ``arguments`` (no ``action``), ``code_interpreter_call`` / ``code_execution_call``,
  ``view_image_call``, ``view_x_video_call``, ``custom_tool_call``, ``mcp_call``...

An answer is xAI's when its model is a Grok model (``grok-*``) or, on the Responses API, when it
carries the top-level ``citations`` list (OpenAI's Responses API has none; Perplexity's Agent
API, which shares the shape, is told apart by its own items first).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from unicite.providers._builder import AnswerBuilder
from unicite.providers.openai._annotations import kind_name

__all__ = [
    "XAI",
    "XAI_QUIET_ITEMS",
    "XAI_SEARCH_ITEMS",
    "all_citations",
    "call_query",
    "is_grok",
    "is_xai_completion",
    "is_xai_response",
    "x_post",
]

XAI = "xai"
"""The provider name an xAI answer reports."""

XAI_SEARCH_ITEMS = frozenset({"web_search_call", "x_search_call"})
"""Output items of xAI's search tools (their results come back only as URLs and links)."""

XAI_QUIET_ITEMS = frozenset(
    {
        "code_interpreter_call",
        "code_execution_call",
        "view_image_call",
        "view_x_video_call",
        "custom_tool_call",
        "image_generation_call",
        "mcp_call",
        "document_search_call",
        "collections_search_call",
    }
)
"""xAI server-side tool items that carry no answer text and no citation data."""

_X_HOSTS = frozenset({"x.com", "twitter.com", "mobile.twitter.com", "mobile.x.com", "www.x.com"})
_X_POST_RE = re.compile(r"/(?:i(?:/web)?|[A-Za-z0-9_]{1,30})/status(?:es)?/(\d{1,25})(?:/|$)")


def is_grok(model: object) -> bool:
    """Whether a model name is one of xAI's Grok models (``grok-4-1-fast-reasoning``...)."""
    return isinstance(model, str) and model.strip().lower().startswith("grok")


def is_xai_response(data: Mapping[str, Any]) -> bool:
    """Whether a Responses-shaped response is xAI's: a Grok model, or a ``citations`` list."""
    return is_grok(data.get("model")) or isinstance(data.get("citations"), list)


def is_xai_completion(data: Mapping[str, Any]) -> bool:
    """Whether a Chat Completions response (or chunk) is xAI's: its model is a Grok model.

    The ``citations`` list alone does not tell: Perplexity's completions carry one too.
    """
    return is_grok(data.get("model"))


def call_query(item: Mapping[str, Any]) -> list[str]:
    """The search queries of an xAI tool call: its JSON ``arguments``' ``query`` / ``queries``."""
    arguments = item.get("arguments")
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except ValueError:
            return []
    elif isinstance(arguments, Mapping):
        parsed = arguments
    else:
        return []
    if not isinstance(parsed, Mapping):
        return []
    found = [parsed.get("query")]
    queries = parsed.get("queries")
    if isinstance(queries, list):
        found.extend(queries)
    return [q for q in dict.fromkeys(found) if isinstance(q, str) and q.strip()]


def x_post(url: str) -> str | None:
    """The id of the X post a URL shows (``https://x.com/i/status/1975607901571199086``)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or (parts.hostname or "") not in _X_HOSTS:
        return None
    match = _X_POST_RE.match(parts.path)
    return match.group(1) if match else None


def all_citations(builder: AnswerBuilder, data: Mapping[str, Any], path: str) -> None:
    """The top-level ``citations`` of xAI: every URL its search tools met, cited or not.

    Each is a web source ranked by its place in the list (uncited ones stay, after the cited);
    an X post (``https://x.com/i/status/<id>``, what ``x_search`` finds) keeps its id in
    ``extras["x_post_id"]``.
    """
    urls = data.get("citations")
    if not isinstance(urls, list):
        return
    builder.grounded = builder.grounded or bool(urls)
    for n, url in enumerate(urls):
        if isinstance(url, str) and url:
            post = x_post(url)
            extras = {"x_post_id": post} if post else {}
            builder.add_source({"kind": "web", "url": url, "rank": n, "extras": extras, "raw": url})
        else:
            builder.note(f"{path}.citations[{n}]: expected a URL string, got {kind_name(url)}")
