"""LLM attribution with fake model callables: the prompt, and every malformed reply."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from unicite import Source, UsageError
from unicite.attribution import attribute
from unicite.model import CharLocation, PageLocation
from unicite.sources import from_tool_output

SOURCES = [
    Source(
        id="eiffel",
        title="Eiffel Tower",
        url="https://en.wikipedia.org/wiki/Eiffel_Tower",
        snippet="The Eiffel Tower is 330 metres tall and was completed in 1889.",
        content="The Eiffel Tower is 330 metres tall and was completed in 1889. It is in Paris.",
    ),
    Source(id="louvre", title="Louvre", snippet="The Louvre exhibits about 38,000 objects."),
]
TEXT = (
    "The Eiffel Tower is 330 metres tall. "
    "It was completed in 1889. "
    "The Louvre exhibits about 38,000 objects."
)


class FakeLLM:
    """Returns canned replies in turn and records every prompt."""

    def __init__(self, *replies: object) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> object:
        self.prompts.append(prompt)
        return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def reply(*entries: tuple[str, object, object]) -> str:
    return json.dumps(
        {"citations": [{"claim": c, "sourceIndex": i, "confidence": k} for c, i, k in entries]}
    )


def spans(answer_text: str, citations: list) -> list[tuple[str, list[str]]]:  # type: ignore[type-arg]
    return [(answer_text[c.start : c.end], c.source_ids) for c in citations]


def test_well_formed_reply_gives_located_llm_citations() -> None:
    llm = FakeLLM(
        reply(
            ("The Eiffel Tower is 330 metres tall.", 1, "full"),
            ("It was completed in 1889.", 1, "partial"),
            ("The Louvre exhibits about 38,000 objects.", 2, "full"),
        )
    )
    answer = attribute(TEXT, SOURCES, method="llm", llm=llm)

    assert spans(TEXT, answer.citations) == [
        ("The Eiffel Tower is 330 metres tall.", ["eiffel"]),
        ("It was completed in 1889.", ["eiffel"]),
        ("The Louvre exhibits about 38,000 objects.", ["louvre"]),
    ]
    assert [c.origin for c in answer.citations] == ["posthoc-llm"] * 3
    assert [c.confidence for c in answer.citations] == [0.9, 0.5, 0.9]
    assert answer.citations[1].extras["llm_confidence"] == {"eiffel": "partial"}
    # The passage of the cited source that best matches the claim is located.
    first = answer.citations[0]
    assert first.quote == "The Eiffel Tower is 330 metres tall and was completed in 1889."
    assert answer.diagnostics == []
    [prompt] = llm.prompts
    assert (
        "[1]\nTitle: Eiffel Tower\nURL: https://en.wikipedia.org/wiki/Eiffel_Tower\n"
        "Text: The Eiffel" in prompt
    )
    assert "[2]\nTitle: Louvre\nText: The Louvre exhibits about 38,000 objects." in prompt
    assert TEXT in prompt
    assert '"sourceIndex"' in prompt
    assert '"full"' in prompt
    assert '"partial"' in prompt


@pytest.mark.parametrize(
    "raw",
    [
        # code fence with a language tag, and prose around it
        "Here are the citations:\n```json\n"
        + reply(("The Louvre exhibits about 38,000 objects.", 2, "full"))
        + "\n```\nLet me know if you need more.",
        # bare fence, no newline before the closing fence
        "```" + reply(("The Louvre exhibits about 38,000 objects.", 2, "full")) + "```",
        # leading prose, no fence
        "Sure! " + reply(("The Louvre exhibits about 38,000 objects.", 2, "full")),
        # trailing commas
        '{"citations": [{"claim": "The Louvre exhibits about 38,000 objects.", "sourceIndex": 2,'
        ' "confidence": "full",},],}',
        # single quotes, bare keys, a comment, Python literals
        "{citations: [{'claim': 'The Louvre exhibits about 38,000 objects.', 'sourceIndex': 2, "
        "'confidence': 'full', 'verified': True, 'note': None}]} // done",
        # a top-level array
        '[{"claim": "The Louvre exhibits about 38,000 objects.", "sourceIndex": 2}]',
        # missing commas between members, curly quotes
        "{\u201cclaims\u201d: [{\u201cclaim\u201d: "
        "\u201cThe Louvre exhibits about 38,000 objects.\u201d "
        "\u201csourceIndex\u201d: 2}]}",
        # the index as a string and as a one-element list
        '{"citations": [{"claim": "The Louvre exhibits about 38,000 objects.", '
        '"sourceIndex": "[2]"}]}',
        '{"results": [{"text": "The Louvre exhibits about 38,000 objects.", "sources": [2]}]}',
    ],
)
def test_malformed_but_readable_replies(raw: str) -> None:
    answer = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(raw))

    assert spans(TEXT, answer.citations) == [
        ("The Louvre exhibits about 38,000 objects.", ["louvre"])
    ]
    assert answer.diagnostics == []


def test_missing_confidence_leaves_it_unknown() -> None:
    raw = '{"citations": [{"claim": "It was completed in 1889.", "sourceIndex": 1}]}'
    [citation] = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(raw)).citations
    assert citation.confidence is None
    assert citation.extras["llm_confidence"] == {"eiffel": None}


def test_truncated_reply_keeps_the_complete_objects() -> None:
    raw = (
        '{"citations": [{"claim": "It was completed in 1889.", "sourceIndex": 1, '
        '"confidence": "full"}, '
        '{"claim": "The Louvre exhibits about 38,000 objects.", "sourceIndex": 2, '
        '"confidence": "full"}, '
        '{"claim": "The Eiffel Tower is 330 met'
    )
    answer = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(raw))

    assert [c.source_ids for c in answer.citations] == [["eiffel"], ["louvre"]]
    assert answer.diagnostics == ["the LLM reply is not valid JSON; 2 citation object(s) recovered"]


@pytest.mark.parametrize(
    ("raw", "diagnostic"),
    [
        ("", "the LLM reply is empty"),
        ("I could not find any sources for this answer.", "the LLM reply holds no citations JSON"),
        ('{"citations": [{"sourceIndex": 1}]}', "LLM citation 0: no claim"),
        (
            '{"citations": [{"claim": "It was completed in 1889."}]}',
            "LLM citation 0: no usable sourceIndex",
        ),
        (
            '{"citations": [{"claim": "It was completed in 1889.", "sourceIndex": true}]}',
            "no usable sourceIndex",
        ),
        (
            '{"citations": ["It was completed in 1889."]}',
            "LLM citation 0: expected an object, got str",
        ),
        (
            '{"citations": [{"claim": "It was completed in 1889.", "sourceIndex": 0}]}',
            "sourceIndex 0 is out of range 1..2",
        ),
        (
            '{"citations": [{"claim": "It was completed in 1889.", "sourceIndex": 9}]}',
            "sourceIndex 9 is out of range 1..2",
        ),
        (
            '{"citations": [{"claim": "The Colosseum is in Rome.", "sourceIndex": 1}]}',
            "LLM claim not found in the answer: 'The Colosseum is in Rome.'",
        ),
    ],
)
def test_unusable_entries_become_diagnostics(raw: str, diagnostic: str) -> None:
    answer = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(raw))

    assert answer.citations == []
    assert any(d.startswith(diagnostic) or diagnostic in d for d in answer.diagnostics), (
        answer.diagnostics
    )


def test_claims_are_located_after_normalization_and_fuzzily() -> None:
    text = (
        "Der Turm ist 330\u00a0Meter hoch.  Er wurde 1889  fertiggestellt, sagt **Wikipedia**. "
        "It\u2019s iron."
    )

    def located(*claims: str) -> list[tuple[str, object]]:
        raw = json.dumps({"citations": [{"claim": c, "sourceIndex": 1} for c in claims]})
        answer = attribute(text, SOURCES, method="llm", llm=FakeLLM(raw))
        return [(c.text, c.extras.get("located", "exact")) for c in answer.citations]

    assert located(
        "der turm ist 330 meter hoch.",
        "Er wurde 1889 fertiggestellt, sagt Wikipedia.",
        "It's iron.",
    ) == [
        ("Der Turm ist 330\u00a0Meter hoch.", "normalized"),
        ("Er wurde 1889  fertiggestellt, sagt **Wikipedia**.", "normalized"),
        ("It\u2019s iron.", "normalized"),
    ]
    [(found, how)] = located("Er wurde 1898 fertig gestellt, sagt Wikipedia")
    assert how == "fuzzy"
    assert "fertiggestellt" in found
    assert located("Something else entirely here.") == []


def test_regex_metacharacters_in_claims_are_harmless() -> None:
    text = "The formula (a+b)*[c]? holds for $x^2$ \\ y. Nothing else matches here."
    claims = ["(a+b)*[c]? holds for $x^2$ \\ y.", "(A+B)*[C]? holds for $x^2$  \\ y", "((((([[[*+?"]
    raw = json.dumps({"citations": [{"claim": c, "sourceIndex": 1} for c in claims]})
    answer = attribute(
        text,
        [Source(id="s", content="The formula (a+b)*[c]? holds for $x^2$.")],
        method="llm",
        llm=FakeLLM(raw),
    )

    assert [text[c.start : c.end] for c in answer.citations] == [
        "(a+b)*[c]? holds for $x^2$ \\ y",  # found after case and space folding
        "(a+b)*[c]? holds for $x^2$ \\ y.",  # found exactly
    ]
    assert answer.diagnostics == ["LLM claim not found in the answer: '((((([[[*+?'"]


def test_duplicate_and_multi_source_entries_merge_into_one_citation() -> None:
    raw = reply(
        ("The Eiffel Tower is 330 metres tall.", 1, "partial"),
        ("The Eiffel Tower is 330 metres tall.", 2, "full"),
        ("The Eiffel Tower is 330 metres tall.", 1, "full"),
    )
    [citation] = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(raw)).citations
    assert citation.source_ids == ["eiffel", "louvre"]
    assert citation.confidence == 0.9


def test_reply_objects_with_content_are_read() -> None:
    @dataclass
    class Message:
        content: str

    raw = reply(("It was completed in 1889.", 1, "full"))
    assert len(attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(Message(raw))).citations) == 1
    with pytest.raises(UsageError, match="llm must return a str"):
        attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(42))


def refuse(prompt: str) -> str:
    raise AssertionError("the model must not be called")


@pytest.mark.parametrize(
    ("text", "sources", "diagnostic"),
    [
        (TEXT, [], "no source has text: nothing to attribute"),
        (
            TEXT,
            [Source(id="bare", url="https://example.org/")],
            "no source has text: nothing to attribute",
        ),
        ("```sql\nSELECT 1;\n```", SOURCES, "the answer is code only: no claims to attribute"),
    ],
)
def test_nothing_to_attribute_costs_no_call(
    text: str, sources: list[Source], diagnostic: str
) -> None:
    answer = attribute(text, sources, method="llm", llm=refuse)
    assert answer.citations == []
    assert diagnostic in answer.diagnostics


def test_long_answers_are_sent_in_batches() -> None:
    sentences = [
        f"Fact number {n} is about the Eiffel Tower and its {n} rivets." for n in range(40)
    ]
    text = " ".join(sentences)

    def llm(prompt: str) -> str:
        batch = prompt.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
        seen.append(batch)
        return reply(*((s, 1, "full") for s in sentences if s in batch))

    seen: list[str] = []
    answer = attribute(text, SOURCES, method="llm", llm=llm, batch_chars=600)

    assert len(seen) > 3
    assert all(len(batch) <= 600 for batch in seen)
    assert "".join(seen).replace(" ", "") == text.replace(" ", "")
    assert len(answer.citations) == 40


def test_model_errors_propagate() -> None:
    def broken(prompt: str) -> str:
        raise TimeoutError("model timed out")

    with pytest.raises(TimeoutError):
        attribute(TEXT, SOURCES, method="llm", llm=broken)


def test_prompt_numbers_sources_and_falls_back_to_content() -> None:
    long = Source(id="long", title="  Many\nlines  ", content="word " * 2000)
    llm = FakeLLM(reply())
    attribute("Answer text.", [long], method="llm", llm=llm)
    [prompt] = llm.prompts
    assert "[1]\nTitle: Many lines\nText: word word" in prompt
    assert len(prompt) < 2000
    assert "Answer text." in prompt


def test_deeply_nested_reply_is_reported_without_crashing() -> None:
    answer = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM("[" * 5000))
    assert answer.citations == []
    assert answer.diagnostics == ["the LLM reply holds no citations JSON: '" + "[" * 79 + "\u2026'"]


# --- threshold ------------------------------------------------------------------------------

MIXED = reply(
    ("The Eiffel Tower is 330 metres tall.", 1, "full"),
    ("The Eiffel Tower is 330 metres tall.", 2, "partial"),
    ("It was completed in 1889.", 1, "partial"),
    ("The Louvre exhibits about 38,000 objects.", 2, "maybe"),
)


def test_without_a_threshold_every_source_the_model_names_is_kept() -> None:
    answer = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(MIXED))
    assert spans(TEXT, answer.citations) == [
        ("The Eiffel Tower is 330 metres tall.", ["eiffel", "louvre"]),
        ("It was completed in 1889.", ["eiffel"]),
        ("The Louvre exhibits about 38,000 objects.", ["louvre"]),
    ]
    assert [c.confidence for c in answer.citations] == [0.9, 0.5, None]
    assert answer.diagnostics == []


def test_a_threshold_keeps_the_links_whose_confidence_reaches_it() -> None:
    answer = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(MIXED), threshold=0.7)
    [tower] = answer.citations
    assert spans(TEXT, [tower]) == [("The Eiffel Tower is 330 metres tall.", ["eiffel"])]
    assert tower.confidence == 0.9
    assert tower.extras["llm_confidence"] == {"eiffel": "full"}
    assert answer.diagnostics == [
        "threshold 0.7: dropped 3 of 4 claim-source link(s) the LLM gave below it: "
        "2 'partial' (0.5), 1 with no 'full' or 'partial' label; 2 claim(s) left uncited"
    ]
    # The dropped sources are still the answer's, after the cited one.
    assert [s.id for s in answer.sources] == ["eiffel", "louvre"]


def test_max_sources_keeps_the_strongest_links_per_claim() -> None:
    strongest_last = reply(
        ("The Eiffel Tower is 330 metres tall.", 2, "partial"),
        ("The Eiffel Tower is 330 metres tall.", 1, "full"),
        ("It was completed in 1889.", 1, "partial"),
    )
    answer = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(strongest_last), max_sources=1)
    assert spans(TEXT, answer.citations) == [
        ("The Eiffel Tower is 330 metres tall.", ["eiffel"]),
        ("It was completed in 1889.", ["eiffel"]),
    ]
    assert answer.diagnostics == [
        "max_sources 1: left out 1 weaker claim-source link(s) the LLM gave"
    ]
    both = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(strongest_last), max_sources=2)
    # Nothing to cut: the sources stay in the model's order.
    assert spans(TEXT, both.citations)[0] == (
        "The Eiffel Tower is 330 metres tall.",
        ["louvre", "eiffel"],
    )
    assert both.diagnostics == []


@pytest.mark.parametrize(
    ("threshold", "kept"),
    [(0.0, 4), (0.5, 3), (0.9, 1), (0.95, 0), (1, 0)],
)
def test_threshold_bounds(threshold: float, kept: int) -> None:
    answer = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(MIXED), threshold=threshold)
    assert sum(len(c.source_ids) for c in answer.citations) == kept
    assert len(answer.diagnostics) == (0 if kept == 4 else 1)


def test_the_first_source_left_after_the_threshold_is_located() -> None:
    raw = reply(
        ("The Eiffel Tower is 330 metres tall.", 2, "partial"),
        ("The Eiffel Tower is 330 metres tall.", 1, "full"),
    )
    [citation] = attribute(TEXT, SOURCES, method="llm", llm=FakeLLM(raw), threshold=0.6).citations
    assert citation.source_ids == ["eiffel"]
    assert citation.quote == "The Eiffel Tower is 330 metres tall and was completed in 1889."


@pytest.mark.parametrize("threshold", [-0.1, 1.5, True, "0.5"])
def test_invalid_threshold_is_a_usage_error_in_llm_mode(threshold: object) -> None:
    with pytest.raises(UsageError, match="threshold"):
        attribute(TEXT, SOURCES, method="llm", llm=refuse, threshold=threshold)  # type: ignore[arg-type]


# --- pages ----------------------------------------------------------------------------------


def test_a_citation_of_a_paged_chunk_with_no_passage_found_points_at_its_page() -> None:
    report = Source(
        id="report",
        kind="document",
        title="annual-report-2023.pdf",
        content="Subscription services in Europe and Asia drove the year.",
        extras={"page": 11, "page_label": "12", "page_number": 12},
    )
    raw = reply(("Revenue grew 14% to $4.2 billion.", 1, "full"))
    answer = attribute(
        "Revenue grew 14% to $4.2 billion.", [report], method="llm", llm=FakeLLM(raw)
    )
    [citation] = answer.citations
    assert citation.quote is None
    assert citation.location == PageLocation(start_page=12, end_page=13)
    # A passage found in the chunk is the finer location, and is kept.
    raw = reply(("Subscription services drove the year.", 1, "full"))
    text = "Subscription services drove the year."
    [located] = attribute(text, [report], method="llm", llm=FakeLLM(raw)).citations
    assert isinstance(located.location, CharLocation)


@pytest.mark.parametrize("page", [None, 0, -3, True, "12", 12.0])
def test_no_page_location_without_a_1_based_page_number(page: object) -> None:
    source = Source(id="s", content="Unrelated words here.", extras={"page_number": page})
    raw = reply(("Revenue grew 14%.", 1, "full"))
    [citation] = attribute("Revenue grew 14%.", [source], method="llm", llm=FakeLLM(raw)).citations
    assert citation.location is None


def test_pages_from_retrieved_documents_reach_llm_citations() -> None:
    documents = [
        {
            "page_content": "Operating margin improved to 21%.",
            "metadata": {"source": "report.pdf", "page": 4, "page_label": "5"},
        }
    ]
    [source] = from_tool_output("retriever", documents)
    raw = reply(("Profitability rose sharply.", 1, "partial"))
    [citation] = attribute(
        "Profitability rose sharply.", [source], method="llm", llm=FakeLLM(raw)
    ).citations
    assert citation.location == PageLocation(start_page=5, end_page=6)
