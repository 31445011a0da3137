"""The errors unicite raises, as one small tree.

```
UniciteError
├── UsageError              the caller passed something unicite cannot use (also a ValueError)
├── CitationError           provider data could not be read, raised only with strict=True
└── GroundingRequiredError  a grounded request came back without grounding or citations
```

Extraction, parsing and rendering never raise on odd provider data: they record diagnostics.
`CitationError` appears only when the caller asked for `strict=True`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from unicite.model import CitedAnswer

__all__ = [
    "CitationError",
    "GroundingRequiredError",
    "UniciteError",
    "UsageError",
    "WireError",
    "describe_error",
]

_MAX_ERROR_TEXT = 300
"""Longest error message a diagnostic quotes (provider error bodies can be long)."""


def describe_error(error: BaseException) -> str:
    """``Type: message`` of an exception on one line, for a diagnostic.

    The message is cut at 300 characters, and an exception whose ``str()`` itself raises is
    still described (by its type), so reporting a failure never fails.
    """
    try:
        text = " ".join(str(error).split())
    except Exception:
        text = "(its message could not be read)"
    if len(text) > _MAX_ERROR_TEXT:
        text = text[: _MAX_ERROR_TEXT - 1] + "…"
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class UniciteError(Exception):
    """Base class of every error unicite raises on purpose."""


class UsageError(UniciteError, ValueError):
    """The caller passed an argument unicite cannot use (wrong type, unknown option)."""


class WireError(UniciteError, ValueError):
    """Frames or a history document could not be read as their wire protocol defines them."""


class CitationError(UniciteError):
    """Provider data could not be turned into citations (raised in strict mode only).

    Attributes:
        provider: The provider whose data was being read, when known.
        diagnostics: Every problem found, in the order they were found.
    """

    def __init__(
        self, message: str, *, provider: str | None = None, diagnostics: list[str] | None = None
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.diagnostics = list(diagnostics or [message])


class GroundingRequiredError(UniciteError):
    """The grounding policy required citations and the answer had none.

    Attributes:
        provider: The provider that produced the answer, when known.
        reason: Why the policy failed, e.g. ``"no grounding metadata"`` or ``"no citations"``.
        answer: The answer that failed the policy, when known (an adapter still publishes it).
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str | None = None,
        reason: str,
        answer: CitedAnswer | None = None,
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.reason = reason
        self.answer = answer
