"""OpenAI: the Responses API (`responses`) and Chat Completions (`chat`), one reader each.

Both readers are registered under the name ``"openai"``, the Responses one first. xAI's answers
(Grok), in the same shapes, are read by the same code under the name ``"xai"`` (`xai`), and
OpenAI Agents SDK run results by the Responses reader.
"""

from unicite.providers.openai.chat import OPENAI_CHAT, OpenAIChatProvider
from unicite.providers.openai.responses import OPENAI_RESPONSES, OpenAIResponsesProvider
from unicite.providers.openai.xai import (
    XAI_CHAT,
    XAI_RESPONSES,
    XAIChatProvider,
    XAIResponsesProvider,
)

__all__ = [
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "XAI_CHAT",
    "XAI_RESPONSES",
    "OpenAIChatProvider",
    "OpenAIResponsesProvider",
    "XAIChatProvider",
    "XAIResponsesProvider",
]
