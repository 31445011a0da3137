"""The ``unicite`` command line."""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from unicite import __version__
from unicite._schema import schema_text

__all__ = ["app", "main"]

app = typer.Typer(
    name="unicite",
    help="One citation layer for LLM applications.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.command()
def schema() -> None:
    """Print the JSON Schema of a CitedAnswer."""
    sys.stdout.write(schema_text())


@app.command()
def version() -> None:
    """Print the installed version."""
    sys.stdout.write(f"unicite {__version__}\n")


@app.command()
def demo() -> None:
    """Show citations end to end, offline, on bundled examples."""
    from unicite._demo import run_demo

    run_demo(Console())


def main() -> None:
    """Entry point of the ``unicite`` console script."""
    app()
