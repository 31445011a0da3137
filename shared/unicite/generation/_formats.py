"""Per output format: what the model is told, how its answer is checked, and what is returned.

Text formats (``markdown``, ``text``, ``html``) carry markers the model writes inline; ``json``
and ``yaml`` carry a ``_citations`` sidecar of JSON Pointers. Every check returns the problems
in words a model can act on: they are sent back to it when a round fails.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from unicite._cite import CitePolicy, SourcesInput, cite, cite_parsed
from unicite._marker_syntax import MARKER_RE, code_spans, read_token
from unicite._segment import segment
from unicite.exceptions import UsageError
from unicite.generation._result import GenerationFormat
from unicite.markers import (
    MarkerStyle,
    ParseStyle,
    citation_instructions,
    parse_markers,
    parse_structured,
)
from unicite.model import Citation, CitedAnswer

__all__ = ["Checked", "Shaped", "Structured", "TextFormat", "pick"]

_NUMERIC: tuple[ParseStyle, ...] = ("brackets", "sids", "sup", "footnotes")
_WRITTEN = {
    "brackets": "[n] (for example [1] or [1, 3])",
    "sids": "[[S:n]] (for example [[S:1]] or [[S:1,3]])",
    "footnotes": "[^n] (for example [^1])",
    "sup": '<sup class="cite" data-sids="n">[n]</sup>',
}
_FENCE_RE = re.compile(r"^\s*```[\w+-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)
_HTML_CODE_RE = re.compile(r"<(pre|code)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)


@dataclass
class Checked:
    """A round's answer, checked."""

    errors: list[str] = field(default_factory=list)
    """What the model must fix; empty when the answer is acceptable."""
    cited: bool = False
    schema_ok: bool | None = None
    """Whether the document met the JSON Schema; None when there was none to meet."""
    raw: str | None = None
    """The reply checked, which `read` read."""
    read: Any = None
    """What the check read of `raw` that `finish` reads too, so it is read once: a text's
    markers in the format's style (invalid ones kept), a document's sidecar."""


@dataclass
class Shaped:
    """The final answer (through `cite`), its content in the format, and the document."""

    answer: CitedAnswer
    content: str
    document: Any = None


class TextFormat:
    """Markdown, plain text or an HTML fragment, with markers in one style."""

    def __init__(self, format: GenerationFormat, style: MarkerStyle) -> None:
        self.format = format
        self.style = style

    def instructions(self, *, required: bool) -> str:
        """The system prompt's rules: what to write and how to cite."""
        rules = citation_instructions(
            "html" if self.format == "html" else "markdown", self.style, usage=not required
        )
        if not required:
            rules = rules.replace(
                "Cite your sources.", "Cite your sources where they support a claim.", 1
            )
        what = {
            "markdown": "Write the answer in Markdown.",
            "text": "Write the answer as plain text, without Markdown formatting.",
            "html": "Write the answer as an HTML fragment (no <html>, <head> or <body>).",
        }[self.format]
        return f"{what}\n\n{rules}"

    def check(self, raw: str, sources: SourcesInput, *, required: bool) -> Checked:
        """Unknown or malformed markers, markers in code or in another style, none at all."""
        parsed = parse_markers(raw, sources, style=self.style, on_invalid="keep")
        out = Checked(raw=raw, read=parsed)
        out.cited = bool(parsed.citations)
        out.errors.extend(d for d in parsed.diagnostics if d.startswith("marker "))
        mine = {c.marker_span for c in parsed.citations}
        other = parse_markers(raw, sources, style=_NUMERIC, on_invalid="keep")
        wrong = [
            raw[a:b]
            for c in other.citations
            if (span := c.marker_span) is not None and span not in mine
            for a, b in [span]
        ]
        if wrong:
            shown = ", ".join(repr(w) for w in wrong[:3])
            out.errors.append(
                f"citations must be written as {_WRITTEN[self.style]}, not as {shown}"
            )
        for marker in self._in_code(raw):
            out.errors.append(
                f"the citation {marker!r} is inside code; cite the sentence that introduces "
                "the code instead"
            )
        if required and not out.cited:
            out.errors.append(
                "the answer cites no source: cite each claim a listed source supports, "
                f"with {_WRITTEN[self.style]} right after it"
            )
        return out

    def _in_code(self, raw: str) -> Iterator[str]:
        """Markers of this style inside code blocks, inline code or HTML ``<pre>``/``<code>``."""
        if self.style == "brackets":
            return  # "x[1]" is ordinary code: only distinctive styles are looked for
        regions: list[tuple[int, int]] = []
        if self.format == "html":
            regions = [m.span() for m in _HTML_CODE_RE.finditer(raw)]
        else:
            for seg in segment(raw):
                if seg.kind == "code":
                    regions.append((seg.start, seg.end))
                else:
                    regions.extend(code_spans(raw, seg.start, seg.end))
        for lo, hi in regions:
            for m in MARKER_RE.finditer(raw, lo, hi):
                token = read_token(raw, m.start(), m.end())
                if token is not None and token.kind == self.style:
                    yield m.group()

    def finish(
        self, raw: str, sources: SourcesInput, policy: CitePolicy, checked: Checked | None = None
    ) -> Shaped:
        """The answer cited through `cite` (markers read in this style and renumbered).

        `checked`: the check of `raw`, whose reading of the markers `cite` takes when it is
        the one `cite` would make: invalid markers kept, or none (dropping one changes the
        text; every such marker has a ``marker ...`` diagnostic).
        """
        policy = policy.replace(markers=self.style)
        parsed = checked.read if checked is not None and checked.raw == raw else None
        if isinstance(parsed, CitedAnswer) and (
            policy.on_invalid == "keep"
            or not any(note.startswith("marker ") for note in parsed.diagnostics)
        ):
            answer = cite_parsed(raw, sources, policy, parsed)
        else:
            answer = cite(raw, sources, policy=policy)
        return Shaped(answer, answer.text)


class Structured:
    """A JSON or YAML document whose citations are a ``_citations`` sidecar."""

    def __init__(
        self, format: GenerationFormat, schema: dict[str, Any] | None, key: str = "_citations"
    ) -> None:
        self.format = format
        self.schema = schema
        self.key = key
        self.pointer = key if key.startswith("/") else "/" + escape_pointer(key)
        self._validator: Any = None
        if schema is not None:
            self._validator = _validator(schema)

    def instructions(self, *, required: bool) -> str:
        """The system prompt's rules: one document, its sidecar, and the schema to meet."""
        rules = citation_instructions("json", "sidecar", key=self.key)
        if not required:
            rules = rules.replace(
                "Cite your sources.", "Cite your sources where they support a value.", 1
            )
        if self.format == "yaml":
            what = (
                "Reply with one YAML document only, no prose around it. Write it with the "
                "structure the rules below describe for JSON, the citations list included."
            )
        else:
            what = "Reply with one JSON document only, no prose around it."
        parts = [what, rules]
        if self.schema is not None:
            schema = json.dumps(self.schema, ensure_ascii=False)
            parts.append(
                "The document, without its citations list, must validate against this JSON "
                f"Schema:\n{schema}"
            )
        return "\n\n".join(parts)

    def load(self, raw: str) -> tuple[Any, str | None]:
        """The document the model wrote (a code fence around it is fine), or why not."""
        text = raw.strip()
        fenced = _FENCE_RE.match(text)
        if fenced is not None:
            text = fenced.group(1)
        if self.format == "yaml":
            yaml = _yaml()
            try:
                return yaml.safe_load(text), None
            except yaml.YAMLError as err:
                return None, f"the reply is not valid YAML: {' '.join(str(err).split())}"
        try:
            return json.loads(text), None
        except json.JSONDecodeError as err:
            return None, f"the reply is not valid JSON: {err}"

    def check(self, raw: str, sources: SourcesInput, *, required: bool) -> Checked:
        """Parse errors, sidecar problems, schema violations, no citation while required."""
        out = Checked()
        document, problem = self.load(raw)
        if problem is not None:
            out.errors.append(problem)
            return out
        if not isinstance(document, (dict, list)):
            out.errors.append("the reply must be a JSON object or array")
            return out
        structured = parse_structured(document, sources, key=self.key, on_invalid="drop")
        out.raw, out.read = raw, structured
        out.cited = bool(structured.citations)
        out.errors.extend(
            f"{self.pointer}: {note}" if not note.startswith(self.pointer) else note
            for note in structured.diagnostics
            if not (not required and note == f"no citations at {self.pointer}")
        )
        if self._validator is not None:
            found = sorted(self._validator.iter_errors(structured.data), key=lambda e: e.path)
            out.schema_ok = not found
            for error in found[:10]:
                where = "/" + "/".join(escape_pointer(str(p)) for p in error.path)
                out.errors.append(f"schema: at {where}: {error.message}")
        if required and not out.cited:
            out.errors.append(
                f"the document cites no source: add a {self.key!r} list with one "
                '{"path": ..., "sids": [...]} entry per value a listed source supports'
            )
        return out

    def finish(
        self, raw: str, sources: SourcesInput, policy: CitePolicy, checked: Checked | None = None
    ) -> Shaped:
        """The document as JSON text whose cited string values carry the citations.

        ``answer.text`` is the document without its sidecar, as indented JSON; each cited
        value's span covers the string's characters. ``content`` is the document in the format
        with the sidecar written back, its numbers those of ``answer.sources``. `checked`: the
        check of `raw`, whose reading of the document and its sidecar is taken.
        """
        if checked is not None and checked.raw == raw and checked.read is not None:
            structured = checked.read
        else:
            document, _ = self.load(raw)
            structured = parse_structured(document, sources, key=self.key, on_invalid="drop")
        text, spans = dump_with_spans(structured.data)
        citations = [
            Citation(
                start=spans[pointer][0],
                end=spans[pointer][1],
                text=text[spans[pointer][0] : spans[pointer][1]],
                source_ids=ids,
                origin="marker",
                extras={"path": pointer},
            )
            for pointer, ids in structured.citations.items()
            if pointer in spans and ids
        ]
        draft = CitedAnswer(
            text=text,
            sources=structured.sources,
            citations=citations,
            diagnostics=structured.diagnostics,
        )
        answer = cite(draft, sources, policy=policy)
        numbers = {source.id: n for n, source in enumerate(answer.sources, start=1)}
        sidecar = [
            {
                "path": citation.extras["path"],
                "sids": [numbers[sid] for sid in citation.source_ids if sid in numbers],
            }
            for citation in answer.citations
            if "path" in citation.extras
        ]
        return Shaped(
            answer, self.dump(_attach(structured.data, self.key, sidecar)), structured.data
        )

    def dump(self, document: Any) -> str:
        """The document in this format."""
        if self.format == "yaml":
            dumped: str = _yaml().safe_dump(document, allow_unicode=True, sort_keys=False)
            return dumped
        return json.dumps(document, ensure_ascii=False, indent=2)


def escape_pointer(token: str) -> str:
    """One JSON Pointer reference token, escaped (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def _yaml() -> Any:
    try:
        return importlib.import_module("yaml")
    except ImportError as err:
        raise UsageError('format="yaml" needs PyYAML: pip install "unicite[yaml]"') from err


def _validator(schema: dict[str, Any]) -> Any:
    try:
        jsonschema: Any = importlib.import_module("jsonschema")
    except ImportError as err:
        raise UsageError(
            'schema= needs the jsonschema package: pip install "unicite[schema]"'
        ) from err
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError as err:
        raise UsageError(f"schema is not a valid JSON Schema: {err.message}") from err
    return cls(schema)


def _attach(document: Any, key: str, sidecar: list[dict[str, Any]]) -> Any:
    """`document` with the sidecar at ``key`` (a top-level key, or a JSON Pointer)."""
    if not sidecar:
        return document
    if not key.startswith("/"):
        if isinstance(document, dict):
            return {**document, key: sidecar}
        return document
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in key[1:].split("/")]
    if not isinstance(document, dict):
        return document
    out = dict(document)
    node = out
    for token in tokens[:-1]:
        child = node.get(token)
        child = dict(child) if isinstance(child, dict) else {}
        node[token] = child
        node = child
    node[tokens[-1]] = sidecar
    return out


def dump_with_spans(document: Any) -> tuple[str, dict[str, tuple[int, int]]]:
    """The document as ``json.dumps(…, ensure_ascii=False, indent=2)``, and its strings' spans.

    For every string value, the span of its characters (inside the quotes), by JSON Pointer.
    """
    parts: list[str] = []
    spans: dict[str, tuple[int, int]] = {}
    size = 0

    def put(piece: str) -> None:
        nonlocal size
        parts.append(piece)
        size += len(piece)

    def walk(value: Any, pointer: str, depth: int) -> None:
        pad = "  " * (depth + 1)
        if isinstance(value, dict) and value:
            put("{\n")
            for n, (key, item) in enumerate(value.items()):
                put(pad + json.dumps(str(key), ensure_ascii=False) + ": ")
                walk(item, f"{pointer}/{escape_pointer(str(key))}", depth + 1)
                put(",\n" if n < len(value) - 1 else "\n")
            put("  " * depth + "}")
        elif isinstance(value, list) and value:
            put("[\n")
            for n, item in enumerate(value):
                put(pad)
                walk(item, f"{pointer}/{n}", depth + 1)
                put(",\n" if n < len(value) - 1 else "\n")
            put("  " * depth + "]")
        elif isinstance(value, str):
            encoded = json.dumps(value, ensure_ascii=False)
            spans[pointer] = (size + 1, size + len(encoded) - 1)
            put(encoded)
        else:
            put(json.dumps(value, ensure_ascii=False))

    walk(document, "", 0)
    return "".join(parts), spans


def pick(format: str, style: object, schema: dict[str, Any] | None) -> TextFormat | Structured:
    """The handler for ``format``, given the policy's marker style.

    ``"auto"`` is the format's own style: ``[[S:n]]`` for text and ``<sup>`` for HTML.
    """
    if format in ("json", "yaml"):
        return Structured(format, schema)  # type: ignore[arg-type]
    if schema is not None:
        raise UsageError(f"schema= is for json and yaml, not {format!r}")
    if format not in ("markdown", "text", "html"):
        raise UsageError(
            f"format must be 'markdown', 'text', 'html', 'json' or 'yaml', got {format!r}"
        )
    allowed = ("sup", "brackets", "sids") if format == "html" else ("sids", "brackets", "footnotes")
    if style == "auto":
        return TextFormat(format, allowed[0])  # type: ignore[arg-type]
    if style not in allowed:
        raise UsageError(f"markers for {format} must be one of {allowed}, got {style!r}")
    return TextFormat(format, style)  # type: ignore[arg-type, arg-type]
