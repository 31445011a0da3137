"""The three distributions are released in lockstep, and each is ready for PyPI.

Reads the pyproject files as the build backend does; the built archives themselves are checked
by ``.ci/dist.sh``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = {
    "unicite": ROOT / "shared",
    "unicite-langchain": ROOT / "integrations" / "langchain",
    "unicite-llamaindex": ROOT / "integrations" / "llamaindex",
    "unicite-pydantic-ai": ROOT / "integrations" / "pydantic_ai",
    "unicite-haystack": ROOT / "integrations" / "haystack",
}
MODULES = {
    "unicite": "unicite",
    "unicite-langchain": "unicite_langchain",
    "unicite-llamaindex": "unicite_llamaindex",
    "unicite-pydantic-ai": "unicite_pydantic_ai",
    "unicite-haystack": "unicite_haystack",
}
ADAPTERS = ("unicite-langchain", "unicite-llamaindex", "unicite-pydantic-ai", "unicite-haystack")
URLS = ("Homepage", "Documentation", "Repository", "Issues", "Changelog")
PYTHONS = ("3.10", "3.11", "3.12", "3.13")


def pyproject(name: str) -> dict[str, Any]:
    with (FOLDERS[name] / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


PROJECTS = {name: pyproject(name)["project"] for name in FOLDERS}
VERSION = PROJECTS["unicite"]["version"]


def pins(requirements: list[str], name: str) -> list[str]:
    """The version pins of ``name`` among `requirements` (``"name==X"`` gives ``"==X"``)."""
    pattern = re.compile(rf"{re.escape(name)}\s*(\[[^\]]*\])?\s*(?P<spec>[^;]*)")
    found = []
    for requirement in requirements:
        match = pattern.fullmatch(requirement.split(";")[0].strip())
        if match:
            found.append(match.group("spec").replace(" ", ""))
    return found


def test_the_three_versions_are_one() -> None:
    assert {name: project["version"] for name, project in PROJECTS.items()} == dict.fromkeys(
        FOLDERS, VERSION
    )


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_each_adapter_pins_the_core_of_its_own_version(adapter: str) -> None:
    assert pins(PROJECTS[adapter]["dependencies"], "unicite") == [f"=={VERSION}"]


@pytest.mark.parametrize(
    ("extra", "adapters"),
    [
        ("langchain", ["unicite-langchain"]),
        ("llamaindex", ["unicite-llamaindex"]),
        ("all", ["unicite-langchain", "unicite-llamaindex"]),
    ],
)
def test_the_forward_extras_pin_the_adapters_of_the_same_version(
    extra: str, adapters: list[str]
) -> None:
    requirements = PROJECTS["unicite"]["optional-dependencies"][extra]
    for adapter in adapters:
        assert pins(requirements, adapter) == [f"=={VERSION}"], (extra, adapter)


def test_the_all_extra_names_extras_that_exist() -> None:
    extras = PROJECTS["unicite"]["optional-dependencies"]
    (core,) = [r for r in extras["all"] if r.startswith("unicite[")]
    named = set(core[len("unicite[") : core.index("]")].split(","))
    assert named <= set(extras) - {"all"}


@pytest.mark.parametrize("name", list(FOLDERS))
def test_readme_license_urls_and_classifiers(name: str) -> None:
    project = PROJECTS[name]
    folder = FOLDERS[name]
    assert project["readme"] == "README.md"
    assert (folder / "README.md").read_text("utf-8").startswith(f"# {name}\n")
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert project["authors"] == [{"name": "unicite developers"}]
    assert project["keywords"]
    assert project["description"]
    assert project["requires-python"] == f">={PYTHONS[0]}"
    urls = project["urls"]
    assert sorted(urls) == sorted(URLS)
    assert all(url.startswith("https://") for url in urls.values())
    classifiers = project["classifiers"]
    assert len(set(classifiers)) == len(classifiers)
    assert "Development Status :: 3 - Alpha" in classifiers
    assert "Typing :: Typed" in classifiers
    for version in PYTHONS:
        assert f"Programming Language :: Python :: {version}" in classifiers
    # PEP 639: with a license expression, PyPI rejects License classifiers.
    assert not [c for c in classifiers if c.startswith("License ::")]


@pytest.mark.parametrize("name", list(FOLDERS))
def test_each_distribution_ships_the_one_license(name: str) -> None:
    # Each distribution is built from its own folder, so each holds a copy: never a different one.
    assert (FOLDERS[name] / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()


def test_the_license_is_mit() -> None:
    text = (ROOT / "LICENSE").read_text("utf-8")
    assert text.startswith("MIT License\n\nCopyright (c) 2026 unicite developers\n")


def test_the_build_backends_are_the_same() -> None:
    systems = {name: pyproject(name)["build-system"] for name in FOLDERS}
    assert len({repr(system) for system in systems.values()}) == 1, systems


@pytest.mark.parametrize("name", list(FOLDERS))
def test_the_classifiers_are_known(name: str) -> None:
    trove = pytest.importorskip("trove_classifiers")
    unknown = set(PROJECTS[name]["classifiers"]) - trove.classifiers
    assert not unknown
    assert not set(PROJECTS[name]["classifiers"]) & set(trove.deprecated_classifiers)


@pytest.mark.parametrize("name", list(FOLDERS))
def test_the_installed_version_is_the_pyproject_version(name: str) -> None:
    try:
        module = importlib.import_module(MODULES[name])
    except ImportError:  # the core-only environment has no adapter
        pytest.skip(f"{name} is not installed")
    assert module.__version__ == importlib.metadata.version(name) == VERSION
