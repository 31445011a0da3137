"""Test configuration shared by the whole tree.

Provider tests replay vcrpy cassettes (record mode ``none``: nothing is recorded by accident);
``make record`` re-records them with real keys. The vcr parts load only where vcrpy is installed,
so the core's suite runs in an environment with nothing but unicite and pytest.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

try:
    import vcr as _vcr  # noqa: F401
except ImportError:  # the core-only environment
    HAVE_VCR = False
else:
    HAVE_VCR = True

if HAVE_VCR:
    import _cassettes

    def pytest_recording_configure(config: pytest.Config, vcr: Any) -> None:
        # Registered under the name "yaml" so pytest-recording names, replays and (in rewrite mode)
        # deletes `<test>.yaml`, while the reviewable serializer replaces vcrpy's own.
        vcr.register_serializer("yaml", _cassettes)

    @pytest.fixture(scope="module")
    def vcr_config() -> dict[str, Any]:
        return {
            "serializer": "yaml",
            "decode_compressed_response": True,
            "filter_headers": [
                "authorization",
                "x-api-key",
                "x-goog-api-key",
                "openai-organization",
                "openai-project",
                "anthropic-organization-id",
                "cookie",
                "set-cookie",
            ],
            "filter_query_parameters": ["key"],
            "allow_playback_repeats": False,
            # Provider cassettes never hold requests to this machine. Cassettes are entered
            # by patching the HTTP clients process-wide, so one entered and left while another
            # thread entered its own (a replaying example server) can stay patched after its
            # test: a later test's local server is then still reached.
            "ignore_localhost": True,
        }

    @pytest.fixture(scope="module")
    def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
        """cassettes/<test path under tests/, without .py>/ — mirroring the test tree."""
        tests_root = os.path.dirname(__file__)
        module = os.path.relpath(str(request.path), tests_root)
        root = os.path.join(os.path.dirname(tests_root), "cassettes")
        return os.path.join(root, os.path.splitext(module)[0])

    _CALL_OUTCOME = pytest.StashKey[str]()

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
        report = yield
        if report.when == "call":
            item.stash[_CALL_OUTCOME] = report.outcome
        return report

    @pytest.fixture(autouse=True)
    def _all_interactions_played(request: pytest.FixtureRequest) -> Iterator[None]:
        """A test that passed while its cassette holds interactions it never made fails.

        A test that skipped (an SDK missing) or already failed is left as it is.
        """
        if request.node.get_closest_marker("vcr") is None:
            yield
            return
        cassette = request.getfixturevalue("vcr")
        yield
        if request.node.stash.get(_CALL_OUTCOME, "") != "passed":
            return
        if request.config.getoption("--record-mode") in ("none", None):
            assert cassette.all_played, f"{cassette._path} has interactions the test never made"


# Hypothesis example budgets, bounded everywhere (CI has a fixed time budget). HYPOTHESIS_PROFILE
# picks one: "default", "ci" (the default when CI is set) or "fuzz" for a long local run.
# Tests that set max_examples themselves keep it.
from hypothesis import settings as _hypothesis_settings

_hypothesis_settings.register_profile("default", max_examples=100, deadline=None)
# CI derandomizes: a run on a clean clone tries the same examples every time, so a landing
# never hangs on luck; local runs keep searching new examples and remember the failures.
_hypothesis_settings.register_profile(
    "ci", max_examples=100, deadline=None, database=None, print_blob=True, derandomize=True
)
_hypothesis_settings.register_profile("fuzz", max_examples=5_000, deadline=None)
_hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "default")
)
