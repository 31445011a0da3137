"""The README's quickstart is real code: run it."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_quickstart_runs(capsys) -> None:  # type: ignore[no-untyped-def]
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    quickstart = next((b for b in blocks if "unicite.extract(response)" in b), None)
    assert quickstart is not None, "the README has no extract() quickstart"
    exec(compile(quickstart, str(README), "exec"), {})  # noqa: S102 - our own README
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "rund 440 000 Einwohner -> stadt-zuerich.txt"
    assert "Sources" in out
    assert out[-1] == "True"


def test_readme_gives_exactly_the_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8")
    setup = text.split("## Set up", 1)[1].split("##", 1)[0]
    commands = re.findall(r"^make \w+", setup, re.MULTILINE)
    assert commands == ["make demo", "make test"]


def test_readme_cite_example_runs(capsys) -> None:  # type: ignore[no-untyped-def]
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    block = next(b for b in blocks if "unicite.cite(" in b)
    exec(compile("import unicite\n" + block, str(README), "exec"), {})  # noqa: S102
    out = capsys.readouterr().out.splitlines()
    # Each printed value is what the README's comment next to it says.
    comments = [
        line.split("#", 1)[1].split("  ", 1)[0].strip()
        for line in block.splitlines()
        if line.startswith("print(") and "#" in line
    ]
    assert out == comments
