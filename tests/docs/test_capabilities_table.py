"""The docs' capability table is `unicite.providers.FAMILIES`, and the docs name every reader."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from unicite.providers import BUILTIN_PROVIDERS, FAMILIES

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "capabilities_table.py"


def test_the_table_on_the_providers_page_is_current() -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_table_has_a_row_per_family() -> None:
    page = (ROOT / "docs" / "guides" / "providers.md").read_text(encoding="utf-8")
    table = page.split("<!-- capabilities:start -->")[1].split("<!-- capabilities:end -->")[0]
    rows = [line for line in table.strip().splitlines()[2:] if line.startswith("| ")]
    assert len(rows) == len(FAMILIES)
    notes = [re.sub(r"\\(.)", r"\1", re.split(r"(?<!\\)\|", row)[-2].strip()) for row in rows]
    assert notes == [family.note for family in FAMILIES]


def test_every_builtin_reader_has_a_section_on_the_providers_page() -> None:
    page = (ROOT / "docs" / "guides" / "providers.md").read_text(encoding="utf-8")
    headings = " ".join(re.findall(r"^## (.+)$", page, re.MULTILINE)).lower()
    names = {p.name for p in BUILTIN_PROVIDERS}
    missing = sorted(name for name in names if name not in headings)
    assert not missing, f"no section on docs/guides/providers.md for {missing}"


def test_the_readme_and_the_guide_name_every_builtin_reader() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    page = (ROOT / "docs" / "guides" / "providers.md").read_text(encoding="utf-8")
    said = readme.split("`unicite.extract()` reads", 1)[1].split("\n\n", 1)[0].lower()
    listed = page.split("# provider skips detection:", 1)[1].split("provider=None", 1)[0]
    for provider in BUILTIN_PROVIDERS:
        assert provider.name in said, provider.name
        assert f'"{provider.name}"' in listed, provider.name
