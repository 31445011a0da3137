import threading
from datetime import datetime, timezone

import pytest

from unicite import Source, UsageError
from unicite.model import SourceOrigin
from unicite.sources import SourceLedger


def test_dedup_by_normalized_url_keeps_first_id_and_merges_metadata() -> None:
    ledger = SourceLedger()
    first = ledger.add(Source(url="https://Example.com/page?utm_source=x", rank=3))
    second = ledger.add(
        {
            "url": "https://example.com/page#intro",
            "title": "Page",
            "snippet": "longer snippet",
            "rank": 1,
        }
    )
    assert first == second
    [merged] = ledger.sources
    assert merged.title == "Page"
    assert merged.snippet == "longer snippet"
    assert merged.rank == 1
    assert merged.url == "https://Example.com/page?utm_source=x"


def test_shorter_snippet_does_not_replace_longer() -> None:
    ledger = SourceLedger()
    ledger.add(Source(url="https://a.example/", snippet="a long preview of the page"))
    ledger.add(Source(url="https://a.example/", snippet="short"))
    assert ledger.sources[0].snippet == "a long preview of the page"


def test_urlless_documents_dedup_by_content() -> None:
    ledger = SourceLedger()
    a = ledger.add(Source(id="chunk-0", content="same text", kind="document"))
    b = ledger.add(Source(id="chunk-1", content="same text", kind="document"))
    c = ledger.add(Source(id="chunk-2", content="other text", kind="document"))
    assert a == b == "chunk-0"
    assert c == "chunk-2"
    assert len(ledger) == 2


def test_sids_are_one_based_and_stable() -> None:
    ledger = SourceLedger()
    ids = ledger.add_all([Source(url=f"https://s{n}.example/") for n in range(3)])
    assert [ledger.sid(i) for i in ids] == [1, 2, 3]
    assert ledger.by_sid(2) == ledger.get(ids[1])
    assert ledger.by_sid(0) is None
    assert ledger.by_sid(4) is None
    assert ledger.sid("missing") is None
    assert ids[0] in ledger
    assert "missing" not in ledger


def test_rejects_what_is_not_a_source() -> None:
    with pytest.raises(UsageError):
        SourceLedger().add(42)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="rank"):
        SourceLedger().add({"url": "https://a.example/", "rank": "first"})


def test_concurrent_adds_lose_nothing() -> None:
    ledger = SourceLedger()
    barrier = threading.Barrier(8)

    def worker(n: int) -> None:
        barrier.wait()
        for k in range(200):
            ledger.add(Source(url=f"https://site{k % 150}.example/{n % 2}"))

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(ledger) == 300
    assert len({s.id for s in ledger.sources}) == 300


def test_origins_record_every_tool_call_that_saw_a_source() -> None:
    ledger = SourceLedger()
    first = SourceOrigin(tool="tavily_search", call_id="call_1")
    second = SourceOrigin(tool="brave_search", call_id="call_2")
    sid = ledger.add(Source(url="https://a.example/page", origin=first))
    ledger.add(Source(url="https://a.example/page#top", origin=second))
    ledger.add(Source(url="https://a.example/page", origin=first))
    assert ledger.origins(sid) == [first, second]
    assert ledger.get(sid) is not None
    assert ledger.get(sid).origin == first
    assert ledger.origins("missing") == []


def test_later_sightings_fill_in_dates_and_keep_the_earliest_rank() -> None:
    ledger = SourceLedger()
    published = datetime(2024, 1, 2, tzinfo=timezone.utc)
    sid = ledger.add(Source(url="https://a.example/", rank=4))
    ledger.add(Source(url="https://a.example/", title="A", rank=7, published_at=published))
    merged = ledger.get(sid)
    assert merged is not None
    assert (merged.title, merged.rank, merged.published_at) == ("A", 4, published)


def test_resolve_maps_a_merged_duplicate_id_to_the_survivor() -> None:
    ledger = SourceLedger()
    kept = ledger.add(Source(id="first", url="https://a.example/x"))
    ledger.add(Source(id="second", url="https://a.example/x?utm_source=feed"))
    assert ledger.resolve("second") == kept == ledger.resolve("first")
    assert "second" not in ledger  # only survivors are entries
    assert ledger.resolve("never-added") is None


def test_footnotes_exclude_sources_a_tool_listed_inline() -> None:
    ledger = SourceLedger()
    ledger.add_tool_output(
        "research_agent",
        "Prices fell [1].\n\nSources:\n[1] https://news.example/prices\n",
    )
    searched = ledger.add(Source(url="https://search.example/result"))
    assert len(ledger.footnotes()) == 2
    assert [s.id for s in ledger.footnotes(exclude_inline=True)] == [searched]


def test_footnotes_exclude_sources_the_answer_already_shows() -> None:
    ledger = SourceLedger()
    shown = ledger.add(Source(url="https://en.wikipedia.org/wiki/Paris_(France)"))
    linked = ledger.add(Source(url="https://insee.example/pop?utm_source=x"))
    hidden = ledger.add(Source(url="https://hidden.example/"))
    document = ledger.add(Source(content="an uploaded memo", kind="document"))
    answer = (
        "Paris has 2.1 million people [1][2].\n\n"
        "Sources:\n1. https://en.wikipedia.org/wiki/Paris_(France).\n"
        "2. [INSEE](https://INSEE.example/pop)\n"
    )
    assert [s.id for s in ledger.footnotes(exclude_inline=answer)] == [hidden, document]
    assert {shown, linked}.isdisjoint(s.id for s in ledger.footnotes(exclude_inline=answer))
    with pytest.raises(UsageError):
        ledger.footnotes(exclude_inline=3)  # type: ignore[arg-type]
