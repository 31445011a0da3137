"""Log inputs: files, directories and globs of JSONL (plain, gzip, zstd) and Parquet, in chunks.

Workers read chunks independently, one line at a time. A plain JSONL file is split at byte
offsets: a chunk reads every line that *starts* inside its byte range, so the chunks of a file
read each line exactly once whatever the split. Compressed files cannot be entered in the
middle and are one chunk each; a Parquet file is one chunk per row group. Lines are numbered
within their chunk; the engine's `Collector` turns those into line numbers of the file once
every chunk's line count is known.
"""

from __future__ import annotations

import glob
import io
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Literal

from unicite.analytics._analyze import holds_text
from unicite.exceptions import UsageError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["STDIN", "Chunk", "InputError", "expand_inputs", "plan_chunks", "read_chunk"]

STDIN = "-"
"""The name that reads standard input (the local engine only)."""

Kind = Literal["jsonl", "gzip", "zstd", "parquet", "stdin"]

_LOG_SUFFIXES = (
    ".jsonl",
    ".ndjson",
    ".json",
    ".jsonl.gz",
    ".ndjson.gz",
    ".json.gz",
    ".gz",
    ".jsonl.zst",
    ".ndjson.zst",
    ".json.zst",
    ".zst",
    ".zstd",
    ".parquet",
    ".pq",
)
"""What a directory is searched for (a file named on the command line is read whatever its
name)."""

_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_PARQUET_MAGIC = b"PAR1"
_READ_SIZE = 1 << 20


class InputError(UsageError):
    """A named input cannot be found or read."""


@dataclass(frozen=True)
class Chunk:
    """A share of one input that one task reads: a byte range, a whole file or a row group."""

    path: str
    kind: Kind
    start: int = 0
    """Byte offset where the chunk's lines start (a plain file), or the row group (Parquet)."""
    end: int = -1
    """Byte offset where the next chunk's lines start (a plain file); -1 to the end."""
    column: str | None = None
    """The JSON column of a Parquet file."""


def expand_inputs(names: Sequence[str]) -> list[str]:
    """Files for the names given: files as named, directories searched, globs expanded.

    Raises:
        InputError: A name matches nothing, or nothing at all is named.
    """
    if not names:
        raise InputError("no logs named")
    files: list[str] = []
    for name in names:
        if name == STDIN:
            files.append(name)
            continue
        path = Path(name)
        if path.is_dir():
            found = sorted(
                str(p)
                for p in path.rglob("*")
                if p.is_file()
                and p.name.lower().endswith(_LOG_SUFFIXES)
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            if not found:
                raise InputError(
                    f"{name}: a directory with no log files (.jsonl, .gz, .zst, .parquet)"
                )
            files.extend(found)
        elif path.exists():
            files.append(name)
        elif glob.has_magic(name):
            matched = sorted(p for p in glob.glob(name, recursive=True) if os.path.isfile(p))
            if not matched:
                raise InputError(f"{name}: no file matches")
            files.extend(matched)
        else:
            raise InputError(f"{name}: no such file or directory")
    return list(dict.fromkeys(files))


def _kind_of(path: str) -> Kind:
    if path == STDIN:
        return "stdin"
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from err
    if head.startswith(_GZIP_MAGIC):
        return "gzip"
    if head.startswith(_ZSTD_MAGIC):
        return "zstd"
    if head.startswith(_PARQUET_MAGIC):
        return "parquet"
    return "jsonl"


def plan_chunks(
    names: Sequence[str], *, chunk_bytes: int = 64 << 20, column: str | None = None
) -> list[Chunk]:
    """The chunks that read the named inputs, in input order."""
    chunks: list[Chunk] = []
    for path in expand_inputs(names):
        kind = _kind_of(path)
        if kind == "jsonl":
            size = os.path.getsize(path)
            starts = list(range(0, size, max(chunk_bytes, 1))) or [0]
            ends = [*starts[1:], -1]
            chunks.extend(Chunk(path, kind, s, e) for s, e in zip(starts, ends, strict=True))
        elif kind == "parquet":
            groups, name = _parquet_layout(path, column)
            chunks.extend(Chunk(path, kind, g, g + 1, name) for g in range(groups))
        else:
            chunks.append(Chunk(path, kind))
    return chunks


def _parquet_layout(path: str, column: str | None) -> tuple[int, str]:
    """The number of row groups of a Parquet file and the name of its JSON column."""
    pq = _pyarrow_parquet(path)
    try:
        meta = pq.ParquetFile(path)
    except Exception as err:  # pyarrow raises several types for unreadable files
        raise InputError(f"{path}: not a readable Parquet file: {err}") from err
    schema = meta.schema_arrow
    groups: int = meta.num_row_groups
    return groups, _json_column_name(path, schema, column)


def _json_column_name(path: str, schema: pa.Schema, column: str | None) -> str:
    textual: list[str] = [f.name for f in schema if holds_text(f.type)]
    if column is not None:
        if column not in schema.names:
            raise InputError(f"{path}: no column {column!r} (it has {', '.join(schema.names)})")
        if column not in textual:
            raise InputError(f"{path}: column {column!r} is not text or binary JSON")
        return column
    if len(textual) == 1:
        return textual[0]
    for preferred in ("response", "json", "line", "body"):
        if preferred in textual:
            return preferred
    raise InputError(
        f"{path}: cannot tell which column holds the JSON responses "
        f"({', '.join(textual) or 'no text column'}): name it with --column"
    )


def _pyarrow_parquet(path: str):  # type: ignore[no-untyped-def]
    try:
        import pyarrow.parquet as pq
    except ImportError as err:
        raise InputError(
            f"{path}: reading Parquet needs pyarrow: pip install 'unicite[analytics]'"
        ) from err
    return pq


def _open_compressed(chunk: Chunk) -> IO[bytes]:
    if chunk.kind == "gzip":
        import gzip

        return gzip.open(chunk.path, "rb")  # type: ignore[return-value]
    try:
        import zstandard
    except ImportError as err:
        raise InputError(
            f"{chunk.path}: reading zstd needs zstandard: pip install 'unicite[analytics]'"
        ) from err
    raw = open(chunk.path, "rb")  # noqa: SIM115 - closed with the reader below
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_size=_READ_SIZE, closefd=True)
    return io.BufferedReader(reader, _READ_SIZE)


def read_chunk(chunk: Chunk) -> Iterator[bytes | str]:
    """The lines of a chunk, blank ones included (so that line numbers stay right).

    A compressed file cut short stops the chunk with `InputError` too, after yielding every
    whole line before the cut.

    Raises:
        InputError: The file cannot be opened or decompressed.
    """
    if chunk.kind == "parquet":
        yield from _parquet_rows(chunk)
        return
    if chunk.kind == "stdin":
        import sys

        yield from sys.stdin.buffer
        return
    try:
        if chunk.kind == "jsonl":
            handle: IO[bytes] = open(chunk.path, "rb", buffering=_READ_SIZE)  # noqa: SIM115
        else:
            handle = _open_compressed(chunk)
    except OSError as err:
        raise InputError(f"{chunk.path}: cannot read: {err.strerror or err}") from err
    with handle:
        if chunk.kind != "jsonl":
            try:
                yield from handle
            except (OSError, EOFError, ValueError) as err:
                raise InputError(f"{chunk.path}: cannot decompress: {err}") from err
            return
        position = chunk.start
        if position > 0:
            # The line running across the chunk's start belongs to the chunk before.
            handle.seek(position - 1)
            position += len(handle.readline()) - 1
        end = chunk.end
        for line in handle:
            if end >= 0 and position >= end:
                return
            position += len(line)
            yield line


def _parquet_rows(chunk: Chunk) -> Iterator[bytes | str]:
    pq = _pyarrow_parquet(chunk.path)
    table = pq.ParquetFile(chunk.path).read_row_group(chunk.start, columns=[chunk.column])
    for batch in table.to_batches(max_chunksize=1024):
        for value in batch.column(0).to_pylist():
            yield value if value is not None else ""
