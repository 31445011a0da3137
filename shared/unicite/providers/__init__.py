"""Provider-native citations: `extract` for final responses, `collect_stream` for streams."""

from unicite.providers._base import CitationEvent, Provider, StreamReader
from unicite.providers._builder import AnswerBuilder
from unicite.providers._extract import (
    PROVIDER_NAMES,
    StreamCollector,
    acollect_stream,
    collect_stream,
    detect_provider,
    extract,
)

__all__ = [
    "PROVIDER_NAMES",
    "AnswerBuilder",
    "CitationEvent",
    "Provider",
    "StreamCollector",
    "StreamReader",
    "acollect_stream",
    "collect_stream",
    "detect_provider",
    "extract",
]
