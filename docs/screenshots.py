"""Regenerate the rendering screenshots: docs/images/terminal.png and docs/images/html.png.

    uv run python docs/screenshots.py                      # needs Chromium on PATH
    uv run python docs/screenshots.py --chromium /usr/bin/chromium

Both show one answer, extracted from an Anthropic response with web search citations:
``unicite.render(answer, "terminal")`` in a page styled as a terminal (OSC 8 hyperlinks shown as
links, as a terminal that supports them shows them), and ``unicite.render(answer, "html")`` in
a plain page with the second marker focused, so its tooltip is open. Headless Chromium takes
each screenshot.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import unicite

IMAGES = Path(__file__).resolve().parent / "images"
WIDTH = 78  # terminal columns

_PAGES = (
    (
        "https://www.stadt-zuerich.ch/de/stadtleben/statistik.html",
        "Statistik Stadt Zürich",
        "Ende 2024 zählte die Stadt Zürich 447’082 Einwohnerinnen und Einwohner.",
    ),
    (
        "https://statistique.ge.ch/population",
        "Population – Office cantonal de la statistique",
        "La ville de Genève compte environ 203’000 habitants.",
    ),
    (
        "https://www.bern.ch/statistik",
        "Statistikdienste der Stadt Bern",
        "Die Stadt Bern hat rund 146’000 Einwohnerinnen und Einwohner.",
    ),
)


def _cited(text: str, page: int) -> dict[str, object]:
    url, title, quote = _PAGES[page]
    location = {
        "type": "web_search_result_location",
        "url": url,
        "title": title,
        "encrypted_index": "example",
        "cited_text": quote,
    }
    return {"type": "text", "text": text, "citations": [location]}


def response() -> dict[str, object]:
    """An Anthropic Message answering from a server-side web search."""
    search = {"query": "Einwohner Zürich Genf Bern"}
    results = [
        {"type": "web_search_result", "url": url, "title": title, "encrypted_content": "example"}
        for url, title, _ in _PAGES
    ]
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "stop_reason": "end_turn",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": search},
            {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results},
            {"type": "text", "text": "Zürich ist die grösste Stadt der Schweiz: "},
            _cited("Ende 2024 lebten dort 447’082 Menschen", 0),
            {"type": "text", "text": ". Es folgen "},
            _cited("Genf mit rund 203’000", 1),
            {"type": "text", "text": " und die Bundesstadt "},
            _cited("Bern mit etwa 146’000 Einwohnern", 2),
            {"type": "text", "text": "."},
        ],
    }  # fmt: skip


_OSC8 = re.compile(r"\x1b\]8;;(.*?)\x1b\\(.*?)\x1b\]8;;\x1b\\", re.DOTALL)


def terminal_page(output: str) -> str:
    """A page showing terminal output, its OSC 8 hyperlinks as links."""
    parts, end = [], 0
    for match in _OSC8.finditer(output):
        parts.append(html.escape(output[end : match.start()]))
        parts.append(f'<a href="{html.escape(match[1])}">{html.escape(match[2])}</a>')
        end = match.end()
    parts.append(html.escape(output[end:]))
    body = "".join(parts)
    return f"""<!doctype html>
<meta charset="utf-8">
<style>
  html, body {{ margin: 0; background: #e8e8ec; }}
  .window {{ margin: 16px; border-radius: 8px; overflow: hidden; background: #1e1f29;
             box-shadow: 0 4px 16px rgba(0, 0, 0, .25); }}
  .bar {{ height: 28px; background: #33343f; display: flex; align-items: center; gap: 7px;
          padding: 0 12px; }}
  .bar i {{ width: 12px; height: 12px; border-radius: 50%; display: block; }}
  pre {{ margin: 0; padding: 14px 16px 16px; color: #e6e6e6; white-space: pre;
         font: 15px/1.45 "DejaVu Sans Mono", "Liberation Mono", monospace; }}
  .prompt {{ color: #8be28b; }}
  a {{ color: #8ab4f8; text-decoration: underline; text-decoration-style: dotted; }}
</style>
<div class="window">
  <div class="bar"><i style="background:#ff5f57"></i><i style="background:#febc2e"></i>
    <i style="background:#28c840"></i></div>
  <pre><span class="prompt">$</span> unicite extract response.json
{body}
<span class="prompt">$</span> </pre>
</div>
"""


def html_page(fragment: str) -> str:
    """A page holding an HTML rendering, its second marker focused (tooltip open)."""
    return f"""<!doctype html>
<meta charset="utf-8">
<style>
  html, body {{ margin: 0; background: #fff; color: #1f2328; }}
  main {{ max-width: 760px; margin: 0 auto; padding: 24px 28px;
          font: 17px/1.5 "DejaVu Sans", "Liberation Sans", sans-serif; }}
</style>
<main>
{fragment}
</main>
<script>document.querySelectorAll(".unicite-cite a")[1].focus();</script>
"""


def screenshot(chromium: str, page: str, out: Path, size: tuple[int, int]) -> None:
    """Write a screenshot of ``page`` (HTML) at ``size`` (width, height) to ``out``."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "page.html"
        source.write_text(page, encoding="utf-8")
        subprocess.run(  # noqa: S603 - a browser binary the user chose
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--force-device-scale-factor=1",
                f"--user-data-dir={tmp}/profile",
                f"--window-size={size[0]},{size[1]}",
                f"--screenshot={out}",
                source.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    print(f"wrote {out.relative_to(IMAGES.parent.parent)}")


def main(argv: list[str]) -> int:
    """Render the answer both ways and take the two screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args(argv)
    answer = unicite.extract(response())
    if answer.diagnostics:
        raise SystemExit(f"the example response no longer reads cleanly: {answer.diagnostics}")
    IMAGES.mkdir(exist_ok=True)
    terminal = unicite.render(answer, "terminal", hyperlinks=True, width=WIDTH)
    lines = terminal.count("\n") + 3  # the output, and the two prompt lines
    height = 16 + 28 + 14 + round(lines * 15 * 1.45) + 16 + 16
    screenshot(args.chromium, terminal_page(terminal), IMAGES / "terminal.png", (800, height))
    rendered = unicite.render(answer, "html", prefix="shot")
    screenshot(args.chromium, html_page(rendered), IMAGES / "html.png", (820, 360))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
