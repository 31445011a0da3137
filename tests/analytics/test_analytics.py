"""unicite.analytics: the batch function, aggregation, inputs and the local engine."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from analytics._corpus import responses
from hypothesis import given, settings
from hypothesis import strategies as st

from unicite import extract
from unicite.analytics import (
    Summary,
    TopCounter,
    aggregate,
    analyze,
    analyze_one,
    plan_chunks,
    read_chunk,
    row_of,
    stats,
)
from unicite.exceptions import UsageError

try:  # the analytics extra: the core's own environment runs the rest without it
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard
except ImportError:
    pa = pq = zstandard = None

needs_extra = pytest.mark.skipif(pa is None, reason="the analytics extra is not installed")

CORPUS = list(responses())
LINES = [json.dumps(data, ensure_ascii=False) for _, data in CORPUS]


def _log(tmp_path: Path, lines: list[str], name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# --- the batch function ------------------------------------------------------------------------


def test_rows_are_what_extract_reads() -> None:
    rows = analyze(LINES, fast=False)
    for (name, data), row in zip(CORPUS, rows, strict=True):
        answer = extract(data)
        assert row["provider"] == answer.provider, name
        assert row["citations"] == len(answer.citations), name
        entries = sorted((s.url or "", s.domain or "") for s in answer.sources)
        assert list(zip(row["urls"], row["domains"], strict=True)) == [
            (url or None, domain or None) for url, domain in entries
        ], name
    assert {row["provider"] for row in rows} >= {"openai", "anthropic", "gemini", "perplexity"}


def test_both_sinks_agree_on_every_recorded_response() -> None:
    assert analyze(LINES) == analyze(LINES, fast=False)


@needs_extra
def test_an_arrow_batch_gives_the_same_rows_as_a_list() -> None:
    table = pa.table({"response": [*LINES[:20], "not json", None]})
    batch = analyze(table)
    assert batch.schema.names[0] == "provider"
    assert batch.to_pylist() == analyze([*LINES[:20], "not json", ""])
    binary = pa.RecordBatch.from_pydict(
        {"b": pa.array([line.encode() for line in LINES[:5]], pa.binary())}
    )
    assert analyze(binary).to_pylist() == analyze(LINES[:5])
    assert aggregate(batch).as_dict() == aggregate(analyze([*LINES[:20], "x", ""])).as_dict()


@needs_extra
def test_arrow_batches_name_their_json_column() -> None:
    table = pa.table({"id": [1, 2], "body": LINES[:2], "other": ["a", "b"]})
    with pytest.raises(UsageError, match="name the JSON one with column="):
        analyze(table)
    assert analyze(table, column="body").num_rows == 2
    with pytest.raises(UsageError, match="not JSON text"):
        analyze(table, column="id")
    with pytest.raises(UsageError, match="no column 'nope'"):
        analyze(table, column="nope")
    with pytest.raises(UsageError, match="analyze_one"):
        analyze(LINES[0])


def test_unreadable_lines_become_rows_with_an_error() -> None:
    rows = analyze(["{not json", b"\xff\xfe", "[1, 2]", "{}", "[" * 100_000])
    assert [row["provider"] for row in rows] == [None] * 5
    assert all(row["error"] for row in rows)
    assert rows[0]["error"].startswith("line is not valid JSON")
    assert rows[1]["error"].startswith("line is not UTF-8 text")
    assert "unrecognised response shape" in rows[3]["error"]
    assert all(row["citations"] == row["sources"] == 0 for row in rows)


def test_lines_orjson_refuses_are_read_like_json_loads() -> None:
    (name, data), *_ = (item for item in CORPUS if extract(item[1]).citations)
    # A lone surrogate escape and NaN: the standard library reads both.
    odd = json.dumps({**data, "note": "\ud800", "score": float("nan")})
    assert analyze_one(odd) == analyze_one(data), name


def test_a_log_record_wrapping_a_response_is_read_with_its_day() -> None:
    (_, data), *_ = (item for item in CORPUS if extract(item[1]).citations)
    record = {"timestamp": "2026-11-26T23:59:59.123456789-02:00", "response": data}
    row = analyze_one(json.dumps(record))
    assert row["day"] == "2026-11-27"
    assert {**row, "day": None} == {**analyze_one(data), "day": None}
    # A stream event carrying a response says its type: read as the event, not unwrapped.
    event = {"type": "response.created", "response": {"id": "r", "output": []}}
    assert analyze_one(event)["error"] is None or analyze_one(event)["provider"] is not None


@pytest.mark.parametrize(
    ("value", "day"),
    [
        ({"created_at": 1764115200}, "2025-11-26"),
        ({"created": 1764115200000}, "2025-11-26"),
        ({"createTime": "2025-11-26T10:00:00.123456789Z"}, "2025-11-26"),
        ({"timestamp": "2025-11-26"}, "2025-11-26"),
        ({"time": 1764115200.5}, "2025-11-26"),
        ({"created": "yesterday"}, None),
        ({"created": -5}, None),
        ({"created": True}, None),
        ({"date": "2025-13-40"}, None),
        ({}, None),
    ],
)
def test_days_are_read_from_epochs_and_iso_text(value: dict[str, Any], day: str | None) -> None:
    row = analyze_one({"response": {"object": "nothing"}, **value})
    assert row["day"] == day


# --- aggregation -------------------------------------------------------------------------------


def test_grouping_and_regrouping_agree() -> None:
    rows = analyze(LINES * 2 + ["broken"])
    fine = aggregate(rows, by=["provider", "model"])
    assert fine.regroup(["provider"]).as_dict() == aggregate(rows, by=["provider"]).as_dict()
    assert fine.regroup([]).as_dict() == aggregate(rows).as_dict()
    groups = fine.as_dict()["groups"]
    assert sum(g["responses"] for g in groups) == len(rows)
    assert {g["provider"] for g in groups} >= {"openai", "anthropic", "gemini", None}
    with pytest.raises(UsageError, match="cannot group by 'site'"):
        aggregate(rows, by=["site"])
    with pytest.raises(UsageError, match="not grouped by it"):
        fine.regroup(["day"])


def test_figures_count_what_the_rows_say() -> None:
    rows = analyze(LINES)
    summary = aggregate(rows).as_dict(top=1000)
    assert summary["citations"] == sum(r["citations"] for r in rows)
    assert summary["sources"] == sum(r["sources"] for r in rows)
    assert summary["redirect_sources"] == sum(sum(r["redirects"]) for r in rows)
    grounded = [r for r in rows if r["grounded"]]
    assert summary["grounded"] == len(grounded)
    assert summary["grounded_without_citations"] == sum(1 for r in grounded if not r["citations"])
    domains: dict[str, int] = {}
    for row in rows:
        for domain in row["domains"]:
            if domain:
                domains[domain] = domains.get(domain, 0) + 1
    assert {d["domain"]: d["count"] for d in summary["top_domains"]} == domains


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, len(LINES)), max_size=4))
def test_merged_summaries_equal_one_over_all_rows(cuts: list[int]) -> None:
    rows = analyze(LINES)
    bounds = [0, *sorted(cuts), len(rows)]
    merged = Summary(("provider",))
    for start, end in itertools.pairwise(bounds):
        merged.merge(aggregate(rows[start:end], by=["provider"]))
    assert merged.as_dict(top=100) == aggregate(rows, by=["provider"]).as_dict(top=100)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefghij"), max_size=300),
    st.lists(st.sampled_from("abcdefghij"), max_size=300),
)
def test_merged_heavy_hitters_keep_the_misra_gries_bound(left: list[str], right: list[str]) -> None:
    one, two = TopCounter(capacity=3), TopCounter(capacity=3)
    for key in left:
        one.add(key)
    for key in right:
        two.add(key)
    one.merge(two)
    truth: dict[str, int] = {}
    for key in left + right:
        truth[key] = truth.get(key, 0) + 1
    assert len(one.counts) <= 2 * 3
    assert one.total == len(left) + len(right)
    for key, true in truth.items():
        assert true - one.error <= one.counts.get(key, 0) <= true
    assert one.error <= one.total / (3 + 1)
    assert one.exact == (one.error == 0)


# --- inputs and the local engine ---------------------------------------------------------------


def test_chunks_read_every_line_once_whatever_the_split(tmp_path: Path) -> None:
    lines = [*LINES, "", "  ", "not json", *LINES[:7]]
    log = _log(tmp_path, lines)
    whole = stats([str(log)], workers=1)
    size = log.stat().st_size
    for chunk_bytes, workers in ((size // 40, 1), (size // 5, 2), (size // 3 + 1, 2)):
        chunks = plan_chunks([str(log)], chunk_bytes=chunk_bytes)
        report = stats([str(log)], workers=workers, chunk_bytes=chunk_bytes)
        assert report.summary.as_dict(50) == whole.summary.as_dict(50), (chunk_bytes, len(chunks))
    assert whole.summary.overall.responses == len(LINES) + 8
    assert [str(b) for b in whole.summary.bad_lines] == [
        f"{log}:{len(LINES) + 3}: line is not valid JSON: Expecting value: line 1 column 1 (char 0)"
    ]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.text(st.sampled_from('ab"{}\n'), max_size=12), max_size=30), st.integers(1, 64))
def test_byte_range_chunks_partition_the_lines(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], chunk_bytes: int
) -> None:
    path = tmp_path_factory.mktemp("chunks") / "log"
    data = "".join(texts).encode()
    path.write_bytes(data)
    read = [
        line
        for chunk in plan_chunks([str(path)], chunk_bytes=chunk_bytes)
        for line in read_chunk(chunk)
    ]
    assert b"".join(read) == data  # type: ignore[arg-type]
    assert read == data.splitlines(keepends=True)


@needs_extra
def test_compressed_parquet_directories_and_globs(tmp_path: Path) -> None:
    lines = [*LINES, "broken"]
    plain = _log(tmp_path / "plain", lines) if (tmp_path / "plain").mkdir() is None else None
    assert plain is not None
    logs = tmp_path / "logs" / "2026" / "11"
    logs.mkdir(parents=True)
    payload = "".join(line + "\n" for line in lines).encode()
    (logs / "a.jsonl.gz").write_bytes(gzip.compress(payload))
    (logs / "b.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(payload))
    (logs / ".hidden.jsonl").write_text("ignored\n")
    (logs / "notes.txt").write_text("ignored\n")
    table = pa.table({"id": list(range(len(lines))), "response": lines})
    pq.write_table(table, logs / "c.parquet", row_group_size=7)
    expected = stats([str(plain)], workers=1).summary.as_dict(50)

    for names in (
        [str(logs / "a.jsonl.gz")],
        [str(logs / "b.jsonl.zst")],
        [str(logs / "c.parquet")],
    ):
        got = stats(names, workers=2).summary.as_dict(50)
        assert {**got, "bad_lines": []} == {**expected, "bad_lines": []}, names
        assert got["bad_lines"] == [
            f"{names[0]}:{len(lines)}: " + expected["bad_lines"][0].split(": ", 1)[1]
        ]

    everything = stats([str(tmp_path / "logs")], workers=2).summary
    assert everything.overall.responses == 3 * len(lines)
    globbed = stats([str(tmp_path / "logs" / "**" / "*.jsonl.*")], workers=1).summary
    assert globbed.overall.responses == 2 * len(lines)
    assert len(plan_chunks([str(logs / "c.parquet")])) == -(-len(lines) // 7)


def test_a_truncated_archive_counts_what_it_could_read(tmp_path: Path) -> None:
    payload = "".join(line + "\n" for line in LINES * 20).encode()
    broken = tmp_path / "cut.jsonl.gz"
    broken.write_bytes(gzip.compress(payload)[:-4000])
    report = stats([str(broken)], workers=1)
    assert 0 < report.summary.overall.responses < len(LINES) * 20
    assert len(report.failures) == 1
    assert report.failures[0].startswith(f"{broken}: cannot decompress")


@needs_extra
def test_inputs_that_do_not_exist_or_do_not_fit(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or directory"):
        stats([str(tmp_path / "missing.jsonl")])
    with pytest.raises(UsageError, match="no file matches"):
        stats([str(tmp_path / "*.jsonl")])
    (tmp_path / "empty").mkdir()
    with pytest.raises(UsageError, match="a directory with no log files"):
        stats([str(tmp_path / "empty")])
    log = _log(tmp_path, LINES[:2])
    with pytest.raises(UsageError, match="unknown engine"):
        stats([str(log)], engine="dask")  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="workers must be at least 1"):
        stats([str(log)], workers=0)
    pq.write_table(pa.table({"a": ["x"], "b": ["y"]}), tmp_path / "two.parquet")
    with pytest.raises(UsageError, match="name it with --column"):
        stats([str(tmp_path / "two.parquet")])
    assert stats([str(tmp_path / "two.parquet")], column="b").summary.overall.unreadable == 1


def test_row_of_an_unreadable_answer() -> None:
    row = row_of(extract("not json"))
    assert row["error"] is not None
    assert row["sources"] == 0


def test_reading_a_log_logs_no_warning_per_response(caplog: pytest.LogCaptureFixture) -> None:
    grounded = [
        line
        for line, row in zip(LINES, analyze(LINES), strict=True)
        if row["grounded"] and not row["citations"]
    ]
    assert grounded, "the corpus holds a grounded answer without citations"
    with caplog.at_level("WARNING", logger="unicite"):
        analyze(grounded, fast=False)
    assert not caplog.records
    # That the next extract() still warns (once per process) is checked in a new interpreter
    # by tests/core/test_uncited_warning.py.
