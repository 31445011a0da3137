"""`unicite` run in its own process with stderr on a pseudo-terminal, as a user's shell has it."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

_ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class Run:
    """What the command wrote: stdout (a pipe) and its terminal (stderr), escapes removed."""

    returncode: int
    stdout: str
    terminal: str


def on_terminal(*args: str, timeout: float = 300.0, **env: str) -> Run:
    """Run ``python -m unicite ARGS`` with stderr on a pseudo-terminal and stdout on a pipe."""
    import pty  # POSIX only, as the command's terminal handling is tested

    leader, follower = pty.openpty()
    environ: dict[str, Any] = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "200", **env}
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        environ.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "unicite", *args],
        stdout=subprocess.PIPE,
        stderr=follower,
        stdin=subprocess.DEVNULL,
        env=environ,
    )
    os.close(follower)
    written = bytearray()
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    data = os.read(leader, 1 << 16)
                except OSError:  # the terminal closed: every writer has gone
                    break
                if not data:
                    break
                written += data
            elif process.poll() is not None:
                break
        assert process.stdout is not None
        with process.stdout:
            stdout = process.stdout.read()
        returncode = process.wait(timeout)
    finally:
        os.close(leader)
        if process.poll() is None:
            process.kill()
            process.wait()
            if process.stdout is not None:
                process.stdout.close()
    text = _ESCAPES.sub(b"", bytes(written)).decode("utf-8", "replace")
    return Run(returncode, stdout.decode("utf-8"), text)


PROGRESS = re.compile(
    r"reading\W+(?P<read>[\d.]+)/(?P<total>[\d.]+) (?P<unit>[kMG]?B) "
    r"(?P<responses>[\d,]+) responses (?P<rate>[\d.]+ [kMG]?B/s|\?)"
)
"""One state of the progress bar: bytes read of the total, responses, rate."""


def progress_states(terminal: str) -> list[dict[str, str]]:
    """Every state of the progress bar the terminal was shown, in order."""
    return [match.groupdict() for match in PROGRESS.finditer(terminal)]
