#!/usr/bin/env bash
# The distributions as PyPI would get them: build the three sdists and wheels into dist/ (each
# wheel built from its sdist), check their metadata with `twine check --strict`, check what the
# archives hold, then install the wheels into fresh environments and import them: the core with
# no framework and no provider SDK, each adapter with its framework. The core has two wheels: a
# platform wheel with the compiled accelerator and a pure one (UNICITE_PURE_BUILD=1); both are
# installed and checked.
set -euo pipefail
cd "$(dirname "$0")/.."

UV=${UV:-$(command -v uv 2>/dev/null || echo .tools/bin/uv)}
PYTHON_VERSION=${DIST_PYTHON:-3.11}
unset VIRTUAL_ENV UV_PROJECT_ENVIRONMENT

echo "── build ──"
"$UV" build --python "$PYTHON_VERSION" --all-packages --clear --out-dir dist
UNICITE_PURE_BUILD=1 "$UV" build --python "$PYTHON_VERSION" --package unicite --wheel --out-dir dist

echo "── twine check ──"
if [ ! -x .venv/bin/twine ]; then
  "$UV" sync --frozen # twine is in the release dependency group
fi
.venv/bin/twine check --strict dist/*

echo "── contents ──"
"${PYTHON:-python3}" - <<'EOF'
"""Each archive holds the LICENSE, the README (sdist), py.typed and PEP 639 metadata."""
import email
import sys
import tarfile
import zipfile
from pathlib import Path

license_text = Path("LICENSE").read_bytes()
problems = []
for name, package in [
    ("unicite", "unicite"),
    ("unicite_langchain", "unicite_langchain"),
    ("unicite_llamaindex", "unicite_llamaindex"),
    ("unicite_pydantic_ai", "unicite_pydantic_ai"),
    ("unicite_haystack", "unicite_haystack"),
]:
    wheels = sorted(Path("dist").glob(f"{name}-*.whl"))
    sdists = sorted(Path("dist").glob(f"{name}-*.tar.gz"))
    # The core: a platform wheel (the compiled accelerator) and a pure one.
    pure = [w for w in wheels if w.name.endswith("-py3-none-any.whl")]
    expected = 2 if name == "unicite" else 1
    if len(wheels) != expected or len(pure) != 1 or len(sdists) != 1:
        problems.append(f"{name}: expected {expected} wheels and one sdist, got {wheels + sdists}")
        continue
    sdist = sdists[0]
    before = len(problems)
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            info = next(n for n in names if n.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
            metadata = email.message_from_bytes(archive.read(f"{info}/METADATA"))
            if archive.read(f"{info}/licenses/LICENSE") != license_text:
                problems.append(f"{wheel.name}: licenses/LICENSE differs from LICENSE")
            if f"{package}/py.typed" not in names:
                problems.append(f"{wheel.name}: no {package}/py.typed")
            accel = [n for n in names if n.startswith(f"{package}/_accel/")]
            compiled = [n for n in accel if n.endswith((".so", ".pyd"))]
            manifests = [n for n in accel if n.rsplit("/", 1)[1].startswith("manifest")]
            if wheel in pure and (compiled or manifests):
                problems.append(f"{wheel.name}: a pure wheel holding {compiled + manifests}")
            if wheel not in pure and (len(compiled) != 4 or len(manifests) != 1):
                problems.append(f"{wheel.name}: not 4 compiled modules and their manifest")
    with tarfile.open(sdist) as archive:
        if any(n.endswith((".so", ".pyd", ".c")) for n in archive.getnames()):
            problems.append(f"{sdist.name}: compiled files in the sdist")
        root = archive.getnames()[0].split("/", 1)[0]
        for member in ("LICENSE", "README.md", "pyproject.toml", f"{package}/py.typed"):
            try:
                archive.getmember(f"{root}/{member}")
            except KeyError:
                problems.append(f"{sdist.name}: no {member}")
        if archive.extractfile(f"{root}/LICENSE").read() != license_text:
            problems.append(f"{sdist.name}: LICENSE differs from LICENSE")
    if metadata["License-Expression"] != "MIT" or metadata["License-File"] != "LICENSE":
        problems.append(f"{wheel.name}: License-Expression / License-File missing")
    if any(c.startswith("License ::") for c in metadata.get_all("Classifier") or []):
        problems.append(f"{wheel.name}: a License classifier next to License-Expression")
    if not metadata.get_all("Project-URL") or metadata["Description-Content-Type"] != "text/markdown":
        problems.append(f"{wheel.name}: no Project-URL or no Markdown description")
    if len(problems) == before:
        print(f"{', '.join(w.name for w in wheels)}, {sdist.name}: ok")
if problems:
    sys.exit("\n".join(problems))
EOF

echo "── install and import ──"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
core_wheel=$(ls dist/unicite-*.whl | grep -v -- -py3-none-any.whl)
pure_core_wheel=$(ls dist/unicite-*-py3-none-any.whl)
langchain_wheel=$(ls dist/unicite_langchain-*.whl)
llamaindex_wheel=$(ls dist/unicite_llamaindex-*.whl)
pydantic_ai_wheel=$(ls dist/unicite_pydantic_ai-*.whl)
haystack_wheel=$(ls dist/unicite_haystack-*.whl)

# check_env NAME WHEELS... : a fresh environment with just these wheels (and what they need).
check_env() {
  local name=$1
  shift
  "$UV" venv --quiet --python "$PYTHON_VERSION" "$work/$name"
  "$UV" pip install --quiet --python "$work/$name/bin/python" "$@"
}

check_env core "$core_wheel"
"$work/core/bin/python" - <<'EOF'
"""The core imports, and brings in no framework and no provider SDK."""
import importlib.metadata
import importlib.util
import sys

import unicite
import unicite.wire

assert unicite.__version__ == importlib.metadata.version("unicite"), unicite.__version__
unicite.cite("Zürich [1].", [unicite.Source(url="https://www.stadt-zuerich.ch/", title="Zürich")])
foreign = ("langchain", "langchain_core", "langgraph", "llama_index", "openai", "anthropic", "google")
loaded = sorted(m for m in sys.modules if m.split(".")[0] in foreign)
assert not loaded, f"the core imported {loaded}"
installed = [m for m in foreign if importlib.util.find_spec(m) is not None]
assert not installed, f"installing the core installed {installed}"
assert unicite.accelerated(), "the platform wheel runs no compiled module"
print(f"unicite {unicite.__version__}: imports alone, compiled")
EOF

check_env core_pure "$pure_core_wheel"
"$work/core_pure/bin/python" - <<'EOF'
"""The pure wheel runs the same modules as Python."""
import unicite

assert not unicite.accelerated()
answer = unicite.cite("Zürich [1].", [unicite.Source(url="https://www.stadt-zuerich.ch/")])
assert answer.citations, answer
print(f"unicite {unicite.__version__}: the pure wheel imports, pure Python")
EOF

check_env langchain "$core_wheel" "$langchain_wheel"
"$work/langchain/bin/python" - <<'EOF'
import importlib.metadata
import importlib.util

import unicite_langchain
from unicite_langchain import CitationCallbackHandler

assert unicite_langchain.__version__ == importlib.metadata.version("unicite-langchain")
assert importlib.util.find_spec("llama_index") is None
CitationCallbackHandler()
print(f"unicite-langchain {unicite_langchain.__version__}: imports with langchain-core")
EOF

check_env llamaindex "$core_wheel" "$llamaindex_wheel"
"$work/llamaindex/bin/python" - <<'EOF'
import importlib.metadata
import importlib.util

import unicite_llamaindex
from unicite_llamaindex import CitationPostprocessor

assert unicite_llamaindex.__version__ == importlib.metadata.version("unicite-llamaindex")
assert importlib.util.find_spec("langchain_core") is None
CitationPostprocessor()
print(f"unicite-llamaindex {unicite_llamaindex.__version__}: imports with llama-index-core")
EOF

check_env pydantic_ai "$core_wheel" "$pydantic_ai_wheel"
"$work/pydantic_ai/bin/python" - <<'EOF'
import importlib.metadata
import importlib.util

import unicite_pydantic_ai
from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel
from unicite_pydantic_ai import cite_tools, with_citations

assert unicite_pydantic_ai.__version__ == importlib.metadata.version("unicite-pydantic-ai")
assert importlib.util.find_spec("langchain_core") is None
assert importlib.util.find_spec("llama_index") is None
agent = with_citations(Agent(TestModel(), tools=cite_tools([lambda query: "Zürich"])))
assert agent.run_sync("Zürich ?").citations is not None
print(f"unicite-pydantic-ai {unicite_pydantic_ai.__version__}: imports with pydantic-ai-slim")
EOF

check_env haystack "$core_wheel" "$haystack_wheel"
"$work/haystack/bin/python" - <<'EOF'
import importlib.metadata
import importlib.util

import unicite_haystack
from haystack import Document
from unicite_haystack import CitationStreamingCallback, CitedAnswerBuilder

assert unicite_haystack.__version__ == importlib.metadata.version("unicite-haystack")
assert importlib.util.find_spec("langchain_core") is None
assert importlib.util.find_spec("llama_index") is None
docs = [Document(content="Bern ist die Bundesstadt."), Document(content="Zürich zählt 440 000.")]
answer = CitedAnswerBuilder().run(query="Zürich ?", replies=["Zürich [2]."], documents=docs)
assert answer["answers"][0].data == "Zürich [1]."
CitationStreamingCallback(docs)
print(f"unicite-haystack {unicite_haystack.__version__}: imports with haystack-ai")
EOF

echo "dist: ok"
