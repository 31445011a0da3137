"""Haystack's own `AnswerBuilder` tests, as data, run against `CitedAnswerBuilder`.

Each case is one of Haystack's tests (``test/components/builders/test_answer_builder.py``):
the component's init parameters, the run's inputs and what the answer must be. Where unicite
deliberately differs, the case holds unicite's expectation and its ``why`` says why;
``haystack`` then holds what `AnswerBuilder` gives, which the test checks too, so a change
on either side shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("haystack.core")

from haystack import Document, GeneratedAnswer
from haystack.components.builders.answer_builder import AnswerBuilder
from haystack.dataclasses.chat_message import ChatMessage

from unicite import CitedAnswer
from unicite_haystack import CitedAnswerBuilder

MESSAGE_META = {
    "model": "gpt-4o-mini",
    "index": 0,
    "finish_reason": "stop",
    "usage": {"prompt_tokens": 32, "completion_tokens": 153, "total_tokens": 185},
}
TWO = [Document(content="test doc 1"), Document(content="test doc 2")]
THREE = [*TWO, Document(content="test doc 3")]
TEN = [Document(content=f"doc {i}") for i in range(1, 11)]
FOUR = TEN[:4]
HISTORY = [
    ChatMessage.from_user("What is Haystack?"),
    ChatMessage.from_assistant("Haystack is a framework for building LLM applications."),
]


@dataclass(frozen=True)
class Case:
    name: str
    init: dict[str, Any]
    run: dict[str, Any]
    data: list[str] = field(default_factory=list)
    """Each answer's ``data``."""
    meta: dict[str, Any] = field(default_factory=dict)
    """The first answer's meta, without ``all_messages`` and ``citations``."""
    documents: list[str] = field(default_factory=list)
    """The first answer's documents' contents, in order."""
    source_index: list[int] | None = None
    referenced: list[bool] | None = None
    why: str = ""
    """Why unicite differs from `AnswerBuilder` here ("" when it does not)."""
    haystack: tuple[list[str], list[str]] | None = None
    """`AnswerBuilder`'s (data, document contents) where unicite differs."""
    diagnostic: str = ""
    """Part of a diagnostic the first answer's `CitedAnswer` must hold."""


CASES = [
    Case("run_without_meta", {}, {"replies": ["reply1"]}, ["reply1"]),
    Case("run_meta_is_an_empty_list", {}, {"replies": ["reply1"], "meta": []}, ["reply1"]),
    Case(
        "run_with_meta",
        {},
        {"replies": ["reply1"], "meta": [{"test": "meta"}]},
        ["reply1"],
        {"test": "meta"},
    ),
    Case(
        "run_without_pattern",
        {},
        {"replies": ["Answer: AnswerString"], "meta": [{}]},
        ["Answer: AnswerString"],
    ),
    Case(
        "run_with_pattern_with_capturing_group",
        {"pattern": r"Answer: (.*)"},
        {"replies": ["Answer: AnswerString"], "meta": [{}]},
        ["AnswerString"],
    ),
    Case(
        "run_with_pattern_without_capturing_group",
        {"pattern": r"'.*'"},
        {"replies": ["Answer: 'AnswerString'"], "meta": [{}]},
        ["'AnswerString'"],
    ),
    Case(
        "run_with_pattern_set_at_runtime",
        {"pattern": "unused pattern"},
        {"replies": ["Answer: AnswerString"], "meta": [{}], "pattern": r"Answer: (.*)"},
        ["AnswerString"],
    ),
    Case(
        "run_with_documents_without_reference_pattern",
        {},
        {"replies": ["Answer: AnswerString"], "meta": [{}], "documents": TWO},
        ["Answer: AnswerString"],
        documents=[],
        why="markers are always read, so an answer citing nothing returns no document "
        "(return_only_referenced_documents=False returns them all)",
        haystack=(["Answer: AnswerString"], ["test doc 1", "test doc 2"]),
    ),
    Case(
        "run_with_documents_with_reference_pattern",
        {"reference_pattern": "\\[(\\d+)\\]"},
        {"replies": ["Answer: AnswerString[2]"], "meta": [{}], "documents": TWO},
        ["Answer: AnswerString[1]"],
        documents=["test doc 2"],
        source_index=[2],
        referenced=[True],
        why="markers are renumbered first-cited first: [1] names the first document returned",
        haystack=(["Answer: AnswerString[2]"], ["test doc 2"]),
    ),
    Case(
        "run_with_documents_with_reference_pattern_return_all_documents",
        {"reference_pattern": "\\[(\\d+)\\]", "return_only_referenced_documents": False},
        {"replies": ["Answer: AnswerString[2]"], "meta": [{}], "documents": TWO},
        ["Answer: AnswerString[1]"],
        documents=["test doc 2", "test doc 1"],
        source_index=[2, 1],
        referenced=[True, False],
        why="renumbered, and the cited documents come first, in citation order",
        haystack=(["Answer: AnswerString[2]"], ["test doc 1", "test doc 2"]),
    ),
    Case(
        "run_with_documents_with_reference_pattern_and_no_match",
        {"reference_pattern": "\\[(\\d+)\\]"},
        {"replies": ["Answer: AnswerString[3]"], "meta": [{}], "documents": TWO},
        ["Answer: AnswerString[3]"],
        documents=[],
        why="a marker glued to a word that names no document reads as an index in prose: "
        "left as text, with a diagnostic in meta['citations'] instead of a logged warning",
        diagnostic="glued to a word and names no given source",
        haystack=(["Answer: AnswerString[3]"], []),
    ),
    Case(
        "run_with_reference_pattern_set_at_runtime",
        {"reference_pattern": "unused pattern"},
        {
            "replies": ["Answer: AnswerString[2][3]"],
            "meta": [{}],
            "documents": THREE,
            "reference_pattern": "\\[(\\d+)\\]",
        },
        ["Answer: AnswerString[1][2]"],
        documents=["test doc 2", "test doc 3"],
        why="renumbered first-cited first",
        haystack=(["Answer: AnswerString[2][3]"], ["test doc 2", "test doc 3"]),
    ),
    Case(
        "run_with_chat_message_replies_without_pattern",
        {},
        {"replies": [ChatMessage.from_assistant("Answer: AnswerString", meta=MESSAGE_META)]},
        ["Answer: AnswerString"],
        MESSAGE_META,
    ),
    Case(
        "run_with_chat_message_replies_with_pattern",
        {"pattern": r"Answer: (.*)"},
        {
            "replies": [ChatMessage.from_assistant("Answer: AnswerString", meta=MESSAGE_META)],
            "meta": [{}],
        },
        ["AnswerString"],
        MESSAGE_META,
    ),
    Case(
        "run_with_chat_message_replies_with_documents",
        {"reference_pattern": "\\[(\\d+)\\]"},
        {
            "replies": [ChatMessage.from_assistant("Answer: AnswerString[2]", meta=MESSAGE_META)],
            "meta": [{}],
            "documents": TWO,
        },
        ["Answer: AnswerString[1]"],
        MESSAGE_META,
        documents=["test doc 2"],
        why="renumbered first-cited first",
        haystack=(["Answer: AnswerString[2]"], ["test doc 2"]),
    ),
    Case(
        "run_with_chat_message_replies_with_pattern_set_at_runtime",
        {"pattern": "unused pattern"},
        {
            "replies": [ChatMessage.from_assistant("Answer: AnswerString", meta=MESSAGE_META)],
            "meta": [{}],
            "pattern": r"Answer: (.*)",
        },
        ["AnswerString"],
        MESSAGE_META,
    ),
    Case(
        "run_with_chat_message_replies_with_meta_set_at_run_time",
        {},
        {
            "replies": [ChatMessage.from_assistant("AnswerString", meta=MESSAGE_META)],
            "meta": [{"test": "meta"}],
        },
        ["AnswerString"],
        {**MESSAGE_META, "test": "meta"},
    ),
    Case(
        "run_with_chat_message_no_meta_with_meta_set_at_run_time",
        {},
        {"replies": [ChatMessage.from_assistant("AnswerString")], "meta": [{"test": "meta"}]},
        ["AnswerString"],
        {"test": "meta"},
    ),
    Case(
        "conversation_history_with_last_message_only_false",
        {"last_message_only": False},
        {"replies": HISTORY},
        ["What is Haystack?", "Haystack is a framework for building LLM applications."],
    ),
    Case(
        "conversation_history_one_message",
        {"last_message_only": False},
        {"replies": HISTORY[:1]},
        ["What is Haystack?"],
    ),
    Case(
        "conversation_history_with_last_message_only_true",
        {"last_message_only": True},
        {"replies": HISTORY},
        ["Haystack is a framework for building LLM applications."],
    ),
    Case(
        "run_expands_reference_ranges_when_enabled",
        {
            "reference_pattern": r"\[(\d+)\]",
            "expand_reference_ranges": True,
            "return_only_referenced_documents": False,
        },
        {"replies": ["Answer citing sources [6-10]."], "documents": TEN},
        ["Answer citing sources [1-5]."],
        documents=[f"doc {i}" for i in [6, 7, 8, 9, 10, 1, 2, 3, 4, 5]],
        source_index=[6, 7, 8, 9, 10, 1, 2, 3, 4, 5],
        referenced=[True] * 5 + [False] * 5,
        why="renumbered: the range is the first five cited, and they come first",
        haystack=(["Answer citing sources [6-10]."], [f"doc {i}" for i in range(1, 11)]),
    ),
    Case(
        "run_expands_comma_separated_reference_ranges",
        {
            "reference_pattern": r"\[(\d+)\]",
            "expand_reference_ranges": True,
            "return_only_referenced_documents": False,
        },
        {"replies": ["Answer citing sources [1-3,7-9]."], "documents": TEN},
        ["Answer citing sources [1-6]."],
        documents=[f"doc {i}" for i in [1, 2, 3, 7, 8, 9, 4, 5, 6, 10]],
        source_index=[1, 2, 3, 7, 8, 9, 4, 5, 6, 10],
        referenced=[True] * 6 + [False] * 4,
        why="renumbered: 1-3 and 7-9 are the first six cited, written as one range",
        haystack=(["Answer citing sources [1-3,7-9]."], [f"doc {i}" for i in range(1, 11)]),
    ),
    Case(
        "run_ignores_invalid_reference_ranges",
        {"reference_pattern": r"\[(\d+)\]", "expand_reference_ranges": True},
        {"replies": ["Answer citing sources [3-1]."], "documents": FOUR},
        ["Answer citing sources."],
        documents=[],
        why="a reversed range cites nothing and is removed from the text with a diagnostic",
        diagnostic="reversed range 3-1",
        haystack=(["Answer citing sources [3-1]."], []),
    ),
    Case(
        "run_does_not_expand_reference_ranges_by_default",
        {"reference_pattern": r"\[(\d+)\]", "return_only_referenced_documents": True},
        {"replies": ["Answer citing sources [6-10]."], "documents": TEN},
        ["Answer citing sources [1-5]."],
        documents=[f"doc {i}" for i in range(6, 11)],
        why="unicite always reads ranges: [6-10] cites five documents, renumbered [1-5]",
        haystack=(["Answer citing sources [6-10]."], []),
    ),
]


def _contents(answer: GeneratedAnswer) -> list[str]:
    return [doc.content or "" for doc in answer.documents or []]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_haystack_case(case: Case) -> None:
    run = {"query": "test query", **case.run}
    answers = CitedAnswerBuilder(**case.init).run(**run)["answers"]
    assert [a.data for a in answers] == case.data
    for answer in answers:
        assert isinstance(answer, GeneratedAnswer)
        assert answer.query == "test query"
        assert answer.meta["all_messages"] == case.run["replies"]
        citations = answer.meta["citations"]
        assert isinstance(citations, CitedAnswer)
        assert citations.text == answer.data
    first = answers[0]
    assert {k: v for k, v in first.meta.items() if k not in ("all_messages", "citations")} == (
        case.meta
    )
    assert _contents(first) == case.documents
    if case.diagnostic:
        assert any(case.diagnostic in d for d in first.meta["citations"].diagnostics)
    if case.source_index is not None:
        assert [d.meta["source_index"] for d in first.documents] == case.source_index
    if case.referenced is not None:
        assert [d.meta["referenced"] for d in first.documents] == case.referenced
    for number, doc in enumerate(d for d in first.documents if d.meta["referenced"]):
        assert doc.meta["citation_number"] == number + 1
    plain = AnswerBuilder(**case.init).run(**run)["answers"][0]
    if case.haystack is None:
        assert not case.why
        assert plain.data == first.data
        assert _contents(plain) == _contents(first)
    else:
        assert case.why
        plain_data = [a.data for a in AnswerBuilder(**case.init).run(**run)["answers"]]
        assert (plain_data, _contents(plain)) == case.haystack


def test_unmatching_input_len_raises_as_haystack() -> None:
    with pytest.raises(ValueError, match="must match"):
        CitedAnswerBuilder().run(
            query="query", replies=["reply1"], meta=[{"test": "meta"}, {"test": "meta2"}]
        )


def test_more_than_one_capturing_group_raises_as_haystack() -> None:
    with pytest.raises(ValueError, match="contains multiple capture groups"):
        CitedAnswerBuilder(pattern=r"Answer: (.*), (.*)")


@pytest.mark.parametrize(
    ("reference_pattern", "reply"),
    [(None, "Paris [1]."), (r"\[(\d+)\]", "Paris [1]."), (r"\[(\d+)\]", "Paris.")],
)
@pytest.mark.parametrize("return_all", [True, False])
def test_input_documents_are_not_changed(
    reference_pattern: str | None, reply: str, return_all: bool
) -> None:
    docs = [
        Document(content="Paris est la capitale de la France.", meta={"source": "wiki"}),
        Document(content="Bern ist die Bundesstadt der Schweiz."),
    ]
    builder = CitedAnswerBuilder(
        reference_pattern=reference_pattern, return_only_referenced_documents=not return_all
    )
    builder.run(query="Capitale ?", replies=[reply], documents=docs)
    assert docs[0].meta == {"source": "wiki"}
    assert docs[1].meta == {}


def test_an_out_of_range_marker_is_dropped_with_a_diagnostic() -> None:
    answer = CitedAnswerBuilder(reference_pattern=r"\[(\d+)\]").run(
        query="test query", replies=["Die Antwort lautet AnswerString [3]."], documents=TWO
    )["answers"][0]
    # Haystack logs a warning and leaves "[3]" in the text; unicite never shows a marker
    # that names no document.
    assert answer.data == "Die Antwort lautet AnswerString."
    assert answer.documents == []
    assert any("out of range" in d for d in answer.meta["citations"].diagnostics)
