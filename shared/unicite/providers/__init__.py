"""Provider-native citations: `extract` for final responses, `collect_stream` for streams.

Readers are registered providers (`register`, `registered`, `unregister`). Each built-in one has
its module, named after the provider, and after the API inside a provider's package when it has
several: `anthropic`, `gemini`, `perplexity`, `cohere`, `mistral`, `bedrock` (Converse),
`openai.responses`, `openai.chat`. Each module holds a `Provider` subclass named
``<Provider>[<Api>]Provider`` and its registered instance ``<PROVIDER>[_<API>]``
(``AnthropicProvider`` / ``ANTHROPIC``, ``OpenAIChatProvider`` / ``OPENAI_CHAT``).
`extract_content` reads a response as frameworks keep it; `to_data` turns SDK objects (and
what holds them) into the plain JSON the readers take. `iter_sse` splits a recorded
server-sent-event log into the events `StreamCollector.feed` takes.
"""

from unicite._data import to_plain as to_data
from unicite.providers._base import CitationEvent, Provider, RebuildingStream, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers._capabilities import (
    FAMILIES,
    Capabilities,
    Family,
    LLMKind,
    capabilities,
    llm_kind,
)
from unicite.providers._extract import (
    PROVIDER_NAMES,
    StreamCollector,
    acollect_stream,
    collect_stream,
    detect_provider,
    extract,
    extract_content,
    read_response,
)
from unicite.providers._registry import BUILTIN_PROVIDERS, register, registered, unregister
from unicite.providers._sse import iter_sse, looks_like_sse

__all__ = [
    "BUILTIN_PROVIDERS",
    "FAMILIES",
    "PROVIDER_NAMES",
    "AnswerBuilder",
    "Capabilities",
    "CitationEvent",
    "Family",
    "LLMKind",
    "Provider",
    "RebuildingStream",
    "StreamCollector",
    "StreamReader",
    "acollect_stream",
    "capabilities",
    "collect_stream",
    "detect_provider",
    "extract",
    "extract_content",
    "iter_sse",
    "llm_kind",
    "looks_like_sse",
    "read_response",
    "register",
    "registered",
    "to_data",
    "unregister",
]
