"""`as_chat_model`: every kind of llm through complete, acomplete, stream, astream and native.

SDK clients are the real ones, replayed from hand-written cassettes in each provider's documented
response format (JSON and SSE, with usage). LangChain runs its own fake chat model, LlamaIndex
its ``MockLLM`` and a small ``CustomLLM``. Everything that needs a package skips without it, so
the callable and error tests run in the core-only environment too.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from unicite import Source, UsageError
from unicite.generation import ChatModel, Reply, as_chat_model
from unicite.providers import extract

SYSTEM = "Réponds en une phrase."


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def drain(pieces: Iterator[str | Reply]) -> tuple[list[str], Reply]:
    """The deltas of a stream and its final Reply; checks there is exactly one, last."""
    items = list(pieces)
    *deltas, final = items
    assert all(isinstance(d, str) for d in deltas), items
    assert isinstance(final, Reply)
    assert final.text == "".join(deltas)  # type: ignore[arg-type]
    return deltas, final  # type: ignore[return-value]


def adrain(pieces: AsyncIterator[str | Reply]) -> tuple[list[str], Reply]:
    async def collect() -> list[str | Reply]:
        return [item async for item in pieces]

    return drain(iter(run(collect())))


# --- callables -----------------------------------------------------------------------------


def test_callable_gets_system_and_prompt() -> None:
    seen: list[str] = []

    def llm(prompt: str) -> str:
        seen.append(prompt)
        return "Réponse : 東京 🗼"

    model = as_chat_model(llm, model="mon-modèle")
    assert isinstance(model, ChatModel)
    assert (model.provider, model.model, model.native_citations) == (
        "callable",
        "mon-modèle",
        False,
    )
    reply = model.complete(SYSTEM, "Où est la tour ?")
    assert reply == Reply("Réponse : 東京 🗼")
    assert model.complete("", "seul").text == "Réponse : 東京 🗼"
    assert seen == [f"{SYSTEM}\n\nOù est la tour ?", "seul"]
    # Without a stream of its own, a callable streams its whole answer as one delta.
    assert drain(model.stream(SYSTEM, "q")) == (["Réponse : 東京 🗼"], Reply("Réponse : 東京 🗼"))
    assert run(model.acomplete(SYSTEM, "q")) == Reply("Réponse : 東京 🗼")
    assert adrain(model.astream(SYSTEM, "q"))[1].text == "Réponse : 東京 🗼"
    assert as_chat_model(model) is model


def test_callable_returning_an_iterator_streams() -> None:
    def llm(prompt: str) -> Iterator[str]:
        yield from ["Ça ", "", "marche ", "✓"]

    model = as_chat_model(llm)
    assert drain(model.stream(SYSTEM, "q")) == (["Ça ", "marche ", "✓"], Reply("Ça marche ✓"))
    assert model.complete(SYSTEM, "q").text == "Ça marche ✓"
    deltas, final = adrain(model.astream(SYSTEM, "q"))
    assert (deltas, final.text) == (["Ça ", "marche ", "✓"], "Ça marche ✓")
    assert run(model.acomplete(SYSTEM, "q")).text == "Ça marche ✓"


def test_async_callables() -> None:
    async def answer(prompt: str) -> str:
        await asyncio.sleep(0)
        return f"«{prompt[-3:]}»"

    async def pieces(prompt: str) -> AsyncIterator[str]:
        for piece in ("ä", "ß", "ç"):
            yield piece

    model = as_chat_model(answer)
    assert run(model.acomplete(SYSTEM, "abc")).text == "«abc»"
    assert adrain(model.astream(SYSTEM, "abc")) == (["«abc»"], Reply("«abc»"))
    streamed = as_chat_model(pieces)
    assert adrain(streamed.astream(SYSTEM, "q")) == (["ä", "ß", "ç"], Reply("äßç"))
    assert run(streamed.acomplete(SYSTEM, "q")).text == "äßç"
    for chat in (model, streamed):
        with pytest.raises(UsageError, match="async-only"):
            chat.complete(SYSTEM, "q")
        with pytest.raises(UsageError, match="async-only"):
            chat.stream(SYSTEM, "q")


def test_sync_callable_returning_a_coroutine_is_refused_in_sync_calls() -> None:
    async def answer(prompt: str) -> str:
        return "x"

    model = as_chat_model(lambda prompt: answer(prompt))
    with pytest.raises(UsageError, match="async-only"):
        model.complete(SYSTEM, "q")
    assert run(model.acomplete(SYSTEM, "q")).text == "x"


def test_callable_returning_something_else() -> None:
    model = as_chat_model(lambda prompt: 42)
    with pytest.raises(UsageError, match="must return a str"):
        model.complete(SYSTEM, "q")
    streamed = as_chat_model(lambda prompt: iter(["ok", 3]))
    with pytest.raises(UsageError, match="streamed a int"):
        drain(streamed.stream(SYSTEM, "q"))


def test_callable_has_no_native_citations() -> None:
    model = as_chat_model(lambda prompt: "x")
    with pytest.raises(UsageError, match="has no native citation API"):
        model.complete_native(SYSTEM, "q", [Source(id="a", content="texte")])
    with pytest.raises(UsageError, match="has no native citation API"):
        run(model.acomplete_native(SYSTEM, "q", [Source(id="a", content="texte")]))


def test_errors_of_the_callable_propagate() -> None:
    def broken(prompt: str) -> str:
        raise RuntimeError("quota dépassé")

    with pytest.raises(RuntimeError, match="quota dépassé"):
        as_chat_model(broken).complete(SYSTEM, "q")
    with pytest.raises(RuntimeError, match="quota dépassé"):
        run(as_chat_model(broken).acomplete(SYSTEM, "q"))


@pytest.mark.parametrize("llm", [object(), "gpt-4o", 42, None, str])
def test_unknown_objects_are_refused(llm: object) -> None:
    with pytest.raises(UsageError, match="LangChain chat model, a LlamaIndex LLM"):
        as_chat_model(llm)


def test_bad_tuples_and_models() -> None:
    with pytest.raises(UsageError, match=r"\(client, 'model-name'\)"):
        as_chat_model((lambda p: p, 3))
    with pytest.raises(UsageError, match="disagrees"):
        as_chat_model((lambda p: p, "a"), model="b")
    with pytest.raises(UsageError, match="model must be a string"):
        as_chat_model(lambda p: p, model=3)  # type: ignore[arg-type]


# --- LangChain -----------------------------------------------------------------------------


def fake_chat_model(*replies: Any) -> Any:
    fakes = pytest.importorskip("langchain_core.language_models.fake_chat_models")
    return fakes.GenericFakeChatModel(messages=iter(replies))


def ai_message(text: str, tokens: tuple[int, int]) -> Any:
    messages = pytest.importorskip("langchain_core.messages")
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1], "total_tokens": sum(tokens)}
    return messages.AIMessage(content=text, usage_metadata=usage)


def test_langchain_chat_model() -> None:
    llm = fake_chat_model(
        ai_message("Le Mont-Blanc culmine à 4 806 m 🏔️.", (21, 13)),
        ai_message("Der Rhein ist 1 233 km lang.", (8, 9)),
    )
    model = as_chat_model(llm)
    assert (model.provider, model.model, model.native_citations) == ("langchain", None, False)
    reply = model.complete(SYSTEM, "Mont-Blanc ?")
    assert (reply.text, reply.tokens_in, reply.tokens_out) == (
        "Le Mont-Blanc culmine à 4 806 m 🏔️.",
        21,
        13,
    )
    assert reply.raw.content == reply.text
    reply = run(model.acomplete(SYSTEM, "Rhein ?"))
    assert (reply.text, reply.tokens_in, reply.tokens_out) == ("Der Rhein ist 1 233 km lang.", 8, 9)


def test_langchain_streams() -> None:
    llm = fake_chat_model("Ça coule de source 💧", "日本 の 山")
    model = as_chat_model(llm, model="fake")
    assert model.model == "fake"
    deltas, final = drain(model.stream(SYSTEM, "q"))
    assert deltas == ["Ça", " ", "coule", " ", "de", " ", "source", " ", "💧"]
    assert (final.text, final.tokens_in, final.tokens_out) == ("Ça coule de source 💧", None, None)
    assert final.raw.content == "Ça coule de source 💧"  # LangChain's merge of the chunks
    deltas, final = adrain(model.astream(SYSTEM, "q"))
    assert (deltas, final.text) == (["日本", " ", "の", " ", "山"], "日本 の 山")


def test_langchain_stream_usage_is_summed_over_chunks() -> None:
    fakes = pytest.importorskip("langchain_core.language_models.fake_chat_models")
    messages = pytest.importorskip("langchain_core.messages")
    outputs = pytest.importorskip("langchain_core.outputs")

    class Counted(fakes.GenericFakeChatModel):  # type: ignore[misc,name-defined]
        def _stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
            for n, text in enumerate(["Olá ", "mundo"]):
                usage = {"input_tokens": 5 if n == 0 else 0, "output_tokens": 1, "total_tokens": 1}
                chunk = messages.AIMessageChunk(content=text, usage_metadata=usage)
                yield outputs.ChatGenerationChunk(message=chunk)

    model = as_chat_model(Counted(messages=iter([])))
    deltas, final = drain(model.stream("", "q"))
    assert (deltas, final.tokens_in, final.tokens_out) == (["Olá ", "mundo"], 5, 2)
    assert final.raw.usage_metadata["output_tokens"] == 2


def test_langchain_fake_model_has_no_native_citations() -> None:
    model = as_chat_model(fake_chat_model("x"))
    with pytest.raises(UsageError, match="LangChain GenericFakeChatModel has no native citation"):
        model.complete_native(SYSTEM, "q", [Source(id="a", content="texte")])


# --- LlamaIndex ----------------------------------------------------------------------------


def test_llamaindex_mock_llm() -> None:
    llms = pytest.importorskip("llama_index.core.llms")
    model = as_chat_model(llms.MockLLM(max_tokens=3))
    assert (model.provider, model.native_citations) == ("llamaindex", False)
    assert model.complete(SYSTEM, "q").text == "text text text"
    assert run(model.acomplete(SYSTEM, "q")).text == "text text text"
    deltas, final = drain(model.stream(SYSTEM, "q"))
    assert (deltas, final.text) == (["text ", "text ", "text"], "text text text")
    deltas, final = adrain(model.astream(SYSTEM, "q"))
    assert (deltas, final.text) == (["text ", "text ", "text"], "text text text")


def echo_llm() -> Any:
    """A LlamaIndex LLM that echoes its prompt and reports usage in an OpenAI-shaped raw."""
    custom = pytest.importorskip("llama_index.core.llms.custom")
    llms = pytest.importorskip("llama_index.core.llms")

    class Echo(custom.CustomLLM):  # type: ignore[misc,name-defined]
        @property
        def metadata(self) -> Any:
            return llms.LLMMetadata(model_name="écho-1")

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            usage = {"prompt_tokens": len(prompt), "completion_tokens": 2}
            return llms.CompletionResponse(text=f"écho: {prompt[-6:]}", raw={"usage": usage})

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            def pieces() -> Iterator[Any]:
                text = ""
                for piece in ("éc", "ho ", "✓"):
                    text += piece
                    yield llms.CompletionResponse(text=text, delta=piece)

            return pieces()

    return Echo()


def test_llamaindex_custom_llm_with_usage() -> None:
    model = as_chat_model(echo_llm())
    assert model.model == "écho-1"
    reply = model.complete(SYSTEM, "Grüß Gott")
    assert reply.text.startswith("écho: ")
    assert SYSTEM not in reply.text  # the system message went in as a message, not by hand
    assert reply.tokens_out == 2
    assert reply.tokens_in is not None
    assert reply.tokens_in > len("Grüß Gott")
    reply = run(model.acomplete(SYSTEM, "Grüß Gott"))
    assert reply.tokens_out == 2
    assert drain(model.stream(SYSTEM, "q"))[0] == ["éc", "ho ", "✓"]
    assert adrain(model.astream(SYSTEM, "q"))[1].text == "écho ✓"


# --- OpenAI --------------------------------------------------------------------------------

OA_PROMPT = "Quelle est la hauteur du mont Fuji (富士山) ?"
OA_TEXT = "Le mont Fuji (富士山) culmine à 3 776 mètres 🗻."
OA_DELTAS = ["Le mont Fuji ", "(富士山) culmine ", "à 3 776 mètres 🗻."]


def openai_sdk() -> Any:
    return pytest.importorskip("openai")


def check_openai(reply: Reply, deltas: list[str], streamed: Reply) -> None:
    assert (reply.text, reply.tokens_in, reply.tokens_out) == (OA_TEXT, 27, 19)
    assert reply.raw.id == "chatcmpl-Cx3kF9mQ2vT7rLpW4nZ8aY1bE6sD"
    assert deltas == OA_DELTAS
    assert (streamed.text, streamed.tokens_in, streamed.tokens_out) == (OA_TEXT, 27, 19)
    assert [chunk.object for chunk in streamed.raw] == ["chat.completion.chunk"] * 6


@pytest.mark.vcr
def test_openai_sync_client() -> None:
    openai = openai_sdk()
    with openai.OpenAI(api_key="mock-api-key") as client:
        model = as_chat_model(client, model="gpt-4o-mini")
        assert (model.provider, model.model, model.native_citations) == (
            "openai",
            "gpt-4o-mini",
            False,
        )
        reply = model.complete(SYSTEM, OA_PROMPT)
        deltas, streamed = drain(model.stream(SYSTEM, OA_PROMPT))
    check_openai(reply, deltas, streamed)


@pytest.mark.vcr
def test_openai_async_client() -> None:
    openai = openai_sdk()

    async def calls() -> tuple[Reply, list[str | Reply]]:
        async with openai.AsyncOpenAI(api_key="mock-api-key") as client:
            model = as_chat_model((client, "gpt-4o-mini"))
            reply = await model.acomplete(SYSTEM, OA_PROMPT)
            return reply, [item async for item in model.astream(SYSTEM, OA_PROMPT)]

    reply, items = run(calls())
    check_openai(reply, *drain(iter(items)))


@pytest.mark.vcr
def test_openai_sync_client_through_async_calls() -> None:
    openai = openai_sdk()
    with openai.OpenAI(api_key="mock-api-key") as client:
        model = as_chat_model(client, model="gpt-4o-mini")
        reply = run(model.acomplete(SYSTEM, OA_PROMPT))
        deltas, streamed = adrain(model.astream(SYSTEM, OA_PROMPT))
    check_openai(reply, deltas, streamed)


@pytest.mark.vcr
def test_openai_errors_propagate() -> None:
    openai = openai_sdk()
    with openai.OpenAI(api_key="mock-api-key", max_retries=0) as client:
        model = as_chat_model(client, model="gpt-4o-mini")
        with pytest.raises(openai.AuthenticationError, match="Incorrect API key"):
            model.complete(SYSTEM, OA_PROMPT)


def test_openai_client_needs_a_model_and_async_one_needs_async_calls() -> None:
    openai = openai_sdk()
    client = openai.OpenAI(api_key="mock-api-key")
    with pytest.raises(UsageError, match=r"OpenAI client needs a model: pass model="):
        as_chat_model(client)
    model = as_chat_model(openai.AsyncOpenAI(api_key="mock-api-key"), model="gpt-4o-mini")
    with pytest.raises(UsageError, match="AsyncOpenAI client is async-only"):
        model.complete(SYSTEM, "q")
    with pytest.raises(UsageError, match="async-only"):
        model.stream(SYSTEM, "q")
    with pytest.raises(UsageError, match="has no native citation API"):
        model.complete_native(SYSTEM, "q", [Source(id="a", content="x")])


# --- Anthropic -----------------------------------------------------------------------------

AN_PROMPT = "Quel est le plus haut sommet d’Afrique ?"
AN_TEXT = "Le Kilimandjaro culmine à 5 895 m — c’est le toit de l’Afrique 🌍."
KYOTO = "Le Kinkaku-ji, le pavillon d’or, date de 1397. 金閣寺は京都にあります。"
NARA = "Le Tōdai-ji abrite un grand Bouddha en bronze de 15 mètres."
NATIVE_PROMPT = "Que disent ces notes de voyage sur Kyoto et Nara ?"
NATIVE_TEXT = (
    "D’après vos notes :\n\nle pavillon d’or date de 1397 et se trouve à Kyoto (金閣寺) ; "
    "à Nara, le Tōdai-ji abrite un Bouddha en bronze de 15 mètres."
)
SOURCES = [
    Source(id="kyoto", title="Notes sur Kyoto", url="https://example.org/kyoto", content=KYOTO),
    Source(id="nara", title="Guide de Nara", snippet=NARA),
]


def anthropic_sdk() -> Any:
    return pytest.importorskip("anthropic")


def check_anthropic(reply: Reply, deltas: list[str], streamed: Reply) -> None:
    assert (reply.text, reply.tokens_in, reply.tokens_out) == (AN_TEXT, 31, 24)
    assert reply.raw.id == "msg_01Hq7vXo3Rk9TbLm2NwYc5Pd"
    assert deltas == ["Le Kilimandjaro culmine", " à 5 895 m — c’est le toit", " de l’Afrique 🌍."]
    assert (streamed.text, streamed.tokens_in, streamed.tokens_out) == (AN_TEXT, 31, 24)
    assert [event.type for event in streamed.raw][:2] == ["message_start", "content_block_start"]


@pytest.mark.vcr
def test_anthropic_sync_client() -> None:
    anthropic = anthropic_sdk()
    with anthropic.Anthropic(api_key="mock-api-key") as client:
        model = as_chat_model(client, model="claude-sonnet-4-6")
        assert (model.provider, model.native_citations) == ("anthropic", True)
        reply = model.complete(SYSTEM, AN_PROMPT)
        deltas, streamed = drain(model.stream(SYSTEM, AN_PROMPT))
    check_anthropic(reply, deltas, streamed)


@pytest.mark.vcr
def test_anthropic_async_client() -> None:
    anthropic = anthropic_sdk()

    async def calls() -> tuple[Reply, list[str | Reply]]:
        async with anthropic.AsyncAnthropic(api_key="mock-api-key") as client:
            model = as_chat_model(client, model="claude-sonnet-4-6")
            with pytest.raises(UsageError, match="AsyncAnthropic client is async-only"):
                model.complete(SYSTEM, AN_PROMPT)
            with pytest.raises(UsageError, match="async-only"):
                model.complete_native(SYSTEM, AN_PROMPT, SOURCES)
            reply = await model.acomplete(SYSTEM, AN_PROMPT)
            return reply, [item async for item in model.astream(SYSTEM, AN_PROMPT)]

    reply, items = run(calls())
    check_anthropic(reply, *drain(iter(items)))


def check_native(reply: Reply) -> None:
    assert (reply.text, reply.tokens_in, reply.tokens_out) == (NATIVE_TEXT, 1522, 61)
    answer = extract(reply.raw, strict=True)
    assert answer.provider == "anthropic"
    assert answer.text == NATIVE_TEXT
    # document_index i is sources[i]: the documents went in the order given.
    cited = [
        (c.text, [s.provider_id or s.id for s in answer.sources if s.id in c.source_ids])
        for c in answer.citations
    ]
    assert [text for text, _ in cited] == [
        "le pavillon d’or date de 1397",
        "et se trouve à Kyoto (金閣寺)",
        "le Tōdai-ji abrite un Bouddha en bronze de 15 mètres",
    ]
    titles = [[s.title for s in answer.sources if s.id in c.source_ids] for c in answer.citations]
    assert titles == [["Notes sur Kyoto"], ["Notes sur Kyoto"], ["Guide de Nara"]]
    assert [c.quote for c in answer.citations] == [
        KYOTO[:47],
        KYOTO[47:],
        NARA,
    ]
    assert {s.id for s in answer.sources} == {"document:0", "document:1"}


@pytest.mark.vcr
def test_anthropic_complete_native() -> None:
    anthropic = anthropic_sdk()
    with anthropic.Anthropic(api_key="mock-api-key") as client:
        model = as_chat_model((client, "claude-sonnet-4-6"))
        reply = model.complete_native(SYSTEM, NATIVE_PROMPT, SOURCES)
        check_native(reply)
        assert isinstance(reply.raw, anthropic.types.Message)
        # The sync client through the async call runs in a thread.
        check_native(run(model.acomplete_native(SYSTEM, NATIVE_PROMPT, SOURCES)))


@pytest.mark.vcr
def test_anthropic_async_client_native() -> None:
    anthropic = anthropic_sdk()

    async def call() -> Reply:
        async with anthropic.AsyncAnthropic(api_key="mock-api-key") as client:
            model = as_chat_model(client, model="claude-sonnet-4-6")
            return await model.acomplete_native(SYSTEM, NATIVE_PROMPT, SOURCES)

    check_native(run(call()))


def test_native_sources_need_text() -> None:
    anthropic = anthropic_sdk()
    model = as_chat_model(anthropic.Anthropic(api_key="mock-api-key"), model="claude-sonnet-4-6")
    with pytest.raises(UsageError, match="'bare' has no content or snippet"):
        model.complete_native(SYSTEM, "q", [Source(id="bare", url="https://example.org/")])


@pytest.mark.vcr
def test_langchain_chat_anthropic_native() -> None:
    pytest.importorskip("anthropic")
    langchain_anthropic = pytest.importorskip("langchain_anthropic")
    llm = langchain_anthropic.ChatAnthropic(
        model="claude-sonnet-4-6", api_key="mock-api-key", max_tokens=4096, max_retries=0
    )
    model = as_chat_model(llm)
    assert (model.provider, model.model, model.native_citations) == (
        "langchain",
        "claude-sonnet-4-6",
        True,
    )
    reply = model.complete_native(SYSTEM, NATIVE_PROMPT, SOURCES)
    check_native(reply)
    assert reply.raw["id"] == "msg_01Fz4pWc8Ks2YdRn6TqJb3Lv"


# --- Gemini --------------------------------------------------------------------------------

GM_PROMPT = "Wie hoch ist die Zugspitze?"
GM_TEXT = "Die Zugspitze ist mit 2 962 m Deutschlands höchster Berg 🏔️."
GM_DELTAS = ["Die Zugspitze ist mit ", "2 962 m Deutschlands ", "höchster Berg 🏔️."]


@pytest.fixture
def genai(monkeypatch: pytest.MonkeyPatch) -> Any:
    module = pytest.importorskip("google.genai")
    # google-genai prefers httpx2 when it is installed, and vcrpy patches httpx and aiohttp only.
    monkeypatch.setenv("GOOGLE_GENAI_HTTP_CLIENT", "httpx")
    return module


def gemini_client(genai: Any) -> Any:
    return genai.Client(api_key=os.getenv("GEMINI_API_KEY", "mock-api-key"))


def check_gemini(reply: Reply, deltas: list[str], streamed: Reply) -> None:
    # Completion tokens count the thinking too (17 + 81), as OpenAI's and Anthropic's do.
    assert (reply.text, reply.tokens_in, reply.tokens_out) == (GM_TEXT, 14, 98)
    assert reply.raw.response_id == "kA2oZ-7TLuOZ1MkP9sXc4Qk"
    assert deltas == GM_DELTAS
    assert (streamed.text, streamed.tokens_in, streamed.tokens_out) == (GM_TEXT, 14, 98)
    assert len(streamed.raw) == 3


@pytest.mark.vcr
def test_gemini_client(genai: Any) -> None:
    model = as_chat_model(gemini_client(genai), model="gemini-2.5-flash")
    assert (model.provider, model.native_citations) == ("gemini", False)
    reply = model.complete(SYSTEM, GM_PROMPT)
    check_gemini(reply, *drain(model.stream(SYSTEM, GM_PROMPT)))


# google-genai subclasses aiohttp.ClientSession, which aiohttp deprecates.
@pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning")
@pytest.mark.vcr
def test_gemini_async(genai: Any) -> None:
    client = gemini_client(genai)
    model = as_chat_model(client, model="gemini-2.5-flash")  # the async calls use client.aio
    aio = as_chat_model((client.aio, "gemini-2.5-flash"))
    with pytest.raises(UsageError, match="AsyncClient is async-only"):
        aio.complete(SYSTEM, GM_PROMPT)
    reply = run(model.acomplete(SYSTEM, GM_PROMPT))
    check_gemini(reply, *adrain(aio.astream(SYSTEM, GM_PROMPT)))


def test_gemini_has_no_native_citations(genai: Any) -> None:
    model = as_chat_model(gemini_client(genai), model="gemini-2.5-flash")
    with pytest.raises(UsageError, match="has no native citation API"):
        model.complete_native(SYSTEM, "q", SOURCES)
