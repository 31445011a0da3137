"""Citation markers in answer text: read, validate, renumber and write them.

The prompt side asks a model for markers that read back cleanly; `MARKER_RE` is the pattern
every marker style matches.
"""

from unicite._marker_syntax import MARKER_RE
from unicite.markers._inject import MarkerStyle, inject_markers
from unicite.markers._parse import OnInvalid, parse_markers
from unicite.markers._prompt import (
    InstructionFormat,
    InstructionStyle,
    citation_instructions,
    format_sources,
)
from unicite.markers._renumber import renumber
from unicite.markers._stream import MarkerStream
from unicite.markers._structured import StructuredCitations, parse_structured
from unicite.markers._tokens import ParseStyle

__all__ = [
    "MARKER_RE",
    "InstructionFormat",
    "InstructionStyle",
    "MarkerStream",
    "MarkerStyle",
    "OnInvalid",
    "ParseStyle",
    "StructuredCitations",
    "citation_instructions",
    "format_sources",
    "inject_markers",
    "parse_markers",
    "parse_structured",
    "renumber",
]
