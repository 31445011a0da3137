"""The ``unicite`` command line: extract, render, stats, schema and the offline demo.

Bad input is one clear line on stderr naming the file and the reason, with exit code 2; a
response without the citations ``--require-citations`` asked for exits with 3. No traceback
reaches the user for bad input. The command line is an extra: ``pip install "unicite[cli]"``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, BinaryIO, NoReturn

try:
    import typer
    from rich.console import Console
except ModuleNotFoundError as err:
    raise ModuleNotFoundError(
        'the command line needs typer and rich: pip install "unicite[cli]"',
        name=err.name,
    ) from err

from unicite import __version__
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


def _fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    # The message may quote the input (a provider's error text, a bad key): one line, inert.
    sys.stderr.write(f"unicite: {sanitize_display(message)}\n")
    raise typer.Exit(code)


def _read_input(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as err:
        _fail(f"{path}: cannot read: {err.strerror or err}")


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
        _fail(f"{file}: {err}", EXIT_CITATIONS_MISSING)
    except UniciteError as err:
        _fail(f"{file}: {err}")
    if answer.provider is None and not answer.text and answer.diagnostics:
        _fail(f"{file}: {answer.diagnostics[0]}")
    _emit(answer, fmt, all_sources, hyperlinks)


@app.command()
def render(
    file: Annotated[str, typer.Argument(help="A stored CitedAnswer (JSON); - for stdin.")],
    fmt: FormatOption = "terminal",
    all_sources: AllSourcesOption = False,
    hyperlinks: HyperlinksOption = None,
) -> None:
    """Render a stored CitedAnswer."""
    fmt = _check_format(fmt)
    data = _read_input(file)
    try:
        answer = CitedAnswer.from_json(data)
    except ValueError as err:
        first = str(err).splitlines()
        reason = first[1].strip() if len(first) > 1 else (first[0] if first else "invalid")
        _fail(f"{file}: not a CitedAnswer: {reason}")
    _emit(answer, fmt, all_sources, hyperlinks)


@app.command()
def attribute(
    answer: Annotated[str, typer.Option("--answer", help="The answer as plain text; - for stdin.")],
    sources: Annotated[
        str,
        typer.Option("--sources", help="Sources as JSONL (one source object per line) or JSON."),
    ],
    fmt: FormatOption = "terminal",
    all_sources: AllSourcesOption = False,
    hyperlinks: HyperlinksOption = None,
) -> None:
    """Attribute an answer that cites nothing to its sources (local, no model or key needed)."""
    from unicite.attribution import attribute as attribute_answer
    from unicite.sources import as_source

    fmt = _check_format(fmt)
    text = _read_input(answer).decode("utf-8", "replace")
    raw = _read_input(sources).decode("utf-8", "replace")
    items: list[object] = []
    try:
        stripped = raw.lstrip()
        if stripped.startswith("["):
            loaded = json.loads(raw)
            items = loaded if isinstance(loaded, list) else [loaded]
        else:
            # JSON Lines end at LF (or CRLF): splitlines() would also cut at U+2028 in a string.
            items = [json.loads(line) for line in raw.split("\n") if line.strip()]
        parsed = [as_source(item) for item in items]  # type: ignore[arg-type]
    except (ValueError, UniciteError) as err:
        _fail(f"{sources}: not a list of sources: {str(err).splitlines()[0]}")
    _emit(attribute_answer(text, parsed), fmt, all_sources, hyperlinks)


@app.command()
def stats(
    logs: Annotated[list[str], typer.Argument(help="JSONL logs, one provider response per line.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
    top: Annotated[int, typer.Option(help="How many domains and TLDs to list.")] = 10,
) -> None:
    """Citation statistics over JSONL logs of provider responses (constant memory)."""
    from unicite._stats import LogStats, iter_log_lines

    summary = LogStats()
    console = Console(stderr=True)
    handles: list[tuple[str, BinaryIO, int | None]] = []
    for name in logs:
        if name == "-":
            handles.append((name, sys.stdin.buffer, None))
            continue
        try:
            handles.append((name, Path(name).open("rb"), Path(name).stat().st_size))  # noqa: SIM115
        except OSError as err:
            _fail(f"{name}: cannot read: {err.strerror or err}")
    show_progress = console.is_terminal and not as_json
    for name, handle, size in handles:
        with handle:
            if show_progress:
                from rich.progress import Progress

                with Progress(console=console, transient=True) as progress:
                    task = progress.add_task(name, total=size)

                    def advance(n: int, task: Any = task, progress: Any = progress) -> None:
                        progress.advance(task, n)

                    for line in iter_log_lines(handle, advance):
                        summary.add_line(line)
            else:
                for line in iter_log_lines(handle):
                    summary.add_line(line)
    result = summary.as_dict(top)
    if as_json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
        return
    _print_stats(result)


def _print_stats(result: dict[str, Any]) -> None:
    from rich.table import Table

    console = Console()
    table = Table(title="unicite stats", show_header=False)
    for key in (
        "responses",
        "unreadable",
        "with_citations",
        "without_citations",
        "with_diagnostics",
        "citations",
        "sources",
        "sources_per_answer",
        "redirect_share",
    ):
        table.add_row(key.replace("_", " "), str(result[key]))
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
