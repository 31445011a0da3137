import pytest

import unicite
from unicite import CitationError, GroundingRequiredError, UniciteError, UsageError, resolve_enabled


@pytest.mark.parametrize(
    ("explicit", "persistent", "default", "expected"),
    [
        (None, None, False, False),
        (None, None, True, True),
        (None, True, False, True),
        (None, False, True, False),
        (True, False, False, True),
        (False, True, True, False),
    ],
)
def test_resolve_enabled_precedence(
    explicit: bool | None, persistent: bool | None, default: bool, expected: bool
) -> None:
    assert resolve_enabled(explicit, persistent, default) is expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("enabled", True),
        ("disabled", False),
        ("DISABLED", False),
        (" Off ", False),
        ("on", True),
        ("True", True),
        ("false", False),
        ("1", True),
        ("0", False),
        (1, True),
        (0, False),
    ],
)
def test_resolve_enabled_reads_the_toggle_words(word: object, expected: bool) -> None:
    assert resolve_enabled(word) is expected  # type: ignore[arg-type]
    assert resolve_enabled(None, word, default=not expected) is expected  # type: ignore[arg-type]
    assert resolve_enabled(None, None, default=word) is expected  # type: ignore[arg-type]


def test_an_empty_word_is_unset() -> None:
    assert resolve_enabled("", "off", default=True) is False


@pytest.mark.parametrize("value", ["disable", "enable d", "nein", 2, -1, 0.5, ["on"]])
def test_resolve_enabled_rejects_anything_else(value: object) -> None:
    with pytest.raises(UsageError, match="explicit must be a bool or one of"):
        resolve_enabled(value)  # type: ignore[arg-type]


def test_error_tree() -> None:
    assert issubclass(UsageError, UniciteError)
    assert issubclass(UsageError, ValueError)
    assert issubclass(CitationError, UniciteError)
    assert issubclass(GroundingRequiredError, UniciteError)
    assert not issubclass(CitationError, UsageError)


def test_errors_carry_structured_attributes() -> None:
    err = CitationError("bad segment", provider="gemini", diagnostics=["a", "b"])
    assert (err.provider, err.diagnostics, str(err)) == ("gemini", ["a", "b"], "bad segment")
    assert CitationError("x").diagnostics == ["x"]
    g = GroundingRequiredError("no citations from openai", provider="openai", reason="no citations")
    assert (g.provider, g.reason) == ("openai", "no citations")


def test_version_is_exposed() -> None:
    assert unicite.__version__.count(".") >= 2
