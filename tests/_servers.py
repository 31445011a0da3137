"""Real servers the tests start for themselves: Redis, and worker processes of the chat example.

Debian's ``redis-server`` runs on a free loopback port with nothing kept on disk; `.ci/run`
installs it. The chat example (examples/web/app.py) runs as separate server processes, the way
``uvicorn --workers`` or two replicas behind a load balancer run it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).parents[1]
REDIS_SERVER = shutil.which("redis-server")


def free_port() -> int:
    """A TCP port on 127.0.0.1 nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(ready: object, what: str, *, timeout: float = 20.0) -> None:
    """Poll ``ready()`` until it is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not ready():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not start in {timeout:.0f} s")
        time.sleep(0.05)


@contextmanager
def redis_server(folder: Path) -> Iterator[str]:
    """A redis-server of its own on loopback; yields its URL. Needs ``redis-server``."""
    if REDIS_SERVER is None:
        raise FileNotFoundError(
            "redis-server is not installed (Debian: apt-get install redis-server)"
        )
    port = free_port()
    options = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)]
    server = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )

    def answers() -> bool:
        if server.poll() is not None:
            raise RuntimeError("redis-server exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    try:
        wait_until(answers, "redis-server", timeout=10)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        server.terminate()
        server.wait(10)


class ChatWorker:
    """One server process of the chat example, on its own port."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        clean = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
        self.process = subprocess.Popen(
            [sys.executable, str(ROOT / "examples" / "web" / "app.py"), "--port", str(self.port)],
            env={**clean, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        wait_until(self._up, f"the chat worker on port {self.port}")

    def _up(self) -> bool:
        import httpx  # the test environments without it do not start workers

        if self.process.poll() is not None:
            error = self.process.stderr.read().decode() if self.process.stderr else ""
            raise RuntimeError(f"the chat worker exited: {error[-2000:]}")
        try:
            return httpx.get(self.base + "/api/config", timeout=1).status_code == 200
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        """SIGKILL: the worker stops mid-answer, with no chance to tidy up."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.process.stderr:
            self.process.stderr.close()
