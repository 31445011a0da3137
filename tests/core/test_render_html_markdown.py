"""HTML rendering of the answer's Markdown: structure, marker placement and inertness."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unicite import Citation, CitedAnswer, Source, inject_markers, render

PREFIX = "md"
SOURCES = [
    Source(
        id="wiki",
        url="https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
        title="Viaduc de Millau — Wikipédia",
    ),
    Source(id="tokyo", url="https://www.tokyotower.co.jp/", title="東京タワー"),
    Source(id="pdf", kind="document", title="Rapport d’inauguration.pdf"),
]
SUP_RE = re.compile(r'<sup class="unicite-cite"><a href="#md-src-(\d+)".*?</sup>', re.DOTALL)
PLACEHOLDER = "\ufffc"
MARKDOWN_TAGS = {
    *("p", "br", "strong", "em", "s", "ul", "ol", "li", "code", "pre", "blockquote", "hr"),
    *("h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td", "a"),
    *("sup", "span"),  # the markers
}


def answer(text: str, *ends: str | tuple[str, str]) -> CitedAnswer:
    """``text`` with one citation per end: a citation ends right after the first occurrence of
    the given substring; a pair ``(claim, marker)`` cites ``claim`` through the model-written
    ``marker``, which the renderer replaces."""
    citations = []
    for number, end in enumerate(ends):
        source = SOURCES[number % len(SOURCES)].id
        if isinstance(end, tuple):
            claim, marker = end
            start = text.index(claim)
            at = text.index(marker, start)
            citations.append(
                Citation(
                    start=start,
                    end=start + len(claim),
                    text=claim,
                    source_ids=[source],
                    marker_span=(at, at + len(marker)),
                )
            )
        else:
            stop = text.index(end) + len(end)
            citations.append(Citation(start=0, end=stop, text=text[:stop], source_ids=[source]))
    return CitedAnswer(text=text, sources=SOURCES, citations=citations)


def html_answer(value: CitedAnswer) -> str:
    """The answer part of the HTML rendering (the text with its markers)."""
    out = render(value, "html", prefix=PREFIX)
    match = re.search(r'<div class="unicite-answer">(.*?)</div>\n', out + "\n", re.DOTALL)
    return match.group(1) if match else ""


def shown(html: str) -> str:
    """The HTML with each marker written ``{n}``: what the text looks like, briefly."""
    return SUP_RE.sub(lambda match: "{" + match.group(1) + "}", html)


class Tags(HTMLParser):
    """Every start tag with its attributes."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def check_inert(html: str) -> None:
    """Only Markdown tags, links only to a source or to http(s) with the safe attributes."""
    for tag, attrs in Tags(html).tags:
        assert tag in MARKDOWN_TAGS, tag
        assert not any(name.startswith("on") or name in {"src", "style"} for name in attrs)
        if tag == "a":
            href = attrs.get("href") or ""
            if href.startswith("#"):
                assert re.fullmatch(rf"#{PREFIX}-src-\d+", href), href
            else:
                assert re.fullmatch(r"https?://[\x21-\x7e]+", href), href
                assert attrs["rel"] == "noopener noreferrer nofollow"
                assert attrs["target"] == "_blank"
    assert PLACEHOLDER not in html


# --- Markdown structure -------------------------------------------------------------------------


def test_the_issue_example_renders_as_markdown() -> None:
    text = "Le viaduc mesure **343 mètres**[1].\n\n- premier point[2]\n- second"
    out = html_answer(answer(text, ("Le viaduc mesure **343 mètres**", "[1]"), ("premier", "[2]")))
    assert shown(out) == (
        "<p>Le viaduc mesure <strong>343 mètres</strong>{1}.</p>\n"
        "<ul>\n<li>premier point{2}</li>\n<li>second</li>\n</ul>"
    )
    assert "**" not in out
    assert "- " not in out


def test_emphasis_strikethrough_and_marker_inside_bold() -> None:
    text = "Le viaduc est **très haut** et *élégant*, ~~bas~~ __gras__ fin."
    out = html_answer(answer(text, "très", "élégant*", "__gras__"))
    assert shown(out) == (
        "<p>Le viaduc est <strong>très{1} haut</strong> et <em>élégant</em>{2}, "
        "<s>bas</s> <strong>gras</strong>{3} fin.</p>"
    )


def test_marker_inside_a_list_item_and_an_ordered_list() -> None:
    text = "- 東京タワー\n- 通天閣\n\n3. trois\n4. quatre"
    out = html_answer(answer(text, "東京タワー", "trois"))
    assert shown(out) == (
        "<ul>\n<li>東京タワー{1}</li>\n<li>通天閣</li>\n</ul>\n"
        '<ol start="3">\n<li>trois{2}</li>\n<li>quatre</li>\n</ol>'
    )


def test_headings_and_blockquote() -> None:
    text = "## 東京タワー\n\nLe titre\n===\n\n> Une citation célèbre.\n> Suite."
    out = html_answer(answer(text, "東京タワー", "===", "célèbre."))
    assert shown(out) == (
        "<h2>東京タワー{1}</h2>\n<h1>Le titre{2}</h1>\n"
        "<blockquote>\n<p>Une citation célèbre.{3}<br>\nSuite.</p>\n</blockquote>"
    )


def test_table_with_alignment_and_markers_in_cells() -> None:
    text = "| Ville | Hauteur |\n|:---|---:|\n| 東京 | 333 m |\n| Millau | 343 m |\n\nFin."
    out = html_answer(answer(text, "東京", "333 m |", "|---:|"))
    assert shown(out) == (
        "<table>\n<thead>\n<tr>\n"
        '<th class="unicite-align-left">Ville</th>\n'
        '<th class="unicite-align-right">Hauteur{3}</th>\n'
        "</tr>\n</thead>\n<tbody>\n<tr>\n"
        '<td class="unicite-align-left">東京{1}</td>\n'
        '<td class="unicite-align-right">333 m{2}</td>\n'
        "</tr>\n<tr>\n"
        '<td class="unicite-align-left">Millau</td>\n'
        '<td class="unicite-align-right">343 m</td>\n'
        "</tr>\n</tbody>\n</table>\n<p>Fin.</p>"
    )


def test_code_is_shown_verbatim_and_markers_follow_it() -> None:
    text = "Écrire `x = **1**` puis :\n\n```python\nprint('東京 <b>')\n```\n\nFin."
    out = html_answer(answer(text, "`x =", "print('東京", "```python\nprint('東京 <b>')\n```"))
    assert shown(out) == (
        "<p>Écrire <code>x = **1**</code>{1} puis :</p>\n"
        '<pre><code class="language-python">'
        "print(&#x27;東京 &lt;b&gt;&#x27;)\n</code>{2}{3}</pre>\n"
        "<p>Fin.</p>"
    )


def test_single_newlines_break_lines_and_blank_lines_separate_paragraphs() -> None:
    text = "Première ligne\nDeuxième ligne\n\n\n  Second paragraphe : 東京。"
    out = html_answer(answer(text, "Deuxième ligne"))
    assert shown(out) == (
        "<p>Première ligne<br>\nDeuxième ligne{1}</p>\n<p>Second paragraphe : 東京。</p>"
    )


def test_fallback_sources_only_answer_keeps_its_paragraph() -> None:
    value = CitedAnswer(text="Réponse sans marqueurs.", sources=SOURCES)
    assert html_answer(value) == "<p>Réponse sans marqueurs.</p>"


# --- links and markers ------------------------------------------------------------------------


def test_http_links_get_the_safe_attributes_and_markers_stay_out_of_them() -> None:
    text = "Voir [Wikipédia](https://fr.wikipedia.org/wiki/Viaduc) et [東京](https://www.tokyo.jp)."
    out = html_answer(answer(text, "[Wiki", "https://fr.wiki", "[東京]", "jp)"))
    assert shown(out) == (
        '<p>Voir <a href="https://fr.wikipedia.org/wiki/Viaduc" rel="noopener noreferrer '
        'nofollow" target="_blank">Wikipédia</a>{1}{2} et <a href="https://www.tokyo.jp" '
        'rel="noopener noreferrer nofollow" target="_blank">東京</a>{3}{1}.</p>'
    )
    check_inert(out)
    # No marker inside an <a>: every </a> closes before the next marker opens.
    assert not re.search(r"<a href=\"https[^>]*>[^<]*<sup", out)


def test_marker_between_label_and_destination_does_not_split_the_link() -> None:
    text = "Voir [Wikipédia](https://fr.wikipedia.org/) pour plus."
    out = html_answer(answer(text, "[Wikipédia]"))
    assert shown(out) == (
        '<p>Voir <a href="https://fr.wikipedia.org/" rel="noopener noreferrer nofollow" '
        'target="_blank">Wikipédia</a>{1} pour plus.</p>'
    )


def test_model_written_inline_link_marker_is_replaced() -> None:
    link = "([fr.wikipedia.org](https://fr.wikipedia.org/wiki/Viaduc_de_Millau))"
    text = f"Le viaduc mesure **343 m** {link}."
    out = html_answer(answer(text, ("Le viaduc mesure **343 m**", link)))
    assert shown(out) == "<p>Le viaduc mesure <strong>343 m</strong> {1}.</p>"


def test_markers_the_structure_would_swallow_are_kept() -> None:
    text = "Intro.\n\n```\ncode 東京\n```\n\nTitre\n---\n\n[ref] fin.\n\n[ref]: https://ex.example/"
    out = html_answer(answer(text, "```\ncode 東京\n```", "Titre\n---", "https://ex.example/"))
    assert shown(out) == (
        "<p>Intro.</p>\n<pre><code>code 東京\n</code>{1}</pre>\n<h2>Titre{2}</h2>\n"
        '<p><a href="https://ex.example/" rel="noopener noreferrer nofollow" target="_blank">'
        "ref</a>{3} fin.</p>"
    )


def test_marker_in_a_consumed_reference_definition_is_appended() -> None:
    text = 'Texte.\n\n[ref]: https://ex.example/ "titre 東京"'
    out = html_answer(answer(text, "titre"))
    assert shown(out) == "<p>Texte.</p>\n<p>{1}</p>"


def test_marker_count_matches_the_plan_across_constructs() -> None:
    text = (
        "# Titre 東京\n\nUn **gras** et `code` [lien](https://ex.example/a).\n\n"
        "- un\n- deux\n\n> cité\n\n| a | b |\n|---|---|\n| c | d |\n\n```\nx\n```\n"
    )
    ends = ["東京", "gras", "`code`", "lien", "](https://ex", "un", "deux", "cité", "| c |"]
    ends.append("```\nx")
    value = answer(text, *ends, *ends)
    out = html_answer(value)
    planned = sum(
        len(found.split(","))
        for found in re.findall(r"\[\[S:([0-9,]+)\]\]", inject_markers(value, "sids").text)
    )
    assert len(SUP_RE.findall(out)) == planned == 20
    ids = re.findall(r'id="(md-tip-\d+)"', out)
    assert ids == [f"md-tip-{n}" for n in range(1, 21)]
    check_inert(out)


# --- hostile Markdown ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "link",
    [
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](jav&#x61;script:alert(1))",
        "[x](data:text/html,<script>alert(1)</script>)",
        "[x](vbscript:msgbox(1))",
        "[x](file:///etc/passwd)",
        "[x](/relative/page)",
        "[x](//evil.example/x)",
        "<javascript:alert(1)>",
        "<mailto:a@b.example>",
        "[x][r]\n\n[r]: javascript:alert(1)",
        "![i](data:image/png;base64,AAAA)",
    ],
)
def test_non_http_links_stay_text(link: str) -> None:
    text = f"Attention : {link} fin."
    out = html_answer(answer(text, "Attention"))
    check_inert(out)
    assert '<a href="#md-src-1"' in out
    assert len(re.findall(r"<a ", out)) == 1  # the marker's own link only
    assert "fin." in out


def test_images_never_load() -> None:
    text = "![logo 東京](http://evil.example/x.png) et ![](https://evil.example/y.png)"
    out = html_answer(answer(text, "x.png)"))
    assert "<img" not in out
    assert shown(out) == (
        '<p><a href="http://evil.example/x.png" rel="noopener noreferrer nofollow" '
        'target="_blank">logo 東京</a>{1} et <a href="https://evil.example/y.png" '
        'rel="noopener noreferrer nofollow" target="_blank">https://evil.example/y.png</a></p>'
    )


def test_raw_html_is_shown_as_text() -> None:
    text = (
        "<script>alert('東京')</script>\n\n<img src=x onerror=alert(1)> et <b>gras</b>\n\n"
        "<div>\n<iframe src=https://evil.example></iframe>\n</div>"
    )
    out = html_answer(answer(text, "gras</b>"))
    check_inert(out)
    for tag in ("<script", "<img", "<b>", "<iframe", "<div"):
        assert tag not in out
    assert "&lt;script&gt;alert(&#x27;東京&#x27;)&lt;/script&gt;" in out
    assert "&lt;img src=x onerror=alert(1)&gt;" in out
    assert "&lt;b&gt;gras&lt;/b&gt;{1}" in shown(out)


def test_decoded_entities_are_sanitised() -> None:
    text = "a&#x202e;b &#8238;c &#x200b;d &#27;e [x](https://ex.example/&#x202e;) `&#x202e;`"
    out = html_answer(answer(text, "e "))
    assert "\u202e" not in out
    assert "\u200b" not in out
    assert "\x1b" not in out
    assert "<code>&amp;#x202e;</code>" in out  # code is not decoded: shown as written
    check_inert(out)


# --- placeholders -------------------------------------------------------------------------------


def test_answer_text_holding_placeholder_characters_renders_correctly() -> None:
    text = (
        "Avant \ufffc0\ufffc et \ufffc1\ufffc, puis &#xfffc;0&#xFFFC; et &#65532;1&#65532;.\n\n"
        "- \ufffc point 東京\n"
    )
    out = html_answer(answer(text, "Avant", "puis", "東京"))
    assert shown(out) == (
        "<p>Avant{1} 0 et 1, puis{2} &amp;#xfffc;0&amp;#xFFFC; et &amp;#65532;1&amp;#65532;.</p>\n"
        "<ul>\n<li>point 東京{3}</li>\n</ul>"
    )
    assert PLACEHOLDER not in render(answer(text, "Avant"), "html")


def test_percent_encoded_placeholders_in_an_autolink_are_not_markers() -> None:
    text = "Lien <https://ex.example/%EF%BF%BC0%EF%BF%BC%EF%BF%BC1%EF%BF%BC> 東京 fin."
    out = html_answer(answer(text, "東京", "fin."))
    assert shown(out) == (
        '<p>Lien <a href="https://ex.example/%EF%BF%BC0%EF%BF%BC%EF%BF%BC1%EF%BF%BC" '
        'rel="noopener noreferrer nofollow" target="_blank">https://ex.example/01</a> '
        "東京{1} fin.{2}</p>"
    )


# --- determinism --------------------------------------------------------------------------------


def test_rendering_is_deterministic() -> None:
    text = "## Résumé\n\n**Le viaduc** mesure 343 m.\n\n| a | b |\n|---|---|\n| 東 | 京 |\n"
    value = answer(text, "viaduc", "東")
    first = render(value, "html")
    assert render(value, "html") == first
    assert render(CitedAnswer.from_json(value.to_json()), "html") == first


# --- properties ---------------------------------------------------------------------------------

PIECES = st.sampled_from(
    [
        *("a", "é", "東京", " ", "\n", "\n\n", "\t", "    ", "0", "1", ":", "\\"),
        *("*", "**", "_", "__", "~~", "`", "```", "```py\n", "~~~\n", "===", "---"),
        *("|", "| a |", "|---|", "- ", "1. ", "# ", "> ", "[", "]", "(", ")", "](", "!"),
        *("[x](https://ex.example/a)", "](javascript:x)", "![i](http://evil.example/x.png)"),
        *("<", ">", "<script>", "<https://ex.example/>", "&", "&amp;", "&#xfffc;", "&#65532;"),
        *("\ufffc", "\ufffc0\ufffc", "\ufffc1\ufffc", "&#x202e;", "\u202e", "[r]: http://r.ex/"),
        *("<https://ex.example/%EF%BF%BC0%EF%BF%BC", "%EF%BF%BC", "%E2%80%AE"),
    ]
)


@st.composite
def markdown_answers(draw: st.DrawFn) -> CitedAnswer:
    text = "".join(draw(st.lists(PIECES, max_size=30)))
    citations = []
    for _ in range(draw(st.integers(0, 8))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, len(text)))
        span = None
        if draw(st.booleans()):
            left = draw(st.integers(0, len(text)))
            span = (left, draw(st.integers(left, len(text))))
        citations.append(
            Citation(
                start=start,
                end=end,
                text=text[start:end],
                source_ids=draw(st.lists(st.sampled_from([s.id for s in SOURCES]), min_size=1)),
                marker_span=span,
            )
        )
    return CitedAnswer(text=text, sources=SOURCES, citations=citations)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(markdown_answers())
def test_every_planned_marker_is_rendered_once(value: CitedAnswer) -> None:
    out = render(value, "html", prefix=PREFIX)
    planned = sum(
        len(found.split(","))
        for found in re.findall(r"\[\[S:([0-9,]+)\]\]", inject_markers(value, "sids").text)
    )
    body = html_answer(value)
    assert len(SUP_RE.findall(body)) == planned
    assert re.findall(r'id="(md-tip-\d+)"', body) == [f"md-tip-{n}" for n in range(1, planned + 1)]
    assert PLACEHOLDER not in out
    assert "\u202e" not in out
    check_inert(body)
    assert render(value, "html", prefix=PREFIX) == out
