"""Gemini and Vertex AI: ``generateContent`` responses and streams, and the Interactions API.

``GenerateContentResponse`` (REST camelCase, SDK snake_case, final or streamed chunks): the
candidate's text, ``groundingMetadata`` (chunks and supports, and the other keys grounding has
shown up under: see `_keys`) and ``citationMetadata`` (recitations). An ``Interaction`` of the
Interactions API, or its event stream: text blocks and their byte-offset ``annotations`` (see
`_interactions`). Every claim is widened to whole words (see `_words`).

Each answer carries ``extras["grounded_effective"]`` (grounding ran: search queries, grounding
chunks, supports or sources, or a grounding tool call) and ``extras["tool_calls"]`` (tool
invocations the response shows; Gemini's grounding tools report their queries, not their calls,
so each grounding tool seen counts once), next to ``extras["web_search_queries"]``.
"""

from unicite.providers.gemini._provider import GEMINI, GeminiProvider, GeminiStream

__all__ = ["GEMINI", "GeminiProvider", "GeminiStream"]
