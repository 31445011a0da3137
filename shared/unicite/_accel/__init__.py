"""The optional compiled accelerator: the hot pure-Python modules, compiled by Cython.

The build (``shared/hatch_build.py``) compiles the segmenter (``unicite._segment``), the
marker scanner (``unicite._marker_syntax``, ``unicite._glued``) and the URL keys
(``unicite._urls``) from their own ``.py`` files into extension modules in this folder, with a
manifest recording the SHA-256 of each source. `install`, run when ``unicite/__init__.py``
imports this module (before any of those), puts a finder in front of ``sys.meta_path`` that
serves each module from its extension, unless:

- ``UNICITE_PURE_PYTHON=1`` is set: every module is the ``.py`` file;
- there is no build for this interpreter (a pure wheel, a failed build): nothing is installed,
  and the check costs one missing file;
- the module's source changed since the build: that module is the ``.py`` file, with one
  warning on the ``unicite`` logger (an info message in a source checkout, where sources change
  between two ``uv sync``, which rebuilds them).

A compiled module and its ``.py`` file give the same results (the differential tests check it).
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

__all__ = ["MODULES", "accelerated", "install"]

# The modules the accelerator may compile.
MODULES = ("unicite._glued", "unicite._marker_syntax", "unicite._segment", "unicite._urls")

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE)


class _CompiledFinder:
    """A meta path finder serving some of `MODULES` from their extension modules."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        import importlib.util

        loader = importlib.machinery.ExtensionFileLoader(fullname, file)
        return importlib.util.spec_from_file_location(fullname, file, loader=loader)


def _compiled_files() -> dict[str, str]:
    """The modules whose build for this interpreter is current: module name → extension file.

    Without a build, this is one failed `open`: nothing more is imported or read.
    """
    if os.environ.get("UNICITE_PURE_PYTHON") == "1":
        return {}
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    try:
        with open(os.path.join(_HERE, f"manifest{suffix}.json"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return {}
    import hashlib
    import json

    try:
        manifest = json.loads(text)
    except ValueError:
        return {}
    files = {}
    stale = []
    for name, entry in manifest.get("modules", {}).items():
        if name not in MODULES:
            continue
        source = os.path.join(_PACKAGE, *name.split(".")[1:]) + ".py"
        try:
            with open(source, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            continue
        file = os.path.join(_HERE, entry["file"])
        if digest != entry["source_sha256"]:
            stale.append(name)
        elif os.path.isfile(file):
            files[name] = file
    if stale:
        import logging

        checkout = os.path.isfile(os.path.join(os.path.dirname(_PACKAGE), "hatch_build.py"))
        logging.getLogger("unicite").log(
            logging.INFO if checkout else logging.WARNING,
            "the compiled accelerator is older than the source of %s: running the pure-Python"
            " module (reinstall unicite, or run `uv sync`, to rebuild it)",
            ", ".join(stale),
        )
    return files


def install() -> None:
    """Serve the accelerated modules from their current compiled build, if there is one.

    Does nothing when called again, or when one of `MODULES` is already imported.
    """
    if any(isinstance(f, _CompiledFinder) for f in sys.meta_path):
        return
    if any(name in sys.modules for name in MODULES):
        return
    files = _compiled_files()
    if files:
        sys.meta_path.insert(0, _CompiledFinder(files))


def accelerated() -> bool:
    """Tell whether unicite runs its compiled accelerator.

    The segmenter, the marker scanner and the URL keys are compiled (Cython) in platform wheels
    and in a development install; pure wheels, a failed build and ``UNICITE_PURE_PYTHON=1`` run
    the same modules as Python. Both give the same results.

    Returns:
        True when every accelerated module runs from its compiled build, False when any runs
        as pure Python.
    """
    for name in MODULES:
        module = sys.modules.get(name) or importlib.import_module(name)
        if not isinstance(module.__loader__, importlib.machinery.ExtensionFileLoader):
            return False
    return True


install()
