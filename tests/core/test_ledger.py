import threading

import pytest

from unicite import Source, UsageError
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
