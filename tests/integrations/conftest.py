"""Shared by the adapter tests: the adapter contract's assertions explain their failures."""

import pytest

pytest.register_assert_rewrite("integrations.contract")

# With this folder on sys.path, its subfolders named after frameworks (pydantic_ai, haystack)
# import as namespace packages where the framework is missing: the tests skip on one of the
# framework's submodules (`pytest.importorskip("pydantic_ai.agent")`), which a folder lacks.
