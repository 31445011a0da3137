"""Citations of structured output: a JSON/YAML sidecar of RFC 6901 pointers, and inline markers."""

from __future__ import annotations

import importlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from unicite._text import int_of
from unicite.exceptions import CitationError, UsageError
from unicite.markers._edit import Edit, EditedText, merge
from unicite.markers._parse import Context, OnInvalid, build_answer, run_region
from unicite.markers._tokens import SourceTable, shown
from unicite.model import Citation, CitedAnswer, Source

__all__ = ["StructuredCitations", "escape_pointer", "parse_structured", "resolve_pointer"]

_MAX_DEPTH = 400
_MISSING = object()


@dataclass(frozen=True)
class StructuredCitations:
    """A structured answer without its citations, and the citations per JSON Pointer."""

    data: Any
    """The document without the sidecar, inline markers removed from its strings."""
    sources: list[Source]
    """The sources, in the order given."""
    citations: dict[str, list[str]] = field(default_factory=dict)
    """RFC 6901 JSON Pointer of each cited value to the ids of its sources: sidecar entries
    first, in their order, then values with inline markers, in document order."""
    answers: dict[str, CitedAnswer] = field(default_factory=dict)
    """For each string that carried inline markers, its claim-level citations; its text is
    the cleaned string found at that pointer in `data`."""
    diagnostics: list[str] = field(default_factory=list)
    """What was invalid, missing or dropped."""


def escape_pointer(token: str) -> str:
    """One JSON Pointer reference token, escaped (``~`` as ``~0``, ``/`` as ``~1``)."""
    return token.replace("~", "~0").replace("/", "~1")


def resolve_pointer(document: Any, pointer: str) -> tuple[bool, Any]:
    """Resolve an RFC 6901 JSON Pointer: ``(True, value)``, or ``(False, None)`` if absent.

    Raises:
        UsageError: ``pointer`` is not a JSON Pointer (it must be empty or start with ``/``).
    """
    if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
        raise UsageError(f"not a JSON Pointer: {pointer!r}")
    value = document
    if not pointer:
        return True, value
    for raw in pointer[1:].split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, Mapping):
            if token not in value:
                return False, None
            value = value[token]
        elif isinstance(value, list):
            index = _index(token)
            if index is None:
                return False, None
            if index >= len(value):
                return False, None
            value = value[index]
        else:
            return False, None
    return True, value


def _index(token: str) -> int | None:
    """An array index token: ``0`` or digits without a leading zero."""
    if len(token) > 1 and token.startswith("0"):
        return None
    return int_of(token) if token == token.strip() else None


def parse_structured(
    data: Any,
    sources: object,
    *,
    key: str = "_citations",
    inline: bool = True,
    on_invalid: OnInvalid = "drop",
    base: int = 1,
) -> StructuredCitations:
    """Read the citations of a structured (JSON or YAML) answer.

    The model cites values through a sidecar list, by default under ``"_citations"``:
    ``{"city": "Paris", "_citations": [{"path": "/city", "sids": [3, 5]}]}``. Each ``path`` is
    an RFC 6901 JSON Pointer into the document (without the sidecar) and must name a string;
    ``sids`` are source numbers (1-based unless ``base=0``) or source ids. With ``inline``,
    string values may also carry ``[[S:n]]`` markers; they are removed from the strings and
    their values cited, with claim-level spans in `StructuredCitations.answers`.

    Invalid entries (not an object, a path that is not a pointer or names nothing, unknown or
    repeated sources) are dropped with a diagnostic; a path naming a number, object or list is
    dropped too unless ``on_invalid="keep"``. ``on_invalid="raise"`` raises on any problem.

    Args:
        data: The parsed document (dict or list), or its JSON or YAML text (YAML needs
            PyYAML installed).
        sources: The sources the model was shown, in prompt order (as for `parse_markers`).
        key: Where the sidecar lives: a top-level key, or a JSON Pointer such as
            ``"/meta/citations"``.
        inline: Also read ``[[S:n]]`` markers inside string values.
        on_invalid: ``"drop"``, ``"keep"`` (cite non-string values too) or ``"raise"``.
        base: 1 when the first source is number 1, 0 when it is number 0.

    Returns:
        The document without its citations, and the citations per pointer.

    Raises:
        UsageError: Wrong argument types or unknown options.
        CitationError: With ``on_invalid="raise"``, when anything is invalid.
    """
    if not isinstance(key, str) or not key:
        raise UsageError(f"key must be a non-empty string, got {key!r}")
    if not isinstance(inline, bool):
        raise UsageError(f"inline must be a bool, got {inline!r}")
    context = Context(sources, style="sids", on_invalid=on_invalid, base=base)
    notes: list[str] = list(context.table.notes)
    document, problem = _load(data)
    if problem is not None:
        notes.append(problem)
        return _finish(data, context, {}, {}, notes)
    pointer = key if key.startswith("/") else "/" + escape_pointer(key)
    document, sidecar = _detach(document, pointer)

    citations: dict[str, list[str]] = {}
    if sidecar is _MISSING:
        if not inline:
            notes.append(f"no citations at {pointer}")
    else:
        _read_sidecar(document, sidecar, pointer, context, citations, notes)
    answers: dict[str, CitedAnswer] = {}
    if inline:
        document = _inline(document, "", 0, context, citations, answers, notes)
    return _finish(document, context, citations, answers, notes)


def _finish(
    document: Any,
    context: Context,
    citations: dict[str, list[str]],
    answers: dict[str, CitedAnswer],
    notes: list[str],
) -> StructuredCitations:
    if context.on_invalid == "raise" and len(notes) > len(context.table.notes):
        raise CitationError(f"invalid structured citations: {notes[0]}", diagnostics=notes)
    return StructuredCitations(
        data=document,
        sources=list(context.table.sources),
        citations=citations,
        answers=answers,
        diagnostics=notes,
    )


def _load(data: Any) -> tuple[Any, str | None]:
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            return None, "the document is not UTF-8 text"
    if not isinstance(data, str):
        if isinstance(data, (Mapping, list)):
            return data, None
        raise UsageError(
            f"data must be a dict, a list, or JSON/YAML text, got {type(data).__name__}"
        )
    try:
        return json.loads(data), None
    except ValueError:
        pass
    except RecursionError:
        # Too deep for JSON is too deep for YAML too, and the YAML parser takes seconds to say so.
        return None, "the document is nested too deeply to read"
    try:
        # Optional, and untyped: imported by name so the core needs neither it nor its stubs.
        yaml: Any = importlib.import_module("yaml")
    except ImportError:
        return None, "the document is not JSON (install PyYAML to read YAML)"
    try:
        loaded = yaml.safe_load(data)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None, "the document is neither JSON nor YAML"
    if not isinstance(loaded, (Mapping, list)):
        return None, "the document is not a JSON/YAML object or array"
    return loaded, None


def _detach(document: Any, pointer: str) -> tuple[Any, Any]:
    """The document without the value at ``pointer`` (copied along the way), and that value."""
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]

    def walk(node: Any, depth: int) -> tuple[Any, Any]:
        token = tokens[depth]
        last = depth == len(tokens) - 1
        if isinstance(node, Mapping):
            if token not in node:
                return node, _MISSING
            if last:
                return {k: v for k, v in node.items() if k != token}, node[token]
            child, found = walk(node[token], depth + 1)
            return ({**node, token: child} if found is not _MISSING else node), found
        index = _index(token) if isinstance(node, list) else None
        if isinstance(node, list) and index is not None:
            if index >= len(node):
                return node, _MISSING
            if last:
                return node[:index] + node[index + 1 :], node[index]
            child, found = walk(node[index], depth + 1)
            if found is _MISSING:
                return node, found
            return [*node[:index], child, *node[index + 1 :]], found
        return node, _MISSING

    return walk(document, 0)


def _read_sidecar(
    document: Any,
    sidecar: Any,
    where: str,
    context: Context,
    citations: dict[str, list[str]],
    notes: list[str],
) -> None:
    if not isinstance(sidecar, list):
        notes.append(f"{where}: expected a list of citations, got {type(sidecar).__name__}")
        return
    for n, entry in enumerate(sidecar):
        at = f"{where}/{n}"
        if not isinstance(entry, Mapping):
            notes.append(f"{at}: expected an object with path and sids")
            continue
        path = entry.get("path")
        if not isinstance(path, str) or (path and not path.startswith("/")):
            notes.append(f"{at}: path {shown(str(path))} is not a JSON Pointer")
            continue
        found, value = resolve_pointer(document, path)
        if not found:
            notes.append(f"{at}: path {shown(path)} names nothing in the document")
            continue
        if not isinstance(value, str):
            notes.append(f"{at}: path {shown(path)} names a {_kind(value)}, not a string")
            if context.on_invalid != "keep":
                continue
        ids = _sids(entry.get("sids", entry.get("sources")), at, context.table, notes)
        if ids:
            merged = citations.setdefault(path, [])
            merged.extend(sid for sid in ids if sid not in merged)


def _kind(value: object) -> str:
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list):
        return "list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, (int, float)) else type(value).__name__


def _sids(value: object, at: str, table: SourceTable, notes: list[str]) -> list[str]:
    if value is None:
        notes.append(f"{at}: no sids")
        return []
    items: Sequence[object] = value if isinstance(value, list) else [value]
    if not items:
        notes.append(f"{at}: empty sids")
        return []
    ids: list[str] = []
    for item in items:
        problems: list[str] = []
        if isinstance(item, int) and not isinstance(item, bool):
            found = table.resolve_ranges([(item, item)], problems)
        elif isinstance(item, str) and (number := int_of(item)) is not None:
            found = table.resolve_ranges([(number, number)], problems)
        elif isinstance(item, str) and item in table.by_id:
            found = [item]
        else:
            found = []
            problems.append(f"{shown(str(item))} is not a source number or id")
        notes.extend(f"{at}: {p}" for p in problems)
        for sid in found:
            if sid in ids:
                notes.append(f"{at}: cites {shown(str(item))} twice")
            else:
                ids.append(sid)
    return ids


def _inline(
    node: Any,
    pointer: str,
    depth: int,
    context: Context,
    citations: dict[str, list[str]],
    answers: dict[str, CitedAnswer],
    notes: list[str],
) -> Any:
    """The node with ``[[S:n]]`` markers removed from its strings, recording what they cite."""
    if depth > _MAX_DEPTH:
        notes.append(f"{pointer or '/'}: nested too deeply; inline markers below not read")
        return node
    if isinstance(node, str):
        if "[[" not in node:
            return node
        answer = build_answer(node, context)
        own = answer.diagnostics[len(context.table.notes) :]
        if not answer.citations and not own:
            return node
        cleaned = _without_markers(answer)
        notes.extend(f"{pointer}: {d}" for d in own)
        if cleaned.citations:
            answers[pointer] = cleaned
            merged = citations.setdefault(pointer, [])
            for citation in cleaned.citations:
                merged.extend(sid for sid in citation.source_ids if sid not in merged)
        return cleaned.text
    if isinstance(node, Mapping):
        return {
            k: _inline(
                v,
                f"{pointer}/{escape_pointer(str(k))}",
                depth + 1,
                context,
                citations,
                answers,
                notes,
            )
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [
            _inline(v, f"{pointer}/{n}", depth + 1, context, citations, answers, notes)
            for n, v in enumerate(node)
        ]
    return node


def _without_markers(answer: CitedAnswer) -> CitedAnswer:
    """The answer with its markers taken out of the text, spans kept on the same words."""
    text = answer.text
    spans = sorted({c.marker_span for c in answer.citations if c.marker_span is not None})
    regions = [run_region(text, start, end) for start, end in spans]
    edited = EditedText(text, merge([Edit(r.start, r.end) for r in regions]))
    citations: list[Citation] = []
    for citation in answer.citations:
        start, end = edited.span(citation.start, citation.end)
        citations.append(
            citation.model_copy(
                update={
                    "start": start,
                    "end": end,
                    "text": edited.text[start:end],
                    "marker_span": None,
                }
            )
        )
    return answer.replace(text=edited.text, citations=citations)
