"""The ``unicite`` command line: extract, render, stats, schema and the offline demo.

Bad input is one clear line on stderr naming the file and the reason, with exit code 2; a
response without the citations ``--require-citations`` asked for exits with 3. No traceback
reaches the user for bad input. An answer that comes out empty says why on stderr (a prompt
the provider blocked, say) when the response tells. The command line is an extra:
``pip install "unicite[cli]"``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

try:
    import typer
    from rich.console import Console
except ModuleNotFoundError as err:
    raise ModuleNotFoundError(
        'the command line needs typer and rich: pip install "unicite[cli]"',
        name=err.name,
    ) from err

from unicite import __version__, detect_provider
from unicite._render import render as render_answer
from unicite._schema import schema_text
from unicite._text import sanitize_display
from unicite.exceptions import GroundingRequiredError, UniciteError
from unicite.model import CitedAnswer
from unicite.providers import extract as extract_response

__all__ = ["app", "main"]

EXIT_BAD_INPUT = 2
EXIT_CITATIONS_MISSING = 3

app = typer.Typer(
    name="unicite",
    help="One citation layer for LLM applications.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

FormatOption = Annotated[
    str,
    typer.Option("--format", "-f", help="terminal, markdown, html, json or text."),
]
AllSourcesOption = Annotated[
    bool, typer.Option("--all-sources", help="List every source, not only the cited ones.")
]
HyperlinksOption = Annotated[
    bool | None,
    typer.Option("--hyperlinks/--no-hyperlinks", help="Force terminal links on or off."),
]

_FORMATS = ("terminal", "markdown", "html", "json", "text")


def _show_version(value: bool) -> None:
    if value:
        sys.stdout.write(f"unicite {__version__}\n")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_show_version,
            is_eager=True,
            help="Print the installed version and exit.",
        ),
    ] = False,
) -> None:
    """One citation layer for LLM applications."""


def _note(message: str) -> None:
    # The message may quote the input (a provider's error text, a bad key): one line, inert.
    sys.stderr.write(f"unicite: {sanitize_display(message)}\n")


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    _note(message)
    raise typer.Exit(code)


def _read_input(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as err:
        _fail(f"{path}: cannot read: {err.strerror or err}")
    except ValueError as err:  # a NUL in the name
        _fail(f"{path}: cannot read: {err}")


def _check_format(fmt: str) -> str:
    if fmt not in _FORMATS:
        _fail(f"unknown format {fmt!r}; expected one of {', '.join(_FORMATS)}")
    return fmt


def _emit(answer: CitedAnswer, fmt: str, all_sources: bool, hyperlinks: bool | None) -> None:
    output = render_answer(
        answer,
        fmt,  # type: ignore[arg-type]
        hyperlinks=hyperlinks,
        sources="all" if all_sources else "cited",
    )
    sys.stdout.write(output if output.endswith("\n") else output + "\n")


@app.command()
def extract(
    file: Annotated[
        str,
        typer.Argument(
            help="A provider response (JSON) or a stream log (SSE or JSON Lines); - for stdin."
        ),
    ],
    fmt: FormatOption = "terminal",
    provider: Annotated[
        str | None, typer.Option("--provider", "-p", help="Skip detection.")
    ] = None,
    all_sources: AllSourcesOption = False,
    hyperlinks: HyperlinksOption = None,
    require_citations: Annotated[
        bool,
        typer.Option("--require-citations", help="Exit with 3 when the answer has no citations."),
    ] = False,
) -> None:
    """Read a provider response, or a logged stream of one, and render its citations.

    The file is read as `unicite.extract` reads text: one JSON response, an SSE log, or a JSON
    Lines log of stream events (one event object per line).
    """
    fmt = _check_format(fmt)
    data = _read_input(file)
    try:
        answer = extract_response(
            data, provider, require="citations" if require_citations else None
        )
    except GroundingRequiredError as err:
        why = _why_empty(_extract_quietly(data, provider))
        _fail(f"{file}: {err}" + (f"; {why}" if why else ""), EXIT_CITATIONS_MISSING)
    except UniciteError as err:
        _fail(f"{file}: {err}")
    if _is_empty(answer):
        if answer.provider is None and answer.diagnostics:
            kind = _json_kind(data)
            if kind is not None:
                _fail(f"{file}: expected a JSON object (a provider response), got {kind}")
            _fail(f"{file}: {answer.diagnostics[0]}")
        if provider is not None:
            _check_forced(file, data, provider, answer)
        _explain_empty(file, answer)
    _emit(answer, fmt, all_sources, hyperlinks)


def _is_empty(answer: CitedAnswer) -> bool:
    """Whether nothing was read: no text, no citations, no sources."""
    return not answer.text and not answer.citations and not answer.sources


def _extract_quietly(data: bytes, provider: str | None = None) -> CitedAnswer | None:
    """`extract` on ``data`` with no requirement, or None when it raises."""
    try:
        return extract_response(data, provider)
    except UniciteError:
        return None


def _parse_json(data: bytes) -> tuple[bool, Any]:
    """``(True, value)`` when ``data`` is one JSON document, else ``(False, None)``."""
    try:
        return True, json.loads(data)
    except (ValueError, RecursionError):
        return False, None


def _describe(value: object) -> str:
    """What a parsed JSON value is, for a message: ``a JSON array of 3 items``."""
    if isinstance(value, dict):
        return "a JSON object"
    if isinstance(value, list):
        if not value:
            return "an empty JSON array"
        return f"a JSON array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, str):
        return "a JSON string"
    if isinstance(value, bool):
        return "a JSON boolean"
    if isinstance(value, (int, float)):
        return "a JSON number"
    return "JSON null"


def _json_kind(data: bytes) -> str | None:
    """What ``data`` is when it is one JSON document but not an object, else None.

    An array of objects that are provider responses says so: ``extract`` reads one response,
    ``stats`` reads many.
    """
    ok, value = _parse_json(data)
    if not ok or isinstance(value, dict):
        return None
    kind = _describe(value)
    if isinstance(value, list):
        objects = [item for item in value if isinstance(item, dict)]
        if objects and detect_provider(objects[0]) is not None:
            kind += (
                ", holding provider responses (extract reads one; `unicite stats` reads a "
                "JSON Lines log of many)"
            )
        elif objects:
            kind += ", none of them a stream event"
    return kind


def _guess_provider(data: bytes) -> tuple[str | None, str | None]:
    """The provider ``data`` looks like, or None and what detection made of it.

    A response is recognised by `unicite.detect_provider`; a stream log (SSE or JSON Lines),
    which that does not read, by the provider `extract` detects in it.
    """
    ok, value = _parse_json(data)
    if ok and isinstance(value, dict):
        name = detect_provider(value)
        if name is not None:
            return name, None
    auto = _extract_quietly(data)
    if auto is None:
        return None, None
    if auto.provider is not None:
        return auto.provider, None
    if ok and not isinstance(value, dict):
        return None, f"it is {_json_kind(data) or _describe(value)}"
    return None, auto.diagnostics[0] if auto.diagnostics else None


def _a(name: str) -> str:
    """``a gemini``, ``an openai``: a provider name with its article."""
    return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"


def _check_forced(file: str, data: bytes, provider: str, answer: CitedAnswer) -> None:
    """Fail when a forced provider read nothing from data that is not that provider's."""
    forced = answer.provider or provider
    looks, why = _guess_provider(data)
    if looks == forced:
        return
    read = f"nothing could be read as {_a(forced)} response (--provider {provider})"
    if looks is not None:
        _fail(
            f"{file}: {read}; the data looks like {_a(looks)} response: "
            f"use --provider {looks}, or leave --provider out"
        )
    _fail(f"{file}: {read}, and no provider recognises the data" + (f": {why}" if why else ""))


_DONE = frozenset({"STOP", "stop", "end_turn", "completed", "COMPLETE", "FINISH_REASON_STOP"})
"""Finish reasons of an answer that ended normally (an empty one then needs no comment)."""
_QUIET_PROBABILITIES = frozenset({"NEGLIGIBLE", "LOW", "HARM_PROBABILITY_UNSPECIFIED"})


def _ratings(value: object) -> str | None:
    """The safety ratings that blocked something, as text, or None when none stands out.

    Those flagged ``blocked`` are named; when none is, those above LOW probability.
    """
    rows = [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []
    flagged = [row for row in rows if row.get("blocked") is True] or [
        row
        for row in rows
        if row.get("probability") is not None and row.get("probability") not in _QUIET_PROBABILITIES
    ]
    parts = []
    for row in flagged:
        details = [
            f"{key} {row[key]}" for key in ("probability", "severity") if row.get(key) is not None
        ]
        if row.get("blocked") is True:
            details.append("blocked")
        category = row.get("category") or "unknown category"
        parts.append(f"{category} ({', '.join(details)})" if details else str(category))
    return "; ".join(parts) or None


def _field(data: object, camel: str, snake: str) -> Any:
    """A field of a provider object under its REST (camelCase) or SDK (snake_case) name."""
    if not isinstance(data, dict):
        return None
    return data.get(camel, data.get(snake))


def _why_empty(answer: CitedAnswer | None) -> str | None:
    """Why an answer has no text, when its response says: a blocked prompt, a safety stop."""
    if answer is None:
        return None
    who = answer.provider or "the provider"
    feedback = answer.extras.get("prompt_feedback")
    reason = _field(feedback, "blockReason", "block_reason")
    if reason:
        message = _field(feedback, "blockReasonMessage", "block_reason_message")
        why = f"{who} blocked the prompt (block reason {reason}" + (
            f": {message})" if message else ")"
        )
        ratings = _ratings(_field(feedback, "safetyRatings", "safety_ratings"))
        return why + (f"; triggered by {ratings}" if ratings else "")
    if answer.text:
        return None
    finish = answer.extras.get("finish_reason", answer.extras.get("stop_reason"))
    if not isinstance(finish, str) or not finish or finish in _DONE:
        return None
    why = f"the answer is empty: {who} stopped it (finish reason {finish})"
    ratings = _ratings(answer.extras.get("safety_ratings"))
    return why + (f"; triggered by {ratings}" if ratings else "")


def _explain_empty(file: str, answer: CitedAnswer) -> None:
    """Say on stderr why an answer is empty, when its response tells."""
    why = _why_empty(answer)
    if why:
        _note(f"{file}: {why}")


@app.command()
def render(
    file: Annotated[str, typer.Argument(help="A stored CitedAnswer (JSON); - for stdin.")],
    fmt: FormatOption = "terminal",
    all_sources: AllSourcesOption = False,
    hyperlinks: HyperlinksOption = None,
) -> None:
    """Render a stored CitedAnswer.

    Given a provider response (or a stream log) instead, it renders what `unicite extract`
    would, and says so on stderr.
    """
    fmt = _check_format(fmt)
    data = _read_input(file)
    try:
        answer = CitedAnswer.from_json(data)
    except ValueError as err:
        answer = _render_response(file, data, err)
    _emit(answer, fmt, all_sources, hyperlinks)


def _render_response(file: str, data: bytes, err: ValueError) -> CitedAnswer:
    """The answer of a provider response handed to ``render``, else fail with why not."""
    looks, why = _guess_provider(data)
    if looks is not None:
        answer = _extract_quietly(data)
        if answer is not None and answer.provider is not None:
            _note(
                f"{file}: {_a(answer.provider)} response, not a stored CitedAnswer: "
                f"rendered as `unicite extract {file}` renders it"
            )
            if _is_empty(answer):
                _explain_empty(file, answer)
            return answer
    ok, value = _parse_json(data)
    if ok and not isinstance(value, dict):
        _fail(f"{file}: expected a JSON object (a CitedAnswer), got {_describe(value)}")
    if why and isinstance(value, dict) and ("error" in value or value.get("type") == "error"):
        _fail(f"{file}: not a CitedAnswer: {why}")  # an error body: what the provider said
    first = str(err).splitlines()
    reason = first[1].strip() if len(first) > 1 else (first[0] if first else "invalid")
    _fail(f"{file}: not a CitedAnswer: {reason}")


@app.command()
def attribute(
    *,
    answer: Annotated[
        str | None,
        typer.Option(
            "--answer",
            help="The answer text itself; - reads it from stdin. The path of an existing file "
            "reads that file, as earlier versions did (prefer --answer-file).",
        ),
    ] = None,
    answer_file: Annotated[
        str | None,
        typer.Option("--answer-file", help="A file holding the answer as plain text; - for stdin."),
    ] = None,
    sources: Annotated[
        str,
        typer.Option(
            "--sources",
            help="A file of sources: JSON Lines (one source object per line) or JSON (an array "
            "of source objects, or one); - for stdin.",
        ),
    ],
    fmt: FormatOption = "terminal",
    all_sources: AllSourcesOption = False,
    hyperlinks: HyperlinksOption = None,
    all_supporting: Annotated[
        bool,
        typer.Option(
            "--all-supporting",
            help="Cite every source that supports a claim well enough, not only the strongest "
            "and those as strong.",
        ),
    ] = False,
) -> None:
    """Attribute an answer that cites nothing to its sources (local, no model or key needed).

    Give the answer as text with --answer "...", or as a file with --answer-file.
    """
    from unicite.attribution import attribute as attribute_answer
    from unicite.sources import as_source

    fmt = _check_format(fmt)
    text = _answer_text(answer, answer_file)
    raw = _read_input(sources).decode("utf-8", "replace")
    items = _source_items(sources, raw)
    parsed = []
    for number, item in enumerate(items, 1):
        try:
            parsed.append(as_source(item))
        except UniciteError as err:
            reason = str(err).splitlines()[0]
            _fail(f"{sources}: not a list of sources: item {number}: {reason}")
    _emit(
        attribute_answer(text, parsed, all_supporting=all_supporting), fmt, all_sources, hyperlinks
    )


_PATH_LIKE = re.compile(r"\S*[/\\]\S*|\S+\.[A-Za-z][A-Za-z0-9]{0,7}")
"""A single token with a path separator or a file extension: meant as a file, not as text."""


def _answer_text(answer: str | None, answer_file: str | None) -> str:
    """The answer ``attribute`` reads: ``--answer`` text (or, as before, a file), or a file.

    ``--answer`` is text, but ``-`` reads stdin and the path of an existing file reads that
    file, as ``--answer`` did before ``--answer-file`` existed; a single token that can only be
    meant as a path (a separator, a file extension) but names no file is an error.
    """
    if answer is not None and answer_file is not None:
        _fail("give the answer once: --answer TEXT, or --answer-file FILE (- for stdin)")
    if answer_file is not None:
        return _read_input(answer_file).decode("utf-8", "replace")
    if answer is None:
        _fail("missing the answer: --answer TEXT, or --answer-file FILE (- for stdin)")
    if answer == "-" or _is_file(answer):
        return _read_input(answer).decode("utf-8", "replace")
    if _PATH_LIKE.fullmatch(answer):
        _fail(
            f"{answer}: cannot read: no such file (to attribute this text, "
            "pipe it in with --answer-file -)"
        )
    return answer


def _is_file(value: str) -> bool:
    """Whether ``value`` names an existing file (text too long or odd for a path does not)."""
    try:
        return Path(value).is_file()
    except (OSError, ValueError):
        return False


def _source_items(name: str, raw: str) -> list[dict[str, Any]]:
    """The source objects of ``--sources``, each a JSON object.

    The file is one JSON document (an array of sources, or one source) or JSON Lines.
    """
    ok, value = _parse_json(raw.encode("utf-8"))
    if ok:
        if isinstance(value, dict):
            return [value]
        if not isinstance(value, list):
            _fail(
                f"{name}: not a list of sources: expected a JSON array of source objects or "
                f"JSON Lines of them, got {_describe(value)}"
            )
        items: list[object] = value
    else:
        items = []
        # JSON Lines end at LF (or CRLF): splitlines() would also cut at U+2028 in a string.
        for number, line in enumerate(raw.split("\n"), 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except (ValueError, RecursionError) as err:
                reason = str(err).splitlines()[0] if str(err) else type(err).__name__
                _fail(f"{name}: not a list of sources: line {number}: {reason}")
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            _fail(
                f"{name}: not a list of sources: item {number} is {_describe(item)}, "
                "expected a JSON object (a source)"
            )
    return items  # type: ignore[return-value]


@app.command()
def stats(
    logs: Annotated[
        list[str],
        typer.Argument(
            help="Logs of provider responses, one per line: JSONL files (plain, .gz, .zst), "
            "directories, globs, Parquet files with a JSON column; - for stdin."
        ),
    ],
    engine: Annotated[str, typer.Option(help="local (a process pool), ray or spark.")] = "local",
    workers: Annotated[
        int | None, typer.Option(min=1, help="Processes or parallel tasks (all cores).")
    ] = None,
    by: Annotated[str | None, typer.Option(help="Group by some of provider,model,day.")] = None,
    out: Annotated[
        str | None,
        typer.Option(help="Also write the aggregates to FILE.json, .csv or .parquet."),
    ] = None,
    plot: Annotated[
        str | None, typer.Option(help="Draw top domains and TLDs per provider to FILE.png.")
    ] = None,
    column: Annotated[str | None, typer.Option(help="The JSON column of Parquet inputs.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    top: Annotated[int, typer.Option(min=1, help="How many domains and TLDs to list.")] = 10,
    quiet: Annotated[
        bool,
        typer.Option(
            "--quiet", "-q", help="No progress bar (there is none when stderr is no terminal)."
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", help="Let Ray and Spark print their own logs and progress bars."),
    ] = False,
) -> None:
    """Citation statistics over logs of provider responses, in constant memory.

    Counts citations, sources, registrable domains and TLDs, redirects and grounded answers
    without citations; a line that cannot be read is counted and named, never fatal.
    """
    from unicite._stats import check_out, describe_problems, parse_by, run_stats, write_out

    try:
        keys = parse_by(by)
        check_out(out)
        report = run_stats(
            logs,
            engine=engine,
            workers=workers,
            by=keys,
            column=column,
            plot=plot,
            progress=not quiet,
            verbose=verbose,
        )
        if out is not None:
            write_out(report.summary, out, top)
    except UniciteError as err:
        _fail(str(err))
    except OSError as err:
        _fail(f"{getattr(err, 'filename', None) or 'output'}: {err.strerror or err}")
    for note in describe_problems(report):
        _note(note)
    result = report.summary.as_dict(top)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    _print_stats(result)


def _print_stats(result: dict[str, Any]) -> None:
    from rich.table import Table

    from unicite._stats import summary_rows

    console = Console()
    table = Table(title="unicite stats", show_header=False)
    for label, value in summary_rows(result):
        table.add_row(label, value)
    console.print(table)
    for title, key, label in (
        ("Top domains", "top_domains", "domain"),
        ("Top TLDs", "top_tlds", "tld"),
    ):
        rows: list[dict[str, Any]] = result[key]
        if rows:
            listing = Table(title=title)
            listing.add_column(label)
            listing.add_column("count", justify="right")
            for row in rows:
                listing.add_row(str(row[label]), str(row["count"]))
            console.print(listing)
    groups: list[dict[str, Any]] = result.get("groups", [])
    if groups:
        by: list[str] = result["by"]
        listing = Table(title="By " + ", ".join(by))
        for key in by:
            listing.add_column(key)
        for name in ("responses", "citations", "sources", "grounded w/o citations", "redirects"):
            listing.add_column(name, justify="right")
        listing.add_column("top domain")
        for group in groups:
            top_domain = group["top_domains"][0]["domain"] if group["top_domains"] else ""
            listing.add_row(
                *(str(group[key]) if group[key] is not None else "—" for key in by),
                str(group["responses"]),
                str(group["citations"]),
                str(group["sources"]),
                str(group["grounded_without_citations"]),
                f"{group['redirect_share']:.1%}",
                top_domain,
            )
        console.print(listing)


@app.command()
def schema() -> None:
    """Print the JSON Schema of a CitedAnswer."""
    sys.stdout.write(schema_text())


@app.command()
def version() -> None:
    """Print the installed version."""
    sys.stdout.write(f"unicite {__version__}\n")


@app.command()
def demo(
    hyperlinks: HyperlinksOption = None,
) -> None:
    """Show citations from every provider, offline, on bundled responses."""
    from unicite._demo import run_demo

    run_demo(hyperlinks=hyperlinks)


def main() -> None:
    """Entry point of the ``unicite`` console script."""
    app()
