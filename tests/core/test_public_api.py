import pytest

import unicite

EXPECTED = [
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


def test_all_is_exactly_the_public_api() -> None:
    assert unicite.__all__ == EXPECTED
    assert sorted(unicite.__all__) == unicite.__all__


def test_every_exported_name_exists() -> None:
    for name in unicite.__all__:
        assert getattr(unicite, name) is not None


def test_render_is_the_function_not_a_package() -> None:
    import importlib

    assert unicite.render.__module__ == "unicite._render"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("unicite.render")
    assert callable(unicite.render)
    assert unicite.render(unicite.CitedAnswer(text="x"), "text") == "x"


def test_core_imports_no_framework_or_sdk() -> None:
    import subprocess
    import sys

    sdks = "('openai', 'anthropic', 'google.genai', 'langchain_core', 'llama_index')"
    code = (
        "import importlib.util, sys, unicite\n"
        "bad = [m for m in ('typer', 'rich', 'markdown_it') if m in sys.modules]\n"
        "if importlib.util.find_spec('typer'):\n"
        "    import unicite.cli\n"
        f"bad += [m for m in {sdks} if m in sys.modules]\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
