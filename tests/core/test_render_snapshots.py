"""Exact renderings of small answers in every format and mode (non-ASCII on purpose)."""

import json
import re

import pytest

from unicite import (
    BlockLocation,
    Citation,
    CitedAnswer,
    PageLocation,
    SearchResultLocation,
    Source,
    json_schema,
    render,
)

LINK = "([fr.wikipedia.org](https://fr.wikipedia.org/wiki/Viaduc_de_Millau))"
TEXT = (
    f"Le viaduc de Millau mesure 343 m {LINK}. "
    "Il a été inauguré en 2004 et relie Paris à Béziers. "
    "東京タワーは333メートルです。\n\n"
    "Le pont de Normandie a des pylônes de 215 m.\n"
)
WIKI = Source(
    id="wiki",
    url="https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
    title="Viaduc de Millau — Wikipédia",
)


def cite(text: str, sentence: str, ids: list[str], **fields: object) -> Citation:
    start = text.index(sentence)
    return Citation.model_validate(
        {"start": start, "end": start + len(sentence), "text": sentence, "source_ids": ids} | fields
    )


def example() -> CitedAnswer:
    """An OpenAI-style inline link, combined markers, quotes, locations, an uncited source."""
    claim = "Le viaduc de Millau mesure 343 m"
    link_start = TEXT.index(LINK)
    sentence = "Il a été inauguré en 2004 et relie Paris à Béziers."
    return CitedAnswer(
        text=TEXT,
        sources=[
            WIKI,
            Source(id="struct", url="https://www.structurae.net/fr/ouvrages/viaduc-de-millau"),
            Source(id="pdf", kind="document", title="Rapport d’inauguration (2004).pdf"),
            Source(id="unused", url="https://example.org/pont", title="Ponts de France"),
        ],
        citations=[
            Citation(
                start=0,
                end=len(claim),
                text=claim,
                source_ids=["wiki"],
                marker_span=(link_start, link_start + len(LINK)),
            ),
            # Ends in whitespace: its marker still goes right after the full stop.
            cite(TEXT, sentence + " ", ["struct"]),
            cite(
                TEXT,
                sentence,
                ["pdf"],
                quote="Le viaduc a été inauguré le 14 décembre 2004.",
                location=PageLocation(start_page=3, end_page=5),
            ),
            cite(
                TEXT,
                "東京タワーは333メートルです。",
                ["struct"],
                location=SearchResultLocation(search_result_index=1),
            ),
            cite(
                TEXT,
                "Le pont de Normandie a des pylônes de 215 m.\n",
                ["pdf", "wiki"],
                quote="pylônes de 215 mètres",
                location=BlockLocation(start_block=0, end_block=3),
            ),
        ],
    )


def sources_only() -> CitedAnswer:
    """A web-search answer with sources but no annotations: the fallback list."""
    return CitedAnswer(
        text="Réponse sans marqueurs : le viaduc mesure 343 m.",
        sources=[WIKI, Source(id="b", url="https://www.leviaducdemillau.com/")],
    )


def small() -> CitedAnswer:
    text = "Le viaduc mesure 343 m. Il date de 2004."
    return CitedAnswer(
        text=text,
        sources=[WIKI, Source(id="b", kind="document", title="Rapport.pdf")],
        citations=[
            cite(text, "Le viaduc mesure 343 m.", ["wiki"]),
            cite(
                text,
                "Il date de 2004.",
                ["b", "wiki"],
                quote="inauguré en 2004",
                location=PageLocation(start_page=3, end_page=4),
            ),
        ],
    )


SUGGESTIONS = (
    "<style>.chip{color:red;background:url(https://evil.example/x.png)}"
    '@import "https://evil.example/a.css";</style>'
    '<div class="container" onclick="alert(1)">'
    '<svg class="logo" viewBox="0 0 2 2" xmlns="http://www.w3.org/2000/svg">'
    '<path d="M0 0h2v2z" fill="#4285F4"/></svg>'
    '<a class="chip" href="https://www.google.com/search?q=viaduc+de+millau" '
    'onmouseover="alert(1)">viaduc de Millau</a>'
    '<a class="chip" href="javascript:alert(1)">evil</a>'
    '<script>alert(1)</script><iframe src="https://evil.example"></iframe></div></div>'
    "<b>unclosed"
)


def with_suggestions() -> CitedAnswer:
    return small().model_copy(
        update={"extras": {"search_entry_point": {"rendered_content": SUGGESTIONS}}}
    )


def style_block() -> str:
    """The <style> block every HTML rendering starts with."""
    out = render(CitedAnswer(text="x"), "html", prefix="ex")
    match = re.match(r'<div class="unicite" id="ex">\n<style>\n(.*?)</style>\n', out, re.DOTALL)
    assert match is not None
    return match.group(1)


def html_body(answer: CitedAnswer) -> str:
    """The HTML after the fixed <style> block, which is checked once on its own."""
    head = f'<div class="unicite" id="ex">\n<style>\n{style_block()}</style>\n'
    out = render(answer, "html", prefix="ex")
    assert out.startswith(head)
    return out[len(head) :]


TERMINAL_40 = (
    "Le viaduc de Millau mesure 343 m [1]. Il\n"
    "a été inauguré en 2004 et relie Paris à\n"
    "Béziers.[2][3] 東京タワーは333メートルで\n"
    "す。[2]\n"
    "\n"
    "Le pont de Normandie a des pylônes de\n"
    "215 m.[1][3]\n"
    "\n"
    "Sources\n"
    "1. Viaduc de Millau — Wikipédia —\n"
    "   https://fr.wikipedia.org/wiki/Viaduc_de_Millau\n"
    "2. structurae.net —\n"
    "   https://www.structurae.net/fr/ouvrages/viaduc-de-millau\n"
    "   2nd search result\n"
    "3. Rapport d’inauguration (2004).pdf\n"
    '   > "Le viaduc a été inauguré le 14\n'
    '     décembre 2004." (pages 3–4)\n'
    '   > "pylônes de 215 mètres" (blocks [0,\n'
    "     3))"
)


TERMINAL_LINKS = (
    "Le viaduc de Millau mesure 343 m [1]. Il a été inauguré en 2004 et relie "
    "Paris à\n"
    "Béziers.[2][3] 東京タワーは333メートルです。[2]\n"
    "\n"
    "Le pont de Normandie a des pylônes de 215 m.[1][3]\n"
    "\n"
    "Sources\n"
    "1. Viaduc de Millau — Wikipédia — \x1b]8;;https://fr.wikipedia.org/wiki/Viad"
    "uc_de_Millau\x1b\\https://fr.wikipedia.org/wiki/Viaduc_de_Millau\x1b]8;;\x1b"
    "\\\n"
    "2. structurae.net — \x1b]8;;https://www.structurae.net/fr/ouvrages/viaduc-de"
    "-millau\x1b\\https://www.structurae.net/fr/ouvrages/viaduc-de-millau\x1b]8;;"
    "\x1b\\\n"
    "   2nd search result\n"
    "3. Rapport d’inauguration (2004).pdf\n"
    '   > "Le viaduc a été inauguré le 14 décembre 2004." (pages 3–4)\n'
    '   > "pylônes de 215 mètres" (blocks [0, 3))'
)


TEXT_ALL = (
    "Le viaduc de Millau mesure 343 m [1]. Il a été inauguré en 2004 et relie "
    "Paris à Béziers.[2][3] 東京タワーは333メートルです。[2]\n"
    "\n"
    "Le pont de Normandie a des pylônes de 215 m.[1][3]\n"
    "\n"
    "Sources\n"
    "1. Viaduc de Millau — Wikipédia — https://fr.wikipedia.org/wiki/Viaduc_de_Mi"
    "llau\n"
    "2. structurae.net — https://www.structurae.net/fr/ouvrages/viaduc-de-millau"
    "\n"
    "   2nd search result\n"
    "3. Rapport d’inauguration (2004).pdf\n"
    '   > "Le viaduc a été inauguré le 14 décembre 2004." (pages 3–4)\n'
    '   > "pylônes de 215 mètres" (blocks [0, 3))\n'
    "4. Ponts de France — https://example.org/pont"
)


MARKDOWN = (
    "Le viaduc de Millau mesure 343 m [1]. Il a été inauguré en 2004 et relie "
    "Paris à Béziers.[2][3] 東京タワーは333メートルです。[2]\n"
    "\n"
    "Le pont de Normandie a des pylônes de 215 m.[1][3]\n"
    "\n"
    "**Sources**\n"
    "\n"
    "1. [Viaduc de Millau — Wikipédia](https://fr.wikipedia.org/wiki/Viaduc_de_Mi"
    "llau) — wikipedia.org\n"
    "2. [structurae.net](https://www.structurae.net/fr/ouvrages/viaduc-de-millau)"
    "\n"
    "   > (2nd search result)\n"
    "3. Rapport d’inauguration (2004).pdf\n"
    '   > "Le viaduc a été inauguré le 14 décembre 2004." (pages 3–4)\n'
    "   >\n"
    '   > "pylônes de 215 mètres" (blocks \\[0, 3))'
)


MARKDOWN_FOOTNOTES = (
    "Le viaduc de Millau mesure 343 m [^1]. Il a été inauguré en 2004 et relie "
    "Paris à Béziers.[^2][^3] 東京タワーは333メートルです。[^2]\n"
    "\n"
    "Le pont de Normandie a des pylônes de 215 m.[^1][^3]\n"
    "\n"
    "[^1]: [Viaduc de Millau — Wikipédia](https://fr.wikipedia.org/wiki/Viaduc_de"
    "_Millau) — wikipedia.org\n"
    "\n"
    "[^2]: [structurae.net](https://www.structurae.net/fr/ouvrages/viaduc-de-mill"
    "au)\n"
    "\n"
    "    > (2nd search result)\n"
    "\n"
    "[^3]: Rapport d’inauguration (2004).pdf\n"
    "\n"
    '    > "Le viaduc a été inauguré le 14 décembre 2004." (pages 3–4)\n'
    "    >\n"
    '    > "pylônes de 215 mètres" (blocks \\[0, 3))'
)


MARKDOWN_ALL = (
    "Le viaduc de Millau mesure 343 m [1]. Il a été inauguré en 2004 et relie "
    "Paris à Béziers.[2][3] 東京タワーは333メートルです。[2]\n"
    "\n"
    "Le pont de Normandie a des pylônes de 215 m.[1][3]\n"
    "\n"
    "**Sources**\n"
    "\n"
    "1. [Viaduc de Millau — Wikipédia](https://fr.wikipedia.org/wiki/Viaduc_de_Mi"
    "llau) — wikipedia.org\n"
    "2. [structurae.net](https://www.structurae.net/fr/ouvrages/viaduc-de-millau)"
    "\n"
    "   > (2nd search result)\n"
    "3. Rapport d’inauguration (2004).pdf\n"
    '   > "Le viaduc a été inauguré le 14 décembre 2004." (pages 3–4)\n'
    "   >\n"
    '   > "pylônes de 215 mètres" (blocks \\[0, 3))\n'
    "4. [Ponts de France](https://example.org/pont) — example.org"
)


FALLBACK_TEXT = (
    "Réponse sans marqueurs : le viaduc mesure 343 m.\n"
    "\n"
    "Sources\n"
    "1. Viaduc de Millau — Wikipédia — https://fr.wikipedia.org/wiki/Viaduc_de_Mi"
    "llau\n"
    "2. leviaducdemillau.com — https://www.leviaducdemillau.com/"
)


FALLBACK_MARKDOWN = (
    "Réponse sans marqueurs : le viaduc mesure 343 m.\n"
    "\n"
    "**Sources**\n"
    "\n"
    "1. [Viaduc de Millau — Wikipédia](https://fr.wikipedia.org/wiki/Viaduc_de_Mi"
    "llau) — wikipedia.org\n"
    "2. [leviaducdemillau.com](https://www.leviaducdemillau.com/)"
)


FALLBACK_HTML_BODY = (
    '<div class="unicite-answer"><p>Réponse sans marqueurs : le viaduc mesure '
    "343 m.</p></div>\n"
    '<div class="unicite-sources"><p class="unicite-heading">Sources</p><ol>\n'
    '<li id="ex-src-1" value="1"><a href="https://fr.wikipedia.org/wiki/Viaduc_de'
    '_Millau" rel="noopener noreferrer nofollow" target="_blank">Viaduc de '
    'Millau — Wikipédia</a> <span class="unicite-domain">wikipedia.org</span></li'
    ">\n"
    '<li id="ex-src-2" value="2"><a href="https://www.leviaducdemillau.com/" '
    'rel="noopener noreferrer nofollow" target="_blank">leviaducdemillau.com</a><'
    "/li>\n"
    "</ol></div>\n"
    "</div>"
)


HTML_SMALL_BODY = (
    '<div class="unicite-answer"><p>Le viaduc mesure 343 m.<sup '
    'class="unicite-cite"><a href="#ex-src-1" title="Viaduc de Millau — '
    'Wikipédia — wikipedia.org" aria-describedby="ex-tip-1">[1]</a><span '
    'class="unicite-tip" role="tooltip" id="ex-tip-1"><span '
    'class="unicite-tip-title">Viaduc de Millau — Wikipédia</span><span '
    'class="unicite-tip-domain">wikipedia.org</span></span></sup> Il date de '
    '2004.<sup class="unicite-cite"><a href="#ex-src-1" title="Viaduc de Millau '
    '— Wikipédia — wikipedia.org" aria-describedby="ex-tip-2">[1]</a><span '
    'class="unicite-tip" role="tooltip" id="ex-tip-2"><span '
    'class="unicite-tip-title">Viaduc de Millau — Wikipédia</span><span '
    'class="unicite-tip-domain">wikipedia.org</span></span></sup><sup '
    'class="unicite-cite"><a href="#ex-src-2" title="Rapport.pdf — “inauguré en '
    '2004”" aria-describedby="ex-tip-3">[2]</a><span class="unicite-tip" '
    'role="tooltip" id="ex-tip-3"><span class="unicite-tip-title">Rapport.pdf</sp'
    'an><span class="unicite-tip-quote">“inauguré en '
    "2004”</span></span></sup></p></div>\n"
    '<div class="unicite-sources"><p class="unicite-heading">Sources</p><ol>\n'
    '<li id="ex-src-1" value="1"><a href="https://fr.wikipedia.org/wiki/Viaduc_de'
    '_Millau" rel="noopener noreferrer nofollow" target="_blank">Viaduc de '
    'Millau — Wikipédia</a> <span class="unicite-domain">wikipedia.org</span></li'
    ">\n"
    '<li id="ex-src-2" value="2"><span class="unicite-title">Rapport.pdf</span> '
    '<span class="unicite-detail"><q>inauguré en 2004</q> <span '
    'class="unicite-loc">page 3</span></span></li>\n'
    "</ol></div>\n"
    "</div>"
)


SUGGESTIONS_HTML = (
    "<style>.unicite-search-suggestions .chip {color:red;background:}</style><div "
    'class="container"><svg '
    'class="logo" viewbox="0 0 2 2" xmlns="http://www.w3.org/2000/svg"><path '
    'd="M0 0h2v2z" fill="#4285F4"/></svg><a class="chip" '
    'href="https://www.google.com/search?q=viaduc+de+millau" rel="noopener '
    'noreferrer nofollow" target="_blank">viaduc de Millau</a><a '
    'class="chip">evil</a></div><b>unclosed</b></div>\n'
    "</div>"
)


SUGGESTIONS_TEXT = (
    "Le viaduc mesure 343 m.[1] Il date de 2004.[1][2]\n"
    "\n"
    "Sources\n"
    "1. Viaduc de Millau — Wikipédia — https://fr.wikipedia.org/wiki/Viaduc_de_Mi"
    "llau\n"
    "2. Rapport.pdf\n"
    '   > "inauguré en 2004" (page 3)\n'
    "\n"
    "Google Search Suggestions are available for this answer; the HTML rendering "
    "shows them."
)


def test_terminal_wraps_at_40_columns_without_links() -> None:
    assert render(example(), "terminal", hyperlinks=False, width=40) == TERMINAL_40


def test_terminal_with_osc8_hyperlinks() -> None:
    assert render(example(), "terminal", hyperlinks=True, width=80) == TERMINAL_LINKS


def test_text_lists_all_sources_when_asked() -> None:
    assert render(example(), "text", sources="all") == TEXT_ALL


def test_text_is_the_unlinked_terminal_layout() -> None:
    unwrapped = render(example(), "terminal", hyperlinks=False, width=10_000)
    assert render(example(), "text") == unwrapped


def test_markdown_brackets() -> None:
    assert render(example(), "markdown") == MARKDOWN


def test_markdown_footnotes() -> None:
    assert render(example(), "markdown", markers="footnotes") == MARKDOWN_FOOTNOTES


def test_markdown_all_sources() -> None:
    assert render(example(), "markdown", sources="all") == MARKDOWN_ALL


def test_markdown_keeps_footnote_numbers_when_they_have_gaps() -> None:
    answer = small().model_copy(
        update={"citations": [small().citations[1].model_copy(update={"source_ids": ["b"]})]}
    )
    assert render(answer, "markdown") == (
        "Le viaduc mesure 343 m. Il date de 2004.[2]\n"
        "\n"
        "**Sources**\n"
        "\n"
        "2\\. Rapport.pdf\n"
        '> "inauguré en 2004" (page 3)'
    )


def test_fallback_lists_every_source() -> None:
    assert render(sources_only(), "text") == FALLBACK_TEXT
    assert render(sources_only(), "terminal", hyperlinks=False, width=200) == FALLBACK_TEXT
    assert render(sources_only(), "markdown") == FALLBACK_MARKDOWN
    assert html_body(sources_only()) == FALLBACK_HTML_BODY


def test_html_fragment() -> None:
    assert html_body(small()) == HTML_SMALL_BODY


def test_html_style_block_is_self_contained() -> None:
    style = style_block()
    assert "url(" not in style
    assert "@import" not in style
    assert ":hover" in style
    assert ":focus-within" in style
    assert ":target" in style


def test_search_suggestions_are_sanitised_in_html() -> None:
    out = render(with_suggestions(), "html", prefix="ex")
    assert out.split('<div class="unicite-search-suggestions">')[1] == SUGGESTIONS_HTML


def test_search_suggestions_are_noted_in_text_formats() -> None:
    assert render(with_suggestions(), "text") == SUGGESTIONS_TEXT
    note = "Google Search Suggestions are available for this answer"
    assert note in render(with_suggestions(), "markdown")
    assert note in render(with_suggestions(), "terminal", hyperlinks=False, width=80)
    assert note not in render(small(), "text")


def test_search_suggestions_as_a_plain_string() -> None:
    answer = small().model_copy(update={"extras": {"search_entry_point": SUGGESTIONS}})
    out = render(answer, "html", prefix="ex")
    assert out.split('<div class="unicite-search-suggestions">')[1] == SUGGESTIONS_HTML


def test_json_is_the_canonical_form() -> None:
    assert render(example(), "json") == example().to_json(indent=2)
    assert CitedAnswer.from_json(render(example(), "json")) == example()


def test_json_with_schema() -> None:
    wrapped = json.loads(render(example(), "json", schema=True))
    assert list(wrapped) == ["schema", "answer"]
    assert wrapped["schema"] == json_schema()
    assert CitedAnswer.model_validate(wrapped["answer"]) == example()


def test_json_never_holds_raw() -> None:
    source = WIKI.model_copy(update={"raw": {"secret": "RAW-PAYLOAD"}})
    answer = CitedAnswer(text="x", sources=[source])
    assert "RAW-PAYLOAD" not in render(answer, "json")
    assert "RAW-PAYLOAD" in answer.to_json()


@pytest.mark.parametrize("format", ["terminal", "text", "markdown", "html", "json"])
def test_rendering_is_deterministic(format: str) -> None:
    first = render(example(), format, hyperlinks=True, width=60)  # type: ignore[arg-type]
    assert render(example(), format, hyperlinks=True, width=60) == first  # type: ignore[arg-type]


def test_html_ids_differ_between_answers_and_repeat_for_one() -> None:
    first, second = render(example(), "html"), render(small(), "html")
    prefix = first.split('id="', 1)[1].split('"', 1)[0]
    assert prefix.startswith("unicite-")
    assert f'href="#{prefix}-src-1"' in first
    assert prefix not in second
    assert render(example(), "html") == first


def test_no_generic_disclaimer() -> None:
    for format in ("terminal", "text", "markdown", "html"):
        out = render(sources_only(), format, hyperlinks=False)
        assert "external sources" not in out.lower()
