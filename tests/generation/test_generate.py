"""Cited generation over scripted models: every branch of check, retry and finish."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

import unicite
from unicite import CitePolicy, GroundingRequiredError, Source, UsageError
from unicite.generation import (
    CitedGeneration,
    Retry,
    agenerate_cited,
    astream_cited,
    generate_cited,
    stream_cited,
)
from unicite.sources import estimate_tokens

SOURCES = [
    Source(
        id="lyon",
        url="https://www.lyon-france.com/fete-des-lumieres",
        title="Fête des Lumières – Lyon",
        content="La Fête des Lumières a lieu chaque année autour du 8 décembre à Lyon.",
    ),
    Source(
        id="wiki",
        url="https://fr.wikipedia.org/wiki/F%C3%AAte_des_Lumi%C3%A8res",
        title="Fête des Lumières — Wikipédia",
        content=(
            "La fête trouve son origine en 1852, lors de l’inauguration d’une statue de la Vierge."
        ),
    ),
    Source(
        id="meteo",
        url="https://meteofrance.com/lyon",
        title="Météo Lyon",
        content="En décembre, Lyon connaît des températures proches de 3 °C.",
    ),
]


class Scripted:
    """A model that answers from a script, one reply per call, and keeps the prompts."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        return self.replies.pop(0)


class ScriptedStream(Scripted):
    """Streams each reply in small pieces."""

    def __call__(self, prompt: str) -> Iterator[str]:  # type: ignore[override]
        text = super().__call__(prompt)
        return iter([text[k : k + 7] for k in range(0, len(text), 7)])


def test_an_unknown_sid_is_fed_back_and_the_retry_is_cited() -> None:
    llm = Scripted(
        "La fête a lieu le 8 décembre [[S:1]]. Elle date de 1852 [[S:7]].",
        "La fête a lieu le 8 décembre [[S:1]]. Elle date de 1852 [[S:2]].",
    )
    result = generate_cited(llm, "Quand a lieu la Fête des Lumières ?", SOURCES)
    assert result.finished
    assert result.retries == 1
    assert result.stats.rounds == 2
    assert "source 7 out of range" in llm.prompts[1]
    assert "[[S:7]]" in llm.prompts[1]  # the previous answer is shown back
    assert result.content == "La fête a lieu le 8 décembre [[S:1]]. Elle date de 1852 [[S:2]]."
    assert [c.source_ids for c in result.answer.citations] == [["lyon"], ["wiki"]]
    assert [s.id for s in result.sources_used] == ["lyon", "wiki"]
    assert result.reason == ""
    assert result.answer.diagnostics[-1].startswith("round 1 was asked again: marker '[[S:7]]'")
    envelope = result.envelope()
    assert list(envelope) == [
        "ok", "content", "format", "finished", "retries", "reason", "stats", "sources_used",
    ]  # fmt: skip
    assert envelope["stats"]["rounds"] == 2
    assert envelope["stats"]["citations"] == "present"
    assert envelope["stats"]["validated"] == "citations"
    assert envelope["sources_used"][1] == {
        "sid": 2,
        "url": SOURCES[1].url,
        "title": SOURCES[1].title,
        "text": SOURCES[1].content,
    }
    json.dumps(envelope)  # plain data


def test_the_prompt_numbers_the_sources_and_states_the_rules() -> None:
    llm = Scripted("Lyon s’illumine le 8 décembre [[S:1]].")
    generate_cited(llm, "Parle de Lyon.", SOURCES)
    [prompt] = llm.prompts
    assert "[sid:1] Fête des Lumières – Lyon" in prompt
    assert "[sid:3] Météo Lyon" in prompt
    assert "[[S:1,3]]" in prompt  # the instructions' example
    assert "Parle de Lyon." in prompt


def test_markers_are_renumbered_in_first_cited_order() -> None:
    llm = Scripted("Il fait 3 °C [[S:3]]. La fête date de 1852 [[S:2]].")
    result = generate_cited(llm, "Décembre à Lyon ?", SOURCES)
    assert result.content == "Il fait 3 °C [[S:1]]. La fête date de 1852 [[S:2]]."
    assert [s.id for s in result.answer.sources] == ["meteo", "wiki"]
    assert [e["sid"] for e in result.envelope()["sources_used"]] == [1, 2]


def test_a_model_that_never_cites_fails_closed() -> None:
    llm = Scripted("Lyon est belle.", "Lyon est très belle.", "Lyon est vraiment belle.")
    result = generate_cited(llm, "Parle de Lyon.", SOURCES, max_retries=2)
    assert not result.finished
    assert result.retries == 2
    assert "cites no source" in result.reason
    assert result.stats.citations == "missing"
    assert result.envelope()["finished"] is False
    with pytest.raises(GroundingRequiredError) as caught:
        generate_cited(
            Scripted("Lyon.", "Lyon."), "Lyon ?", SOURCES, max_retries=1, require="raise"
        )
    assert caught.value.answer is not None
    assert caught.value.answer.text == "Lyon."


def test_markers_in_another_style_or_in_code_are_fed_back() -> None:
    llm = Scripted(
        "La fête a lieu le 8 décembre [1].\n\n```\n[[S:2]]\n```\n",
        "La fête a lieu le 8 décembre [[S:1]].\n\n```\nprint('lumières')\n```\n",
    )
    result = generate_cited(llm, "Lyon ?", SOURCES)
    assert result.finished
    assert result.retries == 1
    feedback = llm.prompts[1]
    assert "citations must be written as [[S:n]]" in feedback
    assert "'[[S:2]]' is inside code" in feedback


def test_usage_tags_are_stripped_and_merged_when_citations_are_optional() -> None:
    llm = Scripted("La fête date de 1852 [[S:2]].\n[[USAGE:1,2]]")
    result = generate_cited(llm, "Lyon ?", SOURCES, require=False)
    assert "USAGE" not in result.content
    assert "[[USAGE:N,M]]" in llm.prompts[0]
    assert result.finished
    assert {s.id for s in result.sources_used} == {"lyon", "wiki"}
    # Optional and uncited is finished too.
    quiet = generate_cited(Scripted("Lyon est belle."), "Lyon ?", SOURCES, require=False)
    assert quiet.finished
    assert quiet.stats.citations == "not_required"


def test_json_with_a_bad_pointer_then_valid() -> None:
    bad = {"ville": "Lyon", "date": "8 décembre", "_citations": [{"path": "/jour", "sids": [1]}]}
    good = {
        "ville": "Lyon",
        "date": "8 décembre",
        "origine": {"année": "1852"},
        "_citations": [{"path": "/date", "sids": [1]}, {"path": "/origine/année", "sids": [2]}],
    }
    llm = Scripted(json.dumps(bad, ensure_ascii=False), "```json\n" + json.dumps(good) + "\n```")
    result = generate_cited(llm, "Fiche de la fête.", SOURCES, format="json")
    assert result.finished
    assert result.retries == 1
    assert "/jour" in llm.prompts[1]
    assert result.document == {"ville": "Lyon", "date": "8 décembre", "origine": {"année": "1852"}}
    content = json.loads(result.content)
    assert content["_citations"] == [
        {"path": "/date", "sids": [1]},
        {"path": "/origine/année", "sids": [2]},
    ]
    # The answer's text is the document; each citation spans its value there.
    answer = result.answer
    assert json.loads(answer.text) == result.document
    assert [c.text for c in answer.citations] == ["8 décembre", "1852"]
    assert [c.source_ids for c in answer.citations] == [["lyon"], ["wiki"]]


def test_a_sidecar_path_naming_a_number_is_fed_back() -> None:
    bad = {"année": 1852, "_citations": [{"path": "/année", "sids": [2]}]}
    good = {"année": "1852", "_citations": [{"path": "/année", "sids": [2]}]}
    llm = Scripted(json.dumps(bad), json.dumps(good))
    result = generate_cited(llm, "Année ?", SOURCES, format="json")
    assert result.retries == 1
    assert "/année" in llm.prompts[1]


def test_a_schema_violation_is_fed_back() -> None:
    pytest.importorskip("jsonschema")
    schema = {
        "type": "object",
        "properties": {"ville": {"type": "string"}, "visiteurs": {"type": "string"}},
        "required": ["ville", "visiteurs"],
    }
    bad = {"ville": "Lyon", "_citations": [{"path": "/ville", "sids": [1]}]}
    good = {
        "ville": "Lyon",
        "visiteurs": "2 millions",
        "_citations": [{"path": "/ville", "sids": [1]}],
    }
    llm = Scripted(json.dumps(bad), json.dumps(good))
    result = generate_cited(llm, "Fiche.", SOURCES, format="json", schema=schema)
    assert result.finished
    assert "'visiteurs' is a required property" in llm.prompts[1]
    assert '"required": ["ville", "visiteurs"]' in llm.prompts[0]
    assert result.stats.validated == "both"


def test_yaml_documents() -> None:
    pytest.importorskip("yaml")
    llm = Scripted("ville: Lyon\ndate: 8 décembre\n_citations:\n  - path: /date\n    sids: [1]\n")
    result = generate_cited(llm, "Fiche.", SOURCES, format="yaml")
    assert result.finished
    assert result.document == {"ville": "Lyon", "date": "8 décembre"}
    assert "_citations:" in result.content
    assert "8 décembre" in result.content


def test_html_sup_markers() -> None:
    llm = Scripted('<p>La fête date de 1852<sup class="cite" data-sids="2">[2]</sup>.</p>')
    result = generate_cited(llm, "Histoire ?", SOURCES, format="html")
    assert result.finished
    assert result.content == '<p>La fête date de 1852<sup class="cite" data-sids="1">[1]</sup>.</p>'
    assert [c.source_ids for c in result.answer.citations] == [["wiki"]]


def test_posthoc_answers_cleanly_then_attributes() -> None:
    llm = Scripted("La fête trouve son origine en 1852, lors de l’inauguration d’une statue.")
    result = generate_cited(llm, "Origine ?", SOURCES, strategy="posthoc")
    assert result.strategy == "posthoc"
    assert "Do not write citations" in llm.prompts[0]
    assert [c.origin for c in result.answer.citations] == ["posthoc-lexical"]
    assert result.answer.citations[0].source_ids == ["wiki"]
    assert result.content.endswith("[[S:1]]")


def test_stream_cited_shows_the_final_numbers_and_announces_retries() -> None:
    llm = ScriptedStream(
        "Il fait froid [[S:9]].",
        "Il fait 3 °C [[S:3]]. La fête date de 1852 [[S:2]].",
    )
    items = list(stream_cited(llm, "Décembre à Lyon ?", SOURCES))
    result = items[-1]
    assert isinstance(result, CitedGeneration)
    [retry] = [i for i in items if isinstance(i, Retry)]
    assert retry.round == 2
    assert "source 9 out of range" in retry.reason
    after = items[items.index(retry) + 1 : -1]
    assert all(isinstance(piece, str) for piece in after)
    assert "".join(after) == result.content == "Il fait 3 °C [[S:1]]. La fête date de 1852 [[S:2]]."
    assert not any("differs" in d for d in result.answer.diagnostics)


def test_async_variants_give_the_same_results() -> None:
    async def model(prompt: str) -> str:
        await asyncio.sleep(0)
        return "La fête a lieu le 8 décembre [[S:1]]."

    async def streamed(prompt: str) -> AsyncIterator[str]:
        for piece in ("La fête a lieu ", "le 8 décembre [[S:", "1]]."):
            yield piece

    async def run() -> tuple[CitedGeneration, list[Any]]:
        whole = await agenerate_cited(model, "Lyon ?", SOURCES)
        items = [item async for item in astream_cited(streamed, "Lyon ?", SOURCES)]
        return whole, items

    whole, items = asyncio.run(run())
    assert whole.content == "La fête a lieu le 8 décembre [[S:1]]."
    assert "".join(i for i in items if isinstance(i, str)) == whole.content
    assert items[-1].answer == whole.answer


@pytest.mark.parametrize("budget", [50, 120, 400, 2_000])
def test_the_digest_stays_within_its_budget(budget: int) -> None:
    long = [s.model_copy(update={"content": s.content * 40}) for s in SOURCES]
    llm = Scripted("Lyon [[S:1]].")
    generate_cited(llm, "Lyon ?", long, budget_tokens=budget)
    digest = llm.prompts[0].split("Sources:\n\n", 1)[1]
    assert estimate_tokens(digest) <= budget


def test_seed_rows_are_shown_and_cited_under_their_sids() -> None:
    rows = [
        {"sid": 4, "url": SOURCES[0].url, "title": SOURCES[0].title, "text": SOURCES[0].content},
        {"sid": 9, "url": SOURCES[1].url, "title": SOURCES[1].title, "text": SOURCES[1].content},
    ]
    llm = Scripted("Elle date de 1852 [[S:9]].")
    result = generate_cited(llm, "Origine ?", rows, prefer="snippet")
    assert "[sid:9] Fête des Lumières — Wikipédia" in llm.prompts[0]
    assert result.answer.sources[0].url == SOURCES[1].url
    assert result.content == "Elle date de 1852 [[S:1]]."


def test_bad_arguments_are_usage_errors() -> None:
    llm = Scripted("x")
    with pytest.raises(UsageError, match="format must be"):
        generate_cited(llm, "q", SOURCES, format="pdf")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="schema= is for json and yaml"):
        generate_cited(llm, "q", SOURCES, schema={"type": "object"})
    with pytest.raises(UsageError, match="strategy='posthoc' gives"):
        generate_cited(llm, "q", SOURCES, format="json", strategy="posthoc")
    with pytest.raises(UsageError, match="no native citation API"):
        generate_cited(llm, "q", SOURCES, strategy="native")
    with pytest.raises(UsageError, match="require must be"):
        generate_cited(llm, "q", SOURCES, require="yes")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="max_retries"):
        generate_cited(llm, "q", SOURCES, max_retries=-1)
    with pytest.raises(UsageError, match="markers for markdown"):
        generate_cited(llm, "q", SOURCES, policy=CitePolicy(markers="sup"))


def test_brackets_style_through_the_policy() -> None:
    llm = Scripted("Lyon brille le 8 décembre [2].")
    result = generate_cited(llm, "q", SOURCES, policy=CitePolicy(markers="brackets"))
    assert result.content == "Lyon brille le 8 décembre [1]."
    assert "[1, 3]" in llm.prompts[0]


def test_exported_from_the_package_root() -> None:
    assert unicite.generate_cited is generate_cited
    assert unicite.CitedGeneration is CitedGeneration


def test_a_stopped_stream_cites_the_text_generated_so_far() -> None:
    pieces = ["Il fait 3 °C [[S:3]]. ", "La fête date ", "de 1852 [[S:2]]. Et ", "encore"]
    taken: list[str] = []

    def model(prompt: str) -> Iterator[str]:
        for piece in pieces:
            taken.append(piece)
            yield piece

    stream = stream_cited(model, "Décembre à Lyon ?", SOURCES)
    assert stream.partial_answer().text == ""  # nothing generated yet
    shown = ""
    for item in stream:
        assert isinstance(item, str)
        shown += item
        if "1852" in shown:
            break
    stream.close()
    partial = stream.partial_answer()
    # What was shown is where the stopped answer begins; its markers carry the same numbers.
    assert partial.text.startswith(shown)
    assert [s.id for s in partial.sources] == ["meteo", "wiki"]
    assert [c.source_ids for c in partial.citations] == [["meteo"], ["wiki"]]
    assert partial == unicite.cite("".join(taken), SOURCES, policy=CitePolicy(markers="sids"))


def test_a_cancelled_async_stream_keeps_what_it_generated() -> None:
    started = asyncio.Event()

    async def streamed(prompt: str) -> AsyncIterator[str]:
        yield "La fête a lieu le 8 décembre [[S:1]]. "
        started.set()
        await asyncio.sleep(30)  # the model call still running when the task is cancelled
        yield "Jamais vu."

    async def run() -> tuple[str, unicite.CitedAnswer]:
        stream = astream_cited(streamed, "Lyon ?", SOURCES)
        shown: list[str] = []

        async def read() -> None:
            async for item in stream:
                if isinstance(item, str):
                    shown.append(item)

        task = asyncio.create_task(read())
        await started.wait()
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return "".join(shown), stream.partial_answer()

    shown, partial = asyncio.run(run())
    assert partial.text.startswith(shown)
    assert partial.text == "La fête a lieu le 8 décembre [[S:1]]. "
    assert [c.source_ids for c in partial.citations] == [["lyon"]]
