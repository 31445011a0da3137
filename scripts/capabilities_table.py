"""Write the capability table of the docs from `unicite.providers.FAMILIES`, or check it.

    python scripts/capabilities_table.py          # rewrite the table in docs/guides/providers.md
    python scripts/capabilities_table.py --check  # exit 1 when the page's table is stale

The table sits between ``<!-- capabilities:start -->`` and ``<!-- capabilities:end -->``: one
row per family, in the order `capabilities()` tries them (the first matching row wins).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from unicite.providers import FAMILIES

PAGE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "providers.md"
START, END = "<!-- capabilities:start -->", "<!-- capabilities:end -->"

NAMES = {
    "anthropic": "Anthropic",
    "azure": "Azure OpenAI On Your Data",
    "bedrock": "AWS Bedrock",
    "cohere": "Cohere",
    "gemini": "Gemini / Vertex AI",
    "mistral": "Mistral",
    "openai": "OpenAI",
    "perplexity": "Perplexity",
    "xai": "xAI",
}
"""Provider names as the table shows them (a provider missing here shows its own name)."""


def _cell(text: str) -> str:
    """Table cell text: pipes and brackets escaped (a note's ``[[n]](url)`` is not a link)."""
    for char in "\\|[]":
        text = text.replace(char, "\\" + char)
    return text.replace("\n", " ")


def _models(pattern: str, later: bool) -> str:
    if not pattern:
        return "any other model" if later else "any model"
    return "matching `{}`".format(pattern.replace("|", "\\|"))


def render() -> str:
    """The table, as Markdown lines between the two markers."""
    lines = [
        "| provider | models | cites documents you give it | grounds in a search | "
        "citations while streaming | how |",
        "| --- | --- | :---: | :---: | :---: | --- |",
    ]
    seen: set[str] = set()
    for family in FAMILIES:
        later = family.provider in seen
        seen.add(family.provider)
        marks = [
            "yes" if value else "no"
            for value in (
                family.native_citations,
                family.grounding,
                family.streaming_citations,
            )
        ]
        name = NAMES.get(family.provider, family.provider)
        lines.append(
            f"| {name} | {_models(family.pattern, later)} | {' | '.join(marks)} | "
            f"{_cell(family.note)} |"
        )
    return "\n".join(lines)


def _replace(page: str, table: str) -> str:
    head, found, rest = page.partition(START)
    if not found or END not in rest:
        raise SystemExit(f"{PAGE} has no {START} ... {END} block")
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{table}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the table is stale")
    args = parser.parse_args(argv)
    page = PAGE.read_text(encoding="utf-8")
    updated = _replace(page, render())
    if args.check:
        if updated != page:
            print(f"{PAGE}: the capability table is stale; run {sys.argv[0]}")
            return 1
        return 0
    PAGE.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
