"""Shared by the adapter tests: the adapter contract's assertions explain their failures."""

import pytest

pytest.register_assert_rewrite("integrations.contract")
