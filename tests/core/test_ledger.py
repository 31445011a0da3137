import threading
from datetime import datetime, timezone

import pytest

from unicite import Source, UsageError, normalize_url
from unicite.model import SourceOrigin
from unicite.sources import SourceLedger, page_key


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


# --- the ledger's page key: looser than normalize_url --------------------------------------


@pytest.mark.parametrize(
    "variant",
    [
        "https://www.musée-exemple.fr/expositions/été",
        "https://musée-exemple.fr/expositions/été/",
        "https://musée-exemple.fr./expositions/été",
        "https://WWW.Musée-Exemple.FR./expositions/été/?utm_source=x#plan",
    ],
)
def test_www_trailing_slash_and_trailing_dot_name_the_same_page(variant: str) -> None:
    ledger = SourceLedger()
    first = ledger.add(Source(url="https://musée-exemple.fr/expositions/été", title="Été 2025"))
    again = ledger.add(Source(url=variant, snippet="Les expositions de l’été à Lyon"))
    assert again == first
    [merged] = ledger.sources
    assert merged.snippet == "Les expositions de l’été à Lyon"
    assert ledger.resolve(Source(url=variant).id) == first
    # normalize_url itself stays conservative: it does not equate them.
    if "www." in variant.lower() or variant.endswith("/") or ".fr." in variant.lower():
        assert normalize_url(variant) != normalize_url("https://musée-exemple.fr/expositions/été")


def test_the_page_key_keeps_what_can_change_the_page() -> None:
    assert page_key("https://www.exemple.fr/") == "https://exemple.fr"
    assert page_key("https://exemple.fr") == "https://exemple.fr"
    assert page_key("https://exemple.fr./a//") == "https://exemple.fr/a"
    assert page_key("http://user@www.exemple.fr:8080/a/?q=ça") == page_key(
        "http://user@exemple.fr:8080/a?q=ça"
    )
    different = [
        "http://exemple.fr/a",  # scheme
        "https://exemple.fr:8443/a",  # port
        "https://exemple.fr/A",  # path case
        "https://exemple.fr/a?lang=fr",  # query
        "https://blog.exemple.fr/a",  # another host
    ]
    keys = {page_key(url) for url in ["https://exemple.fr/a", *different]}
    assert len(keys) == len(different) + 1
    # "www." is kept when dropping it would leave no dotted name, and IPv6 hosts are left alone.
    assert page_key("https://www.com/") == "https://www.com"
    assert page_key("https://[2001:db8::1]:8443/a/") == "https://[2001:db8::1]:8443/a"
    assert page_key("pas une URL") == "pas une URL"


def test_sources_on_different_pages_stay_apart() -> None:
    ledger = SourceLedger()
    ids = ledger.add_all(
        [
            Source(url="https://exemple.fr/a"),
            Source(url="https://exemple.fr/a?page=2"),
            Source(url="https://www2.exemple.fr/a"),
            Source(url="http://exemple.fr/a"),
        ]
    )
    assert len(set(ids)) == 4


def test_footnotes_exclude_a_page_the_text_writes_another_way() -> None:
    ledger = SourceLedger()
    ledger.add(Source(url="https://www.théâtre.example/programme/", title="Programme"))
    ledger.add(Source(url="https://opéra.example/saison", title="Saison"))
    shown = "Voir le programme : https://théâtre.example/programme"
    assert [s.title for s in ledger.footnotes(exclude_inline=shown)] == ["Saison"]
