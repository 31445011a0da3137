"""xAI (Grok): the OpenAI readers, registered under the name ``"xai"`` ahead of OpenAI's.

xAI answers in OpenAI's Responses and Chat Completions shapes, so its answers are read by the
OpenAI readers' code (one reader per shape); these two only recognise xAI's answers first, so
that ``extract(..., provider="xai")`` selects them and `detect_provider` names xAI. What xAI
adds to the shapes, and how it is read, is in `unicite.providers.openai._xai`:

- **Responses** (``https://api.x.ai/v1/responses``, the Agent Tools API: ``web_search``,
  ``x_search``, ``code_execution``...): ``url_citation`` annotations titled with the marker
  number, whose ``start_index`` / ``end_index`` (Python ``str`` indices: code points, end
  exclusive) enclose the ``[[n]](url)`` link after the claim; the claim is the sentence the link
  closes. Numbered links no annotation spans cite their URL too; annotations without offsets
  (``include=["no_inline_citations"]``) are sources. The top-level ``citations`` are sources,
  cited or not (X posts keep their id in ``extras["x_post_id"]``); ``web_search_call`` and
  ``x_search_call`` items count in ``extras["tool_calls"]``, their queries in
  ``extras["web_search_queries"]`` / ``extras["x_search_queries"]``.
- **Chat Completions** (``/v1/chat/completions``; its Live Search, ``search_parameters``, is
  deprecated and answers 410 now, but logged answers still read): the ``[[n]](url)`` links of the
  text are the citations, the top-level ``citations`` the sources; a stream sends the
  ``citations`` in its last chunk.

Streams are read to their end before their citations are announced (a link's citation depends
on whether an annotation comes to span it), so the announced citations are the final ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite.providers.openai._agents import is_run
from unicite.providers.openai._content import has_citation_shapes
from unicite.providers.openai._xai import XAI, is_grok, is_xai_completion, is_xai_response
from unicite.providers.openai.chat import OpenAIChatProvider
from unicite.providers.openai.responses import OpenAIResponsesProvider

__all__ = ["XAI_CHAT", "XAI_RESPONSES", "XAIChatProvider", "XAIResponsesProvider"]


def _carried(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The response a stream event (``response.created``, ``response.completed``...) carries."""
    response = data.get("response")
    kind = data.get("type")
    if isinstance(kind, str) and kind.startswith("response.") and isinstance(response, Mapping):
        return response
    return None


class XAIResponsesProvider(OpenAIResponsesProvider):
    """xAI's Responses API answers and event streams (read as OpenAI's; see the module doc)."""

    name = XAI
    api = "responses"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A Responses response (or terminal event) from a Grok model or with ``citations``."""
        if is_run(data) or not super().detect(data):
            return False
        carried = _carried(data)
        return is_xai_response(carried if carried is not None else data)

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A Responses stream event carrying an xAI response (``response.created`` first)."""
        carried = _carried(event)
        return carried is not None and is_xai_response(carried)

    def detect_content(self, content: str | list[Any], fields: Mapping[str, Any]) -> bool:
        """OpenAI citation or search shapes in blocks kept from a Grok model's answer."""
        return (
            not isinstance(content, str)
            and is_grok(fields.get("model"))
            and has_citation_shapes(content)
        )


class XAIChatProvider(OpenAIChatProvider):
    """xAI's Chat Completions answers and chunk streams (read as OpenAI's; see the module doc)."""

    name = XAI
    api = "chat"

    def detect(self, data: Mapping[str, Any]) -> bool:
        """A Chat Completions response from a Grok model."""
        return super().detect(data) and is_xai_completion(data)

    def detect_event(self, event: Mapping[str, Any]) -> bool:
        """A completion chunk from a Grok model."""
        if not super().detect_event(event):
            return False
        chunk = event.get("chunk") if event.get("type") == "chunk" else event
        return isinstance(chunk, Mapping) and is_xai_completion(chunk)


XAI_RESPONSES = XAIResponsesProvider()
"""Reader of xAI's Responses API answers and their event streams."""

XAI_CHAT = XAIChatProvider()
"""Reader of xAI's Chat Completions answers and their chunk streams."""
