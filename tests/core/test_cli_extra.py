"""Without the ``cli`` extra the core works and the ``unicite`` command says how to get it."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

HINT = 'unicite: the command line needs typer and rich: pip install "unicite[cli]"\n'

# Makes typer and rich unimportable, as they are where the extra is not installed.
BLOCK_CLI = """
import sys

class BlockCli:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"typer", "rich"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, BlockCli())
"""


def run_blocked(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK_CLI + code], capture_output=True, text=True, check=False
    )


def test_console_script_prints_one_line_and_exits_1() -> None:
    (script,) = entry_points(group="console_scripts", name="unicite")
    module, _, function = script.value.partition(":")
    proc = run_blocked(
        f"sys.argv = ['unicite', 'demo']\nfrom {module} import {function}\n{function}()"
    )
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, HINT, "")


def test_python_m_unicite_prints_one_line_and_exits_1() -> None:
    proc = run_blocked("import runpy\nrunpy.run_module('unicite', run_name='__main__')")
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, HINT, "")


def test_importing_the_cli_names_the_extra() -> None:
    proc = run_blocked("import unicite.cli")
    assert proc.returncode == 1
    assert proc.stderr.strip().endswith(
        'ModuleNotFoundError: the command line needs typer and rich: pip install "unicite[cli]"'
    )


def test_the_core_needs_neither_typer_nor_rich() -> None:
    proc = run_blocked(
        "import unicite\n"
        "answer = unicite.CitedAnswer(text='See `<b>` [1].', sources=[{'id': 'a'}])\n"
        "for format in ('terminal', 'text', 'markdown', 'html', 'json'):\n"
        "    unicite.render(answer, format)\n"
        "print(unicite.render(answer, 'markdown'))"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("See `<b>` [1].")


@pytest.mark.skipif(importlib.util.find_spec("typer") is not None, reason="the extra is installed")
def test_installed_script_without_the_extra() -> None:
    script = shutil.which("unicite", path=str(Path(sys.executable).parent))
    assert script is not None
    proc = subprocess.run(
        [script, "extract", "-"], input="{}", capture_output=True, text=True, check=False
    )
    assert (proc.returncode, proc.stderr, proc.stdout) == (1, HINT, "")
