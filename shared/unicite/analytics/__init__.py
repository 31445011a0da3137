"""Citation analytics over logged provider responses: which sites models cite, at scale.

`analyze` is a pure batch function: responses in (a list of JSON lines or dicts, or an Arrow
table with a JSON column), one `Row` per response out — provider, model, day, whether grounding
ran, counts of citations and sources, each source's URL, registrable domain, TLD, redirect and
cited flags, and why a response could not be read. It reads with the same readers as
`unicite.extract`, reporting to an analytics sink that counts instead of building `Citation`
objects and the answer (tests hold its rows equal to those of `extract()`'s answers).

`aggregate` folds rows into a `Summary` (counts by domain, TLD and provider, redirect share,
grounded answers without citations), grouped by provider, model or day; summaries merge, so
engines fold their shares separately. `stats` runs the whole thing over files, directories and
globs of JSONL (plain, gzip, zstd) and Parquet: locally in a process pool, or on Ray or Spark
(``unicite[ray]``, ``unicite[spark]``) with the same batch function.

Example::

    from unicite.analytics import aggregate, analyze

    rows = analyze(lines)  # lines: JSON text of provider responses
    summary = aggregate(rows, by=["provider"])
    print(summary.as_dict()["top_domains"])
"""

from __future__ import annotations

from unicite.analytics._aggregate import GROUP_KEYS, BadLine, GroupStats, Summary, TopCounter
from unicite.analytics._aggregate import aggregate as _aggregate_rows
from unicite.analytics._analyze import analyze, analyze_one, fast_row, row_schema, rows_to_arrow
from unicite.analytics._engine import ENGINES, Engine, Report, stats
from unicite.analytics._inputs import Chunk, InputError, expand_inputs, plan_chunks, read_chunk
from unicite.analytics._rows import ROW_FIELDS, Row, row_of, tld_of

__all__ = [
    "ENGINES",
    "GROUP_KEYS",
    "ROW_FIELDS",
    "BadLine",
    "Chunk",
    "Engine",
    "GroupStats",
    "InputError",
    "Report",
    "Row",
    "Summary",
    "TopCounter",
    "aggregate",
    "analyze",
    "analyze_one",
    "expand_inputs",
    "fast_row",
    "plan_chunks",
    "read_chunk",
    "row_of",
    "row_schema",
    "rows_to_arrow",
    "stats",
    "tld_of",
]


def aggregate(
    rows: object, by: tuple[str, ...] | list[str] = (), *, capacity: int = 10_000
) -> Summary:
    """Fold rows into a `Summary`, grouped `by` some of ``provider``, ``model``, ``day``.

    `rows` is what `analyze` returns: a list of `Row` dicts, or an Arrow record batch or table
    of them.
    """
    if type(rows).__module__.startswith("pyarrow") and hasattr(rows, "to_pylist"):
        rows = rows.to_pylist()
    return _aggregate_rows(rows, by, capacity=capacity)  # type: ignore[arg-type]
