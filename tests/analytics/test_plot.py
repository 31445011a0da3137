"""`unicite.analytics.plot`: the chart of `unicite stats --plot`, drawn by real matplotlib.

The example chart lands in ``test-output/plots/stats.png`` for a person to look at.
"""

from __future__ import annotations

import struct
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="the plot extra is not installed")

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from unicite.analytics import GroupStats, Row, Summary, aggregate, tld_of
from unicite.analytics.plot import build_figure, plot
from unicite.exceptions import UsageError

ROOT = Path(__file__).resolve().parents[2]
PLOTS = ROOT / "test-output" / "plots"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def row(
    provider: str | None,
    sites: Sequence[str | None],
    *,
    redirects: list[bool] | None = None,
    model: str | None = None,
    error: str | None = None,
) -> Row:
    """The row of one response citing `sites` (None for a source with no web address)."""
    domains = list(sites)
    return Row(
        provider=provider,
        model=model,
        day=None,
        grounded=True,
        citations=len(domains),
        sources=len(domains),
        urls=[f"https://{d}/" if d else None for d in domains],
        domains=domains,
        tlds=[tld_of(d) for d in domains],
        redirects=redirects if redirects is not None else [False] * len(domains),
        cited=[True] * len(domains),
        diagnostics=0,
        error=error,
    )


def repeat(provider: str, counts: dict[str, int], *, per_row: int = 3) -> list[Row]:
    """Rows of `provider` citing each domain of `counts` that many times, a few per row."""
    cited = [domain for domain, n in counts.items() for _ in range(n)]
    return [row(provider, cited[i : i + per_row]) for i in range(0, len(cited), per_row)]


OPENAI = {
    "wikipedia.org": 40,
    "bbc.co.uk": 31,
    "nytimes.com": 25,
    "github.com": 18,
    "xn--fa-hia.de": 12,  # faß.de: IDNs stay punycode
    "reuters.com": 9,
    "arxiv.org": 7,
    "lemonde.fr": 5,
    "spiegel.de": 4,
    "nature.com": 3,
    "example.jp": 2,
    "abc.net.au": 1,
}
ANTHROPIC = {"wikipedia.org": 12, "arxiv.org": 9, "python.org": 4, "gov.uk": 2}


def summary_of(*providers: dict[str, int], capacity: int = 10_000) -> Summary:
    names = ["openai", "anthropic", "google", "perplexity", "mistral"][: len(providers)]
    rows = [r for name, counts in zip(names, providers, strict=True) for r in repeat(name, counts)]
    return aggregate(rows, by=["provider"], capacity=capacity)


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def chart_axes(figure: Figure) -> list[Axes]:
    return list(figure.axes)


def bars(axes: Axes) -> list[tuple[str, float]]:
    """``(tick label, bar width)`` from top to bottom."""
    labels = [label.get_text() for label in axes.get_yticklabels()]
    widths = [patch.get_width() for patch in axes.patches if isinstance(patch, Rectangle)]
    return list(zip(labels, widths, strict=True))


def texts(axes: Axes) -> list[str]:
    return [text.get_text() for text in axes.texts]


def providers_in_order(summary: Summary) -> list[tuple[str | None, GroupStats]]:
    groups = [(keys["provider"], group) for keys, group in summary.sorted_groups()]
    return sorted(groups, key=lambda kv: -kv[1].responses)  # stable: ties stay by name


# --- what the chart shows ---------------------------------------------------------------


@pytest.mark.parametrize("top", [10, 3])
def test_bars_are_the_top_counts_of_each_provider_most_responses_first(top: int) -> None:
    summary = summary_of(OPENAI, ANTHROPIC)
    figure = build_figure(summary, top=top)
    axes = chart_axes(figure)
    groups = providers_in_order(summary)
    assert [name for name, _ in groups] == ["openai", "anthropic"]
    assert len(axes) == 2 * len(groups)
    for (name, group), left, right in zip(groups, axes[::2], axes[1::2], strict=True):
        assert bars(left) == [(k, float(n)) for k, n in group.domains.top(top)]
        assert bars(right) == [(k, float(n)) for k, n in group.tlds.top(top)]
        assert left.get_title(loc="left").startswith(f"{name} — top domains\n")
        assert right.get_title(loc="left").startswith(f"{name} — top TLDs")
        # Most frequent at the top: the y axis runs downwards, first bar highest.
        bottom, upper = left.get_ylim()
        assert bottom > upper
        # Counts are written on the bars, in the same order.
        assert texts(left) == [f"{n:,}" for _, n in group.domains.top(top)]
        assert texts(right) == [f"{n:,}" for _, n in group.tlds.top(top)]
    assert figure.get_suptitle() == "unicite stats"


def test_the_expected_bars_for_openai() -> None:
    figure = build_figure(summary_of(OPENAI), top=4)
    left, right = chart_axes(figure)
    assert bars(left) == [
        ("wikipedia.org", 40.0),
        ("bbc.co.uk", 31.0),
        ("nytimes.com", 25.0),
        ("github.com", 18.0),
    ]
    # com: nytimes 25 + github 18 + reuters 9 + nature 3 = 55; org: 40 + 7 = 47
    assert bars(right) == [("com", 55.0), ("org", 47.0), ("uk", 31.0), ("de", 16.0)]


def test_titles_name_responses_sources_and_redirect_share() -> None:
    rows = [
        row("openai", ["a.com", "b.com", "c.org", "d.org"], redirects=[True, False, False, False]),
        *[row("openai", ["a.com"]) for _ in range(1_199)],
    ]
    figure = build_figure(aggregate(rows, by=["provider"]))
    left, right = chart_axes(figure)
    assert left.get_title(loc="left") == (
        "openai — top domains\n1,200 responses, 1,203 sources, <1% redirects"
    )
    assert right.get_title(loc="left") == "openai — top TLDs\n2 distinct TLDs"
    assert texts(left)[0] == "1,200"
    rows = [row("openai", ["a.com", "b.com"], redirects=[True, False])]
    left, _ = chart_axes(build_figure(aggregate(rows, by=["provider"])))
    assert (
        left.get_title(loc="left") == "openai — top domains\n1 response, 2 sources, 50% redirects"
    )


def test_approximate_counts_are_marked() -> None:
    # A few heavy hitters over a long tail: more distinct domains than the capacity.
    many = {"big.com": 150, "mid.org": 90, **{f"tail{n:02}.example{n % 3}": 3 for n in range(20)}}
    summary = summary_of(many, ANTHROPIC, capacity=4)
    openai, anthropic = providers_in_order(summary)
    assert not openai[1].domains.exact
    assert anthropic[1].exact
    figure = build_figure(summary, top=5)
    o_left, o_right, a_left, a_right = chart_axes(figure)
    assert o_left.get_title(loc="left").endswith(", ≈ counts")
    assert all(text.startswith("≈") for text in texts(o_left))
    # The bars are the counter's (lower-bound) estimates, as `top` gives them.
    assert bars(o_left) == [(k, float(n)) for k, n in openai[1].domains.top(5)]
    assert ("≈" in o_right.get_title(loc="left")) == (not openai[1].tlds.exact)
    assert "≈" not in a_left.get_title(loc="left") + a_right.get_title(loc="left")
    assert not any("≈" in text for text in texts(a_left) + texts(a_right))


def test_a_flat_tail_past_the_capacity_says_nothing_stood_out() -> None:
    # Nine domains seen once each: the ninth overflows the counter (twice its capacity), and
    # the cut at the fifth largest count (1) leaves none.
    flat = {f"site{n:02}.example{n % 3}": 1 for n in range(9)}
    summary = summary_of(flat, capacity=4)
    ((_, group),) = providers_in_order(summary)
    assert not group.domains.counts  # Misra–Gries kept none: none is above total / capacity
    assert group.tlds.exact  # three TLDs fit
    left, right = chart_axes(build_figure(summary))
    assert not left.patches
    assert not left.axison
    assert texts(left) == [
        "no domain is frequent enough to be counted\n(≈ counts: too many distinct ones)"
    ]
    assert left.get_title(loc="left").endswith("≈ counts")
    assert bars(right) == [(k, float(n)) for k, n in group.tlds.top(10)]


def test_a_provider_without_sources_gets_one_note_across_its_row() -> None:
    rows = [
        *repeat("openai", OPENAI),
        row("perplexity", []),
        row("mistral", [None, None]),  # documents: sources with no web address
        row(None, [], error="not JSON"),
    ]
    figure = build_figure(aggregate(rows, by=["provider"]))
    axes = chart_axes(figure)
    assert len(axes) == 2 + 3
    openai, _, *notes = axes
    assert bars(openai)
    by_title = {ax.get_title(loc="left"): ax for ax in notes}
    assert set(by_title) == {
        "mistral\n1 response, 2 sources, 0% redirects",
        "perplexity\n1 response, 0 sources",
        "unreadable\n1 response, 0 sources",
    }
    for ax in notes:
        assert not ax.axison
        assert not ax.patches
        # Across the row: as wide as both charts of the openai row.
        assert ax.get_position().width > 1.8 * openai.get_position().width
    assert texts(by_title["perplexity\n1 response, 0 sources"]) == ["no sources"]
    assert texts(by_title["mistral\n1 response, 2 sources, 0% redirects"]) == [
        "2 sources, none with a web address"
    ]
    assert texts(by_title["unreadable\n1 response, 0 sources"]) == [
        "no sources\n(1 unreadable response)"
    ]


def test_row_heights_follow_the_bars_and_bars_are_equally_thick() -> None:
    ten = build_figure(summary_of(OPENAI, OPENAI)).get_figheight()
    four = build_figure(summary_of(OPENAI, ANTHROPIC)).get_figheight()  # 4 domains, 2 TLDs
    note = build_figure(
        aggregate([*repeat("openai", OPENAI), row("anthropic", [])], by=["provider"])
    ).get_figheight()
    alone = build_figure(summary_of(OPENAI)).get_figheight()
    assert alone < note < four < ten
    figure = build_figure(summary_of(OPENAI, ANTHROPIC))
    figure.canvas.draw()  # lay it out
    o_left, o_right, a_left, a_right = chart_axes(figure)
    assert o_left.get_ylim() == o_right.get_ylim() == (9.5, -0.5)
    assert a_left.get_ylim() == a_right.get_ylim() == (3.5, -0.5)

    def slot(axes: Axes) -> float:
        bottom, upper = axes.get_ylim()
        return axes.get_position().height / (bottom - upper)

    assert slot(a_left) == pytest.approx(slot(o_left), rel=0.02)


def test_non_ascii_labels_are_drawn(tmp_path: Path) -> None:
    # Hosts are punycode when they can be; one that could not be stays as written.
    rows = repeat("openai", {"xn--fa-hia.de": 3, "bücher.de": 2, "例え.jp": 1})
    summary = aggregate(rows, by=["provider"])
    figure = build_figure(summary)
    left, _ = chart_axes(figure)
    assert [label for label, _ in bars(left)] == ["xn--fa-hia.de", "bücher.de", "例え.jp"]
    path = tmp_path / "idn.png"
    plot(summary, path)  # warnings are errors here: no glyph went missing unnoticed
    assert png_size(path)[0] > 0


def test_labels_are_not_read_as_mathtext(tmp_path: Path) -> None:
    rows = repeat("open$ai$", {"a$b$.com": 2, "c_d^e.org": 1})
    summary = aggregate(rows, by=["provider"])
    left, _ = chart_axes(build_figure(summary))
    assert [label for label, _ in bars(left)] == ["a$b$.com", "c_d^e.org"]
    plot(summary, tmp_path / "dollars.png")


def test_a_long_domain_is_shortened_in_the_middle() -> None:
    long = "a-very-long-registrable-domain-name-that-goes-on-and-on.co.uk"
    left, _ = chart_axes(build_figure(aggregate(repeat("openai", {long: 1}), by=["provider"])))
    ((label, width),) = bars(left)
    assert len(label) == 40
    assert label.startswith("a-very-long-regist")
    assert label.endswith("goes-on-and-on.co.uk")
    assert "…" in label
    assert width == 1.0


def test_a_summary_grouped_by_more_keys_is_merged_by_provider() -> None:
    rows = [
        *[row("openai", ["a.com"], model="gpt-5") for _ in range(3)],
        *[row("openai", ["b.org"], model="gpt-4o") for _ in range(2)],
        row("anthropic", ["c.net"], model="claude"),
    ]
    figure = build_figure(aggregate(rows, by=["model", "provider"]))
    axes = chart_axes(figure)
    assert len(axes) == 4
    assert bars(axes[0]) == [("a.com", 3.0), ("b.org", 2.0)]
    assert bars(axes[2]) == [("c.net", 1.0)]


def test_an_empty_summary_draws_a_note(tmp_path: Path) -> None:
    summary = aggregate([], by=["provider"])
    figure = build_figure(summary)
    (axes,) = chart_axes(figure)
    assert texts(axes) == ["no responses to plot"]
    plot(summary, tmp_path / "empty.png")
    assert png_size(tmp_path / "empty.png")[0] > 0


# --- files --------------------------------------------------------------------------------


def test_plot_writes_a_png_that_grows_with_the_providers(tmp_path: Path) -> None:
    one, three = tmp_path / "one.png", tmp_path / "three.png"
    plot(summary_of(OPENAI), one)
    plot(summary_of(OPENAI, ANTHROPIC, ANTHROPIC), str(three))
    (w1, h1), (w3, h3) = png_size(one), png_size(three)
    assert w1 == w3
    assert h3 > 2 * h1 * 0.9
    assert 300 < h1 < 1_000


def test_the_example_chart(tmp_path: Path) -> None:
    """Saves ``test-output/plots/stats.png``: look at it."""
    rows = [
        *repeat("openai", OPENAI),
        *[row("openai", ["news.google.com"], redirects=[True]) for _ in range(6)],
        *repeat("anthropic", ANTHROPIC),
        *repeat("google", {"youtube.com": 14, "wikipedia.org": 11, "bücher.de": 3}),
        row("perplexity", []),
        row(None, [], error="not JSON"),
    ]
    PLOTS.mkdir(parents=True, exist_ok=True)
    path = PLOTS / "stats.png"
    plot(aggregate(rows, by=["provider"]), path)
    width, height = png_size(path)
    assert width == 1_400
    assert height > 1_000


@pytest.mark.parametrize(
    ("suffix", "magic"), [(".svg", b"<?xml"), (".pdf", b"%PDF"), ("", PNG_SIGNATURE)]
)
def test_the_suffix_chooses_the_format(tmp_path: Path, suffix: str, magic: bytes) -> None:
    path = tmp_path / f"chart{suffix}"
    plot(summary_of(OPENAI), path, top=3)
    assert path.read_bytes().startswith(magic)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no ".png" added


def test_an_unknown_suffix_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(
        UsageError, match=r"cannot write a chart as \.docx: expected one of .*\.png"
    ):
        plot(summary_of(OPENAI), tmp_path / "chart.docx")
    assert not list(tmp_path.iterdir())


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("by", [[], ["model"], ["model", "day"]])
def test_a_summary_not_grouped_by_provider_is_a_usage_error(tmp_path: Path, by: list[str]) -> None:
    summary = aggregate(repeat("openai", OPENAI), by=by)
    with pytest.raises(UsageError, match=r"grouped by provider.*by=\[\"provider\"\]"):
        build_figure(summary)
    with pytest.raises(UsageError, match="grouped by provider"):
        plot(summary, tmp_path / "chart.png")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("top", [0, -1, True, 2.5, "10"])
def test_top_must_be_a_positive_int(top: object) -> None:
    with pytest.raises(UsageError, match="top must be an int of at least 1"):
        build_figure(summary_of(OPENAI), top=top)  # type: ignore[arg-type]


def test_missing_matplotlib_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    summary = summary_of(OPENAI)
    with pytest.raises(UsageError, match=r"pip install 'unicite\[plot\]'") as info:
        plot(summary, tmp_path / "chart.png")
    assert isinstance(info.value.__cause__, ImportError)
    with pytest.raises(UsageError, match=r"pip install 'unicite\[plot\]'"):
        build_figure(summary)
    assert not list(tmp_path.iterdir())


# --- no side effects ----------------------------------------------------------------------


def test_plot_leaves_the_backend_and_settings_alone(tmp_path: Path) -> None:
    # `_get` reads a value without resolving the backend (which would import pyplot).
    params = {key: matplotlib.rcParams._get(key) for key in matplotlib.rcParams}
    plot(summary_of(OPENAI, ANTHROPIC), tmp_path / "chart.png")
    assert {key: matplotlib.rcParams._get(key) for key in matplotlib.rcParams} == params


def test_importing_and_plotting_without_pyplot(tmp_path: Path) -> None:
    """Importing needs no matplotlib; plotting never imports pyplot nor picks a backend."""
    script = textwrap.dedent(
        f"""
        import sys
        import unicite.analytics.plot
        assert "matplotlib" not in sys.modules
        import matplotlib
        backend = matplotlib.rcParams._get("backend")  # without resolving it
        from unicite.analytics import aggregate
        from unicite.analytics.plot import plot
        rows = [{{"provider": "openai", "model": None, "day": None, "grounded": True,
                  "citations": 1, "sources": 1, "urls": ["https://a.com/"],
                  "domains": ["a.com"], "tlds": ["com"], "redirects": [False],
                  "cited": [True], "diagnostics": 0, "error": None}}]
        plot(aggregate(rows, by=["provider"]), {str(tmp_path / "chart.png")!r})
        assert "matplotlib.pyplot" not in sys.modules, "pyplot was imported"
        assert matplotlib.rcParams._get("backend") is backend
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert png_size(tmp_path / "chart.png")[0] > 0
