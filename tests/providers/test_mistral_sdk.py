"""The real ``mistralai`` client (``mistralai.client.Mistral``), replayed from cassettes.

The cassettes are written from Mistral's documented shapes: a chat completion answering from
documents given in a tool result (``reference`` chunks naming their ``reference_id``s), its
chunk stream, and a Conversations answer with the ``web_search`` tool (``tool_reference``
chunks), final and streamed. The SDK yields its stream events wrapped (``CompletionEvent``,
``ConversationEvents``), which `collect_stream` reads as they come.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

mistral_client = pytest.importorskip("mistralai.client")

from providers._fixtures import cassette_bodies  # noqa: E402

from unicite import CitedAnswer  # noqa: E402
from unicite.providers import acollect_stream, collect_stream, extract  # noqa: E402

API_KEY = os.getenv("MISTRAL_API_KEY", "mock-api-key")
MODEL = "mistral-large-latest"
FR = (
    "Le prix Nobel de la paix 2024 a été décerné à Nihon Hidankyo, la confédération des "
    "survivants d'Hiroshima et de Nagasaki"
)
JA = "日本被団協は被爆者の全国組織です"
REFERENCES = {
    "0": {
        "url": "https://fr.wikipedia.org/wiki/Prix_Nobel_de_la_paix_2024",
        "title": "Prix Nobel de la paix 2024",
        "snippets": [["Le prix Nobel de la paix 2024 a été décerné à Nihon Hidankyo."]],
        "description": None,
        "date": "2026-11-20T10:00:00",
        "source": "wikipedia",
    },
    "1": {
        "url": "https://ja.wikipedia.org/wiki/日本原水爆被害者団体協議会",
        "title": "日本被団協",
        "snippets": [["日本被団協は被爆者の全国組織である。"]],
        "description": None,
        "date": "2026-11-20T10:00:00",
        "source": "wikipedia",
    },
}


def client() -> Any:
    return mistral_client.Mistral(api_key=API_KEY)


def messages() -> list[dict[str, Any]]:
    """The documented citation flow: the tool result hands the model its references."""
    return [
        {
            "role": "system",
            "content": "Answer the user by providing references to the source of the information.",
        },
        {
            "role": "user",
            "content": "Qui a reçu le prix Nobel de la paix 2024 ? 日本語でも一言お願いします。",
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "Xa7bC9dE1",
                    "type": "function",
                    "function": {"name": "get_information", "arguments": "{}"},
                }
            ],
        },
        {
            "role": "tool",
            "name": "get_information",
            "content": json.dumps(REFERENCES, ensure_ascii=False),
            "tool_call_id": "Xa7bC9dE1",
        },
    ]


def check_chat(answer: CitedAnswer) -> None:
    assert answer.provider == "mistral"
    assert answer.model == MODEL
    assert answer.text == FR + ". " + JA + "。🕊️"
    start = len(FR) + 2
    assert [(c.start, c.end, c.text, c.source_ids) for c in answer.citations] == [
        (0, len(FR), FR, ["reference:0"]),
        (start, start + len(JA), JA, ["reference:0", "reference:1"]),
    ]
    # The documents are the caller's (in the tool message): named by id, no URL guessed.
    assert [(s.kind, s.extras["reference_id"], s.url) for s in answer.sources] == [
        ("document", 0, None),
        ("document", 1, None),
    ]
    assert answer.diagnostics == []


@pytest.mark.vcr
def test_chat_complete_with_references() -> None:
    with client() as sdk:
        response = sdk.chat.complete(model=MODEL, messages=messages())  # type: ignore[arg-type]
    # The SDK parses the content into ``TextChunk`` / ``ReferenceChunk`` objects.
    assert type(response.choices[0].message.content[1]).__name__ == "ReferenceChunk"  # type: ignore[index]
    check_chat(extract(response))


@pytest.mark.vcr
def test_chat_stream_with_references() -> None:
    with client() as sdk:
        events = list(sdk.chat.stream(model=MODEL, messages=messages()))  # type: ignore[arg-type]
    assert type(events[0]).__name__ == "CompletionEvent"
    answer = collect_stream(events)
    check_chat(answer)
    (final,) = cassette_bodies("providers/test_mistral_sdk/test_chat_complete_with_references.yaml")
    assert answer == extract(final)
    assert answer.extras == {
        "response_id": "5b1c0d3e9f7a4c2e8d6b4a2f0e1c3b5d",
        "finish_reason": "stop",
    }


@pytest.mark.vcr
def test_chat_stream_async() -> None:
    async def run() -> CitedAnswer:
        async with client() as sdk:
            stream = await sdk.chat.stream_async(model=MODEL, messages=messages())  # type: ignore[arg-type]
            return await acollect_stream(stream)

    check_chat(asyncio.run(run()))


TEXT1 = "La tour Eiffel mesure 330 mètres depuis 2022"
TEXT2 = "東京タワーは333メートルです"


def check_conversation(answer: CitedAnswer) -> None:
    assert answer.provider == "mistral"
    assert answer.text == TEXT1 + ". " + TEXT2 + " 🗼"
    start = len(TEXT1) + 2
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (0, len(TEXT1), TEXT1),
        (start, start + len(TEXT2), TEXT2),
    ]
    urls = [[answer.source(sid).url for sid in c.source_ids] for c in answer.citations]  # type: ignore[union-attr]
    assert urls == [
        [
            "https://fr.wikipedia.org/wiki/Tour_Eiffel",
            "https://www.lemonde.fr/culture/article/2022/03/15/tour-eiffel.html",
        ],
        ["https://ja.wikipedia.org/wiki/東京タワー"],
    ]
    tokyo = answer.sources[2]
    assert (tokyo.kind, tokyo.title, tokyo.snippet) == (
        "web",
        "東京タワー - Wikipedia",
        "東京都港区にある総合電波塔",
    )
    assert answer.extras["tool_calls"] == 1
    assert answer.extras["grounded_effective"] is True
    assert answer.extras["conversation_id"] == "conv_06a1b2c3d4e5f6a7b8c9d0e1f2"
    assert answer.diagnostics == []


@pytest.mark.vcr
def test_conversation_web_search() -> None:
    with client() as sdk:
        response = sdk.beta.conversations.start(
            inputs="Quelle est la hauteur de la tour Eiffel ? 東京タワーと比べて。",
            model=MODEL,
            tools=[{"type": "web_search"}],
        )
    assert type(response).__name__ == "ConversationResponse"
    check_conversation(extract(response))


@pytest.mark.vcr
def test_conversation_stream() -> None:
    with client() as sdk:
        events = list(
            sdk.beta.conversations.start_stream(
                inputs="Quelle est la hauteur de la tour Eiffel ? 東京タワーと比べて。",
                model=MODEL,
                tools=[{"type": "web_search"}],
            )
        )
    assert type(events[0]).__name__ == "ConversationEvents"
    answer = collect_stream(events)
    check_conversation(answer)
    (final,) = cassette_bodies("providers/test_mistral_sdk/test_conversation_web_search.yaml")
    assert answer == extract(final)
