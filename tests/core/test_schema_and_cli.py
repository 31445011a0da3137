import json
from collections.abc import Callable
from importlib import resources
from typing import Any

import pytest

import unicite

SCHEMA_FILE = resources.files("unicite").joinpath("cited_answer.schema.json")
"""The schema committed with the package (``make schema`` writes it)."""


@pytest.fixture
def invoke() -> Callable[..., Any]:
    pytest.importorskip("typer", reason="the cli extra is not installed")
    from typer.testing import CliRunner

    from unicite.cli import app

    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args))


def test_committed_schema_matches_the_model() -> None:
    assert json.loads(SCHEMA_FILE.read_text("utf-8")) == unicite.json_schema(), (
        "the committed schema is stale: run `make schema`"
    )


def test_schema_describes_fields_from_docstrings() -> None:
    schema = unicite.json_schema()
    citation = schema["$defs"]["Citation"]["properties"]
    assert "str index" in citation["start"]["description"]
    assert set(schema["$defs"]) >= {
        "Source",
        "Citation",
        "CharLocation",
        "PageLocation",
        "BlockLocation",
        "SearchResultLocation",
        "UrlLocation",
    }


def test_cli_schema_prints_the_schema(invoke: Any) -> None:
    result = invoke("schema")
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert schema == unicite.json_schema()
    # Spelt as the committed file is, so `make schema` rewrites it byte for byte.
    assert result.output == json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_cli_version(invoke: Any) -> None:
    result = invoke("version")
    assert result.exit_code == 0
    assert unicite.__version__ in result.output
