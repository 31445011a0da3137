"""Terminal specifics: hyperlink detection, wrapping, option checking."""

from __future__ import annotations

import io
import re

import pytest
from _width import display_width

from unicite import Citation, CitedAnswer, Source, UsageError, render, supports_hyperlinks


class Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class Closed(io.StringIO):
    def isatty(self) -> bool:
        raise ValueError("I/O operation on closed file")


TTY = Stream(tty=True)
PIPE = Stream(tty=False)


@pytest.mark.parametrize(
    ("stream", "env", "expected"),
    [
        # FORCE_HYPERLINK wins over everything, both ways.
        (PIPE, {"FORCE_HYPERLINK": "1"}, True),
        (PIPE, {"FORCE_HYPERLINK": ""}, True),
        (TTY, {"FORCE_HYPERLINK": "0", "TERM_PROGRAM": "iTerm.app"}, False),
        (TTY, {"FORCE_HYPERLINK": "false", "WT_SESSION": "x"}, False),
        (TTY, {"FORCE_HYPERLINK": "1", "TERM": "dumb"}, True),
        # Not a TTY, or a dumb terminal: no links, whatever the terminal.
        (PIPE, {"TERM_PROGRAM": "iTerm.app"}, False),
        (Closed(), {"TERM_PROGRAM": "iTerm.app"}, False),
        (TTY, {"TERM": "dumb", "TERM_PROGRAM": "vscode"}, False),
        # Known terminals.
        (TTY, {"TERM_PROGRAM": "iTerm.app"}, True),
        (TTY, {"TERM_PROGRAM": "WezTerm"}, True),
        (TTY, {"TERM_PROGRAM": "vscode"}, True),
        (TTY, {"TERM_PROGRAM": "Hyper"}, True),
        (TTY, {"TERM_PROGRAM": "ghostty"}, True),
        (TTY, {"TERM_PROGRAM": "Tabby"}, True),
        (TTY, {"TERM_PROGRAM": "Apple_Terminal"}, False),
        (TTY, {"VTE_VERSION": "5000"}, True),
        (TTY, {"VTE_VERSION": "7200"}, True),
        (TTY, {"VTE_VERSION": "4802"}, False),
        (TTY, {"VTE_VERSION": "0.50.0"}, False),
        (TTY, {"VTE_VERSION": "5000²"}, False),  # isdigit() but no int
        (TTY, {"VTE_VERSION": "9" * 5000}, False),  # more digits than int() reads
        (TTY, {"WT_SESSION": "c1d4e8f0-1111-2222-3333-444455556666"}, True),
        (TTY, {"KITTY_WINDOW_ID": "1"}, True),
        (TTY, {"KONSOLE_VERSION": "230805"}, True),
        (TTY, {"DOMTERM": "QtDomTerm;version=3"}, True),
        (TTY, {"TERM": "xterm-kitty"}, True),
        (TTY, {"TERM": "xterm-256color"}, False),
        (TTY, {}, False),
        # NO_COLOR is about colour, not links.
        (TTY, {"NO_COLOR": "1", "TERM_PROGRAM": "WezTerm"}, True),
        (TTY, {"NO_COLOR": "1"}, False),
    ],
)
def test_supports_hyperlinks(stream: io.StringIO, env: dict[str, str], expected: bool) -> None:
    assert supports_hyperlinks(stream, env) is expected


def test_detection_uses_stdout_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = CitedAnswer(text="x", sources=[Source(id="a", url="https://a.example/")])
    monkeypatch.setenv("FORCE_HYPERLINK", "1")
    assert "\x1b]8;;https://a.example/\x1b\\" in render(answer, width=80)
    monkeypatch.setenv("FORCE_HYPERLINK", "0")
    assert "\x1b" not in render(answer, width=80)
    monkeypatch.delenv("FORCE_HYPERLINK")
    monkeypatch.setattr("sys.stdout", PIPE)
    monkeypatch.setenv("TERM_PROGRAM", "WezTerm")
    assert "\x1b" not in render(answer, width=80)


def test_default_width_is_the_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = CitedAnswer(text="mot " * 40)
    monkeypatch.setenv("COLUMNS", "30")
    lines = render(answer, hyperlinks=False).split("\n")
    assert max(map(len, lines)) <= 30
    assert len(lines) > 1


LONG_URL = "https://example.com/" + "a" * 70
WIDE = CitedAnswer(
    text=(
        "Un paragraphe assez long pour être coupé plusieurs fois [1] avec des marqueurs.\n"
        "- un élément de liste qui déborde lui aussi de la largeur demandée\n"
        "> une citation qui déborde elle aussi de la largeur demandée\n"
        "```\n"
        "une ligne de code qui ne doit jamais être coupée même si elle est longue\n"
        "```\n"
        "東京タワーは東京都港区芝公園にある総合電波塔です 東京タワーの高さは333メートルです"
    ),
    sources=[Source(id="a", url=LONG_URL, title="Un titre assez long pour déborder")],
    citations=[Citation(start=0, end=13, text="Un paragraphe", source_ids=["a"])],
)


@pytest.mark.parametrize("links", [True, False])
def test_wrapping_at_40(links: bool) -> None:
    out = render(WIDE, "terminal", hyperlinks=links, width=40)
    lines = out.split("\n")
    plain = [re.sub(r"\x1b\]8;;[^\x1b]*\x1b\\", "", line) for line in lines]
    for line in plain:
        if display_width(line) > 40:
            assert line.strip() in {
                LONG_URL,
                "une ligne de code qui ne doit jamais être coupée même si elle est longue",
            }
    assert "- un élément de liste qui déborde lui" in plain
    assert "  aussi de la largeur demandée" in plain  # hanging indent under the bullet
    assert "> une citation qui déborde elle aussi de" in plain
    assert "> la largeur demandée" in plain
    # Wide characters count two columns, and lines may break between them.
    assert "東京タワーは東京都港区芝公園にある総合電" in plain
    assert "波塔です 東京タワーの高さは333メートルで" in plain
    if links:
        assert f"   \x1b]8;;{LONG_URL}\x1b\\{LONG_URL}\x1b]8;;\x1b\\" in lines


def test_no_break_before_closing_cjk_punctuation() -> None:
    out = render(CitedAnswer(text="東京タワーです。東京タワー"), hyperlinks=False, width=14)
    assert out == "東京タワーで\nす。東京タワー"


def test_marker_stays_with_its_word() -> None:
    text = "abcdefghij ([site](https://a.example/)) klm"
    link = "([site](https://a.example/))"
    at = text.index(link)
    answer = CitedAnswer(
        text=text,
        sources=[Source(id="a", url="https://a.example/")],
        citations=[
            Citation(
                start=0,
                end=10,
                text="abcdefghij",
                source_ids=["a"],
                marker_span=(at, at + len(link)),
            )
        ],
    )
    body = render(answer, hyperlinks=False, width=12).split("\n\n")[0]
    assert body == "abcdefghij [1]\nklm"


@pytest.mark.parametrize(
    "options",
    [
        {"format": "pdf"},
        {"sources": "some"},
        {"markers": "roman"},
        {"width": 0},
        {"width": "80"},
        {"width": True},
        {"hyperlinks": "yes"},
    ],
)
def test_bad_options_raise_usage_error(options: dict[str, object]) -> None:
    answer = CitedAnswer(text="x")
    with pytest.raises(UsageError):
        render(answer, **options)  # type: ignore[arg-type]


def test_render_needs_an_answer() -> None:
    with pytest.raises(UsageError):
        render({"text": "x"})  # type: ignore[arg-type]


def test_sources_without_title_or_url_are_named_by_provider_id_or_kind() -> None:
    answer = CitedAnswer(
        text="x",
        sources=[
            Source(id="f", provider_id="file-abc123", kind="file"),
            Source(id="d", kind="document", content="text"),
        ],
    )
    assert render(answer, "text") == "x\n\nSources\n1. file-abc123\n2. document"
