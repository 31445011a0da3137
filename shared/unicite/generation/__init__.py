"""Cited generation: give a model sources, get back an answer whose citations were checked.

`generate_cited` (and `agenerate_cited`, `stream_cited`, `astream_cited`) prompt any model with
numbered sources and citation rules for the format, check what comes back, retry with the
problems as feedback, and return a `CitedGeneration` whose answer went through `unicite.cite`.
"""

from unicite.generation._generate import (
    AsyncStreamedGeneration,
    StreamedGeneration,
    agenerate_cited,
    astream_cited,
    generate_cited,
    stream_cited,
)
from unicite.generation._llm import ChatModel, Reply, as_chat_model
from unicite.generation._result import (
    CitedGeneration,
    GenerationFormat,
    GenerationStats,
    Retry,
    Strategy,
)

__all__ = [
    "AsyncStreamedGeneration",
    "ChatModel",
    "CitedGeneration",
    "GenerationFormat",
    "GenerationStats",
    "Reply",
    "Retry",
    "Strategy",
    "StreamedGeneration",
    "agenerate_cited",
    "as_chat_model",
    "astream_cited",
    "generate_cited",
    "stream_cited",
]
