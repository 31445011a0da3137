import unicite

EXPECTED = [
    "AttributionMethod",
    "BlockLocation",
    "CharLocation",
    "Citation",
    "CitationError",
    "CitationEvent",
    "CitationOrigin",
    "CitedAnswer",
    "EmbeddingScorer",
    "GroundingRequiredError",
    "JudgeScorer",
    "Location",
    "MarkdownMarkers",
    "MarkerStream",
    "MarkerStyle",
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
    "__version__",
    "acollect_stream",
    "attribute",
    "byte_span",
    "citation_instructions",
    "claim_span",
    "clauses",
    "collect_stream",
    "detect_provider",
    "extract",
    "format_sources",
    "from_byte_span",
    "from_utf16_span",
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
    "supports_hyperlinks",
    "truncate",
    "utf16_span",
    "verify",
]


def test_all_is_exactly_the_public_api() -> None:
    assert unicite.__all__ == EXPECTED
    assert sorted(unicite.__all__) == unicite.__all__


def test_every_exported_name_exists() -> None:
    for name in unicite.__all__:
        assert getattr(unicite, name) is not None


def test_core_imports_no_framework_or_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, unicite, unicite.cli\n"
        "bad = [m for m in ('openai', 'anthropic', 'google.genai', 'langchain_core', 'llama_index')"
        " if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
