"""Runs in the core-only environment (`make test-core`): proves nothing else is installed.

No framework, no provider SDK, and not the command line's typer and rich (the ``cli`` extra).
"""

import importlib.util
import os

import pytest

pytestmark = pytest.mark.skipif(
    os.environ.get("UNICITE_CORE_ONLY") != "1",
    reason="only meaningful in the core-only environment (make test-core)",
)


@pytest.mark.parametrize(
    "module",
    [
        "langchain_core",
        "llama_index",
        "openai",
        "anthropic",
        "google.genai",
        "unicite_langchain",
        "unicite_llamaindex",
        "typer",
        "rich",
    ],
)
def test_framework_and_sdk_are_absent(module: str) -> None:
    try:
        spec = importlib.util.find_spec(module)
    except ModuleNotFoundError:
        spec = None
    assert spec is None, f"{module} is installed in the core-only environment"
