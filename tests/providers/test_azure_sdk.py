"""The real ``openai.AzureOpenAI`` client with On Your Data, replayed from cassettes.

The request names the deployment in the URL (``/openai/deployments/<deployment>/chat/
completions?api-version=...``) and passes ``data_sources`` through ``extra_body``; the SDK keeps
the message's ``context`` among its extra fields, which `extract` reads.
"""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from providers._fixtures import cassette_bodies  # noqa: E402

from unicite import CitedAnswer, GroundingRequiredError  # noqa: E402
from unicite.providers import (  # noqa: E402
    StreamCollector,
    acollect_stream,
    capabilities,
    collect_stream,
    extract,
)

API_KEY = os.getenv("AZURE_OPENAI_API_KEY", "mock-api-key")
ENDPOINT = "https://contoso-rh.openai.azure.com"
API_VERSION = "2024-10-21"
DEPLOYMENT = "gpt-4o-rh"


def data_sources(index: str, *contexts: str) -> dict[str, Any]:
    """The ``extra_body`` of an On Your Data request over an Azure AI Search index."""
    return {
        "data_sources": [
            {
                "type": "azure_search",
                "parameters": {
                    "endpoint": "https://contoso-search.search.windows.net",
                    "index_name": index,
                    "authentication": {"type": "api_key", "key": "mock-search-key"},
                    "include_contexts": ["citations", "intent", *contexts],
                    "top_n_documents": 5,
                    "strictness": 3,
                    "in_scope": True,
                },
            }
        ]
    }


def client() -> Any:
    return openai.AzureOpenAI(azure_endpoint=ENDPOINT, api_key=API_KEY, api_version=API_VERSION)


def claims(answer: CitedAnswer) -> list[tuple[str, str, list[str | None]]]:
    out = []
    for c in answer.citations:
        assert c.marker_span is not None
        titles = [s.title for sid in c.source_ids if (s := answer.source(sid)) is not None]
        out.append((c.text, answer.text[c.marker_span[0] : c.marker_span[1]], titles))
    return out


FRENCH = "Quelles sont les règles de télétravail et de mobilité chez Contoso ?"
JAPANESE = "東京オフィスの営業時間と会議室の予約方法を教えてください。"


@pytest.mark.vcr
def test_on_your_data_completion() -> None:
    with client() as sdk:
        completion = sdk.chat.completions.create(
            model=DEPLOYMENT,
            messages=[{"role": "user", "content": FRENCH}],
            extra_body=data_sources("politiques-rh", "all_retrieved_documents"),
        )
    message = completion.choices[0].message
    context = message.model_extra["context"]  # not a field of the SDK's type: kept as extra
    answer = extract(completion, strict=True)

    assert answer.provider == "azure"
    assert answer.model == "gpt-4o-2024-11-20"
    assert answer.text == message.content
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
    # Code point offsets: the emoji before "[doc2][doc3]" is one str index, two UTF-16 units.
    third = answer.citations[2]
    assert answer.utf16_span(third) == (third.start, third.end + 1)
    assert [c.quote for c in answer.citations] == [
        context["citations"][0]["content"],
        context["citations"][4]["content"],
        None,
        context["citations"][3]["content"],
    ]
    assert [(s.url, s.extras.get("filepath")) for s in answer.sources] == [
        ("https://contosorh.blob.core.windows.net/politiques/teletravail.pdf", "teletravail.pdf"),
        (
            "https://contosorh.blob.core.windows.net/politiques/avantages-2025.pdf",
            "avantages-2025.pdf",
        ),
        (None, "note-mobilite-douce.docx"),
        (None, None),
    ]
    assert answer.extras["intent"] == [
        "règles télétravail Contoso",
        "remboursement transports mobilité Contoso",
        "télétravail à l'étranger",
    ]
    assert len(answer.extras["all_retrieved_documents"]) == 2
    assert answer.extras["grounded_effective"] is True


@pytest.mark.vcr
def test_on_your_data_stream() -> None:
    with client() as sdk:
        final = sdk.chat.completions.create(
            model=DEPLOYMENT,
            messages=[{"role": "user", "content": JAPANESE}],
            extra_body=data_sources("guides-tokyo"),
        )
        stream = sdk.chat.completions.create(
            model=DEPLOYMENT,
            messages=[{"role": "user", "content": JAPANESE}],
            extra_body=data_sources("guides-tokyo"),
            stream=True,
        )
        collector = StreamCollector(strict=True)
        fed = []
        for chunk in stream:
            fed.append((chunk.choices[0].finish_reason if chunk.choices else None, chunk))
            announced = collector.feed(chunk)
            # Claims depend on the text after a marker: all are announced with the finish.
            assert bool(announced) == (fed[-1][0] == "stop")
    answer = extract(final, strict=True)
    streamed = collector.result()

    assert streamed == answer
    assert answer.text == final.choices[0].message.content
    # The stream's first chunk is Azure's prompt filter results (no choices); the context comes
    # in the next one's delta, as an extra field the SDK keeps.
    assert fed[0][1].choices == []
    assert "context" in fed[1][1].choices[0].delta.model_extra
    assert claims(answer) == [
        ("東京オフィスは平日9時から18時まで開いています", "[doc1]", ["東京オフィス利用ガイド"]),
        ("入館には社員証が必要です", "[doc2]", ["セキュリティ規程"]),
        (
            "会議室は前日の17時までに社内ポータルから予約してください 📅",
            "[doc1][doc3]",
            ["東京オフィス利用ガイド", "会議室予約FAQ"],
        ),
    ]
    # Kana and kanji are one str index each and three UTF-8 bytes.
    second = answer.citations[1]
    assert answer.text[second.start : second.end] == "入館には社員証が必要です"
    assert answer.byte_span(second) == (
        len(answer.text[: second.start].encode()),
        len(answer.text[: second.end].encode()),
    )
    assert answer.extras["intent"] == ["東京オフィス 営業時間", "会議室 予約 方法"]


@pytest.mark.vcr
def test_on_your_data_stream_async() -> None:
    async def run() -> CitedAnswer:
        async with openai.AsyncAzureOpenAI(
            azure_endpoint=ENDPOINT, api_key=API_KEY, api_version=API_VERSION
        ) as sdk:
            stream = await sdk.chat.completions.create(
                model=DEPLOYMENT,
                messages=[{"role": "user", "content": FRENCH}],
                extra_body=data_sources("politiques-rh", "all_retrieved_documents"),
                stream=True,
            )
            return await acollect_stream(stream, strict=True)

    streamed = asyncio.run(run())
    # The same answer as the completion, streamed in chunks that cut words and markers.
    final = cassette_bodies("providers/test_azure_sdk/test_on_your_data_completion.yaml")[0]
    assert streamed == extract(final)
    assert len(streamed.citations) == 4


@pytest.mark.vcr
def test_on_your_data_without_documents(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    with client() as sdk:
        completion = sdk.chat.completions.create(
            model=DEPLOYMENT,
            messages=[{"role": "user", "content": "Quel est le menu de la cantine de Zürich ?"}],
            extra_body=data_sources("politiques-rh"),
        )
    monkeypatch.setenv("UNICITE_DEBUG_GROUNDING", "1")
    with caplog.at_level(logging.INFO, logger="unicite.grounding"):
        answer = extract(completion, strict=True)
    assert answer.text.startswith("Les informations demandées ne figurent pas")
    assert (answer.citations, answer.sources) == ([], [])
    assert answer.extras["intent"] == ["menu cantine Zürich"]
    # The search ran and found nothing: the forensics say so.
    [record] = [r for r in caplog.records if r.name == "unicite.grounding"]
    facts = record.unicite_grounding  # type: ignore[attr-defined]
    assert (facts["provider"], facts["grounded_effective"], facts["tool_calls"]) == (
        "azure",
        False,
        1,
    )
    assert "1 tool call(s) made but no citations extracted" in facts["warnings"]
    with pytest.raises(GroundingRequiredError):
        extract(completion, require="citations")


def test_the_stream_cassette_replays_as_a_log() -> None:
    """The SSE body as recorded reads like the SDK's chunks (what ``unicite extract`` reads)."""
    final, sse = cassette_bodies("providers/test_azure_sdk/test_on_your_data_stream.yaml")
    assert collect_stream(sse) == extract(final)


def test_capabilities_mention_on_your_data_for_azure_clients() -> None:
    azure = capabilities(client(), model="gpt-4o")
    # On Your Data is a request option of any deployment: the model's flags stay OpenAI's.
    assert (azure.provider, azure.native_citations) == ("openai", False)
    assert any("On Your Data" in note and "[docN]" in note for note in azure.notes)
    plain = capabilities(openai.OpenAI(api_key=API_KEY), model="gpt-4o")
    assert not any("On Your Data" in note for note in plain.notes)
