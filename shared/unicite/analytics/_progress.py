"""How far a run has got: bytes of input read and responses counted, chunk by chunk.

An engine reports each chunk once its result is in, with the chunk's share of the input
(`chunk_sizes`) and the responses it counted; the `Progress` it was given (a terminal bar, a
log line, anything) does what it likes with that. A run given none does no extra work.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from unicite.analytics._inputs import STDIN, Chunk

__all__ = ["Progress", "Tracker", "chunk_sizes", "total_size"]


class Progress(Protocol):
    """What a run reports to, as it goes."""

    def start(self, total_bytes: int | None, chunks: int) -> None:
        """The run is planned: `total_bytes` of input (None when unknown: stdin) in `chunks`."""

    def advance(self, size: int, responses: int) -> None:
        """A chunk is read: `size` bytes of input, holding `responses` responses."""


def chunk_sizes(chunks: Sequence[Chunk]) -> list[int | None]:
    """The bytes of input each chunk reads, None for standard input.

    A plain file's chunk reads its byte range; a compressed file is one chunk of the whole
    file; a Parquet file's row groups share the file's bytes evenly. The sizes of a file's
    chunks add up to the file's size.
    """
    file_size: dict[str, int] = {}
    groups: dict[str, int] = {}
    for chunk in chunks:
        if chunk.path != STDIN and chunk.path not in file_size:
            try:
                file_size[chunk.path] = os.path.getsize(chunk.path)
            except OSError:
                file_size[chunk.path] = 0
        if chunk.kind == "parquet":
            groups[chunk.path] = groups.get(chunk.path, 0) + 1
    seen: dict[str, int] = {}
    sizes: list[int | None] = []
    for chunk in chunks:
        if chunk.kind == "stdin":
            sizes.append(None)
            continue
        total = file_size[chunk.path]
        if chunk.kind == "jsonl":
            end = total if chunk.end < 0 else min(chunk.end, total)
            sizes.append(max(0, end - chunk.start))
        elif chunk.kind == "parquet":
            share, rest = divmod(total, groups[chunk.path])
            index = seen.get(chunk.path, 0)
            seen[chunk.path] = index + 1
            sizes.append(share + (rest if index == groups[chunk.path] - 1 else 0))
        else:
            sizes.append(total)
    return sizes


def total_size(sizes: Sequence[int | None]) -> int | None:
    """The bytes all chunks read; None when one of them is standard input."""
    if any(size is None for size in sizes):
        return None
    return sum(size for size in sizes if size is not None)


class Tracker:
    """Reports chunks to a `Progress` by the chunk: the engines' side of it."""

    def __init__(self, chunks: Sequence[Chunk], progress: Progress) -> None:
        sizes = chunk_sizes(chunks)
        self._sizes = dict(zip(chunks, sizes, strict=True))
        self._progress = progress
        progress.start(total_size(sizes), len(chunks))

    def done(self, chunk: Chunk, responses: int) -> None:
        """One chunk's result is in."""
        self._progress.advance(self._sizes.get(chunk) or 0, responses)
