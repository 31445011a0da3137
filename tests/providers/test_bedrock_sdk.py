"""A real boto3 ``bedrock-runtime`` client (Converse and ConverseStream) on cassettes.

The streamed cassettes hold AWS event-stream bodies as their messages: boto3 parses them into
the ``EventStream`` of ``response["stream"]``, which `collect_stream` reads as it is.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")

from unicite import (  # noqa: E402
    CharLocation,
    CitedAnswer,
    PageLocation,
    SearchResultLocation,
    UrlLocation,
)
from unicite.providers import StreamCollector, collect_stream, extract  # noqa: E402

CLAUDE = "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"
NOVA = "us.amazon.nova-2-lite-v1:0"

# A French guide with a typographic dash and an emoji: documentChar offsets count code points.
GUIDE = (
    "Guide de Paris — édition 2025.\n"
    "La tour Eiffel mesure 330 mètres depuis 2022 ; elle accueille près de 7 millions "
    "de visiteurs par an. 🗼\n"
    "Le musée d’Orsay ferme le lundi.\n"
)
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"
DOCUMENTS_REQUEST: dict[str, Any] = {
    "modelId": CLAUDE,
    "messages": [
        {
            "role": "user",
            "content": [
                {
                    "document": {
                        "format": "txt",
                        "name": "guide-paris",
                        "source": {"text": GUIDE},
                        "citations": {"enabled": True},
                    }
                },
                {
                    "document": {
                        "format": "pdf",
                        "name": "tokyo-guide",
                        "source": {"bytes": PDF},
                        "citations": {"enabled": True},
                    }
                },
                {"text": "Quelle est la hauteur de la tour Eiffel et celle de la tour de Tokyo ?"},
            ],
        }
    ],
    "inferenceConfig": {"maxTokens": 1024},
}

NOVA_REQUEST: dict[str, Any] = {
    "modelId": NOVA,
    "messages": [
        {
            "role": "user",
            "content": [{"text": "Quel temps fait-il à Zürich aujourd’hui et demain ?"}],
        }
    ],
    "toolConfig": {"tools": [{"systemTool": {"name": "nova_grounding"}}]},
}
METEO = "https://www.météosuisse.admin.ch/prévisions/zürich?jour=lundi"
TENKI = "https://天気.example.jp/チューリッヒ/週間"

TOOLS: dict[str, Any] = {
    "tools": [
        {
            "toolSpec": {
                "name": "chercher_docs",
                "description": "Cherche dans la base documentaire du musée.",
                "inputSchema": {
                    "json": {
                        "type": "object",
                        "properties": {"requête": {"type": "string"}},
                        "required": ["requête"],
                    }
                },
            }
        }
    ]
}
QUESTION = {"role": "user", "content": [{"text": "Quels sont les horaires du musée d’Orsay ?"}]}
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
MUSEE = "https://www.musée-orsay.fr/fr/horaires"
HOURS = [
    "Le musée est ouvert de 9 h 30 à 18 h, du mardi au dimanche.",
    "Nocturne le jeudi jusqu’à 21 h 45.",
]
CLOSED = ["Fermé le lundi, le 1er mai et le 25 décembre."]


def client(region: str) -> Any:
    """A client whose placeholder keys sign requests the cassettes answer."""
    return boto3.client(
        "bedrock-runtime",
        region_name=region,
        aws_access_key_id="x",
        aws_secret_access_key="y",  # noqa: S106
    )


def spans(answer: CitedAnswer) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in answer.citations]


def tool_results(tool_use_id: str) -> dict[str, Any]:
    """The user turn answering the tool call with two search results."""
    return {
        "role": "user",
        "content": [
            {
                "toolResult": {
                    "toolUseId": tool_use_id,
                    "content": [
                        {
                            "searchResult": {
                                "source": MUSEE,
                                "title": "Horaires et accès",
                                "content": [{"text": text} for text in HOURS],
                                "citations": {"enabled": True},
                            }
                        },
                        {
                            "searchResult": {
                                "source": "kb://faq/fermetures",
                                "title": "FAQ — fermetures",
                                "content": [{"text": text} for text in CLOSED],
                                "citations": {"enabled": True},
                            }
                        },
                    ],
                }
            }
        ],
    }


# --- Claude with documents ----------------------------------------------------------------

DOCUMENTS_TEXT = (
    "D’après vos documents, la tour Eiffel mesure 330 mètres et "
    "東京タワーは333メートルです。どちらも人気です 🗼"
)


def check_documents(answer: CitedAnswer) -> None:
    assert answer.provider == "bedrock"
    assert answer.diagnostics == []
    assert answer.text == DOCUMENTS_TEXT
    eiffel = len("D’après vos documents, ")
    tokyo = eiffel + len("la tour Eiffel mesure 330 mètres et ")
    # Each citationsContent block is cited whole; the uncited " et " between them is not.
    assert spans(answer) == [
        (eiffel, eiffel + 32, "la tour Eiffel mesure 330 mètres"),
        (tokyo, tokyo + 15, "東京タワーは333メートルです"),
    ]
    char, page = (c.location for c in answer.citations)
    # documentChar indexes the document's text, end exclusive, in code points: the quote is
    # exactly that slice of the guide (the em dash and "é" before it count one each).
    assert isinstance(char, CharLocation)
    assert (char.start, char.end, char.document_index) == (31, 78, 0)
    assert GUIDE[char.start : char.end] == answer.citations[0].quote
    assert answer.citations[0].quote == "La tour Eiffel mesure 330 mètres depuis 2022 ; "
    assert page == PageLocation(start_page=2, end_page=3, document_index=1)
    assert answer.citations[1].quote == "東京タワーの高さは333メートルで、1958年に完成しました。"
    assert [(s.id, s.kind, s.title) for s in answer.sources] == [
        ("document:0", "document", "guide-paris"),
        ("document:1", "document", "tokyo-guide"),
    ]
    assert answer.extras == {"stop_reason": "end_turn", "grounded_effective": True, "tool_calls": 0}


@pytest.mark.vcr
def test_claude_documents() -> None:
    response = client("eu-west-3").converse(**DOCUMENTS_REQUEST)
    assert "ResponseMetadata" in response  # boto3's own key, not the API's: ignored
    check_documents(extract(response))


@pytest.mark.vcr
def test_claude_documents_stream() -> None:
    response = client("eu-west-3").converse_stream(**DOCUMENTS_REQUEST)
    collector = StreamCollector()
    streamed = ""
    announced = []
    for event in response["stream"]:
        delta = event.get("contentBlockDelta", {}).get("delta", {})
        streamed += delta.get("text", "")
        for item in collector.feed(event):
            # Announced once its block closed: the text it cites has all arrived.
            assert streamed[item.citation.start : item.citation.end] == item.citation.text
            announced.append(item.citation)
    answer = collector.result()
    check_documents(answer)
    assert announced == answer.citations


# --- Nova web grounding -------------------------------------------------------------------

TODAY = "Aujourd’hui à Zürich : 21 °C et grand soleil ☀️."
TOMORROW = "Demain, des averses l’après-midi 🌧️."


def check_nova(answer: CitedAnswer) -> None:
    assert answer.provider == "bedrock"
    assert answer.diagnostics == []
    assert answer.text == TODAY + " " + TOMORROW
    tomorrow = len(TODAY) + 1
    # Each citations-only block cites the text block just before it (less its leading space).
    assert spans(answer) == [
        (0, len(TODAY), TODAY),
        (tomorrow, tomorrow + len(TOMORROW), TOMORROW),
        (tomorrow, tomorrow + len(TOMORROW), TOMORROW),
    ]
    meteo, tenki = answer.sources
    assert [c.source_ids for c in answer.citations] == [[meteo.id], [tenki.id], [meteo.id]]
    assert [c.location for c in answer.citations] == [
        UrlLocation(url=METEO),
        UrlLocation(url=TENKI),
        UrlLocation(url=METEO),
    ]
    assert (meteo.kind, meteo.url, meteo.extras) == (
        "web",
        METEO,
        {"domain": "météosuisse.admin.ch"},
    )
    assert (tenki.url, tenki.extras) == (TENKI, {"domain": "天気.example.jp"})
    assert answer.extras == {
        "stop_reason": "end_turn",
        "grounded_effective": True,
        "tool_calls": 1,
        "search_queries": ["météo Zürich aujourd’hui demain"],
    }


@pytest.mark.vcr
def test_nova_web_grounding() -> None:
    check_nova(extract(client("us-east-1").converse(**NOVA_REQUEST)))


@pytest.mark.vcr
def test_nova_web_grounding_stream() -> None:
    response = client("us-east-1").converse_stream(**NOVA_REQUEST)
    check_nova(collect_stream(response["stream"]))


# --- a tool call, then an answer citing the tool's search results ---------------------------


def check_tool_call(answer: CitedAnswer) -> str:
    """The first turn: reasoning, a sentence and the call; returns the call's id."""
    assert answer.text == "Je consulte la base documentaire du musée 🔎"
    assert answer.citations == []
    assert answer.sources == []
    assert answer.diagnostics == []
    # A call of the application's own tool is no grounding.
    assert answer.extras == {
        "stop_reason": "tool_use",
        "grounded_effective": False,
        "tool_calls": 0,
    }
    return "tooluse_kQ2pX9sLr1"


def check_search_answer(answer: CitedAnswer) -> None:
    assert answer.diagnostics == []
    opening = "Le musée d’Orsay ouvre de 9 h 30 à 18 h, avec une nocturne le jeudi"
    assert answer.text == opening + " ; il est fermé le lundi 🚫."
    closed = len(opening) + 3
    assert spans(answer) == [
        (0, len(opening), opening),
        (closed, closed + 23, "il est fermé le lundi 🚫"),
    ]
    assert [c.location for c in answer.citations] == [
        SearchResultLocation(search_result_index=0, start_block=0, end_block=2),
        SearchResultLocation(search_result_index=1, start_block=0, end_block=1),
    ]
    # Two quoted passages (two content blocks of the result) read one per line.
    assert [c.quote for c in answer.citations] == ["\n".join(HOURS), CLOSED[0]]
    hours, faq = answer.sources
    assert (hours.kind, hours.url, hours.title) == ("search_result", MUSEE, "Horaires et accès")
    assert (faq.url, faq.title, faq.extras) == (
        None,
        "FAQ — fermetures",
        {"source": "kb://faq/fermetures"},
    )


def turn_of(response: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = response["output"]["message"]
    return message


@pytest.mark.vcr
def test_tool_round() -> None:
    bedrock = client("eu-west-3")
    first = bedrock.converse(
        modelId=CLAUDE,
        messages=[QUESTION],
        toolConfig=TOOLS,
        additionalModelRequestFields=THINKING,
    )
    call_id = check_tool_call(extract(first))
    [use] = [b["toolUse"] for b in turn_of(first)["content"] if "toolUse" in b]
    assert (use["toolUseId"], use["input"]) == (call_id, {"requête": "horaires musée d’Orsay"})
    second = bedrock.converse(
        modelId=CLAUDE,
        messages=[QUESTION, turn_of(first), tool_results(call_id)],
        toolConfig=TOOLS,
        additionalModelRequestFields=THINKING,
    )
    check_search_answer(extract(second))


@pytest.mark.vcr
def test_tool_round_stream() -> None:
    bedrock = client("eu-west-3")
    first = bedrock.converse_stream(
        modelId=CLAUDE,
        messages=[QUESTION],
        toolConfig=TOOLS,
        additionalModelRequestFields=THINKING,
    )
    call_id = check_tool_call(collect_stream(first["stream"]))
    # What the first turn said, sent back as the assistant's turn (its reasoning signature too).
    signature = base64.b64encode(b"signature").decode()
    assistant = {
        "role": "assistant",
        "content": [
            {
                "reasoningContent": {
                    "reasoningText": {
                        "text": "L’utilisateur veut les horaires.",
                        "signature": signature,
                    }
                }
            },
            {"toolUse": {"toolUseId": call_id, "name": "chercher_docs", "input": {}}},
        ],
    }
    second = bedrock.converse_stream(
        modelId=CLAUDE,
        messages=[QUESTION, assistant, tool_results(call_id)],
        toolConfig=TOOLS,
        additionalModelRequestFields=THINKING,
    )
    check_search_answer(collect_stream(second["stream"]))
