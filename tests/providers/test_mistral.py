"""Mistral reader: chat completions with reference chunks, Conversations with tool references.

The cases are written from Mistral's documented shapes (the SDK's ``ReferenceChunk``,
``ToolReferenceChunk``, ``MessageOutputEntry`` and stream events) with French, Japanese and
emoji text, so the offsets (code points of the joined text chunks) are checked where UTF-8
and UTF-16 counts differ.
"""

from __future__ import annotations

import copy
from typing import Any

from providers.contract import ProviderContract

import unicite
from unicite import Source
from unicite.providers import StreamCollector, collect_stream, detect_provider, extract
from unicite.sources import from_tool_output

MODEL = "mistral-large-latest"

# Hand-counted: "Le prix Nobel de la paix 2024 a été décerné à Nihon Hidankyo" is 60 code
# points; ". " follows; "日本被団協は被爆者の団体です" is 14; then "。 🎉".
FR = "Le prix Nobel de la paix 2024 a été décerné à Nihon Hidankyo"
JA = "日本被団協は被爆者の団体です"


def chat(content: Any, *, model: str = MODEL, finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "cmpl-7c1f",
        "object": "chat.completion",
        "model": model,
        "created": 1764390000,
        "usage": {"prompt_tokens": 412, "completion_tokens": 38, "total_tokens": 450},
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "tool_calls": None},
                "finish_reason": finish,
            }
        ],
    }


CHAT_REFERENCES = chat(
    [
        {"type": "text", "text": FR},
        {"type": "reference", "reference_ids": [0]},
        {"type": "text", "text": ". " + JA},
        {"type": "reference", "reference_ids": [0, 1]},
        {"type": "text", "text": "。 🎉"},
    ]
)

CHAT_THINKING = chat(
    [
        {
            "type": "thinking",
            "thinking": [{"type": "text", "text": "Je cherche la réponse… 🤔"}],
        },
        {"type": "text", "text": "La capitale est Paris"},
        {"type": "reference", "reference_ids": ["doc-é"]},
        {"type": "text", "text": "."},
    ],
    model="magistral-medium-latest",
)

CHAT_STRING = chat("Bonjour ! こんにちは 👋", model="mistral-small-latest")


def web(title: str, url: str) -> dict[str, Any]:
    return {
        "type": "tool_reference",
        "tool": "web_search",
        "title": title,
        "url": url,
        "favicon": "https://www.google.com/s2/favicons?domain=example.org",
        "description": None,
    }


CONVERSATION = {
    "object": "conversation.response",
    "conversation_id": "conv_0196a8",
    "outputs": [
        {
            "object": "entry",
            "type": "tool.execution",
            "name": "web_search",
            "arguments": '{"query": "prix Nobel de la paix 2024"}',
            "id": "tool_exec_01",
            "created_at": "2026-11-29T05:00:00Z",
            "completed_at": "2026-11-29T05:00:02Z",
        },
        {
            "object": "entry",
            "type": "message.output",
            "role": "assistant",
            "id": "msg_01",
            "model": MODEL,
            "agent_id": None,
            "created_at": "2026-11-29T05:00:02Z",
            "completed_at": "2026-11-29T05:00:04Z",
            "content": [
                {"type": "text", "text": "Le prix a été remis à Nihon Hidankyo à Oslo"},
                web(
                    "Prix Nobel de la paix 2024 – Wikipédia", "https://fr.wikipedia.org/wiki/Nobel"
                ),
                web("日本被団協 ノーベル平和賞", "https://www.nhk.or.jp/news/nobel"),
                {"type": "text", "text": ". Bravo 🕊️ !"},
                web("Nobel Prize 2024", "https://www.nobelprize.org/prizes/peace/2024/"),
            ],
        },
    ],
    "usage": {"prompt_tokens": 90, "completion_tokens": 40, "total_tokens": 130},
}


def chunk(delta: dict[str, Any], finish: str | None = None, **top: Any) -> dict[str, Any]:
    return {
        "id": "cmpl-7c1f",
        "object": "chat.completion.chunk",
        "model": top.get("model", MODEL),
        "created": 1764390000,
        **({"usage": top["usage"]} if "usage" in top else {}),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


CHAT_REFERENCES_STREAM = [
    chunk({"role": "assistant", "content": ""}),
    chunk({"content": FR[:31]}),
    chunk({"content": [{"type": "text", "text": FR[31:]}]}),
    chunk({"content": [{"type": "reference", "reference_ids": [0]}]}),
    chunk({"content": [{"type": "text", "text": ". 日本被"}]}),
    chunk({"content": [{"type": "text", "text": "団協は被爆者の団体です"}]}),
    chunk({"content": [{"type": "reference", "reference_ids": [0, 1]}]}),
    chunk({"content": [{"type": "text", "text": "。 🎉"}]}),
    chunk(
        {"content": ""},
        "stop",
        usage={"prompt_tokens": 412, "completion_tokens": 38, "total_tokens": 450},
    ),
]

MAGISTRAL = "magistral-medium-latest"


def thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": [{"type": "text", "text": text}]}


CHAT_THINKING_STREAM = [
    chunk({"role": "assistant", "content": [thinking("Je cherche ")]}, model=MAGISTRAL),
    chunk({"content": [thinking("la réponse… 🤔")]}, model=MAGISTRAL),
    chunk({"content": [{"type": "text", "text": "La capitale "}]}, model=MAGISTRAL),
    chunk({"content": "est Paris"}, model=MAGISTRAL),
    chunk({"content": [{"type": "reference", "reference_ids": ["doc-é"]}]}, model=MAGISTRAL),
    chunk({"content": [{"type": "text", "text": "."}]}, "stop", model=MAGISTRAL),
]

CHAT_STRING_STREAM = [
    chunk({"role": "assistant", "content": ""}, model="mistral-small-latest"),
    chunk({"content": "Bonjour ! "}, model="mistral-small-latest"),
    chunk({"content": "こんにちは 👋"}, model="mistral-small-latest"),
    chunk({"content": ""}, "stop", model="mistral-small-latest"),
]


def delta(content: Any, index: int = 1) -> dict[str, Any]:
    return {
        "type": "message.output.delta",
        "id": "msg_01",
        "output_index": index,
        "content_index": 0,
        "model": MODEL,
        "agent_id": None,
        "role": "assistant",
        "content": content,
    }


CONVERSATION_STREAM = [
    {"type": "conversation.response.started", "conversation_id": "conv_0196a8"},
    {
        "type": "tool.execution.started",
        "id": "tool_exec_01",
        "output_index": 0,
        "name": "web_search",
        "arguments": '{"query": "prix Nobel de la paix 2024"}',
    },
    {"type": "tool.execution.done", "id": "tool_exec_01", "output_index": 0, "name": "web_search"},
    delta("Le prix a été remis "),
    delta("à Nihon Hidankyo à Oslo"),
    delta(web("Prix Nobel de la paix 2024 – Wikipédia", "https://fr.wikipedia.org/wiki/Nobel")),
    delta(web("日本被団協 ノーベル平和賞", "https://www.nhk.or.jp/news/nobel")),
    delta(". Bravo 🕊️ !"),
    delta(web("Nobel Prize 2024", "https://www.nobelprize.org/prizes/peace/2024/")),
    {
        "type": "conversation.response.done",
        "usage": {"prompt_tokens": 90, "completion_tokens": 40, "total_tokens": 130},
    },
]


class TestMistralContract(ProviderContract):
    provider = "mistral"

    def final_cases(self) -> dict[str, Any]:
        return {
            "chat-references": CHAT_REFERENCES,
            "chat-thinking": CHAT_THINKING,
            "chat-string": CHAT_STRING,
            "conversation-web-search": CONVERSATION,
        }

    def stream_cases(self) -> dict[str, tuple[list[Any], Any]]:
        return {
            "chat-references": (CHAT_REFERENCES_STREAM, CHAT_REFERENCES),
            "chat-string": (CHAT_STRING_STREAM, CHAT_STRING),
            "chat-thinking": (CHAT_THINKING_STREAM, CHAT_THINKING),
            "conversation-web-search": (CONVERSATION_STREAM, CONVERSATION),
        }


# --- chat completions --------------------------------------------------------------------------


def test_a_list_content_keeps_its_text_and_cites_the_claims_before_the_references() -> None:
    answer = extract(CHAT_REFERENCES)
    assert answer.provider == "mistral"
    assert answer.text == FR + ". " + JA + "。 🎉"
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (0, 60, FR),
        (62, 76, JA),
    ]
    assert [c.source_ids for c in answer.citations] == [
        ["reference:0"],
        ["reference:0", "reference:1"],
    ]
    assert answer.diagnostics == []
    assert answer.extras == {"response_id": "cmpl-7c1f", "finish_reason": "stop"}


def test_reference_sources_are_documents_named_by_their_id_without_a_guessed_url() -> None:
    answer = extract(CHAT_REFERENCES)
    assert [(s.id, s.kind, s.provider_id, s.url, s.title) for s in answer.sources] == [
        ("reference:0", "document", "reference:0", None, None),
        ("reference:1", "document", "reference:1", None, None),
    ]
    assert answer.sources[0].extras == {"reference_id": 0}


def test_thinking_is_kept_apart_from_the_answer_text() -> None:
    answer = extract(CHAT_THINKING)
    assert answer.text == "La capitale est Paris."
    assert answer.extras["thinking"] == "Je cherche la réponse… 🤔"
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("La capitale est Paris", ["reference:doc-é"])
    ]
    assert answer.model == "magistral-medium-latest"


def test_a_claim_starts_after_the_reference_before_it_in_the_same_sentence() -> None:
    answer = extract(
        chat(
            [
                {"type": "text", "text": "Lyon est grande"},
                {"type": "reference", "reference_ids": [2]},
                {"type": "text", "text": " et Nice est ensoleillée"},
                {"type": "reference", "reference_ids": [3]},
                {"type": "text", "text": "."},
            ]
        )
    )
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("Lyon est grande", ["reference:2"]),
        ("et Nice est ensoleillée", ["reference:3"]),
    ]


def test_adjacent_references_are_one_citation() -> None:
    answer = extract(
        chat(
            [
                {"type": "text", "text": "Zürich liegt am See."},
                {"type": "reference", "reference_ids": [1]},
                {"type": "reference", "reference_ids": [4, 1]},
            ]
        )
    )
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("Zürich liegt am See.", ["reference:1", "reference:4"])
    ]


def test_a_reference_with_its_own_text_cites_that_text() -> None:
    answer = extract(
        chat(
            [
                {"type": "text", "text": "D'après le document, "},
                {"type": "reference", "reference_ids": [0], "text": "il fait 20 °C"},
                {"type": "text", "text": " en moyenne."},
            ]
        )
    )
    assert answer.text == "D'après le document, il fait 20 °C en moyenne."
    assert [(c.start, c.end, c.text) for c in answer.citations] == [(21, 34, "il fait 20 °C")]


def test_a_reference_before_any_text_is_left_uncited_and_said() -> None:
    answer = extract(
        chat([{"type": "reference", "reference_ids": [0]}, {"type": "text", "text": "…"}])
    )
    assert answer.citations == []
    assert any("no text before it" in d for d in answer.diagnostics)


def test_bad_reference_ids_and_unknown_chunks_are_said_and_kept() -> None:
    answer = extract(
        chat(
            [
                {"type": "text", "text": "Été."},
                {"type": "reference", "reference_ids": [True, None]},
                {"type": "image_url", "image_url": "https://example.org/a.png"},
                {"type": "hologram", "data": 1},
            ]
        )
    )
    assert answer.text == "Été."
    assert answer.citations == []
    assert answer.extras["content_chunks"] == [
        {"type": "image_url", "image_url": "https://example.org/a.png"},
        {"type": "hologram", "data": 1},
    ]
    assert len(answer.diagnostics) == 4  # two bad ids, no ids left, the unknown chunk


def test_detection_leaves_openai_and_perplexity_chat_completions_alone() -> None:
    openai = chat("Hello", model="gpt-4o")
    assert detect_provider(openai) == "openai"
    perplexity = {**chat("Paris [1].", model="sonar"), "citations": ["https://example.org"]}
    assert detect_provider(perplexity) == "perplexity"
    # A Mistral model named by a gateway (``mistralai/...``) is the gateway's answer.
    assert detect_provider(chat("Salut", model="mistralai/mistral-large")) == "openai"
    assert detect_provider(CHAT_STRING) == "mistral"
    assert detect_provider(chat([{"type": "text", "text": "x"}], model="anything")) == "mistral"


# --- conversations -----------------------------------------------------------------------------


def test_tool_references_are_web_sources_citing_the_text_before_them() -> None:
    answer = extract(CONVERSATION)
    first = "Le prix a été remis à Nihon Hidankyo à Oslo"
    assert answer.text == first + ". Bravo 🕊️ !"
    # "🕊️" is two code points (the dove and a variation selector).
    assert [(c.start, c.end, c.text) for c in answer.citations] == [
        (0, 43, first),
        (45, 55, "Bravo 🕊️ !"),
    ]
    assert [[answer.source(s).url for s in c.source_ids] for c in answer.citations] == [  # type: ignore[union-attr]
        ["https://fr.wikipedia.org/wiki/Nobel", "https://www.nhk.or.jp/news/nobel"],
        ["https://www.nobelprize.org/prizes/peace/2024/"],
    ]
    wiki = answer.sources[0]
    assert (wiki.kind, wiki.title) == ("web", "Prix Nobel de la paix 2024 – Wikipédia")
    assert wiki.extras["tool"] == "web_search"
    assert answer.extras["tool_calls"] == 1
    assert answer.extras["grounded_effective"] is True
    assert answer.extras["conversation_id"] == "conv_0196a8"


def test_a_conversation_stream_announces_its_citations_at_the_end() -> None:
    collector = StreamCollector()
    counts = [len(collector.feed(event)) for event in CONVERSATION_STREAM]
    assert counts[-1] == 2
    assert sum(counts) == 2


def test_sdk_envelopes_read_like_the_events() -> None:
    wrapped = [{"event": e["type"], "data": e} for e in CONVERSATION_STREAM]
    assert collect_stream(wrapped) == extract(CONVERSATION)
    chat_wrapped = [{"data": e} for e in CHAT_REFERENCES_STREAM]
    assert collect_stream(chat_wrapped) == extract(CHAT_REFERENCES)


def test_a_tool_reference_without_url_or_title_is_dropped_and_said() -> None:
    data = copy.deepcopy(CONVERSATION)
    data["outputs"][1]["content"][4] = {"type": "tool_reference", "tool": "web_search"}
    answer = extract(data)
    assert len(answer.citations) == 1
    assert any("without a url or a title" in d for d in answer.diagnostics)


def test_bare_content_chunks_in_place_of_events_keep_the_text_and_cite_nothing() -> None:
    # What LlamaIndex's MistralAI keeps as each streamed response's raw for a chunk-list delta.
    events = [
        CHAT_REFERENCES_STREAM[0],
        {"type": "text", "text": FR},
        {"type": "reference", "reference_ids": [0]},
        {"type": "text", "text": "."},
        chunk({"content": ""}, "stop"),
    ]
    answer = collect_stream(events)
    assert answer.provider == "mistral"
    assert answer.text == FR + "."
    assert answer.citations == []
    assert len(answer.diagnostics) == 1
    assert "3 stream event(s) were bare content chunks" in answer.diagnostics[0]


def test_references_inside_thinking_are_kept_uncited() -> None:
    seen = {
        "type": "tool_reference",
        "tool": "web_search",
        "title": "Météo",
        "url": "https://meteo.fr",
    }
    answer = extract(
        chat(
            [
                {"type": "thinking", "thinking": [{"type": "text", "text": "Hmm… "}, seen]},
                {"type": "text", "text": "Il pleut à Brest. ☔"},
            ],
            model=MAGISTRAL,
        )
    )
    assert answer.citations == []
    assert answer.sources == []
    assert answer.extras["thinking"] == "Hmm… "
    assert answer.extras["thinking_references"] == [seen]


def test_a_document_library_reference_is_a_document_and_grounds_the_answer() -> None:
    data = copy.deepcopy(CONVERSATION)
    data["outputs"][0]["name"] = "document_library"
    data["outputs"][1]["content"][4] = {
        "type": "tool_reference",
        "tool": "document_library",
        "title": "Rapport annuel 2025 – résumé.pdf",
    }
    answer = extract(data)
    last = answer.citations[-1]
    (source,) = [answer.source(sid) for sid in last.source_ids]
    assert source is not None
    assert (source.kind, source.title, source.url) == (
        "document",
        "Rapport annuel 2025 – résumé.pdf",
        None,
    )
    assert last.text == "Bravo 🕊️ !"
    assert answer.extras["grounded_effective"] is True


def test_cite_names_referenced_documents_by_the_reference_ids_the_request_gave() -> None:
    response = chat(
        [
            {"type": "text", "text": "Le Mont-Blanc culmine à 4 806 m."},
            {"type": "reference", "reference_ids": [1]},
            {"type": "text", "text": " 東京タワーは333メートルです。"},
            {"type": "reference", "reference_ids": [0]},
        ]
    )
    # The documents as the tool result handed them to the model, in Mistral's list form.
    tool_result = [
        {"reference_id": 0, "title": "東京タワー", "url": "https://ex.org/tokyo-tower"},
        {"reference_id": 1, "title": "Mont-Blanc", "url": "https://ex.org/mont-blanc"},
    ]
    answer = unicite.cite(response, sources=from_tool_output("search", tool_result))
    cited = [(c.text, [answer.source(sid).title for sid in c.source_ids]) for c in answer.citations]
    assert cited == [
        ("Le Mont-Blanc culmine à 4 806 m.", ["Mont-Blanc"]),
        ("東京タワーは333メートルです。", ["東京タワー"]),
    ]
    assert [s.url for s in answer.sources] == [
        "https://ex.org/mont-blanc",
        "https://ex.org/tokyo-tower",
    ]
    # Sources made by hand say their id in extras; an id no given source has stays as it was.
    given = [Source(title="Mont-Blanc", url="https://ex.org/mb", extras={"reference_id": "1"})]
    answer = unicite.cite(response, sources=given)
    assert [s.title or s.id for s in answer.sources] == ["Mont-Blanc", "reference:0"]
    assert answer.text == extract(response).text
