"""OpenAI: the Responses API (`responses`) and Chat Completions (`chat`), one reader each.

Both readers are registered under the name ``"openai"``, the Responses one first.
"""

from unicite.providers.openai.chat import OPENAI_CHAT, OpenAIChatProvider
from unicite.providers.openai.responses import OPENAI_RESPONSES, OpenAIResponsesProvider

__all__ = ["OPENAI_CHAT", "OPENAI_RESPONSES", "OpenAIChatProvider", "OpenAIResponsesProvider"]
