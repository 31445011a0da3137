# Every target bootstraps what it needs on a machine with only Python 3.10+ and make:
# uv comes from PATH, or is installed with pip into .tools/ on first use.
PYTHON ?= python3
UV ?= $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
RUN := $(UV) run --frozen
CORE_ENV := .venv-core
LLAMAINDEX_ENV := .venv-llamaindex
ENGINES_ENV := .venv-engines

.PHONY: demo test test-all test-core test-llamaindex test-engines lint format bench record schema docs sync clean dist

.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/python -m pip install --quiet --disable-pip-version-check uv

.venv/.synced: pyproject.toml uv.lock shared/pyproject.toml integrations/langchain/pyproject.toml integrations/llamaindex/pyproject.toml integrations/pydantic_ai/pyproject.toml integrations/haystack/pyproject.toml | $(UV)
	$(UV) sync --frozen
	@touch $@

sync: .venv/.synced

## demo: citations from every provider, a LangChain chain and a LlamaIndex query engine,
## offline (replaying recorded responses even when API keys are set)
DEMO_ENV := .venv-demo

# The demo's own environment: what the examples need to run (the `demo` dependency group) and
# no test or lint tool, so that it stays small and leaves the development environment alone.
$(DEMO_ENV)/.synced: pyproject.toml uv.lock shared/pyproject.toml integrations/langchain/pyproject.toml integrations/llamaindex/pyproject.toml integrations/pydantic_ai/pyproject.toml integrations/haystack/pyproject.toml | $(UV)
	@printf 'Installing what the examples need into %s (once; later runs reuse it)...\n' $(DEMO_ENV)
	@UV_PROJECT_ENVIRONMENT=$(DEMO_ENV) $(UV) sync --quiet --frozen --no-default-groups --group demo
	@touch $@

demo: $(DEMO_ENV)/.synced
	@$(DEMO_ENV)/bin/unicite demo
	@printf '\n── LangChain · a RAG chain with CitationCallbackHandler ──\n'
	@printf 'examples/langchain_rag.py, replaying a recorded OpenAI response:\n'
	@OPENAI_API_KEY= $(DEMO_ENV)/bin/python examples/langchain_rag.py
	@printf '\n── LlamaIndex · CitedQueryEngine over OpenAI ──\n'
	@printf 'examples/llamaindex_query.py, replaying a recorded OpenAI response:\n'
	@OPENAI_API_KEY= $(DEMO_ENV)/bin/python examples/llamaindex_query.py
	@printf "\n── LlamaIndex · CitedQueryEngine next to LlamaIndex's CitationQueryEngine ──\n"
	@printf 'examples/llamaindex_vs_citation_query_engine.py, one scripted answer given to both:\n'
	@$(DEMO_ENV)/bin/python examples/llamaindex_vs_citation_query_engine.py
	@printf '\n── Try it yourself ──\n'
	@printf 'A terminal chat (/set citations enabled, sources as clickable links):\n'
	@printf '    %s/bin/python examples/terminal_chat.py\n' $(DEMO_ENV)
	@printf 'A chat page whose live citations equal the reloaded history (examples/web/README.md):\n'
	@printf '    %s/bin/python examples/web/app.py    then open the URL it prints\n' $(DEMO_ENV)
	@printf 'Both replay recorded answers, or ask the API live when its key (OPENAI_API_KEY...) is set.\n'

## test: the full suite, the core's suite with only unicite installed, the LlamaIndex
## adapter over the llama-index LLM integrations (which need older provider SDKs), and the
## Ray and Spark engines of `unicite stats` in local mode (Spark's tests skip without Java 17+)
test: test-all test-core test-llamaindex test-engines

# Each suite runs on every core (pytest-xdist); a test file's tests share one worker, since
# files start their own servers and module-scoped fixtures.
XDIST := -n auto --dist loadfile

test-all: .venv/.synced
	$(RUN) pytest $(XDIST)

# The core must import and pass its tests with no framework and no provider SDK installed:
# a separate environment holding only unicite and the test tools.
test-core: | $(UV)
	UV_PROJECT_ENVIRONMENT=$(CORE_ENV) $(UV) sync --frozen --package unicite --group test-core
	UNICITE_CORE_ONLY=1 $(CORE_ENV)/bin/python -m pytest -p no:cacheprovider $(XDIST)

test-llamaindex: | $(UV)
	UV_PROJECT_ENVIRONMENT=$(LLAMAINDEX_ENV) $(UV) sync --frozen --no-default-groups --group llamaindex-providers
	$(LLAMAINDEX_ENV)/bin/python -m pytest -p no:cacheprovider tests/integrations/llamaindex tests/examples/test_llamaindex_examples.py

# Ray and PySpark (and the JVM Spark runs on) are large: they have an environment of their own.
# Spark's Python workers run this environment's Python: unicite points them at it when it
# starts Spark, and so does the tests' own session.
test-engines: | $(UV)
	UV_PROJECT_ENVIRONMENT=$(ENGINES_ENV) $(UV) sync --frozen --no-default-groups --group engines
	$(ENGINES_ENV)/bin/python -m pytest -p no:cacheprovider tests/engines

lint: .venv/.synced
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) mypy
	$(RUN) lint-imports

format: .venv/.synced
	$(RUN) ruff check --fix .
	$(RUN) ruff format .

bench: .venv/.synced
	$(RUN) python benchmarks/run.py

## record: re-record the cassettes against the live APIs (needs the provider API keys)
record: .venv/.synced
	$(RUN) python scripts/record.py

schema: .venv/.synced
	$(RUN) unicite schema > shared/unicite/cited_answer.schema.json

## docs: the documentation site, guides and API reference, in site/ (a warning fails it)
docs: .venv/.synced
	NO_MKDOCS_2_WARNING=1 $(RUN) mkdocs build --strict

clean:
	rm -rf .venv $(CORE_ENV) $(LLAMAINDEX_ENV) $(ENGINES_ENV) $(DEMO_ENV) .tools .pytest_cache .mypy_cache .ruff_cache

## dist: build the sdists and wheels into dist/ and check them (twine check --strict): the
## core's platform wheel (its compiled accelerator) and its pure wheel; .ci/dist.sh also
## installs the wheels into fresh environments and imports them
dist: .venv/.synced
	$(UV) build --all-packages --clear --out-dir dist
	UNICITE_PURE_BUILD=1 $(UV) build --package unicite --wheel --out-dir dist
	$(RUN) twine check --strict dist/*
