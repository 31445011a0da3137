"""Fast readers: the figures of a response straight from its JSON, for the common shapes.

Each reader takes the decoded response that the built-in reader of its provider detected and
returns its `Row` — equal to ``row_of(extract(data))`` — or None when the response holds
anything it does not model exactly (then `extract()` reads it). None is always safe; a row
that differs from the exact path is a bug the agreement tests catch.
"""

from __future__ import annotations

from unicite.analytics._fast import anthropic, gemini, openai, perplexity
from unicite.analytics._fast._types import FastReader

__all__ = ["FAST_READERS", "FastReader"]

FAST_READERS: dict[str, FastReader] = {
    **openai.READERS,
    **anthropic.READERS,
    **gemini.READERS,
    **perplexity.READERS,
}
"""Fast reader by the class name of the built-in provider reader it stands in for
(``OpenAIResponsesProvider``, ``OpenAIChatProvider``, ``XAIResponsesProvider``,
``AnthropicProvider``, ``GeminiProvider``, ``PerplexityProvider``); others have none and are
read by `extract()`."""
