"""unicite: one citation layer for LLM applications.

Whatever produced an answer, unicite gives back the same `CitedAnswer`: the answer text, the
sources it rests on, and exact spans tying claims to sources.
"""

from importlib.metadata import version as _version

# First: the compiled accelerator, when built, serves the modules imported below.
from unicite._accel import accelerated

# isort: split

from unicite import wire
from unicite._cite import CitePolicy, cite
from unicite._offsets import OffsetIndex, byte_span, from_byte_span, from_utf16_span, utf16_span
from unicite._render import (
    MarkdownMarkers,
    RenderFormat,
    SourceSelection,
    render,
    supports_hyperlinks,
)
from unicite._schema import json_schema
from unicite._segment import Segment, claim_span, claim_spans, clauses, find_markers, segment
from unicite._text import sanitize_display, truncate
from unicite._urls import is_redirect_url, normalize_url, registrable_domain, safe_href
from unicite.attribution import (
    AttributionMethod,
    EmbeddingScorer,
    JudgeScorer,
    NLIScorer,
    Scorer,
    attribute,
    verify,
)
from unicite.exceptions import (
    CitationError,
    GroundingRequiredError,
    UniciteError,
    UsageError,
    WireError,
)
from unicite.generation import (
    CitedGeneration,
    agenerate_cited,
    astream_cited,
    generate_cited,
    stream_cited,
)
from unicite.markers import (
    MarkerStream,
    MarkerStyle,
    citation_instructions,
    format_sources,
    inject_markers,
    parse_markers,
    parse_structured,
    renumber,
)
from unicite.model import (
    BlockLocation,
    CharLocation,
    Citation,
    CitationOrigin,
    CitedAnswer,
    Location,
    PageLocation,
    SearchResultLocation,
    Source,
    SourceKind,
    SourceOrigin,
    UrlLocation,
)
from unicite.providers import (
    CitationEvent,
    StreamCollector,
    acollect_stream,
    collect_stream,
    detect_provider,
    extract,
)
from unicite.settings import resolve_enabled

__version__ = _version("unicite")

__all__ = [
    "AttributionMethod",
    "BlockLocation",
    "CharLocation",
    "Citation",
    "CitationError",
    "CitationEvent",
    "CitationOrigin",
    "CitePolicy",
    "CitedAnswer",
    "CitedGeneration",
    "EmbeddingScorer",
    "GroundingRequiredError",
    "JudgeScorer",
    "Location",
    "MarkdownMarkers",
    "MarkerStream",
    "MarkerStyle",
    "NLIScorer",
    "OffsetIndex",
    "PageLocation",
    "RenderFormat",
    "Scorer",
    "SearchResultLocation",
    "Segment",
    "Source",
    "SourceKind",
    "SourceOrigin",
    "SourceSelection",
    "StreamCollector",
    "UniciteError",
    "UrlLocation",
    "UsageError",
    "WireError",
    "__version__",
    "accelerated",
    "acollect_stream",
    "agenerate_cited",
    "astream_cited",
    "attribute",
    "byte_span",
    "citation_instructions",
    "cite",
    "claim_span",
    "claim_spans",
    "clauses",
    "collect_stream",
    "detect_provider",
    "extract",
    "find_markers",
    "format_sources",
    "from_byte_span",
    "from_utf16_span",
    "generate_cited",
    "inject_markers",
    "is_redirect_url",
    "json_schema",
    "normalize_url",
    "parse_markers",
    "parse_structured",
    "registrable_domain",
    "render",
    "renumber",
    "resolve_enabled",
    "safe_href",
    "sanitize_display",
    "segment",
    "stream_cited",
    "supports_hyperlinks",
    "truncate",
    "utf16_span",
    "verify",
    "wire",
]
