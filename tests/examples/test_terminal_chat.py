"""examples/terminal_chat.py as a user drives it: in a real terminal (tmux), then through a pipe.

The tmux test types into a detached session of fixed size, reads the screen back with
``capture-pane``, and reads the bytes the program wrote from a ``pipe-pane`` log: the screen
keeps no OSC 8 hyperlinks, the log does. Every session runs offline (no API key), with its
own HOME and settings file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytest.importorskip("google.genai")
pytest.importorskip("vcr")
pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "terminal_chat.py"
TMUX = shutil.which("tmux")

MONT_BLANC = "Quelle est la hauteur du mont Blanc aujourd’hui ?"
PARTHENON = "Πότε χτίστηκε ο Παρθενώνας;"  # noqa: RUF001 - Greek
FIRST_CLAIM = "Le mont Blanc culmine à 4 805,59 mètres"
SOURCE_LINE = "1. Mont Blanc — Wikipédia — https://fr.wikipedia.org/wiki/Mont_Blanc"
OSC8_LINK = b"\x1b]8;;https://fr.wikipedia.org/wiki/Mont_Blanc\x1b\\"
OSC8_OPEN = re.compile(rb"\x1b]8;;https?://")


def environment(tmp_path: Path) -> dict[str, str]:
    """A clean environment: no API key, a HOME and settings file of the test's own, UTF-8,
    the terminal's own size."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_API_KEY")
        and not key.startswith(("TMUX", "FORCE_HYPERLINK"))
        # The width is the terminal's own: an inherited COLUMNS (pytest-xdist's workers have
        # one) would make rich wrap at another width than the screen the test reads.
        and key not in ("COLUMNS", "LINES")
    }
    env.update(
        HOME=str(tmp_path / "home"),
        XDG_CONFIG_HOME=str(tmp_path / "home" / ".config"),
        UNICITE_SETTINGS_FILE=str(tmp_path / "config" / "settings.json"),
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
        PYTHONUTF8="1",
        PYTHONIOENCODING="utf-8",
        TERM="xterm-256color",
    )
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def turns(screen: str) -> list[str]:
    """The screen cut at each prompt: the banner, then one ``input + output`` per line typed."""
    return re.split(r"(?m)^> ?", screen)


# --- in tmux ------------------------------------------------------------------------------------


class Terminal:
    """The example running in a detached tmux session on a private server."""

    def __init__(self, tmp_path: Path, env: dict[str, str], log: Path) -> None:
        self.socket = str(log.with_suffix(".sock"))
        self.env = env
        self.log = log
        command = f"{sys.executable} {EXAMPLE} --hyperlinks"
        self.tmux("new-session", "-d", "-s", "chat", "-x", "100", "-y", "50", command)
        self.tmux("set-option", "-t", "chat", "remain-on-exit", "on")
        self.tmux("pipe-pane", "-t", "chat", "-o", f"cat >> {log}")
        self.wait(lambda screen: "Type a question, or /help." in screen)

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-u", "-S", self.socket, "-f", os.devnull, *args],
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    def screen(self) -> str:
        """Everything the pane shows and has scrolled by, wrapped lines joined."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "chat")

    def wait(self, done: Callable[[str], bool], timeout: float = 30) -> str:
        """The screen, once ``done(screen)`` holds."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if done(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; the screen shows:\n{screen}")
            time.sleep(0.1)

    def type(self, line: str) -> str:
        """Type a line and press Enter; the screen once the next prompt is up."""
        prompts = len(turns(self.screen()))
        self.tmux("send-keys", "-t", "chat", "-l", "--", line)
        self.tmux("send-keys", "-t", "chat", "Enter")
        return self.wait(
            lambda screen: len(turns(screen)) > prompts and screen.rstrip().endswith(">")
        )

    def quit(self) -> str:
        """Type /quit; the screen once the program has ended."""
        self.tmux("send-keys", "-t", "chat", "-l", "/quit")
        self.tmux("send-keys", "-t", "chat", "Enter")
        self.wait(lambda _: self.tmux("display", "-p", "-t", "chat", "#{pane_dead}").strip() == "1")
        return self.screen()

    def close(self) -> None:
        subprocess.run(
            [TMUX or "tmux", "-S", self.socket, "kill-server"], env=self.env, check=False
        )


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Callable[[str], Terminal]]:
    """Start the example in tmux (its output logged to the file named); ended after the test."""
    if TMUX is None:
        pytest.skip("tmux is not installed")
    env = environment(tmp_path)
    sessions: list[Terminal] = []

    def start(log: str) -> Terminal:
        session = Terminal(tmp_path, env, tmp_path / log)
        sessions.append(session)
        return session

    yield start
    for session in sessions:
        session.close()


def test_citations_on_off_saved_and_read_back(
    terminal: Callable[[str], Terminal], tmp_path: Path
) -> None:
    settings = tmp_path / "config" / "settings.json"
    first = terminal("first.log")
    assert "citations: disabled (the default)" in first.screen()

    screen = first.type("/set citations enabled")
    assert "Citations enabled. Structured source references will appear" in turns(screen)[-2]
    assert json.loads(settings.read_text(encoding="utf-8")) == {"citations": "enabled"}

    cited = turns(first.type(MONT_BLANC))[-2]
    assert cited.startswith(MONT_BLANC)
    assert FIRST_CLAIM in cited
    assert "[1]" in cited
    assert "[2]" in cited
    assert "\nSources\n" in cited
    assert SOURCE_LINE in cited

    screen = first.type("/set citations disabled")
    assert "Citations disabled." in turns(screen)[-2]

    plain = turns(first.type(MONT_BLANC))[-2]
    assert FIRST_CLAIM in plain
    assert "[1]" not in plain
    assert "Sources" not in plain
    assert "https://" not in plain  # the provider's inline links are gone too

    first.quit()
    assert json.loads(settings.read_text(encoding="utf-8")) == {"citations": "disabled"}

    # The bytes the program wrote: the Sources block links with OSC 8, the plain answer not.
    raw = (tmp_path / "first.log").read_bytes()
    assert OSC8_LINK in raw
    before, after = raw.split(b"Citations disabled.", 1)
    assert len(OSC8_OPEN.findall(before)) == 2  # the two cited sources
    assert not OSC8_OPEN.findall(after)

    # A new session reads the saved setting back; an explicit flag still wins for one message.
    second = terminal("second.log")
    assert f"citations: disabled (saved in {settings})" in second.screen()
    plain = turns(second.type(MONT_BLANC))[-2]
    assert FIRST_CLAIM in plain
    assert "[1]" not in plain
    assert "Sources" not in plain
    cited = turns(second.type(f"--citations=enabled {MONT_BLANC}"))[-2]
    assert "[1]" in cited
    assert SOURCE_LINE in cited

    # Another provider, with its own recorded answers, under the same setting.
    screen = second.type("/provider gemini")
    assert "Provider gemini: offline, replaying recorded answers" in turns(screen)[-2]
    plain = turns(second.type(PARTHENON))[-2]
    assert "Ο Παρθενώνας χτίστηκε στην Ακρόπολη" in plain  # noqa: RUF001 - Greek
    assert "[1]" not in plain
    cited = turns(second.type(f"--citations=enabled {PARTHENON}"))[-2]
    assert "μεταξύ του 447 και του 438 π.Χ.[1][2]" in cited  # noqa: RUF001 - Greek
    assert "2. odysseus.culture.gr —" in cited
    second.quit()
    assert json.loads(settings.read_text(encoding="utf-8")) == {"citations": "disabled"}
    assert OSC8_OPEN.findall((tmp_path / "second.log").read_bytes())


# --- through a pipe -----------------------------------------------------------------------------


def chat(tmp_path: Path, *lines: str) -> list[str]:
    """Run the example with `lines` as its input; what it printed, cut at each prompt."""
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--no-hyperlinks"],
        input="\n".join(lines) + "\n",
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=True,
    )
    assert done.stderr == ""
    return re.split(r"(?m)^> ", done.stdout)


def test_without_a_terminal(tmp_path: Path) -> None:
    out = chat(
        tmp_path,
        "/set citations enabled",
        MONT_BLANC,
        "/set citations disabled",
        "2",  # the second recorded question, by its number
        "/provider anthropic",
        "--citations=on ¿Cuándo se inauguró el Canal de Panamá?",
        "Wie hoch ist das Matterhorn?",
    )
    banner, enabled, cited, disabled, fuji, provider, panama, unknown, end = out
    assert "citations: disabled (the default)" in banner
    assert "Citations enabled." in enabled
    assert "[1]" in cited
    assert SOURCE_LINE in cited
    assert "\x1b" not in cited  # --no-hyperlinks
    assert "Citations disabled." in disabled
    assert fuji.startswith("富士山の標高は3,776メートルで、日本で最も高い山です。")
    assert "[1]" not in fuji
    assert "Sources" not in fuji
    assert "Provider anthropic" in provider
    assert "tránsito oficial entre los dos océanos[1]" in panama
    assert '   > "El canal fue inaugurado el 15 de agosto de 1914' in panama  # the cited text
    assert "Offline, anthropic answers only its recorded questions." in unknown
    assert end == "\n"  # the end of input ends the chat
    settings = json.loads((tmp_path / "config" / "settings.json").read_text(encoding="utf-8"))
    assert settings == {"citations": "disabled"}


def test_default_settings_file_is_under_the_config_folder(tmp_path: Path) -> None:
    env = environment(tmp_path)
    del env["UNICITE_SETTINGS_FILE"]
    subprocess.run(
        [sys.executable, str(EXAMPLE)],
        input="/set citations enabled\n",
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=True,
    )
    saved = tmp_path / "home" / ".config" / "unicite" / "settings.json"
    assert json.loads(saved.read_text(encoding="utf-8")) == {"citations": "enabled"}
