"""Azure OpenAI On Your Data (``message.context.citations`` and ``[docN]`` markers) reader.

The contract cases are the bodies of the SDK cassettes (``cassettes/providers/test_azure_sdk``),
written from the documented format: French HR policies (a final response and its stream) and a
Japanese office guide whose stream cuts its markers between chunks.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from providers._fixtures import cassette_bodies, sse_events
from providers.contract import ProviderContract

import unicite
from unicite import CitationError
from unicite.providers import (
    BUILTIN_PROVIDERS,
    StreamCollector,
    collect_stream,
    detect_provider,
    extract,
    extract_content,
)

COMPLETION = "providers/test_azure_sdk/test_on_your_data_completion.yaml"
STREAM = "providers/test_azure_sdk/test_on_your_data_stream.yaml"
NOTHING_FOUND = "providers/test_azure_sdk/test_on_your_data_without_documents.yaml"
FRENCH_STREAM = "providers/test_azure_sdk/test_on_your_data_stream_async.yaml"


def french() -> Any:
    return cassette_bodies(COMPLETION)[0]


def japanese() -> Any:
    return cassette_bodies(STREAM)[0]


def stream_events(cassette: str = STREAM) -> list[Any]:
    """The events of the SSE body a cassette replays."""
    return sse_events(next(b for b in cassette_bodies(cassette) if isinstance(b, str)))


class TestAzureOnYourDataContract(ProviderContract):
    provider = "azure"
    noisy_cases = frozenset({"doc-out-of-range", "intent-not-json"})

    def final_cases(self) -> dict[str, Any]:
        out_of_range = french()
        message = out_of_range["choices"][0]["message"]
        message["content"] += " Les tickets-restaurant valent 9 € [doc9]."
        unreadable = japanese()
        unreadable["choices"][0]["message"]["context"]["intent"] = "会議室 予約"
        return {
            "french": french(),
            "japanese": japanese(),
            "nothing-found": cassette_bodies(NOTHING_FOUND)[0],
            "doc-out-of-range": out_of_range,
            "intent-not-json": unreadable,
        }

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        return {
            "japanese": (stream_events(), japanese()),
            "french": (stream_events(FRENCH_STREAM), french()),
        }


def completion(content: Any, context: Any, **choice: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if context is not None:
        message["context"] = context
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "stop", "message": message, **choice}],
    }


def documents(*titles: str) -> list[dict[str, Any]]:
    return [
        {"content": f"{title} : texte du passage", "title": title, "url": None, "filepath": None}
        for title in titles
    ]


def claims(answer: unicite.CitedAnswer) -> list[tuple[str, str, list[str | None]]]:
    """Each citation as (claim, marker text, titles of its sources)."""
    out = []
    for c in answer.citations:
        assert c.marker_span is not None
        marker = answer.text[c.marker_span[0] : c.marker_span[1]]
        titles = [s.title for sid in c.source_ids if (s := answer.source(sid)) is not None]
        out.append((c.text, marker, titles))
    return out


# --- the cassette answers ---------------------------------------------------------------------


def test_each_marker_cites_the_claim_before_it() -> None:
    data = french()
    answer = extract(data, strict=True)
    text = data["choices"][0]["message"]["content"]
    assert answer.text == text
    assert claims(answer) == [
        (
            "Chez Contoso, vous pouvez télétravailler jusqu’à deux jours par semaine, avec "
            "l’accord écrit de votre responsable",
            "[doc1]",
            ["Politique de télétravail"],
        ),
        (
            "Ces jours ne sont pas reportables d’une semaine à l’autre",
            "[doc5]",
            ["Politique de télétravail"],
        ),
        (
            "Côté mobilité, l’entreprise rembourse 50 % de votre abonnement de transport 🚆, et "
            "l’indemnité vélo s’y ajoute",
            "[doc2][doc3]",
            ["Guide des avantages 2025", "Note mobilité douce"],
        ),
        (
            "Le télétravail depuis l’étranger n’est pas autorisé sans dérogation de la DRH",
            "[doc4]",
            ["FAQ RH"],
        ),
    ]
    # Offsets are code points of the text as received: each claim sits where the text has it,
    # right before its marker (the space before " [doc4]" stays outside the claim).
    for c in answer.citations:
        assert c.marker_span is not None
        assert c.start == text.index(c.text)
        assert text[c.marker_span[0] :].startswith("[doc")
        assert c.end == c.marker_span[0] - text[c.end : c.marker_span[0]].count(" ")
    assert [c.origin for c in answer.citations] == ["native"] * 4


def test_documents_become_sources_with_their_fields() -> None:
    data = french()
    cited = data["choices"][0]["message"]["context"]["citations"]
    answer = extract(data)
    teletravail, avantages, velo, faq = answer.sources
    # [doc1] and [doc5] are two chunks of one PDF (same URL): one source, ranked as the first.
    assert (teletravail.kind, teletravail.url, teletravail.title, teletravail.rank) == (
        "document",
        "https://contosorh.blob.core.windows.net/politiques/teletravail.pdf",
        "Politique de télétravail",
        0,
    )
    assert teletravail.content == cited[0]["content"]
    assert teletravail.extras == {
        "filepath": "teletravail.pdf",
        "chunk_id": "0",
        "rerank_score": 3.1245,
    }
    assert answer.citations[0].source_ids == answer.citations[1].source_ids == [teletravail.id]
    # Each citation of one chunk quotes that chunk, even when chunks share a source.
    assert answer.citations[0].quote == cited[0]["content"]
    assert answer.citations[1].quote == cited[4]["content"]
    # A run naming two documents quotes neither (each source holds its chunk).
    assert answer.citations[2].quote is None
    assert avantages.content == cited[1]["content"]
    # url null: the file path names the document.
    assert (velo.url, velo.provider_id, velo.extras["filepath"]) == (
        None,
        "note-mobilite-douce.docx",
        "note-mobilite-douce.docx",
    )
    # url and filepath null: the title and the chunk are all there is.
    assert (faq.url, faq.provider_id, faq.title, faq.extras) == (
        None,
        None,
        "FAQ RH",
        {"chunk_id": "7", "rerank_score": 2.1002},
    )
    assert faq.content == cited[3]["content"]


def test_intent_and_retrieval_go_to_extras() -> None:
    data = french()
    context = data["choices"][0]["message"]["context"]
    answer = extract(data)
    assert answer.extras["intent"] == json.loads(context["intent"])
    assert answer.extras["intent"][2] == "télétravail à l'étranger"
    assert answer.extras["all_retrieved_documents"] == context["all_retrieved_documents"]
    assert answer.extras["grounded_effective"] is True
    assert answer.extras["tool_calls"] == 3
    assert answer.extras["response_id"] == data["id"]
    # Retrieved documents that were filtered out are not sources.
    assert "Charte informatique" not in {s.title for s in answer.sources}


def test_nothing_found_is_grounded_retrieval_without_citations() -> None:
    answer = extract(cassette_bodies(NOTHING_FOUND)[0], strict=True)
    assert answer.provider == "azure"
    assert answer.citations == []
    assert answer.sources == []
    assert answer.extras["intent"] == ["menu cantine Zürich"]
    assert answer.extras["grounded_effective"] is False
    assert answer.extras["tool_calls"] == 1


# --- markers ----------------------------------------------------------------------------------


def test_an_out_of_range_marker_is_left_uncited_with_a_diagnostic() -> None:
    data = completion(
        "Le siège est à Lyon[doc1]. Il ouvre à 8 h[doc3]. 本社は大阪です[doc1][doc2]。",
        {"citations": documents("Siège", "Horaires"), "intent": "[]"},
    )
    answer = extract(data)
    assert claims(answer) == [
        ("Le siège est à Lyon", "[doc1]", ["Siège"]),
        ("本社は大阪です", "[doc1][doc2]", ["Siège", "Horaires"]),
    ]
    assert answer.diagnostics == [
        "marker [doc3] at 41 names no source (2 citation(s) in message.context)"
    ]
    assert answer.text[41:47] == "[doc3]"
    with pytest.raises(CitationError, match=r"\[doc3\]"):
        extract(data, strict=True)


def test_doc0_names_nothing() -> None:
    answer = extract(completion("Zéro[doc0].", {"citations": documents("Un")}))
    assert answer.citations == []
    assert answer.diagnostics == [
        "marker [doc0] at 4 names no source (1 citation(s) in message.context)"
    ]


def test_adjacent_markers_are_one_citation_in_their_order() -> None:
    data = completion(
        "Le café est torréfié à Montréal[doc2][doc1][doc2].",
        {"citations": documents("Torréfaction", "Montréal")},
    )
    answer = extract(data, strict=True)
    assert claims(answer) == [
        ("Le café est torréfié à Montréal", "[doc2][doc1][doc2]", ["Montréal", "Torréfaction"])
    ]


def test_a_marker_with_no_claim_before_it() -> None:
    data = completion(
        "[doc1]\n\nRésumé : voir ci-dessus.\n\n[doc2] Le dossier est clos.",
        {"citations": documents("Dossier A", "Dossier B")},
    )
    answer = extract(data)
    # Alone on its line it closes no claim: uncited, said; leading a line it claims what follows.
    assert claims(answer) == [("Le dossier est clos.", "[doc2]", ["Dossier B"])]
    assert answer.diagnostics == [
        "marker [doc1] at 0: closes no claim (nothing before it to cite); left uncited"
    ]


def test_doc_markers_in_code_or_words_are_text() -> None:
    text = (
        "Appelez `index[doc1]` puis my_docs[doc1], self.docs[doc2] et [doc 1], [docs], "
        "[document], [Doc1], [doc1]s.\n\n```python\nhits[doc2]\n```\nFin[doc2]."
    )
    answer = extract(completion(text, {"citations": documents("Un", "Deux")}), strict=True)
    assert claims(answer) == [("Fin", "[doc2]", ["Deux"])]


# --- intent -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("intent", "extras", "diagnostics"),
    [
        ('["horaires", "accès"]', ["horaires", "accès"], []),
        ("[]", [], []),
        ("", [], []),
        ('"une requête"', ["une requête"], []),
        (["déjà", "décodé"], ["déjà", "décodé"], []),
        ("horaires d'ouverture", "horaires d'ouverture", ["intent: not a JSON list of queries"]),
        ('["ouvert", 3]', '["ouvert", 3]', ["intent: expected a list of query strings"]),
        ('{"q": "x"}', '{"q": "x"}', ["intent: expected a list of query strings"]),
        ("[" * 5000, "[" * 5000, ["intent: not a JSON list of queries"]),
        (7, 7, ["intent: expected a list of query strings"]),
    ],
)
def test_intent_decoding(intent: Any, extras: Any, diagnostics: list[str]) -> None:
    data = completion("Ouvert à 9 h[doc1].", {"citations": documents("Horaires"), "intent": intent})
    answer = extract(data)
    assert answer.extras.get("intent", []) == extras
    assert len(answer.diagnostics) == len(diagnostics)
    for expected, got in zip(diagnostics, answer.diagnostics, strict=True):
        assert f"message.context.{expected}" in got
    assert len(answer.citations) == 1  # a bad intent costs no citation
    # One search per query; documents came back, so at least one ran.
    queries = extras if isinstance(extras, list) else []
    assert answer.extras["tool_calls"] == max(len(queries), 1)


# --- detection and streams --------------------------------------------------------------------


def test_registered_between_perplexity_and_chat_completions() -> None:
    names = [(p.name, p.api) for p in BUILTIN_PROVIDERS]
    assert names.index(("perplexity", None)) < names.index(("azure", None))
    assert names.index(("azure", None)) < names.index(("openai", "chat"))
    assert "azure" in unicite.providers.PROVIDER_NAMES


def test_plain_chat_completions_stay_openai() -> None:
    plain = completion("Bonjour [doc1] !", None)
    assert detect_provider(plain) == "openai"
    chunk = {
        "id": "c",
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Bonjour"}}],
    }
    assert collect_stream([chunk]).provider == "openai"


def test_only_the_context_chunk_picks_the_azure_reader() -> None:
    events = stream_events()
    # Azure's first event (prompt filter results, no choices) is nobody's; the second holds
    # the context; the text chunks after it look like any Chat Completions chunk.
    reader = next(p for p in BUILTIN_PROVIDERS if p.name == "azure")
    assert [reader.detect_event(e) for e in events[:3]] == [False, True, False]
    assert collect_stream(events[2:]).provider == "openai"


def test_a_context_after_the_first_chunk_is_said_not_dropped_silently() -> None:
    events = stream_events()
    role_only = copy.deepcopy(events[1])
    role_only["choices"][0]["delta"] = {"role": "assistant", "content": ""}
    answer = collect_stream([role_only, *events[1:]])
    assert answer.provider == "openai"
    assert answer.citations == []
    assert any("Azure On Your Data message context" in d for d in answer.diagnostics)


def test_stream_announces_every_citation_with_the_finish_chunk() -> None:
    events = stream_events()
    collector = StreamCollector(strict=True)
    counts = [len(collector.feed(event)) for event in events]
    assert counts == [0] * (len(events) - 1) + [3]
    assert collector.result() == extract(japanese())


def test_a_stream_cut_before_its_finish_says_so() -> None:
    events = stream_events()
    answer = collect_stream(events[:-1])
    assert "stream ended before a chunk with a finish_reason" in answer.diagnostics
    assert answer.text == japanese()["choices"][0]["message"]["content"]


# --- content as frameworks keep it --------------------------------------------------------------


def test_content_with_the_context_kept_reads_like_the_response() -> None:
    data = french()
    message = data["choices"][0]["message"]
    answer = extract_content(
        message["content"],
        fields={"id": data["id"], "model": data["model"], "context": message["context"]},
    )
    expected = extract(data)
    assert answer.provider == "azure"
    assert answer.citations == expected.citations
    assert answer.sources == expected.sources


def test_content_without_the_context_says_why_it_is_uncited() -> None:
    text = french()["choices"][0]["message"]["content"]
    for fields in ({"content_filter_results": {}, "model": "gpt-4o"}, {}):
        answer = extract_content(text, fields=fields)
        assert answer.provider == "azure"
        assert answer.text == text
        assert answer.citations == []
        assert len(answer.diagnostics) == 1
        assert "no message.context" in answer.diagnostics[0]
    blocks = [{"type": "text", "text": text[:50]}, {"type": "text", "text": text[50:]}]
    assert extract_content(blocks).diagnostics == answer.diagnostics
    # Text without [docN] markers (or with them only in code) is not this API's.
    assert extract_content("Bonjour `x[doc1]` !").provider is None
