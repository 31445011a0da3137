"""`RowSink`: the analytics sink provider readers report to, counting instead of building.

A provider reader walks a response once and reports its text, sources and citations to an
`AnswerBuilder`. `extract()` builds a `CitedAnswer` from them; analytics needs only counts and
each source's URL, domain and flags, so `RowSink` keeps the builder's bookkeeping (the same
source ledger, the same checks on each citation, the same diagnostics) and reads the row from
it: no `Citation` objects, no `CitedAnswer`, and no claim located where the claim only places a
citation (`AnswerBuilder.locates_claims`). Its row equals ``row_of(extract(data))``: tests
compare the two on every recorded response and on generated ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from unicite.analytics._rows import Row, read_row
from unicite.providers import AnswerBuilder, read_response

__all__ = ["RowSink", "sink_row"]


class RowSink(AnswerBuilder):
    """An `AnswerBuilder` that gives the analytics row of what it was filled with."""

    locates_claims = False

    def row(self, *, day: str | None = None) -> Row:
        """The figures `row_of` reads from the answer `build` would make."""
        return read_row(
            provider=self.provider,
            model=self.model,
            day=day,
            extras=self.extras,
            citations=self.declared,
            sources=self.ledger.sources,
            cited=self.cited_ids(),
            diagnostics=len(self.diagnostics),
        )


def sink_row(data: Mapping[str, Any]) -> Row | None:
    """The row of a decoded final response, read into a `RowSink`.

    None when no reader detects it as one (a stream event, an unknown shape: `extract()`
    reads those).
    """
    sink = RowSink(None)
    if read_response(data, sink) is None:
        return None
    return sink.row()
