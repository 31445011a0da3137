"""Offset conversions between Python str indices, UTF-8 bytes and UTF-16 code units.

unicite's offsets are Python str (code point) indices. Providers and front ends count otherwise:
Gemini segment indices are UTF-8 byte offsets, JavaScript strings count UTF-16 code units.
`OffsetIndex` converts many offsets of one text in time linear in the text, not per offset.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable

__all__ = [
    "OffsetIndex",
    "byte_span",
    "from_byte_span",
    "from_utf16_span",
    "utf16_span",
]

# One checkpoint per block of characters keeps memory at len(text) / _BLOCK integers while any
# conversion walks at most one block.
_BLOCK = 64
_CONTINUATION = bytes(range(0x80, 0xC0))


def _utf16_len(ch: str) -> int:
    return 2 if ord(ch) > 0xFFFF else 1


class OffsetIndex:
    """Converts str indices of one text to and from UTF-8 byte and UTF-16 offsets.

    Building the index is linear in the text; each conversion costs O(log n) plus one block.
    ASCII text takes a fast path where all three offsets coincide.
    """

    __slots__ = ("_ascii", "_bytes_at", "_text", "_u16_at", "byte_length", "utf16_length")

    def __init__(self, text: str) -> None:
        self._text = text
        self._ascii = text.isascii()
        self._bytes_at: list[int] = []
        self._u16_at: list[int] = []
        if self._ascii:
            self.byte_length = self.utf16_length = len(text)
            return
        b = u = 0
        for k in range(0, len(text), _BLOCK):
            self._bytes_at.append(b)
            self._u16_at.append(u)
            chunk = text[k : k + _BLOCK]
            b += len(chunk.encode("utf-8", "surrogatepass"))
            u += len(chunk.encode("utf-16-le", "surrogatepass")) // 2
        self.byte_length = b
        self.utf16_length = u

    def _clamp(self, index: int) -> int:
        return max(0, min(index, len(self._text)))

    def to_bytes(self, index: int) -> int:
        """UTF-8 byte offset of str index `index` (clamped to the text)."""
        index = self._clamp(index)
        if self._ascii:
            return index
        if index >= len(self._text):
            return self.byte_length
        block = index // _BLOCK
        start = block * _BLOCK
        return self._bytes_at[block] + len(self._text[start:index].encode("utf-8", "surrogatepass"))

    def to_utf16(self, index: int) -> int:
        """UTF-16 code-unit offset of str index `index` (clamped to the text)."""
        index = self._clamp(index)
        if self._ascii:
            return index
        if index >= len(self._text):
            return self.utf16_length
        block = index // _BLOCK
        start = block * _BLOCK
        return self._u16_at[block] + (
            len(self._text[start:index].encode("utf-16-le", "surrogatepass")) // 2
        )

    def _from_units(
        self, offset: int, table: list[int], total: int, measure: Callable[[str], int], ceil: bool
    ) -> int:
        if offset <= 0:
            return 0
        if offset >= total:
            return len(self._text)
        block = bisect_right(table, offset) - 1
        pos = table[block]
        index = block * _BLOCK
        while pos < offset:
            step = measure(self._text[index])
            if pos + step > offset:
                # The offset falls inside one character's encoding.
                return index + 1 if ceil else index
            pos += step
            index += 1
        return index

    def from_bytes(self, offset: int, *, ceil: bool = False) -> int:
        """Str index of UTF-8 byte offset `offset`.

        An offset inside a multi-byte character resolves to that character's start, or to the
        next character with ``ceil=True`` (use it for exclusive end offsets).
        """
        if self._ascii:
            return self._clamp(offset)
        if offset <= 0:
            return 0
        if offset >= self.byte_length:
            return len(self._text)
        block = bisect_right(self._bytes_at, offset) - 1
        start = block * _BLOCK
        raw = self._text[start : start + _BLOCK].encode("utf-8", "surrogatepass")
        k = offset - self._bytes_at[block]
        # Every character starts with exactly one non-continuation byte: count them in C.
        chars = len(raw[:k].translate(None, _CONTINUATION))
        inside = k < len(raw) and 0x80 <= raw[k] < 0xC0
        if inside and not ceil:
            chars -= 1
        return start + chars

    def from_utf16(self, offset: int, *, ceil: bool = False) -> int:
        """Str index of UTF-16 code-unit offset `offset` (see `from_bytes` for ``ceil``)."""
        if self._ascii:
            return self._clamp(offset)
        return self._from_units(offset, self._u16_at, self.utf16_length, _utf16_len, ceil)

    def is_char_boundary_bytes(self, offset: int) -> bool:
        """Whether a UTF-8 byte offset falls between two characters (not inside one)."""
        if offset < 0 or offset > self.byte_length:
            return False
        return self.to_bytes(self.from_bytes(offset)) == offset


def utf16_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Convert a str span of `text` to UTF-16 code-unit offsets (JavaScript string indices)."""
    index = OffsetIndex(text)
    return index.to_utf16(start), index.to_utf16(end)


def from_utf16_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Convert a UTF-16 code-unit span of `text` to str indices."""
    index = OffsetIndex(text)
    return index.from_utf16(start), index.from_utf16(end, ceil=True)


def byte_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Convert a str span of `text` to UTF-8 byte offsets."""
    index = OffsetIndex(text)
    return index.to_bytes(start), index.to_bytes(end)


def from_byte_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Convert a UTF-8 byte span of `text` (e.g. a Gemini segment) to str indices."""
    index = OffsetIndex(text)
    return index.from_bytes(start), index.from_bytes(end, ceil=True)
