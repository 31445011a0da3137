"""`build_digest`: the numbered sources block of a prompt, within a token budget."""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol

from unicite._text import sanitize_display, truncate
from unicite.exceptions import UsageError
from unicite.model import Source
from unicite.sources._ledger import SourceLedger, as_source, seed_sid, shown_numbers

__all__ = ["build_digest", "estimate_tokens"]

_DEFAULT_ENCODING = "o200k_base"
_ELLIPSIS = "…"
_SPACES_RE = re.compile(r"[ \t\f\v]{2,}|[\t\f\v]")
_BLANK_LINES_RE = re.compile(r"[ ]*\n[ ]*\n[ \n]*")
_SID_RE = re.compile(r"\[(sid:)", re.IGNORECASE)
# What sanitize_display would change: controls (not \n), bidi and invisible marks, surrogates.
_UNSAFE_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028-\u202e\u2060\u2066-\u2069"
    "\ufeff\ud800-\udfff]"
)
_CHARS_PER_TOKEN = 8  # generous: no text past this many characters per budget token is read


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: ``ceil(ASCII characters / 4)`` + other characters.

    Four ASCII characters per token is the usual rule for English with BPE tokenizers; other
    characters (accented Latin, Cyrillic, CJK, emoji) are counted as a token each, which
    over-counts most of them. Linear time, no dependencies.
    """
    ascii_count = len(text.encode("ascii", "ignore"))
    return (ascii_count + 3) // 4 + (len(text) - ascii_count)


class _Counter(Protocol):
    def count(self, text: str) -> int: ...

    def fit(self, text: str, budget: int) -> int:
        """The length of the longest prefix of `text` that fits in `budget` tokens."""
        ...


def _longest_prefix(count: Callable[[str], int], text: str, budget: int) -> int:
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[:middle]) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


class _Estimate:
    name = "estimate"

    def count(self, text: str) -> int:
        return estimate_tokens(text)

    def fit(self, text: str, budget: int) -> int:
        if text.isascii():
            return min(len(text), max(budget, 0) * 4)
        return _longest_prefix(estimate_tokens, text, budget)


class _Custom:
    def __init__(self, count: Callable[[str], int]) -> None:
        self._count = count

    def count(self, text: str) -> int:
        value = self._count(text)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UsageError(f"tokenizer returned {value!r}, not a token count")
        return value

    def fit(self, text: str, budget: int) -> int:
        return _longest_prefix(self.count, text, budget)


class _Tiktoken:
    def __init__(self, encoding: Any) -> None:
        self._encoding = encoding

    def count(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))

    def fit(self, text: str, budget: int) -> int:
        tokens = self._encoding.encode(text, disallowed_special=())
        if len(tokens) <= budget:
            return len(text)
        # Token bytes concatenate to the text's UTF-8; a cut token leaves a partial character.
        prefix = self._encoding.decode_bytes(tokens[: max(budget, 0)])
        return len(prefix.decode("utf-8", "ignore"))


_ENCODINGS: dict[str, _Tiktoken | None] = {}
_ENCODINGS_LOCK = threading.Lock()


def _tiktoken(name: str) -> _Tiktoken | None:
    """A tiktoken encoding, or None when tiktoken or its encoding file is not available."""
    with _ENCODINGS_LOCK:
        if name not in _ENCODINGS:
            try:
                import tiktoken

                _ENCODINGS[name] = _Tiktoken(tiktoken.get_encoding(name))
            except Exception:  # not installed, offline, unknown name: all mean "estimate"
                _ENCODINGS[name] = None
        return _ENCODINGS[name]


# Where tiktoken keeps the default encoding once downloaded (its own cache rule, tiktoken.load).
_DEFAULT_BLOB = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"


def _default_is_cached() -> bool:
    """Whether the default encoding loads without the network: its file is in tiktoken's cache.

    Building a prompt must never download anything (offline machines, recorded HTTP
    cassettes): by default tiktoken is used only once its file is on this machine.
    """
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR")
    if cache_dir is None:
        cache_dir = os.environ.get("DATA_GYM_CACHE_DIR")
    if cache_dir is None:
        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if not cache_dir:
        return False
    key = hashlib.sha1(_DEFAULT_BLOB.encode(), usedforsecurity=False).hexdigest()
    return os.path.exists(os.path.join(cache_dir, key))


def _counter(tokenizer: str | Callable[[str], int] | None, notes: list[str]) -> _Counter:
    if tokenizer is None:
        if _DEFAULT_ENCODING in _ENCODINGS or _default_is_cached():
            return _tiktoken(_DEFAULT_ENCODING) or _Estimate()
        return _Estimate()
    if tokenizer == "estimate":
        return _Estimate()
    if isinstance(tokenizer, str):
        found = _tiktoken(tokenizer)
        if found is None:
            notes.append(f"build_digest: tiktoken encoding {tokenizer!r} unavailable; estimated")
            return _Estimate()
        return found
    if callable(tokenizer):
        return _Custom(tokenizer)
    raise UsageError("tokenizer must be None, 'estimate', an encoding name or a callable")


def _clean(text: str, budget: int) -> str:
    """Text safe for a prompt, read no further than `budget` tokens could ever show."""
    cap = _CHARS_PER_TOKEN * budget + 64
    if len(text) > cap:
        text = truncate(text, cap, _ELLIPSIS)
    if _UNSAFE_RE.search(text):
        text = sanitize_display(text, allow_newlines=True)
    if "  " in text or "\t" in text or "\f" in text or "\v" in text:
        text = _SPACES_RE.sub(" ", text)
    if "\n" in text:
        text = _BLANK_LINES_RE.sub("\n\n", text)
    return _SID_RE.sub(r"(\1", text).strip()  # a page cannot forge another source's header


def _shorten(text: str, allowance: int, counter: _Counter) -> str:
    """`text` cut to `allowance` tokens with an ellipsis, never inside a character cluster."""
    if counter.count(text) <= allowance:
        return text
    budget = allowance - counter.count(_ELLIPSIS)
    while budget > 0:
        cut = truncate(text, counter.fit(text, budget) + len(_ELLIPSIS), _ELLIPSIS)
        if cut == _ELLIPSIS:
            return ""
        excess = counter.count(cut) - allowance
        if excess <= 0:
            return cut
        budget -= excess  # a tokenizer merging across the cut; converges in a step or two
    return ""


def _share(needs: list[int], available: int) -> list[int]:
    """Split `available` tokens fairly: small needs are met in full, the rest split evenly."""
    allowances = [0] * len(needs)
    left = len(needs)
    for index in sorted(range(len(needs)), key=lambda i: (needs[i], i)):
        allowances[index] = min(needs[index], available // left)
        available -= allowances[index]
        left -= 1
    return allowances


def _numbered(
    sources: object, ledger: SourceLedger | None, notes: list[str]
) -> list[tuple[int, Source]]:
    """Each source with the number the prompt shows for it."""
    if isinstance(sources, Mapping):
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in sources):
            raise UsageError(
                "sources must be a list of sources or a map from the numbers shown "
                "(1, 2, ...) to sources"
            )
        if ledger is not None:
            raise UsageError("give a ledger or a map of numbered sources, not both")
        return [(n, as_source(sources[n])) for n in sorted(sources)]
    if isinstance(sources, (str, bytes)) or not isinstance(sources, Iterable):
        raise UsageError(f"sources must be a list of sources, got {type(sources).__name__}")
    items = [as_source(s) for s in sources]
    if ledger is not None:
        numbered = []
        for source in items:
            found = ledger.sid(ledger.resolve(source.id) or source.id)
            if found is None:
                raise UsageError(f"source {source.id!r} is not in the ledger")
            numbered.append((found, source))
        return numbered
    shown = shown_numbers(items)
    if shown is not None:
        # Seed-004 rows are shown under their own sids, in the order given.
        return [(seed_sid(source) or 0, source) for source in items]
    return list(enumerate(items, 1))


def build_digest(
    sources: Sequence[Source | Mapping[str, Any]] | Mapping[int, Source | Mapping[str, Any]],
    budget_tokens: int,
    prefer: Literal["content", "snippet"] = "content",
    *,
    ledger: SourceLedger | None = None,
    tokenizer: str | Callable[[str], int] | None = None,
    diagnostics: list[str] | None = None,
) -> str:
    """The numbered sources block for a prompt, at most `budget_tokens` long.

    Each source becomes ``[sid:N] <title>`` followed by its text; blocks are separated by a
    blank line. Titles and texts are sanitized (control and bidi characters removed, runs of
    spaces and blank lines collapsed). The budget left after the headers is split fairly:
    sources needing less than an equal share get all they need, the others share the rest
    equally. Text is cut with an ellipsis, never inside a surrogate pair or grapheme
    cluster, at a word boundary when one is near. Deterministic.

    Sources are numbered 1, 2, ... in the order given, by their `SourceLedger.sid` with
    ``ledger``, or by the keys of a ``{number: source}`` map: the same three ways `unicite.cite`
    reads the numbers back, so ``[n]`` in the answer names the source shown as ``[sid:n]``.
    Seed-004 rows keep their own ``sid`` in ``extras["sid"]``; to show those numbers, pass
    ``{row["sid"]: row for row in rows}`` here and the same map to `unicite.cite` (a list is
    numbered in order, with a diagnostic when the rows' sids differ from the numbers shown).

    Args:
        sources: `Source` objects or dicts with the same keys (seed-004 rows included), in the
            order to list them; or a map from the numbers to show to sources.
        budget_tokens: The most tokens the digest may take.
        prefer: ``"content"`` uses the full text (falling back to the snippet), ``"snippet"``
            the short preview (falling back to the content).
        ledger: Number sources by their `SourceLedger.sid` instead of 1, 2, ... in order (not
            with a map).
        tokenizer: ``None`` for tiktoken's ``o200k_base`` when tiktoken is installed and its
            encoding file is already on this machine (tiktoken's cache: nothing is downloaded
            by default), else `estimate_tokens`; ``"estimate"`` for `estimate_tokens`; another
            name for that tiktoken encoding (loaded, and downloaded if need be, by tiktoken);
            or any ``str -> int`` token counter.
        diagnostics: A list to append what had to be dropped to.

    Returns:
        The digest; ``""`` when there are no sources. With tiktoken the count is per block, so
        the whole digest can differ by a token where blocks meet.

    Raises:
        UsageError: A bad argument, a map not keyed by positive numbers, or a source that is
            not in `ledger`.
    """
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0:
        raise UsageError(f"budget_tokens must be a non-negative integer, got {budget_tokens!r}")
    if prefer not in ("content", "snippet"):
        raise UsageError(f"prefer must be 'content' or 'snippet', got {prefer!r}")
    if ledger is not None and not isinstance(ledger, SourceLedger):
        raise UsageError(f"ledger must be a SourceLedger, got {type(ledger).__name__}")
    notes: list[str] = []
    counter = _counter(tokenizer, notes)
    numbered = _numbered(sources, ledger, notes)
    items = [source for _, source in numbered]
    headers: list[str] = []
    for number, source in numbered:
        title = _clean(source.title or source.domain or source.url or "Untitled source", 64)
        headers.append(f"[sid:{number}] {' '.join(title.split())}")

    separator = counter.count("\n\n")
    fixed: list[int] = []
    total = 0
    for header in headers:
        cost = counter.count(header + "\n") + (separator if fixed else 0)
        if total + cost > budget_tokens:
            break
        fixed.append(cost)
        total += cost
    if len(fixed) < len(items):
        notes.append(
            f"build_digest: {len(items) - len(fixed)} of {len(items)} sources left out: "
            f"their titles alone exceed {budget_tokens} tokens"
        )
    kept = items[: len(fixed)]
    texts = []
    for source in kept:
        first, second = (
            (source.content, source.snippet)
            if prefer == "content"
            else (source.snippet, source.content)
        )
        texts.append(_clean(first or second or "", budget_tokens))
    allowances = _share([counter.count(t) for t in texts], budget_tokens - total)
    blocks = []
    for header, text, allowance in zip(headers[: len(kept)], texts, allowances, strict=True):
        shown = _shorten(text, allowance, counter) if text else ""
        blocks.append(f"{header}\n{shown}" if shown else header)
    if diagnostics is not None:
        diagnostics.extend(notes)
    return "\n\n".join(blocks)
