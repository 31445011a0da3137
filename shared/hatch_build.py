"""Build hook: compile unicite's hot pure-Python modules into the optional accelerator.

Cython compiles each module's own ``.py`` file (pure Python mode, annotations left untyped so
that every function keeps its Python semantics) into an extension module placed in
``unicite/_accel/``, next to a manifest recording the SHA-256 of each source it was built from:
``unicite._accel`` serves a compiled module only while its source still has that digest.

- A wheel gets the extension modules and the manifest, and a platform tag.
- An editable install (``uv sync``) builds them in place, in ``unicite/_accel/`` of the source
  tree (git ignores them), and leaves them alone while their sources and the build are unchanged.
- ``UNICITE_PURE_BUILD=1`` builds the pure wheel (``py3-none-any``), and so does any failure:
  without Cython, setuptools or a C compiler the build warns and goes on without the extensions.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

# The modules compiled, as (module, source relative to this folder). The same list is
# unicite._accel.MODULES (the modules it may serve) and [tool.uv] cache-keys.
MODULES = (
    ("unicite._glued", "unicite/_glued.py"),
    ("unicite._marker_syntax", "unicite/_marker_syntax.py"),
    ("unicite._segment", "unicite/_segment.py"),
    ("unicite._urls", "unicite/_urls.py"),
)
ACCEL = "unicite/_accel"
# Cython directives: Python semantics throughout (no C typing from annotations).
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True}
# GCC and Clang: optimised, without debug information (compiling takes half the time of
# Python's own -O3 -g).
COMPILE_ARGS = ["-O2", "-g0"]


def manifest_name(ext_suffix: str) -> str:
    """The manifest of the build for one interpreter: ``manifest<EXT_SUFFIX>.json``."""
    return f"manifest{ext_suffix}.json"


class AcceleratorBuildHook(BuildHookInterface):  # type: ignore[type-arg]
    """Compile `MODULES` with Cython into ``unicite/_accel`` (see the module docstring)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Build the extensions, or leave the wheel pure when asked to or when that fails."""
        if os.environ.get("UNICITE_PURE_BUILD") == "1":
            return
        root = Path(self.root)
        editable = version == "editable"
        self._scratch = Path(tempfile.mkdtemp(prefix="unicite-accel-"))
        out = root / ACCEL if editable else self._scratch / "out"
        try:
            built = self._build(root, out, reuse=editable)
        except Exception as exc:  # without a compiler, Cython or setuptools: a pure build
            self.app.display_warning(
                f"unicite: the compiled accelerator was not built ({type(exc).__name__}: {exc});"
                " this build is pure Python"
            )
            return
        if not built:
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if not editable:
            for path in built:
                build_data["force_include"][str(path)] = f"{ACCEL}/{path.name}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        """Remove the scratch folder of the build."""
        scratch = getattr(self, "_scratch", None)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    def _build(self, root: Path, out: Path, *, reuse: bool) -> list[Path]:
        """Compile every module into `out`; return the files made (extensions, manifest).

        With `reuse`, a manifest in `out` whose sources and build settings are those of now
        is kept as it is, with its extensions.
        """
        import Cython
        from Cython.Build import cythonize
        from setuptools import Distribution, Extension
        from setuptools.command.build_ext import build_ext

        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        manifest_path = out / manifest_name(suffix)
        settings = {"cython": Cython.__version__, "directives": DIRECTIVES, "flags": COMPILE_ARGS}
        snapshot = {source: (root / source).read_bytes() for _name, source in MODULES}
        sources = {name: hashlib.sha256(snapshot[source]).hexdigest() for name, source in MODULES}
        if reuse and manifest_path.is_file():
            old = json.loads(manifest_path.read_text(encoding="utf-8"))
            files = [out / entry["file"] for entry in old.get("modules", {}).values()]
            if (
                old.get("settings") == settings
                and {n: e["source_sha256"] for n, e in old["modules"].items()} == sources
                and all(f.is_file() for f in files)
            ):
                return [*files, manifest_path]
        # Cython compiles a snapshot of the sources (same relative paths, for tracebacks): the
        # extensions are exactly what the manifest's digests describe, even if a file changes
        # during the build.
        scratch = self._scratch
        tree = scratch / "src"
        for _name, source in MODULES:
            (tree / source).parent.mkdir(parents=True, exist_ok=True)
            (tree / source).write_bytes(snapshot[source])
        (tree / "unicite" / "__init__.py").write_bytes(b"")
        flags = [] if sysconfig.get_platform().startswith("win") else COMPILE_ARGS
        cwd = Path.cwd()
        os.chdir(tree)
        try:
            extensions = cythonize(
                [Extension(name, [source], extra_compile_args=flags) for name, source in MODULES],
                build_dir=str(scratch / "c"),
                compiler_directives=DIRECTIVES,
                quiet=True,
            )
            distribution = Distribution({"ext_modules": extensions, "script_name": __file__})
            command = build_ext(distribution)
            command.build_lib = str(scratch / "lib")
            command.build_temp = str(scratch / "tmp")
            command.parallel = os.cpu_count() or 1
            command.ensure_finalized()
            command.run()
        finally:
            os.chdir(cwd)
        out.mkdir(parents=True, exist_ok=True)
        made: list[Path] = []
        modules = {}
        for name, _source in MODULES:
            built = Path(command.get_ext_fullpath(name))
            target = out / f"{name.rsplit('.', 1)[1]}{suffix}"
            # A running interpreter may have the old file mapped: replace it, never rewrite it.
            staged = target.with_name(f".{target.name}.tmp")
            shutil.copyfile(built, staged)
            os.replace(staged, target)
            made.append(target)
            modules[name] = {"file": target.name, "source_sha256": sources[name]}
        staged = manifest_path.with_name(f".{manifest_path.name}.tmp")
        staged.write_text(
            json.dumps({"settings": settings, "modules": modules}, indent=2) + "\n",
            encoding="utf-8",
        )
        os.replace(staged, manifest_path)
        return [*made, manifest_path]
