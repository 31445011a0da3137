# Every target bootstraps what it needs on a machine with only Python 3.10+ and make:
# uv comes from PATH, or is installed with pip into .tools/ on first use.
PYTHON ?= python3
UV ?= $(shell command -v uv 2>/dev/null || echo .tools/bin/uv)
RUN := $(UV) run --frozen
CORE_ENV := .venv-core
LLAMAINDEX_ENV := .venv-llamaindex

.PHONY: demo test test-all test-core test-llamaindex lint format bench record schema sync clean

.tools/bin/uv:
	$(PYTHON) -m venv .tools
	.tools/bin/python -m pip install --quiet --disable-pip-version-check uv

.venv/.synced: pyproject.toml uv.lock shared/pyproject.toml integrations/langchain/pyproject.toml integrations/llamaindex/pyproject.toml | $(UV)
	$(UV) sync --frozen
	@touch $@

sync: .venv/.synced

## demo: citations from every provider, a LangChain chain and a LlamaIndex query engine,
## offline (replaying recorded responses even when API keys are set)
demo: .venv/.synced
	@$(RUN) unicite demo
	@printf '\n── LangChain · RAG chain with CitationCallbackHandler ──\n'
	@OPENAI_API_KEY= $(RUN) python examples/langchain_rag.py
	@printf '\n── LlamaIndex · CitedQueryEngine next to CitationQueryEngine ──\n'
	@$(RUN) python examples/llamaindex_vs_citation_query_engine.py
	@printf '\n── A chat page: live citations equal to the reloaded history ──\n'
	@printf 'Start it with  uv run python examples/web/app.py  and open the URL it prints\n'
	@printf '(offline, replaying a recorded stream; live with OPENAI_API_KEY). See examples/web/README.md\n'

## test: the full suite, the core's suite with only unicite installed, and the LlamaIndex
## adapter over the llama-index LLM integrations (which need older provider SDKs)
test: test-all test-core test-llamaindex

test-all: .venv/.synced
	$(RUN) pytest

# The core must import and pass its tests with no framework and no provider SDK installed:
# a separate environment holding only unicite and the test tools.
test-core: | $(UV)
	UV_PROJECT_ENVIRONMENT=$(CORE_ENV) $(UV) sync --frozen --package unicite --group test-core
	UNICITE_CORE_ONLY=1 $(CORE_ENV)/bin/python -m pytest -p no:cacheprovider

test-llamaindex: | $(UV)
	UV_PROJECT_ENVIRONMENT=$(LLAMAINDEX_ENV) $(UV) sync --frozen --no-default-groups --group llamaindex-providers
	$(LLAMAINDEX_ENV)/bin/python -m pytest -p no:cacheprovider tests/integrations/llamaindex tests/examples/test_llamaindex_examples.py

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

clean:
	rm -rf .venv $(CORE_ENV) $(LLAMAINDEX_ENV) .tools .pytest_cache .mypy_cache .ruff_cache
