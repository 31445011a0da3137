"""Re-record the provider cassettes against the live APIs (``make record``).

Each provider's SDK tests are re-run with ``--record-mode=rewrite`` when that provider's API key
is set, so the cassettes are refreshed by exactly the requests the tests make. Providers without
a key are left alone: replaying with a placeholder key would overwrite good cassettes with
authentication errors. Hand-written cassettes carry non-ASCII answers and every citation type;
after re-recording, review the diff (``git diff cassettes/``) and adjust the tests' expected spans
where the live model answered differently.
"""

from __future__ import annotations

import os
import subprocess
import sys

PROVIDERS = {
    "OPENAI_API_KEY": ["tests/providers/test_openai_sdk.py"],
    "ANTHROPIC_API_KEY": ["tests/providers/test_anthropic_sdk.py"],
    "GEMINI_API_KEY": ["tests/providers/test_gemini_sdk.py"],
}


def main() -> int:
    targets = [path for key, paths in PROVIDERS.items() if os.environ.get(key) for path in paths]
    for key in PROVIDERS:
        print(f"{key}: {'set, re-recording' if os.environ.get(key) else 'not set, skipped'}")
    if not targets:
        print("No provider API key is set: nothing to record.", file=sys.stderr)
        return 1
    command = [sys.executable, "-m", "pytest", "--record-mode=rewrite", "-m", "vcr", *targets]
    return subprocess.call(command)  # noqa: S603 - our own fixed command


if __name__ == "__main__":
    raise SystemExit(main())
