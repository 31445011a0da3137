"""A chart of a `Summary`: the top domains and TLDs each provider cites (``unicite[plot]``).

`plot` writes the chart `unicite stats --plot FILE.png` draws: a row per provider, most
responses first, each with two horizontal bar charts side by side — the top registrable domains
and the top TLDs, most frequent at the top, counts written on the bars. Counts a bounded
counter could only estimate are marked ``≈ counts``. `build_figure` returns the same chart as a
matplotlib `Figure`, to embed or inspect.

Matplotlib is an optional extra, imported only when a chart is drawn; the figure is rendered
with the Agg canvas directly, so neither pyplot's figure registry nor the user's backend is
touched.

Example::

    from unicite.analytics import aggregate, analyze
    from unicite.analytics.plot import plot

    plot(aggregate(analyze(lines), by=["provider"]), "stats.png", top=10)
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from unicite.analytics._aggregate import GroupStats, Summary, TopCounter
from unicite.exceptions import UsageError

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["build_figure", "plot"]

_DOMAIN_COLOR = "#4c72b0"
_TLD_COLOR = "#dd8452"
_NOTE_COLOR = "#666666"

_WIDTH = 14.0
"""Figure width in inches: two charts side by side."""
_TITLE_HEIGHT = 0.7
"""Inches above the rows for the figure title."""
_SLOT_HEIGHT = 0.28
"""Inches per bar slot."""
_MIN_SLOTS = 4
"""The fewest bar slots of a row, however few bars it holds."""
_ROW_EXTRA = 1.0
"""Inches of a row of bars for its titles and x axis."""
_NOTE_HEIGHT = 0.6
"""Inches for a note across a row (a provider without sources)."""
_NOTE_EXTRA = 0.6
"""Inches of a row with a note for its title."""
_DPI = 100
_MAX_PIXELS = 60_000
"""Agg draws at most 2**16 pixels a side: a taller chart is saved at a lower resolution."""

_MAX_LABEL = 40
"""Longest bar label, in characters; longer names are shortened in the middle."""

_FALLBACK_FONTS = (
    "Noto Sans",
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Noto Sans CJK KR",
    "Source Han Sans",
    "IPAGothic",
    "IPAPGothic",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
    "Arial Unicode MS",
    "Microsoft YaHei",
    "Yu Gothic",
    "Hiragino Sans",
    "Malgun Gothic",
    "Noto Sans Arabic",
    "Noto Sans Hebrew",
    "Noto Sans Devanagari",
    "Noto Sans Thai",
)
"""Fonts to fall back on, when installed, for labels DejaVu Sans has no glyphs for (a host that
could not be punycoded, a hand-made row)."""

_INSTALL_HINT = "plotting needs matplotlib: pip install 'unicite[plot]'"


def plot(summary: Summary, path: str | os.PathLike[str], *, top: int = 10) -> None:
    """Draw the top `top` domains and TLDs of each provider of `summary` into `path`.

    The format follows the suffix of `path` (``.png``, ``.svg``, ``.pdf``, anything matplotlib
    writes); a path without one is written as PNG, under the name given.

    Args:
        summary: Aggregates grouped by provider (possibly among other keys, which are merged).
        path: Where to write the chart.
        top: How many domains and TLDs to show per provider.

    Raises:
        UsageError: matplotlib is not installed, `summary` is not grouped by provider, `top`
            is not a positive int, or the suffix of `path` names a format matplotlib does not
            write.
    """
    _require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fspath = os.fspath(path)
    suffix = os.path.splitext(fspath)[1].lower().lstrip(".")
    supported = FigureCanvasAgg.get_supported_filetypes()
    if suffix and suffix not in supported:
        raise UsageError(
            f"cannot write a chart as .{suffix}: expected one of "
            + ", ".join(f".{ext}" for ext in sorted(supported))
        )
    with _style():
        figure = build_figure(summary, top=top)
        try:
            height = figure.get_figheight()
            dpi = min(_DPI, int(_MAX_PIXELS / height)) if height else _DPI
            with warnings.catch_warnings():
                # A glyph no installed font has is drawn as a box; say nothing about it.
                warnings.filterwarnings("ignore", "Glyph .* missing from", UserWarning)
                figure.savefig(fspath, format=suffix or "png", dpi=dpi, facecolor="white")
        finally:
            figure.clear()


def build_figure(summary: Summary, top: int = 10) -> Figure:
    """The chart `plot` draws, as a matplotlib `Figure` on an Agg canvas.

    One row per provider, most responses first (then by name): on the left the top `top`
    registrable domains, on the right the top `top` TLDs, each as horizontal bars with the most
    frequent at the top and counts written on the bars. A provider with no sources gets one
    note across its row instead of empty axes. The axes of a row are in `Figure.axes` in order:
    domains, then TLDs (or the one note).

    Args:
        summary: Aggregates grouped by provider (possibly among other keys, which are merged).
        top: How many domains and TLDs to show per provider.

    Raises:
        UsageError: matplotlib is not installed, `summary` is not grouped by provider, or `top`
            is not a positive int.
    """
    _require_matplotlib()
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise UsageError(f"top must be an int of at least 1, got {top!r}")
    providers = _providers(summary)

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    charts = [
        (name, group, group.domains.top(top), group.tlds.top(top)) for name, group in providers
    ]
    # Both charts of a row have as many bar slots as the longer needs (at least a few). The
    # layout shares the height out between axes by `ratios`, after titles and tick labels:
    # a slot is as tall in every row, so bars are equally thick all over the figure.
    slots = [max(len(domains), len(tlds), _MIN_SLOTS) for _, _, domains, tlds in charts]
    ratios = [
        _SLOT_HEIGHT * n if domains or tlds else _NOTE_HEIGHT
        for n, (_, _, domains, tlds) in zip(slots, charts, strict=True)
    ]
    heights = [
        ratio + (_ROW_EXTRA if domains or tlds else _NOTE_EXTRA)
        for ratio, (_, _, domains, tlds) in zip(ratios, charts, strict=True)
    ]
    with _style():
        figure = Figure(
            figsize=(
                _WIDTH,
                _TITLE_HEIGHT + (sum(heights) if heights else _NOTE_EXTRA + _NOTE_HEIGHT),
            ),
            dpi=_DPI,
            layout=ConstrainedLayoutEngine(h_pad=0.12, hspace=0.0, w_pad=0.1, wspace=0.04),
        )
        FigureCanvasAgg(figure)
        # Bold in DejaVu Sans alone: the fallback fonts may have no bold face to warn about.
        figure.suptitle("unicite stats", fontsize=15, fontweight="bold", family="DejaVu Sans")
        if not charts:
            _note(figure.add_subplot(), "no responses to plot")
            return figure
        grid = figure.add_gridspec(len(charts), 2, height_ratios=ratios)
        for row, (name, group, domains, tlds) in enumerate(charts):
            if not domains and not tlds:  # one note across the row
                axes = figure.add_subplot(grid[row, :])
                _title(axes, name, _overview(group))
                _note(axes, _empty_note(group, "domain or TLD"))
                continue
            left = figure.add_subplot(grid[row, 0])
            _title(left, f"{name} — top domains", _overview(group))
            _draw_counts(left, domains, slots[row], exact=group.domains.exact, color=_DOMAIN_COLOR)
            if not domains:
                _note(left, _empty_note(group, "domain"))
            right = figure.add_subplot(grid[row, 1])
            _title(right, f"{name} — top TLDs", _tld_overview(group.tlds))
            _draw_counts(right, tlds, slots[row], exact=group.tlds.exact, color=_TLD_COLOR)
            if not tlds:
                _note(right, _empty_note(group, "TLD"))
    return figure


def _require_matplotlib() -> None:
    """Import matplotlib, or say how to install it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as err:
        raise UsageError(_INSTALL_HINT) from err


def _providers(summary: Summary) -> list[tuple[str, GroupStats]]:
    """``(label, figures)`` of each provider, most responses first, then by name."""
    if "provider" not in summary.by:
        grouped = f"grouped by {', '.join(summary.by)}" if summary.by else "not grouped"
        raise UsageError(
            f"a chart needs a summary grouped by provider (this one is {grouped}): "
            'aggregate with by=["provider"]'
        )
    if summary.by != ("provider",):
        summary = summary.regroup(("provider",))
    groups = [(key[0], group) for key, group in summary.groups.items()]
    groups.sort(key=lambda kv: (-kv[1].responses, kv[0] is None, kv[0] or ""))
    return [(_provider_label(name, group), group) for name, group in groups]


def _provider_label(name: str | None, group: GroupStats) -> str:
    if name is not None:
        return name
    return "unreadable" if group.unreadable == group.responses else "unknown provider"


def _overview(group: GroupStats) -> str:
    """``1,234 responses, 5,678 sources, 12% redirects`` (and ``≈ counts`` when estimated)."""
    parts = [
        _plural(group.responses, "response"),
        _plural(group.sources, "source"),
    ]
    if group.sources:
        parts.append(f"{_percent(group.redirect_sources, group.sources)} redirects")
    if not group.domains.exact:
        parts.append("≈ counts")
    return ", ".join(parts)


def _tld_overview(tlds: TopCounter) -> str:
    """``7 distinct TLDs``, or ``≈ counts`` when estimated (the distinct ones are not known)."""
    return _plural(len(tlds.counts), "distinct TLD") if tlds.exact else "≈ counts"


def _empty_note(group: GroupStats, what: str) -> str:
    """What to say in place of a chart with no bars."""
    if not group.exact:  # all evicted: no key stood out of a long, flat tail
        return f"no {what} is frequent enough to be counted\n(≈ counts: too many distinct ones)"
    if group.sources:  # documents and the like
        return f"{_plural(group.sources, 'source')}, none with a web address"
    note = "no sources"
    if group.unreadable:
        note += f"\n({_plural(group.unreadable, 'unreadable response')})"
    return note


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _percent(part: int, whole: int) -> str:
    share = part / whole
    if 0 < share < 0.01:
        return "<1%"
    if 0.99 < share < 1:
        return ">99%"
    return f"{share:.0%}"


def _short(label: str) -> str:
    """`label`, shortened in the middle when it is longer than `_MAX_LABEL` characters."""
    if len(label) <= _MAX_LABEL:
        return label
    head = (_MAX_LABEL - 1) // 2
    tail = _MAX_LABEL - 1 - head
    return f"{label[:head]}…{label[-tail:]}"


def _title(axes: Axes, title: str, detail: str) -> None:
    axes.set_title(f"{title}\n{detail}", fontsize=10.5, loc="left", parse_math=False)


def _draw_counts(
    axes: Axes, items: list[tuple[str, int]], slots: int, *, exact: bool, color: str
) -> None:
    """Horizontal bars of `items`, the first at the top, in `slots` bar slots."""
    from matplotlib.ticker import MaxNLocator, StrMethodFormatter

    if not items:
        return
    labels = [_short(key) for key, _ in items]
    counts = [count for _, count in items]
    positions = range(len(items))
    bars = axes.barh(positions, counts, height=0.7, color=color)
    axes.set_yticks(positions, labels, parse_math=False, fontsize=9.5)
    axes.set_ylim(slots - 0.5, -0.5)  # downwards: the first bar on top
    prefix = "" if exact else "≈"
    axes.bar_label(bars, labels=[f"{prefix}{n:,}" for n in counts], padding=3, fontsize=8.5)
    axes.set_xlim(0, max(counts) * 1.18)  # room for the labels
    axes.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
    axes.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    axes.tick_params(axis="y", length=0)
    axes.tick_params(axis="x", labelsize=8.5, colors=_NOTE_COLOR)
    axes.grid(axis="x", color="#e5e5e5", linewidth=0.8)
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)


def _note(axes: Axes, text: str) -> None:
    """A centred note in place of a chart."""
    axes.set_axis_off()
    axes.text(
        0.5,
        0.5,
        text,
        transform=axes.transAxes,
        ha="center",
        va="center",
        color=_NOTE_COLOR,
        fontsize=11,
        style="italic",
        parse_math=False,
    )


@contextmanager
def _style() -> Iterator[None]:
    """Settings of the chart, for its own figure only: the user's rcParams stay as they were."""
    import matplotlib
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    # Matplotlib falls back font by font along the family list (not within "sans-serif").
    families = ["DejaVu Sans", *(name for name in _FALLBACK_FONTS if name in installed)]
    # Labels are names, never TeX: "a$b$.com" stays as written.
    with matplotlib.rc_context({"font.family": families, "text.parse_math": False}):
        yield
