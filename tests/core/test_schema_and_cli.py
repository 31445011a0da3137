import json

from typer.testing import CliRunner

import unicite
from unicite._schema import published_schema, schema_text
from unicite.cli import app

runner = CliRunner()


def test_committed_schema_matches_the_model() -> None:
    assert published_schema() == unicite.json_schema(), (
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


def test_cli_schema_prints_the_schema() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.output) == unicite.json_schema()
    assert result.output == schema_text()


def test_cli_version() -> None:
    result = runner.invoke(app, ["version"])
    assert result.exit_code == 0
    assert unicite.__version__ in result.output
