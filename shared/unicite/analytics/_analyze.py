"""`analyze`: a batch of logged responses in, a batch of rows out.

Each response is read by the same reader `extract()` runs, reporting to the analytics sink
(`unicite.analytics._sink.RowSink`) instead of the answer builder: the row comes from the
reader's counts without building `Citation` objects or the `CitedAnswer`. ``fast=False``
reads with `extract()` itself and takes the row from its answer; tests hold both equal on
every recorded response and on generated variations.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from unicite.analytics._rows import ROW_FIELDS, Row, day_of, row_of, unreadable_row
from unicite.analytics._sink import sink_row
from unicite.exceptions import UsageError
from unicite.providers import extract

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "analyze",
    "analyze_one",
    "decode_line",
    "fast_row",
    "holds_text",
    "json_column_name",
    "row_schema",
    "rows_to_arrow",
]

try:
    import orjson

    _loads: Callable[[bytes | str], Any] = orjson.loads
    _FAST_DECODE_ERRORS: tuple[type[BaseException], ...] = (orjson.JSONDecodeError,)
except ImportError:  # pragma: no cover - orjson comes with unicite[analytics]
    _loads = json.loads
    _FAST_DECODE_ERRORS = (ValueError,)

_NOT_JSON = "line is not valid JSON"

_COUNTING = contextvars.ContextVar("unicite_analytics_counting", default=False)


class _QuietWhileCounting(logging.Filter):
    """Drops `extract()`'s per-response warnings while analytics reads responses.

    Over a log of millions of responses one warning per grounded answer without citations
    would flood stderr; the rows count those answers (``grounded_without_citations``).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not (_COUNTING.get() and record.levelno <= logging.WARNING)


logging.getLogger("unicite").addFilter(_QuietWhileCounting())


def _extract_quietly(data: object) -> Row:
    token = _COUNTING.set(True)
    try:
        return row_of(extract(data))
    finally:
        _COUNTING.reset(token)


def decode_line(line: bytes | str) -> tuple[Any, str | None]:
    """The JSON value of one log line, or None and why it could not be decoded.

    orjson reads almost every line; what it refuses and the standard library accepts (lone
    surrogate escapes, ``NaN``) is read by the standard library, so no line a plain
    ``json.loads`` reads is reported bad.
    """
    try:
        return _loads(line), None
    except _FAST_DECODE_ERRORS:
        pass
    except RecursionError:
        return None, f"{_NOT_JSON}: nested too deeply"
    try:
        text = line.decode("utf-8") if isinstance(line, bytes) else line
    except UnicodeDecodeError as err:
        return None, f"line is not UTF-8 text: {err.reason} at byte {err.start}"
    try:
        return json.loads(text), None
    except ValueError as err:
        return None, f"{_NOT_JSON}: {str(err).splitlines()[0] if str(err) else err}"
    except RecursionError:
        return None, f"{_NOT_JSON}: nested too deeply"


def _unwrap(data: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None]:
    """The response inside a log record, and the day the record (or the response) gives.

    A record ``{"timestamp": ..., "response": {...}, ...}`` holds the response under
    ``response``; a stream event also has a ``response`` key but says its ``type``, and is read
    as the event it is.
    """
    inner = data.get("response")
    if "type" not in data and isinstance(inner, Mapping):
        return inner, day_of(data) or day_of(inner)
    return data, day_of(data)


def analyze_one(item: object, *, fast: bool = True) -> Row:
    """The row of one logged response: a JSON line (str or bytes), or its decoded value."""
    if isinstance(item, (bytes, bytearray, memoryview, str)):
        raw = bytes(item) if isinstance(item, (bytearray, memoryview)) else item
        data, problem = decode_line(raw)
        if problem is not None:
            return unreadable_row(problem)
    else:
        data = item
    if not isinstance(data, Mapping):
        # A list is a logged stream: extract() reads it as one.
        return _extract_quietly(data)
    data, day = _unwrap(data)
    row = fast_row(data) if fast else None
    if row is None:
        row = _extract_quietly(data)
    row["day"] = day
    return row


def fast_row(data: Mapping[str, Any]) -> Row | None:
    """The row of a decoded response, read through the analytics sink.

    None when no reader detects it as a final response: `analyze` then reads it with
    `extract()`, as a stream event or an unreadable shape.
    """
    token = _COUNTING.set(True)
    try:
        return sink_row(data)
    finally:
        _COUNTING.reset(token)


def analyze(batch: Any, *, fast: bool = True, column: str | None = None) -> Any:
    """Rows for a batch of logged responses: the batch function every engine runs.

    Args:
        batch: A list (or any iterable) of responses — JSON lines as str or bytes, or decoded
            dicts — or an Arrow ``Table`` / ``RecordBatch`` whose JSON column holds one
            response per row.
        fast: Count through the analytics sink (equal rows, less work); False reads every
            response with `extract()` and takes the row from its answer.
        column: The JSON column of an Arrow batch; may be left out when it has one column.

    Returns:
        A list of `Row` dicts for a list, or a ``pyarrow.RecordBatch`` with `ROW_SCHEMA` for
        an Arrow input (one row per input row, in order). Unreadable responses give a row with
        ``error`` set; nothing raises for bad data.
    """
    if _is_arrow(batch):
        values = _json_column(batch, column)
        return rows_to_arrow([analyze_one(value, fast=fast) for value in values])
    if column is not None:
        raise UsageError("column= applies to an Arrow table or record batch")
    if isinstance(batch, (str, bytes, Mapping)):
        raise UsageError(
            "analyze() takes a batch: a list of responses or an Arrow table; "
            "use analyze_one() for a single response"
        )
    return [analyze_one(item, fast=fast) for item in batch]


def _is_arrow(batch: object) -> bool:
    module = type(batch).__module__
    return module.startswith("pyarrow") and hasattr(batch, "schema")


def json_column_name(names: Sequence[str], column: str | None, holder: str) -> str:
    """The JSON column of a table with these column names: `column`, or its only column.

    Raises:
        UsageError: `column` is not one of `names`, or it is None and there are several.
    """
    if column is None:
        if len(names) != 1:
            raise UsageError(
                f"{holder} has {len(names)} columns ({', '.join(names)}): "
                "name the JSON one with column="
            )
        return names[0]
    if column not in names:
        raise UsageError(f"{holder} has no column {column!r} (it has {', '.join(names)})")
    return column


def _json_column(batch: Any, column: str | None) -> Iterable[object]:
    column = json_column_name(list(batch.schema.names), column, "the Arrow batch")
    values = batch.column(column)
    if not holds_text(values.type):
        raise UsageError(
            f"column {column!r} holds {values.type}, not JSON text: "
            "expected a string or binary column"
        )
    return (value if value is not None else "" for value in values.to_pylist())


def holds_text(kind: pa.DataType) -> bool:
    """Whether an Arrow column of this type can hold JSON text: a string or binary type."""
    import pyarrow as pa

    return (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_binary(kind)
        or pa.types.is_large_binary(kind)
        # View types exist from pyarrow 16 on.
        or getattr(pa.types, "is_string_view", _never)(kind)
        or getattr(pa.types, "is_binary_view", _never)(kind)
    )


def _never(_: object) -> bool:
    return False


def row_schema() -> pa.Schema:
    """The Arrow schema of a batch of rows (`ROW_FIELDS`, in order)."""
    import pyarrow as pa

    text, flag, count = pa.string(), pa.bool_(), pa.int64()
    types = {
        "provider": text,
        "model": text,
        "day": text,
        "grounded": flag,
        "citations": count,
        "sources": count,
        "urls": pa.list_(text),
        "domains": pa.list_(text),
        "tlds": pa.list_(text),
        "redirects": pa.list_(flag),
        "cited": pa.list_(flag),
        "diagnostics": count,
        "error": text,
    }
    return pa.schema([pa.field(name, types[name]) for name in ROW_FIELDS])


def rows_to_arrow(rows: list[Row]) -> pa.RecordBatch:
    """A record batch of rows, column by column."""
    import pyarrow as pa

    schema = row_schema()
    columns = [
        pa.array([_field(row, name) for row in rows], type=schema.field(name).type)
        for name in ROW_FIELDS
    ]
    return pa.RecordBatch.from_arrays(columns, schema=schema)


def _field(row: Row, name: str) -> object:
    return row[name]  # type: ignore[literal-required]


def rows_from_arrow(batch: Any) -> list[Row]:
    """The rows of a record batch or table with `ROW_SCHEMA`."""
    return batch.to_pylist()  # type: ignore[no-any-return]
