#!/usr/bin/env bash
# The lower bounds in the three pyproject files, tested: each environment below installs the
# workspace packages with the OLDEST release every direct dependency allows (uv's
# `--resolution lowest-direct`; their own dependencies are the newest that fit), then runs the
# tests that exercise those dependencies. uv.lock is neither read nor changed.
#
#   core       unicite with every extra but        tests/core (no fuzzing), wire, providers,
#              ray, spark and plot                 generation, analytics, packaging
#   adapters   unicite-langchain[agents] and       tests/integrations/{langchain,llamaindex},
#                                                  packaging
#              unicite-llamaindex
#   langchain  unicite-langchain alone             tests/integrations/langchain
#   llamaindex unicite-llamaindex alone            tests/integrations/llamaindex
#   pydantic_ai  unicite-pydantic-ai alone         tests/integrations/pydantic_ai
#   haystack   unicite-haystack alone              tests/integrations/haystack
#
# A bound raised because of what fails here says so in a comment next to it.
#
# Tests replaying provider cassettes (`-m "not vcr"`) are left out: they were recorded with the
# newest SDKs, whose requests an older SDK does not repeat. The test tools themselves (pytest,
# hypothesis, ...) are the newest releases that fit each environment.
#
# Usage: .ci/lowest.sh [core|adapters|langchain|llamaindex|pydantic_ai|haystack]...   (all by default)
set -euo pipefail
cd "$(dirname "$0")/.."

UV=${UV:-$(command -v uv 2>/dev/null || echo .tools/bin/uv)}
PYTHON_VERSION=${LOWEST_PYTHON:-3.11}
ROOT=.venv-lowest
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
unset VIRTUAL_ENV UV_PROJECT_ENVIRONMENT

# Warnings that only old releases of other packages raise, inside those packages:
# Starlette's TestClient before 1.0 uses the `anyio.abc.BlockingPortal` alias newer AnyIO
# deprecates (the test client only; the responses unicite builds do not touch it).
WARNINGS=(-W "ignore:The anyio.abc.BlockingPortal alias is deprecated:DeprecationWarning")

# make_env NAME TOOLS -- REQUIREMENTS...: a fresh environment at $ROOT/NAME.
make_env() {
  local name=$1 tools=$2
  shift 3
  local env=$ROOT/$name
  rm -rf "$env"
  "$UV" venv --quiet --python "$PYTHON_VERSION" "$env"
  "$UV" pip install --quiet --python "$env/bin/python" --resolution lowest-direct "$@"
  # The test tools may not move what was resolved: the resolution is their constraint.
  "$UV" pip freeze --python "$env/bin/python" --exclude-editable >"$env/lowest.txt"
  # shellcheck disable=SC2086 # the tools are separate words
  "$UV" pip install --quiet --python "$env/bin/python" -c "$env/lowest.txt" $tools
  "$env/bin/python" - "$env/lowest.txt" <<'EOF'
"""Print what was resolved for each dependency the workspace packages declare."""
import importlib.metadata as md
import re
import sys


def key(name):
    return re.sub(r"[-_.]+", "-", name).lower()


with open(sys.argv[1], encoding="utf-8") as pins:
    resolved = dict(line.strip().split("==", 1) for line in pins if "==" in line)
resolved = {key(name): version for name, version in resolved.items()}
declared = set()
for dist in (
    "unicite", "unicite-langchain", "unicite-llamaindex", "unicite-pydantic-ai", "unicite-haystack"
):
    try:
        requires = md.requires(dist) or []
    except md.PackageNotFoundError:
        continue
    declared.update(key(re.match(r"[A-Za-z0-9._-]+", req).group(0)) for req in requires)
shown = sorted(name for name in declared & set(resolved) if not name.startswith("unicite"))
print("  resolved:", " ".join(f"{name}=={resolved[name]}" for name in shown))
EOF
}

# run_tests NAME PYTEST-ARGS...
run_tests() {
  local name=$1
  shift
  "$ROOT/$name/bin/python" -m pytest -p no:cacheprovider -q -m "not vcr" "${WARNINGS[@]}" "$@"
}

core() {
  echo "── lowest: unicite[all extras] ──"
  # The extras are named one by one. Not here: ray, spark and plot, which pull Ray, PySpark
  # (and a JVM to run it) and matplotlib, hundreds of MB tested at their newest in
  # .venv-engines (`make test-engines`).
  make_env core "pytest hypothesis pytest-recording fastapi uvicorn httpx opentelemetry-sdk onnx" -- \
    -e "./shared[openai,anthropic,google,cli,schema,yaml,otel,serve,redis,postgres,testing,analytics,nli]"
  # typer 0.15.4 caps click below 8.2, whose CliRunner mixes stderr into stdout: the tests that
  # read the two apart cannot run there (the command itself writes them apart).
  run_tests core tests/core tests/wire tests/providers tests/generation tests/packaging \
    tests/analytics \
    --ignore-glob="tests/core/test_fuzz_*" --ignore=tests/core/test_cli_paper_cuts.py
}

adapters() {
  echo "── lowest: unicite-langchain[agents], unicite-llamaindex ──"
  make_env adapters "pytest hypothesis pyyaml jsonschema numpy" -- \
    -e ./shared -e "./integrations/langchain[agents]" -e ./integrations/llamaindex
  # The other adapters' frameworks are not installed here: they have parts of their own.
  run_tests adapters tests/integrations/langchain tests/integrations/llamaindex tests/packaging
}

langchain() {
  # Without the agents extra, langchain-core itself is at its lowest (langchain raises it).
  echo "── lowest: unicite-langchain ──"
  make_env langchain "pytest hypothesis pyyaml jsonschema numpy httpx" -- \
    -e ./shared -e ./integrations/langchain
  run_tests langchain tests/integrations/langchain
}

llamaindex() {
  # llama-index-core at its lowest (0.14.12), with no LLM integration: those tests skip.
  echo "── lowest: unicite-llamaindex ──"
  make_env llamaindex "pytest hypothesis pyyaml jsonschema" -- \
    -e ./shared -e ./integrations/llamaindex
  run_tests llamaindex tests/integrations/llamaindex
}

pydantic_ai() {
  echo "── lowest: unicite-pydantic-ai ──"
  make_env pydantic_ai "pytest hypothesis pyyaml jsonschema" -- \
    -e ./shared -e ./integrations/pydantic_ai
  run_tests pydantic_ai tests/integrations/pydantic_ai
}

haystack() {
  echo "── lowest: unicite-haystack ──"
  make_env haystack "pytest hypothesis pyyaml jsonschema" -- \
    -e ./shared -e ./integrations/haystack
  run_tests haystack tests/integrations/haystack
}

for part in "${@:-core adapters langchain llamaindex pydantic_ai haystack}"; do
  for name in $part; do
    case $name in
      core | adapters | langchain | llamaindex | pydantic_ai | haystack) "$name" ;;
      *) echo "unknown part: $name (core, adapters, langchain, llamaindex, pydantic_ai, haystack)" >&2 && exit 2 ;;
    esac
  done
done
