"""`generate_cited` and friends end to end through the real SDK clients, replayed from cassettes.

The cassettes (``cassettes/generation/test_generate_sdk/``) are hand-written in each provider's
documented response format. Every test also checks that the requests the SDK sent are, body for
body, the ones its cassette records (`Replay.check`), so a cassette cannot drift from what
unicite asks: the system rules, the numbered sources, the feedback of a retry, the documents.
Each test skips where its SDK is not installed (the core-only environment).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from unicite import GroundingRequiredError, Source
from unicite.generation import (
    CitedGeneration,
    Retry,
    agenerate_cited,
    generate_cited,
    stream_cited,
)

CASSETTES = Path(__file__).parents[2] / "cassettes" / "generation" / "test_generate_sdk"
ENVELOPE_KEYS = [
    "ok", "content", "format", "finished", "retries", "reason", "stats", "sources_used",
]  # fmt: skip

TOR = Source(
    id="tor",
    url="https://de.wikipedia.org/wiki/Brandenburger_Tor",
    title="Brandenburger Tor – Wikipedia",
    content=(
        "Das Brandenburger Tor in Berlin wurde von 1788 bis 1791 nach Plänen von Carl Gotthard "
        "Langhans errichtet."
    ),
)
KINKAKU = Source(
    id="kinkaku",
    url="https://ja.wikipedia.org/wiki/%E9%B9%BF%E8%8B%91%E5%AF%BA",
    title="鹿苑寺（金閣寺）",  # noqa: RUF001 (the Japanese title's own brackets)
    content="金閣寺は1397年に足利義満によって建てられた。1950年に焼失し、1955年に再建された。",
)
EIFFEL = Source(
    id="eiffel",
    url="https://www.toureiffel.paris/fr/le-monument/histoire",
    title="Histoire de la tour Eiffel",
    content="La tour Eiffel a été inaugurée le 31 mars 1889, pour l’Exposition universelle.",
)
MONUMENTS = [TOR, KINKAKU, EIFFEL]
QUESTION = "Quand ces trois monuments ont-ils été construits ?"


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def _missing(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is None
    except ModuleNotFoundError:  # its parent package is missing
        return True


def needs(*modules: str) -> pytest.MarkDecorator:
    """Skip unless vcrpy and `modules` are installed, before any fixture is set up.

    An ``importorskip`` in the test would come after the cassette is loaded, whose unplayed
    interactions then fail the conftest's check.
    """
    missing = [m for m in ("vcr", *modules) if _missing(m)]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


class Replay:
    """A test's cassette, and the JSON bodies of the requests the SDK sent through it."""

    def __init__(self, cassette: Any) -> None:
        self.cassette = cassette
        self.sent: list[Any] = []

    def check(self) -> list[Any]:
        """The bodies sent, once checked to be the cassette's, body for body, all of them."""
        recorded = [json.loads(request.body) for request in self.cassette.requests]
        assert self.sent == recorded
        assert self.cassette.all_played
        return self.sent


@pytest.fixture
def replay(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Replay:
    """The test's cassette, recording what the SDK sends (skips where vcrpy is missing)."""
    pytest.importorskip("vcr")
    replay = Replay(request.getfixturevalue("vcr"))
    play = replay.cassette.play_response

    def played(vcr_request: Any) -> Any:
        body = vcr_request.body
        replay.sent.append(json.loads(body.decode("utf-8") if isinstance(body, bytes) else body))
        return play(vcr_request)

    monkeypatch.setattr(replay.cassette, "play_response", played)
    return replay


def openai_client() -> Any:
    openai = pytest.importorskip("openai")
    return openai.OpenAI(api_key="sk-test", max_retries=0)


# --- OpenAI: an unknown source, fed back and fixed ------------------------------------------------


@needs("openai")
@pytest.mark.vcr
def test_openai_unknown_source_is_retried(replay: Replay) -> None:
    with openai_client() as client:
        result = generate_cited(client, QUESTION, MONUMENTS, model="gpt-4.1-mini")
    sent = replay.check()
    assert isinstance(result, CitedGeneration)
    assert (result.finished, result.retries, result.strategy) == (True, 1, "markers")
    assert result.stats.rounds == 2
    # Tokens are the sums of both rounds' usage.
    assert (result.stats.tokens_in, result.stats.tokens_out) == (412 + 538, 41 + 63)
    assert result.reason == ""  # finished: nothing is missing
    assert result.answer.diagnostics == [
        "round 1 was asked again: marker '[[S:9]]' at 97: source 9 out of range (3 sources given)"
    ]

    first, second = sent
    assert first["model"] == second["model"] == "gpt-4.1-mini"
    system, user = first["messages"]
    assert system["role"] == "system"
    assert "[[S:1,3]]" in system["content"]
    assert user["content"].startswith(QUESTION)
    assert f"[sid:2] {KINKAKU.title}\n金閣寺は1397年" in user["content"]
    assert second["messages"][0] == system  # the rules do not change
    retry = second["messages"][1]["content"]
    assert retry.startswith(user["content"] + "\n\nYour previous answer was:\n<<<\n")
    assert "Das Brandenburger Tor entstand 1788–1791 [[S:9]]." in retry
    assert "- marker '[[S:9]]' at 97: source 9 out of range (3 sources given)\n" in retry
    assert retry.endswith("Write the whole answer again, fixing them.")

    # Renumbered in first-cited order: Eiffel (3) becomes 1, the Tor (1) 2, Kinkaku-ji (2) 3.
    assert result.content == (
        "La tour Eiffel a été inaugurée le 31 mars 1889 [[S:1]]. Das Brandenburger Tor "
        "entstand 1788–1791 [[S:2]], 金閣寺は1397年に建てられた [[S:3]]."
    )
    assert [s.id for s in result.answer.sources] == ["eiffel", "tor", "kinkaku"]
    assert [c.source_ids for c in result.answer.citations] == [["eiffel"], ["tor"], ["kinkaku"]]
    assert [s.id for s in result.sources_used] == ["eiffel", "tor", "kinkaku"]
    envelope = result.envelope()
    assert list(envelope) == ENVELOPE_KEYS
    assert envelope["stats"] == {
        "rounds": 2,
        "validated": "citations",
        "citations": "present",
        "bytes": len(result.content.encode("utf-8")),
        "tokens_in": 950,
        "tokens_out": 104,
    }
    assert envelope["sources_used"][2] == {
        "sid": 3,
        "url": KINKAKU.url,
        "title": KINKAKU.title,
        "text": KINKAKU.content,
    }
    json.dumps(envelope, ensure_ascii=False)  # plain data


# --- Anthropic: the native citation API -----------------------------------------------------------

FUJI = Source(
    id="fuji",
    title="Le mont Fuji",
    url="https://fr.wikipedia.org/wiki/Mont_Fuji",
    content=(
        "Le mont Fuji culmine à 3 776 mètres. 富士山は日本で最も高い山です。"
        "Sa dernière éruption date de 1707."
    ),
)
ZUGSPITZE = Source(
    id="zugspitze",
    title="Zugspitze",
    url="https://de.wikipedia.org/wiki/Zugspitze",
    content="Die Zugspitze ist mit 2962 m ü. NHN der höchste Gipfel Deutschlands.",
)
SUMMITS = [FUJI, ZUGSPITZE]


def test_native_cassette_quotes_are_exact() -> None:
    """Each char_location of the native cassette quotes its document at its (exclusive) indices."""
    yaml = pytest.importorskip("yaml")
    path = CASSETTES / "test_anthropic_auto_picks_native_citations.yaml"
    [interaction] = yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]
    blocks = interaction["request"]["parsed_body"]["messages"][0]["content"]
    documents = [block["source"]["data"] for block in blocks if block["type"] == "document"]
    assert documents == [FUJI.content, ZUGSPITZE.content]
    quoted = [
        citation
        for block in interaction["response"]["parsed_body"]["content"]
        for citation in block.get("citations", ())
    ]
    assert [c["document_index"] for c in quoted] == [0, 0, 1]
    for citation in quoted:
        text = documents[citation["document_index"]]
        start, end = citation["start_char_index"], citation["end_char_index"]
        assert text[start:end] == citation["cited_text"]


@needs("anthropic")
@pytest.mark.vcr
def test_anthropic_auto_picks_native_citations(replay: Replay) -> None:
    anthropic = pytest.importorskip("anthropic")
    with anthropic.Anthropic(api_key="sk-ant-test", max_retries=0) as client:
        result = generate_cited(
            client, "Quelle est la hauteur de ces sommets ?", SUMMITS, model="claude-sonnet-4-6"
        )
    sent = replay.check()
    assert result.strategy == "native"
    [request] = sent
    assert request["model"] == "claude-sonnet-4-6"
    assert "Do not write citations" in request["system"]
    documents = request["messages"][0]["content"]
    assert [block["type"] for block in documents] == ["document", "document", "text"]
    assert [block["source"]["data"] for block in documents[:2]] == [FUJI.content, ZUGSPITZE.content]
    assert all(block["citations"] == {"enabled": True} for block in documents[:2])
    assert documents[2] == {"type": "text", "text": "Quelle est la hauteur de ces sommets ?"}

    assert (result.finished, result.retries, result.reason) == (True, 0, "")
    assert (result.stats.tokens_in, result.stats.tokens_out) == (1688, 87)
    assert result.stats.validated == "citations"
    # document_index 0 is FUJI, 1 is ZUGSPITZE: the citations name the sources given.
    assert [c.source_ids for c in result.answer.citations] == [["fuji"], ["fuji"], ["zugspitze"]]
    assert [c.quote for c in result.answer.citations] == [
        "Le mont Fuji culmine à 3 776 mètres. ",
        "富士山は日本で最も高い山です。",
        ZUGSPITZE.content,
    ]
    assert [s.id for s in result.sources_used] == ["fuji", "zugspitze"]
    # The provider writes no markers: one is injected right at the end of each cited span.
    assert result.content == (
        "Selon vos documents, le mont Fuji culmine à 3 776 mètres[[S:1]] — "
        "c’est le plus haut sommet du Japon[[S:1]] ; "
        "die Zugspitze ist mit 2962 m der höchste Gipfel Deutschlands[[S:2]]."
    )
    for citation in result.answer.citations:
        assert result.answer.text[citation.start : citation.end] == citation.text
    envelope = result.envelope()
    assert list(envelope) == ENVELOPE_KEYS
    assert [(e["sid"], e["title"]) for e in envelope["sources_used"]] == [
        (1, "Le mont Fuji"),
        (2, "Zugspitze"),
    ]


# --- Gemini: a JSON document with a sidecar and a schema ------------------------------------------

SUMMIT_SCHEMA = {
    "type": "object",
    "properties": {
        "gipfel": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "höhe": {"type": "string"},
                    "land": {"type": "string"},
                },
                "required": ["name", "höhe", "land"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["gipfel"],
    "additionalProperties": False,
}


@pytest.fixture
def genai(monkeypatch: pytest.MonkeyPatch) -> Any:
    module = pytest.importorskip("google.genai")
    # As in test_chat_models: google-genai on httpx (it prefers httpx2 when that is installed).
    monkeypatch.setenv("GOOGLE_GENAI_HTTP_CLIENT", "httpx")
    return module


@needs("google.genai", "jsonschema")
@pytest.mark.vcr
def test_gemini_json_with_schema(genai: Any, replay: Replay) -> None:
    client = genai.Client(api_key="test")
    result = generate_cited(
        client,
        "Liste die Gipfel mit Höhe und Land auf.",
        SUMMITS,
        format="json",
        schema=SUMMIT_SCHEMA,
        model="gemini-2.5-flash",
    )
    sent = replay.check()
    [request] = sent
    system = request["systemInstruction"]["parts"][0]["text"]
    assert "Reply with one JSON document only" in system
    assert json.dumps(SUMMIT_SCHEMA, ensure_ascii=False) in system
    assert request["contents"][0]["parts"][0]["text"].startswith(
        "Liste die Gipfel mit Höhe und Land auf.\n\nSources:\n\n[sid:1] Le mont Fuji\n"
    )

    assert (result.finished, result.retries, result.strategy) == (True, 0, "markers")
    assert result.stats.validated == "both"
    assert (result.stats.tokens_in, result.stats.tokens_out) == (702, 96 + 388)
    assert result.document == {
        "gipfel": [
            {"name": "Zugspitze", "höhe": "2962 m", "land": "Deutschland"},
            {"name": "富士山 (Fuji)", "höhe": "3 776 m", "land": "Japan"},
        ]
    }
    content = json.loads(result.content)
    assert {k: v for k, v in content.items() if k != "_citations"} == result.document
    # The model cited [2] first: in the content the Zugspitze is source 1, Fuji source 2.
    assert content["_citations"] == [
        {"path": "/gipfel/0/höhe", "sids": [1]},
        {"path": "/gipfel/0/land", "sids": [1]},
        {"path": "/gipfel/1/höhe", "sids": [2]},
    ]
    assert [s.id for s in result.answer.sources] == ["zugspitze", "fuji"]
    assert [c.text for c in result.answer.citations] == ["2962 m", "Deutschland", "3 776 m"]
    assert [s.id for s in result.sources_used] == ["zugspitze", "fuji"]
    assert [e["sid"] for e in result.envelope()["sources_used"]] == [1, 2]


# --- OpenAI streaming -----------------------------------------------------------------------------


@needs("openai")
@pytest.mark.vcr
def test_openai_stream_cited(replay: Replay) -> None:
    with openai_client() as client:
        items = list(stream_cited(client, QUESTION, MONUMENTS, model="gpt-4.1-mini"))
    sent = replay.check()
    [request] = sent
    assert (request["stream"], request["stream_options"]) == (True, {"include_usage": True})
    *pieces, result = items
    assert not any(isinstance(piece, Retry) for piece in items)  # one round
    deltas = [piece for piece in pieces if isinstance(piece, str)]
    assert deltas == pieces
    assert isinstance(result, CitedGeneration)
    assert "".join(deltas) == result.content
    # The model's "[[S:" + "3]]", split over two chunks, is shown whole and renumbered: no
    # delta holds part of a marker.
    assert all(d.count("[[S:") == d.count("]]") for d in deltas)
    assert any(d.startswith(" [[S:1]].") for d in deltas)
    assert result.content == (
        "La tour Eiffel a été inaugurée en 1889 [[S:1]]. "
        "Das Brandenburger Tor wurde 1788–1791 errichtet [[S:2]]. "
        "金閣寺は1397年に建てられ、1955年に再建された [[S:3]]."
    )
    assert (result.finished, result.retries) == (True, 0)
    assert (result.stats.tokens_in, result.stats.tokens_out) == (412, 72)
    assert [s.id for s in result.sources_used] == ["eiffel", "tor", "kinkaku"]


# --- Anthropic async, markers forced --------------------------------------------------------------


@needs("anthropic")
@pytest.mark.vcr
def test_anthropic_async_markers(replay: Replay) -> None:
    anthropic = pytest.importorskip("anthropic")

    async def call() -> CitedGeneration:
        async with anthropic.AsyncAnthropic(api_key="sk-ant-test", max_retries=0) as client:
            return await agenerate_cited(
                client,
                "Quelle est la hauteur de ces sommets ?",
                SUMMITS,
                strategy="markers",
                model="claude-sonnet-4-6",
            )

    result = run(call())
    sent = replay.check()
    [request] = sent
    assert "[[S:1,3]]" in request["system"]
    assert isinstance(request["messages"][0]["content"], str)  # no documents: markers
    assert "[sid:2] Zugspitze\n" in request["messages"][0]["content"]
    assert result.strategy == "markers"
    assert (result.finished, result.retries, result.reason) == (True, 0, "")
    assert (result.stats.tokens_in, result.stats.tokens_out) == (725, 58)
    assert result.content == (
        "Die Zugspitze ist mit 2962 m der höchste Gipfel Deutschlands [[S:1]]. "
        "Le mont Fuji culmine à 3 776 mètres ; 富士山は日本で最も高い山です [[S:2]]."
    )
    assert [s.id for s in result.sources_used] == ["zugspitze", "fuji"]


# --- A model that never cites ---------------------------------------------------------------------


@needs("openai")
@pytest.mark.vcr
def test_openai_never_cites(replay: Replay) -> None:
    with openai_client() as client:
        result = generate_cited(client, QUESTION, MONUMENTS, model="gpt-4.1-mini", max_retries=2)
    sent = replay.check()
    assert len(sent) == 3
    assert all("the answer cites no source" in body["messages"][1]["content"] for body in sent[1:])
    assert result.finished is False
    assert (result.retries, result.stats.rounds) == (2, 3)
    assert "cites no source" in result.reason
    assert result.stats.citations == "missing"
    assert result.stats.validated == "none"
    assert result.answer.citations == []
    assert result.sources_used == []
    assert result.content == (  # the last round's answer, as written
        "La porte de Brandebourg (1788–1791), le Kinkaku-ji (1397) et la tour Eiffel (1889) : "
        "trois monuments de trois siècles différents."
    )
    assert (result.stats.tokens_in, result.stats.tokens_out) == (412 + 498 + 529, 38 + 36 + 37)
    envelope = result.envelope()
    assert (envelope["finished"], envelope["sources_used"]) == (False, [])


@needs("openai")
@pytest.mark.vcr
def test_openai_never_cites_raises(replay: Replay) -> None:
    with (
        openai_client() as client,
        pytest.raises(GroundingRequiredError, match="cites no source") as caught,
    ):
        generate_cited(client, QUESTION, MONUMENTS, model="gpt-4.1-mini", require="raise")
    sent = replay.check()
    assert len(sent) == 3
    assert caught.value.provider == "openai"
    assert "after 3 round(s)" in str(caught.value)
    assert caught.value.answer is not None
    assert caught.value.answer.citations == []
