"""A terminal chat whose answers list their sources, with clickable links where the terminal can.

Ask a question; the provider answers with web search (OpenAI Responses, Anthropic Messages) or
Google Search grounding (Gemini), `unicite.extract` reads the citations out of its response,
and `unicite.render` prints the answer with ``[1]`` markers and a Sources block, as OSC 8
hyperlinks in terminals that support them. Citations are off until you turn them on::

    > /set citations enabled
    Citations enabled. Structured source references will appear after responses
    (when available from your provider).

Commands:

- ``/set citations enabled|disabled``: saved in a settings file, so the next session keeps it;
  ``/unset citations`` goes back to the default (disabled).
- ``--citations=enabled`` (or ``disabled``) at the start of a message: for that message only.
  An explicit choice wins over the saved setting, which wins over the default
  (`unicite.resolve_enabled`).
- ``/provider [openai|anthropic|gemini]``: show the providers, or switch.
- ``/questions``, ``/help``, ``/quit`` (or Ctrl-D).

Each question is asked on its own, without the conversation before it. Offline by default: a
provider whose API key (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``) is not
set replays its recorded answers (``cassettes/examples/terminal_chat/``, through
`unicite.testing`), so only the recorded questions can be asked; type one, or its number. With
the key set, it asks the API live.

The settings file is ``UNICITE_SETTINGS_FILE`` when set, else ``unicite/settings.json`` under
the user's configuration folder (``XDG_CONFIG_HOME``, ``~/.config``, or ``APPDATA`` on
Windows). Run it with ``python examples/terminal_chat.py`` (``--provider``, ``--hyperlinks``
or ``--no-hyperlinks`` to override the terminal's detection).
"""

from __future__ import annotations

import argparse
import json
import os
import re
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import unicite
from unicite.testing import live_or_replay

CASSETTES = Path(__file__).resolve().parent.parent / "cassettes" / "examples" / "terminal_chat"


# --- providers ----------------------------------------------------------------------------------


def ask_openai(question: str, key: str, offline: bool) -> Any:
    """The OpenAI Responses API with web search: citations are ``url_citation`` annotations."""
    from openai import OpenAI

    client = OpenAI(api_key=key, max_retries=0 if offline else 2)
    return client.responses.create(model="gpt-5.2", input=question, tools=[{"type": "web_search"}])


def ask_anthropic(question: str, key: str, offline: bool) -> Any:
    """Anthropic Messages with the web search tool: citations on the text blocks."""
    import anthropic

    client = anthropic.Anthropic(api_key=key, max_retries=0 if offline else 2)
    return client.messages.create(
        model="claude-sonnet-4-6",
        max_tokens=1024,
        messages=[{"role": "user", "content": question}],
        tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}],
    )


def ask_gemini(question: str, key: str, offline: bool) -> Any:
    """Gemini with Google Search grounding: citations in ``groundingMetadata``."""
    from google import genai
    from google.genai import types

    client = genai.Client(api_key=key)
    search = types.Tool(google_search=types.GoogleSearch())
    return client.models.generate_content(
        model="gemini-2.5-flash",
        contents=question,
        config=types.GenerateContentConfig(tools=[search]),
    )


@dataclass(frozen=True)
class Provider:
    """One provider: how to ask it, its key, and its recorded answers."""

    name: str
    key: str
    ask: Callable[[str, str, bool], Any]
    questions: tuple[str, ...]

    @property
    def cassette(self) -> Path:
        """The recorded answers replayed while the key is not set."""
        return CASSETTES / f"{self.name}.yaml"

    @property
    def live(self) -> bool:
        """Whether questions go to the API (the key is set)."""
        return bool(os.environ.get(self.key))

    @property
    def available(self) -> bool:
        """Whether it can answer at all: live, or with a recording to replay."""
        return self.live or self.cassette.is_file()

    def mode(self) -> str:
        """How it answers, in words."""
        if self.live:
            return "live"
        if self.cassette.is_file():
            return f"offline, replaying recorded answers; set {self.key} to ask anything"
        return f"unavailable (no recording; set {self.key})"


PROVIDERS = {
    provider.name: provider
    for provider in (
        Provider(
            "openai",
            "OPENAI_API_KEY",
            ask_openai,
            (
                "Quelle est la hauteur du mont Blanc aujourd’hui ?",
                "富士山の高さは何メートルですか？",  # noqa: RUF001 - Japanese punctuation
            ),
        ),
        Provider(
            "anthropic",
            "ANTHROPIC_API_KEY",
            ask_anthropic,
            (
                "Wie lang ist der Gotthard-Basistunnel, und seit wann fahren dort Züge?",
                "¿Cuándo se inauguró el Canal de Panamá?",
            ),
        ),
        Provider(
            "gemini",
            "GEMINI_API_KEY",
            ask_gemini,
            ("Quanto è alta la Torre di Pisa?", "Πότε χτίστηκε ο Παρθενώνας;"),  # noqa: RUF001
        ),
    )
}


def question_of(body: Any) -> str:
    """The user's question in a request body of any of the three APIs."""
    try:
        data = json.loads(body) if isinstance(body, (str, bytes)) else body
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    if isinstance(data.get("input"), str):  # OpenAI Responses
        return str(data["input"])
    if data.get("messages"):  # Anthropic Messages
        content = data["messages"][-1].get("content")
        if isinstance(content, list):
            return " ".join(b.get("text", "") for b in content if isinstance(b, dict))
        return str(content)
    if data.get("contents"):  # Gemini generateContent
        parts = data["contents"][-1].get("parts") or [{}]
        return str(parts[-1].get("text", ""))
    return ""


def same_question(recorded: Any, made: Any) -> bool:
    """Match a recorded request to one asking the same question (a vcrpy matcher)."""
    return question_of(recorded.body) == question_of(made.body)


def _key(question: str) -> str:
    """A question reduced to its letters and digits, for matching what is typed."""
    return re.sub(r"\W+", "", question.casefold())


# --- settings -----------------------------------------------------------------------------------


def settings_file(env: Mapping[str, str] = os.environ) -> Path:
    """Where the saved settings live: ``UNICITE_SETTINGS_FILE``, else the config folder."""
    if env.get("UNICITE_SETTINGS_FILE"):
        return Path(env["UNICITE_SETTINGS_FILE"]).expanduser()
    if os.name == "nt" and env.get("APPDATA"):
        base = Path(env["APPDATA"])
    else:
        base = Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "unicite" / "settings.json"


def load_settings(path: Path) -> dict[str, Any]:
    """The saved settings; none when the file is missing or unreadable (said once)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as err:
        print(f"(ignoring the settings file {path}: {err})")
        return {}
    return data if isinstance(data, dict) else {}


def save_settings(path: Path, settings: dict[str, Any]) -> None:
    """Write the settings whole, replacing the file only once the new one is complete."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    partial.replace(path)


# --- the chat -----------------------------------------------------------------------------------

HELP = """\
Commands:
  /set citations enabled|disabled   show sources after answers, or not (saved)
  /unset citations                  back to the default: disabled
  /provider [NAME]                  list the providers, or switch to NAME
  /questions                        the recorded questions (offline)
  /help, /quit
Start a message with --citations=enabled (or disabled) to decide for that message only."""

_FLAG = re.compile(r"--citations=(\S*)\s*", re.IGNORECASE)


def without_citations(answer: unicite.CitedAnswer) -> unicite.CitedAnswer:
    """The answer's text alone: the provider's inline citation links cut out, no sources."""
    text = answer.text
    spans = sorted({c.marker_span for c in answer.citations if c.marker_span}, reverse=True)
    for start, end in spans:
        while start > 0 and text[start - 1] in " \t":
            start -= 1
        text = text[:start] + text[end:]
    return unicite.CitedAnswer(text=text, provider=answer.provider, model=answer.model)


class Chat:
    """The read-eval-print loop's state: the provider, the settings, how to print."""

    def __init__(self, provider: str, settings_path: Path, hyperlinks: bool | None) -> None:
        self.provider = PROVIDERS[provider]
        self.settings_path = settings_path
        self.settings = load_settings(settings_path)
        self.hyperlinks = hyperlinks

    def saved_citations(self) -> str | None:
        """The saved citations setting, or None when there is none (or it is not a toggle)."""
        value = self.settings.get("citations")
        try:
            unicite.resolve_enabled(None, value)
        except unicite.UsageError:
            return None
        return value if isinstance(value, str) and value.strip() else None

    def status(self) -> str:
        """Whether citations are on, and which level decided it."""
        saved = self.saved_citations()
        state = "enabled" if unicite.resolve_enabled(None, saved) else "disabled"
        origin = f"saved in {self.settings_path}" if saved else "the default"
        return f"citations: {state} ({origin})"

    def banner(self) -> None:
        """What the chat prints when it starts."""
        print(f"unicite terminal chat · provider {self.provider.name}")
        print(f"  {self.provider.mode()}")
        print(self.status())
        print("Type a question, or /help.")
        if not self.provider.live:
            self.list_questions()

    def list_questions(self) -> None:
        """The questions the provider's recording answers."""
        print(f"Recorded questions for {self.provider.name} (type one, or its number):")
        for n, question in enumerate(self.provider.questions, 1):
            print(f"  {n}. {question}")

    def handle(self, line: str) -> bool:
        """Act on one line; False once the chat should end."""
        line = line.strip()
        if not line:
            return True
        if line.startswith("/"):
            return self.command(line)
        explicit = None
        flag = _FLAG.match(line)
        if flag:
            explicit, line = flag.group(1), line[flag.end() :]
        try:
            enabled = unicite.resolve_enabled(explicit, self.saved_citations())
        except unicite.UsageError:
            print("Usage: --citations=enabled|disabled QUESTION")
            return True
        self.ask(line, enabled)
        return True

    def command(self, line: str) -> bool:
        """A ``/`` command."""
        words = line.split()
        name, args = words[0].lower(), [w.lower() for w in words[1:]]
        if name in ("/quit", "/exit"):
            return False
        if name == "/help":
            print(HELP)
        elif name == "/questions":
            self.list_questions()
        elif name == "/provider":
            self.switch(args)
        elif name == "/set" and args[:1] == ["citations"] and len(args) == 2:
            self.set_citations(args[1])
        elif name == "/unset" and args == ["citations"]:
            self.settings.pop("citations", None)
            save_settings(self.settings_path, self.settings)
            print(f"Citations back to the default. {self.status()}")
        elif name in ("/set", "/unset"):
            print("Usage: /set citations enabled|disabled, or /unset citations")
        else:
            print(f"Unknown command {words[0]}. {HELP}")
        return True

    def set_citations(self, word: str) -> None:
        """``/set citations WORD``: saved, so that the next session starts with it."""
        try:
            enabled = unicite.resolve_enabled(word)
        except unicite.UsageError:
            print("Usage: /set citations enabled|disabled")
            return
        self.settings["citations"] = "enabled" if enabled else "disabled"
        save_settings(self.settings_path, self.settings)
        if enabled:
            print("Citations enabled. Structured source references will appear after responses")
            print("(when available from your provider).")
        else:
            print("Citations disabled.")
        print(f"(saved in {self.settings_path})")

    def switch(self, args: list[str]) -> None:
        """``/provider [NAME]``."""
        if not args:
            for each in PROVIDERS.values():
                mark = "*" if each is self.provider else " "
                print(f" {mark} {each.name}: {each.mode()}")
            return
        chosen = PROVIDERS.get(args[0])
        if chosen is None:
            print(f"No provider {args[0]!r}; there are {', '.join(PROVIDERS)}.")
        elif not chosen.available:
            print(f"{chosen.name} is {chosen.mode()}.")
        else:
            self.provider = chosen
            print(f"Provider {chosen.name}: {chosen.mode()}.")
            if not chosen.live:
                self.list_questions()

    def ask(self, question: str, citations: bool) -> None:
        """Ask the provider, then print its answer, with its sources when citations are on."""
        provider = self.provider
        if not provider.live:
            recorded = {_key(q): q for q in provider.questions}
            if question.isdigit() and 1 <= int(question) <= len(provider.questions):
                question = provider.questions[int(question) - 1]
            elif _key(question) not in recorded:
                print(f"Offline, {provider.name} answers only its recorded questions.")
                self.list_questions()
                return
            else:
                question = recorded[_key(question)]  # as recorded, typography included
        player = live_or_replay(provider.cassette, env=provider.key, match_on=[same_question])
        try:
            with player:
                response = provider.ask(question, os.environ[provider.key], not provider.live)
        except Exception as err:  # the API's errors: keep the chat going
            print(f"{provider.name} failed: {type(err).__name__}: {err}")
            return
        answer = unicite.extract(response)
        shown = answer if citations else without_citations(answer)
        print(unicite.render(shown, "terminal", hyperlinks=self.hyperlinks))
        print()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A terminal chat with cited answers.")
    parser.add_argument("--provider", choices=sorted(PROVIDERS), default="openai")
    parser.add_argument(
        "--hyperlinks",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="OSC 8 links on or off (default: as the terminal supports them)",
    )
    args = parser.parse_args(argv)
    with suppress(ImportError):
        import readline  # noqa: F401 - line editing and history for input()

    chat = Chat(args.provider, settings_file(), args.hyperlinks)
    chat.banner()
    while True:
        try:
            line = input("> ")
        except (EOFError, KeyboardInterrupt):
            print()
            break
        if not chat.handle(line):
            break


if __name__ == "__main__":
    main()
