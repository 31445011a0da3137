"""Seed 004's source rows are sources everywhere, and its ``sources_used`` is the union.

A seed-004 row (``sid``, ``title``, ``url``, ``text`` as the snippet, ``content``, relevance
fields, ``*_time_iso`` dates) is taken by `Source`, `as_source`, the ledger, `build_digest`,
`reconcile`, `filter_content` and `cite`; its ``sid`` stays in ``extras["sid"]`` and only
drives the numbers shown when a ``{sid: row}`` map is passed (to `build_digest` and `cite`
alike), so ``[3]`` then means the row with sid 3.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from unicite import CitedAnswer, Source, UsageError, cite, parse_markers
from unicite.sources import (
    SourceLedger,
    as_source,
    build_digest,
    filter_content,
    from_tool_output,
    reconcile,
)

ROWS: list[dict[str, Any]] = [
    {
        "sid": 3,
        "url": "https://www.lyon-tourisme.fr/fete-des-lumieres",
        "title": "Fête des Lumières – Lyon",
        "text": "Chaque 8 décembre, Lyon s’illumine : vitrines, façades et bougies.",
        "content": (
            "La Fête des Lumières a lieu chaque année autour du 8 décembre. Les Lyonnais posent "
            "des lumignons sur leurs fenêtres ; les façades de la presqu’île sont illuminées."
        ),
        "objective_relevance": 0.8,
        "query_relevance": [{"qid": 1, "score": 0.7}],
        "reasoning": "Décrit la fête et sa date.",
        "published_time_iso": "2025-03-01T00:00:00Z",
        "modified_time_iso": "2025-03-02T09:30:00+01:00",
    },
    {
        "sid": 7,
        "url": "https://fr.wikipedia.org/wiki/Fête_des_Lumières",
        "title": "Fête des Lumières — Wikipédia",
        "text": "La fête trouve son origine en 1852, lors de l’inauguration d’une statue.",
        "objective_relevance": 0.6,
        "query_relevance": 0.55,
        "reasoning": "Origine historique.",
        "published_time_iso": "",
        "modified_time_iso": None,
    },
]


def test_a_seed_row_is_a_source() -> None:
    source = Source(**ROWS[0])
    assert source.snippet == ROWS[0]["text"]
    assert source.content == ROWS[0]["content"]
    assert source.relevance == 0.8
    assert source.published_at == datetime(2025, 3, 1, tzinfo=timezone.utc)
    assert source.modified_at == datetime(2025, 3, 2, 9, 30, tzinfo=timezone(timedelta(hours=1)))
    assert source.extras == {
        "sid": 3,
        "query_relevance": [{"qid": 1, "score": 0.7}],
        "reasoning": "Décrit la fête et sa date.",
    }
    assert source.domain == "lyon-tourisme.fr"
    # The same row through every door gives the same source; ids come from the URL as usual.
    assert Source.model_validate(ROWS[0]) == as_source(ROWS[0]) == source
    assert source.id == Source(url=ROWS[0]["url"]).id
    # Blank dates are no dates; a bare number is kept as the score it is.
    other = as_source(ROWS[1])
    assert (other.published_at, other.modified_at) == (None, None)
    assert other.extras == {"sid": 7, "query_relevance": 0.55, "reasoning": "Origine historique."}
    # A dump reads back as the same source.
    assert Source.model_validate(source.model_dump()) == source


def test_nothing_in_a_row_is_lost() -> None:
    row = {
        "sid": "12",
        "title": "Tarifs de l’opéra",
        "text": "Places à 10 €.",
        "snippet": "Billets dès 10 € pour les moins de 28 ans.",
        "published_time_iso": "la semaine dernière",
        "objective_relevance": 8.5,
        "o_relevance": 0.4,
        "favicon": "https://www.opera-lyon.com/favicon.ico",
        "lang": "fr",
        "extras": {"lang": "fr-FR"},
    }
    source = as_source(row)
    assert source.snippet == "Billets dès 10 € pour les moins de 28 ans."
    assert source.published_at is None
    assert source.relevance == 0.4
    assert source.extras == {
        "lang": "fr-FR",  # the row's own extras win over a loose key of the same name
        "text": "Places à 10 €.",
        "published_time_iso": "la semaine dernière",
        "objective_relevance": 8.5,
        "sid": 12,
        "favicon": "https://www.opera-lyon.com/favicon.ico",
    }


@pytest.mark.parametrize("sid", ["²", "--3", "٣", "1" * 5000])
def test_a_sid_that_only_looks_like_digits_is_kept_as_written(sid: str) -> None:
    source = as_source({"sid": sid, "title": "Tarifs de l’opéra", "url": "https://opera.example/"})
    assert source.extras["sid"] == sid


@given(st.text(alphabet=st.sampled_from("0123456789-+ _²٣\u00a0x."), min_size=1))
@settings(max_examples=300)
def test_a_sid_is_a_number_exactly_when_it_is_ascii_digits(sid: str) -> None:
    source = as_source({"sid": sid, "title": "Tarifs de l’opéra", "url": "https://opera.example/"})
    if re.fullmatch(r"[0-9]+", sid.strip()):
        assert source.extras["sid"] == int(sid.strip())
    else:
        assert source.extras["sid"] == sid


def test_unknown_keys_outside_a_seed_row_are_still_errors() -> None:
    with pytest.raises(ValidationError):
        Source(titel="Opéra", text="Places à 10 €.")  # type: ignore[call-arg]
    with pytest.raises(UsageError, match="titel"):
        as_source({"titel": "Opéra", "text": "Places à 10 €."})
    # Without a sid, the seed's own keys are read all the same.
    plain = as_source({"title": "Opéra", "text": "Places à 10 €.", "reasoning": "prix"})
    assert (plain.snippet, plain.extras) == ("Places à 10 €.", {"reasoning": "prix"})


def test_existing_inputs_are_unchanged() -> None:
    fields = {"url": "https://www.opéra.fr/saison", "title": "Saison", "snippet": "Été 2025"}
    source = Source(**fields)  # type: ignore[arg-type]
    assert source.extras == {}
    assert source.snippet == "Été 2025"
    assert as_source(fields) == source


def test_the_ledger_keeps_its_own_numbers_and_the_rows_sids() -> None:
    ledger = SourceLedger()
    ids = ledger.add_all(ROWS)
    assert [ledger.sid(i) for i in ids] == [1, 2]
    assert [s.extras["sid"] for s in ledger.sources] == [3, 7]
    # The same page again (bare host, trailing slash) merges, keeping the first sid.
    again = ledger.add({**ROWS[0], "sid": 9, "url": "https://lyon-tourisme.fr/fete-des-lumieres/"})
    assert again == ids[0]
    assert ledger.get(again).extras["sid"] == 3  # type: ignore[union-attr]


def test_a_list_of_rows_is_shown_and_read_by_sid() -> None:
    notes: list[str] = []
    digest = build_digest(ROWS, 2_000, tokenizer="estimate", diagnostics=notes)
    assert digest.startswith("[sid:3] Fête des Lumières – Lyon\nLa Fête des Lumières a lieu")
    assert "\n\n[sid:7] Fête des Lumières — Wikipédia\n" in digest
    assert notes == []
    # ... and cite() reads the list the same way: [3] is the row with sid 3, [1] is no row.
    answer = cite("Lyon s’illumine chaque 8 décembre [3]. La fête date de 1852 [7]. Non [1].", ROWS)
    assert [answer.source(c.source_ids[0]).extras["sid"] for c in answer.citations] == [3, 7]  # type: ignore[union-attr]
    assert answer.text == "Lyon s’illumine chaque 8 décembre [1]. La fête date de 1852 [2]. Non."
    assert any("source 1 was not shown" in d for d in answer.diagnostics)
    # parse_markers and MarkerStream read them alike.
    assert [c.source_ids for c in parse_markers("Fait [7].", ROWS).citations] == [
        [answer.sources[1].id]
    ]
    # Rows whose sids are their positions are numbered as a plain list.
    quiet: list[str] = []
    build_digest([{**ROWS[0], "sid": 1}], 500, tokenizer="estimate", diagnostics=quiet)
    assert quiet == []


def test_sids_that_do_not_number_the_rows_one_to_one_are_refused() -> None:
    repeated = [ROWS[0], {**ROWS[1], "sid": ROWS[0]["sid"]}]
    partial = [ROWS[0], {k: v for k, v in ROWS[1].items() if k != "sid"}]
    for rows in (repeated, partial):
        with pytest.raises(UsageError, match="do not number them one to one"):
            cite("Fait [3].", rows)
        with pytest.raises(UsageError, match="do not number them one to one"):
            parse_markers("Fait [3].", rows)
        with pytest.raises(UsageError, match="do not number them one to one"):
            build_digest(rows, 500, tokenizer="estimate")


def test_a_sid_map_shows_and_reads_the_rows_sids() -> None:
    table = {row["sid"]: row for row in ROWS}
    digest = build_digest(table, 2_000, prefer="snippet", tokenizer="estimate")
    assert digest == (
        "[sid:3] Fête des Lumières – Lyon\n"
        "Chaque 8 décembre, Lyon s’illumine : vitrines, façades et bougies.\n\n"
        "[sid:7] Fête des Lumières — Wikipédia\n"
        "La fête trouve son origine en 1852, lors de l’inauguration d’une statue."
    )
    answer = cite(
        "La fête date de 1852 [7]. Lyon s’illumine chaque 8 décembre [3]. Rien ici [1].",
        table,
        renumber=False,
    )
    cited = [answer.source(c.source_ids[0]) for c in answer.citations]
    assert [s.extras["sid"] for s in cited if s is not None] == [7, 3]
    assert any("source 1 was not shown" in d for d in answer.diagnostics)  # [1] names no row
    # Every number the digest shows is read back as the row shown under it.
    for number, row in table.items():
        one = cite(f"Fait [{number}].", table)
        [source] = one.sources
        assert (source.url, source.extras["sid"]) == (row["url"], row["sid"])


def test_a_map_must_be_keyed_by_numbers_and_comes_without_a_ledger() -> None:
    with pytest.raises(UsageError, match="map"):
        build_digest({"url": "https://www.opéra.fr"}, 100)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="map"):
        build_digest({0: ROWS[0]}, 100)
    with pytest.raises(UsageError, match="not both"):
        build_digest({3: ROWS[0]}, 100, ledger=SourceLedger())
    assert build_digest({}, 100) == ""


def test_reconcile_and_filter_take_rows() -> None:
    kept = reconcile(ROWS, "Quand a lieu la Fête des Lumières à Lyon ?", ["date fête lumières"])
    assert [s.extras["sid"] for s in kept] == [3, 7]
    assert all(s.relevance is not None for s in kept)
    # This run's reasoning replaces the row's, and says what matched.
    assert kept[0].extras["reasoning"].startswith("Matches ")
    # A judge replying in the seed's reconciler format ("o_relevance"), by the rows' sids, is
    # read; the row it leaves out was judged irrelevant and is dropped.
    reply = '[{"sid": 3, "o_relevance": 0.93, "q_relevance": [{"qid": "1", "score": 0.9}]}]'
    notes: list[str] = []
    judged = reconcile(ROWS, "Fête des Lumières", ["date"], llm=lambda _: reply, diagnostics=notes)
    assert [(s.extras["sid"], s.relevance) for s in judged] == [(3, 0.93)]
    assert judged[0].extras["query_relevance"] == [{"qid": "1", "score": 0.9}]
    copy = {**ROWS[0], "sid": 4, "url": None}
    [only] = filter_content([ROWS[0], copy])
    assert only.extras["sid"] == 3
    assert only.extras["near_duplicates"] == [as_source(copy).id]


# --- sources_used: declared and cited ---------------------------------------------------------

SOURCES = [Source(id=name, title=f"Source {name}", snippet="é") for name in "abcd"]


def test_sources_used_is_the_union_of_declared_and_cited() -> None:
    text = "Claim [1]. Other claim [2].\n[[USAGE:1,3]]\nLast line."
    answer = parse_markers(text, SOURCES)
    assert answer.sources_used == ["a", "c", "b"]
    assert set(answer.sources_used) >= {s for c in answer.citations for s in c.source_ids}
    # Through cite(), numbering in first-cited order: the declared-only source follows.
    cited = cite(text, SOURCES)
    assert [s.id for s in cited.sources] == ["a", "b", "c"]
    assert cited.sources_used == ["a", "c", "b"]
    # No declaration: None, whatever is cited.
    assert parse_markers("Claim [1].", SOURCES).sources_used is None
    assert cite("Claim [1].", SOURCES).sources_used is None


def test_the_union_holds_for_any_answer_built() -> None:
    answer = CitedAnswer(
        text="Lyon s’illumine. La fête date de 1852.",
        sources=SOURCES,
        citations=[
            {"start": 17, "end": 38, "text": "La fête date de 1852.", "source_ids": ["d", "b"]},
            {"start": 0, "end": 16, "text": "Lyon s’illumine.", "source_ids": ["a"]},
        ],
        sources_used=["c", "b"],
    )
    assert answer.sources_used == ["c", "b", "a", "d"]
    assert CitedAnswer.from_json(answer.to_json()) == answer
    assert answer.replace(text=answer.text).sources_used == ["c", "b", "a", "d"]
    assert answer.replace(sources_used=[]).sources_used == ["a", "d", "b"]
    assert answer.replace(sources_used=None).sources_used is None


def test_a_tool_returning_seed_rows_gives_those_sources() -> None:
    for output in (ROWS, {"sources": ROWS}, json.dumps({"results": ROWS}, ensure_ascii=False)):
        found = from_tool_output("web_search", output, call_id="call_01")
        assert [s.extras["sid"] for s in found] == [3, 7]
        assert [s.snippet for s in found] == [ROWS[0]["text"], ROWS[1]["text"]]
        assert found[0].content == ROWS[0]["content"]
        assert [s.rank for s in found] == [0, 1]
        assert all(s.origin is not None and s.origin.call_id == "call_01" for s in found)
        assert found[0].raw == ROWS[0]
