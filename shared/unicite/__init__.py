"""unicite: one citation layer for LLM applications.

Whatever produced an answer, unicite gives back the same `CitedAnswer`: the answer text, the
sources it rests on, and exact spans tying claims to sources.
"""

from importlib.metadata import version as _version

from unicite._offsets import OffsetIndex, byte_span, from_byte_span, from_utf16_span, utf16_span
from unicite._schema import json_schema
from unicite._segment import Segment, claim_span, clauses, segment
from unicite._text import sanitize_display, truncate
from unicite._urls import is_redirect_url, normalize_url, registrable_domain, safe_href
from unicite.exceptions import CitationError, GroundingRequiredError, UniciteError, UsageError
from unicite.markers import inject_markers
from unicite.markers._inject import MarkerStyle
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
from unicite.render import (
    MarkdownMarkers,
    RenderFormat,
    SourceSelection,
    render,
    supports_hyperlinks,
)
from unicite.settings import resolve_enabled

__version__ = _version("unicite")

__all__ = [
    "BlockLocation",
    "CharLocation",
    "Citation",
    "CitationError",
    "CitationEvent",
    "CitationOrigin",
    "CitedAnswer",
    "GroundingRequiredError",
    "Location",
    "MarkdownMarkers",
    "MarkerStyle",
    "OffsetIndex",
    "PageLocation",
    "RenderFormat",
    "SearchResultLocation",
    "Segment",
    "Source",
    "SourceKind",
    "SourceSelection",
    "StreamCollector",
    "UniciteError",
    "UrlLocation",
    "UsageError",
    "__version__",
    "acollect_stream",
    "byte_span",
    "claim_span",
    "clauses",
    "collect_stream",
    "detect_provider",
    "extract",
    "from_byte_span",
    "from_utf16_span",
    "inject_markers",
    "is_redirect_url",
    "json_schema",
    "normalize_url",
    "registrable_domain",
    "render",
    "resolve_enabled",
    "safe_href",
    "sanitize_display",
    "segment",
    "supports_hyperlinks",
    "truncate",
    "utf16_span",
]
