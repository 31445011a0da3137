"""What a model can do for citations, and what kind of llm an object is (recognised duck-typed).

`llm_kind` tells a LangChain chat model, a LlamaIndex LLM, an OpenAI, Anthropic or google-genai
client (alone or as a ``(client, "model")`` tuple) and a plain callable apart by class names and
attributes, as `extract` reads SDK objects: no framework and no SDK is imported. `capabilities`
answers, per provider and model family, seed 000's ``supportsCitations``; its table is data
(`FAMILIES`): a new family is one more row.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from unicite.exceptions import UsageError

__all__ = ["FAMILIES", "Capabilities", "Family", "LLMKind", "capabilities", "llm_kind"]

Kind = Literal["openai", "anthropic", "gemini", "langchain", "llamaindex", "callable"]

ACCEPTED = (
    "a LangChain chat model, a LlamaIndex LLM, an openai.OpenAI / anthropic.Anthropic / "
    "google.genai.Client (or async) client with model=..., a (client, 'model-name') tuple, "
    "or a callable str -> str (sync or async)"
)
"""What `llm_kind` takes, for error messages."""


@dataclass(frozen=True)
class LLMKind:
    """What kind of llm an object is, as `llm_kind` recognised it."""

    kind: Kind
    """How unicite talks to it: the SDK client, the framework's model, or a callable."""
    vendor: str | None
    """The provider answering (``openai``, ``anthropic``, ``gemini``, ``perplexity``, ``xai``...);
    None when unknown (a callable, a framework model of a class unicite does not know)."""
    model: str | None
    """The model name: given, from the tuple, or read from the framework model."""
    target: object
    """The client, framework model or callable itself (a tuple's first item)."""
    async_only: bool = False
    """Only async calls work: ``AsyncOpenAI``, ``AsyncAnthropic``, ``client.aio``, ``async def``."""
    class_name: str = ""
    """The object's class name (the wrapped model's, for a framework ``RunnableBinding``)."""
    base_url: str | None = None
    """The OpenAI client's base URL, when it is not OpenAI's own."""


_OPENAI_CLIENTS = frozenset({"OpenAI", "AsyncOpenAI", "AzureOpenAI", "AsyncAzureOpenAI"})
_ANTHROPIC_CLIENTS = frozenset(
    {
        "Anthropic",
        "AsyncAnthropic",
        "AnthropicBedrock",
        "AsyncAnthropicBedrock",
        "AnthropicVertex",
        "AsyncAnthropicVertex",
        "AnthropicFoundry",
        "AsyncAnthropicFoundry",
    }
)
_GEMINI_CLIENTS = frozenset({"Client", "AsyncClient"})

_LANGCHAIN_VENDORS: dict[str, str | None] = {
    "ChatAnthropic": "anthropic",
    "ChatAnthropicVertex": "anthropic",
    "ChatBedrockConverse": "bedrock",
    "ChatOpenAI": "openai",
    "AzureChatOpenAI": "openai",
    "ChatGoogleGenerativeAI": "gemini",
    "ChatVertexAI": "gemini",
    "ChatPerplexity": "perplexity",
    "ChatMistralAI": "mistral",
    "ChatXAI": "xai",
}
"""LangChain chat model classes → the provider answering (None: depends on the model)."""

_LLAMAINDEX_VENDORS: dict[str, str | None] = {
    "Anthropic": "anthropic",
    "OpenAI": "openai",
    "AzureOpenAI": "openai",
    "OpenAIResponses": "openai",
    "GoogleGenAI": "gemini",
    "Gemini": "gemini",
    "Vertex": "gemini",
    "Perplexity": "perplexity",
    "BedrockConverse": "bedrock",
    "MistralAI": "mistral",
}
"""LlamaIndex LLM classes → the provider answering."""


def _mro(obj: object) -> list[type]:
    return list(type(obj).__mro__)


def _module(cls: type) -> str:
    return getattr(cls, "__module__", "") or ""


def _is_langchain_model(obj: object) -> bool:
    return any(
        cls.__name__ in ("BaseChatModel", "BaseLLM") and _module(cls).startswith("langchain")
        for cls in _mro(obj)
    )


def _langchain_inner(obj: object) -> object | None:
    """The chat model inside a LangChain ``RunnableBinding`` (``model.bind(...)``), if any."""
    seen = 0
    while seen < 8 and not _is_langchain_model(obj):
        if not _module(type(obj)).startswith("langchain"):
            return None
        inner = getattr(obj, "bound", None)
        if inner is None:
            return None
        obj, seen = inner, seen + 1
    return obj if _is_langchain_model(obj) else None


def _is_llamaindex_llm(obj: object) -> bool:
    return any(
        cls.__name__ == "BaseLLM" and _module(cls).startswith("llama_index") for cls in _mro(obj)
    )


def _sdk_client(obj: object, package: str, names: frozenset[str]) -> bool:
    cls = type(obj)
    module = _module(cls)
    return cls.__name__ in names and (module == package or module.startswith(package + "."))


def _known_class(obj: object, table: Mapping[str, str | None]) -> str:
    """The first class of `obj`'s MRO named in `table`, else its own class name."""
    for cls in _mro(obj):
        if cls.__name__ in table:
            return cls.__name__
    return type(obj).__name__


def _text_attr(obj: object, *names: str) -> str | None:
    for name in names:
        try:
            value = getattr(obj, name, None)
        except Exception:  # a property that raises: not this one
            value = None
        if isinstance(value, str) and value:
            return value
    return None


def _framework_model(obj: object, kind: Kind) -> str | None:
    if kind == "llamaindex":
        try:
            metadata = getattr(obj, "metadata", None)
        except Exception:
            metadata = None
        name = _text_attr(metadata, "model_name") if metadata is not None else None
        if name and name != "unknown":
            return name
    return _text_attr(obj, "model_name", "model", "model_id")


def _openai_base_url(client: object) -> str | None:
    base = getattr(client, "base_url", None)
    return str(base) if base is not None else None


def _openai_vendor(base_url: str | None) -> str:
    """Who answers an OpenAI client (or ``ChatOpenAI``) at `base_url`: Perplexity, xAI or OpenAI."""
    host = (urlsplit(base_url).hostname or "") if base_url else ""
    if host == "perplexity.ai" or host.endswith(".perplexity.ai"):
        return "perplexity"
    if host == "x.ai" or host.endswith(".x.ai"):
        return "xai"
    return "openai"


def llm_kind(llm: object, *, model: str | None = None) -> LLMKind:
    """Recognise what kind of llm `llm` is, duck-typed (no framework or SDK imported).

    Args:
        llm: A LangChain chat model (or a ``RunnableBinding`` of one), a LlamaIndex LLM, an
            ``openai.OpenAI`` / ``anthropic.Anthropic`` / ``google.genai.Client`` client or
            their async twins, a ``(client, "model-name")`` tuple, or a callable ``str -> str``.
        model: The model name (for SDK clients; for frameworks and callables, a label that
            overrides the name read from the object).

    Raises:
        UsageError: `llm` is none of these, `model` is not a string, or a tuple's model
            disagrees with ``model=``.
    """
    if model is not None and not isinstance(model, str):
        raise UsageError(f"model must be a string, got {type(model).__name__}")
    if isinstance(llm, tuple):
        if len(llm) != 2 or not isinstance(llm[1], str) or isinstance(llm[0], tuple):
            raise UsageError(
                "an llm tuple must be (client, 'model-name'), got a tuple of "
                f"{', '.join(type(item).__name__ for item in llm) or 'nothing'}"
            )
        client, named = llm
        if model is not None and model != named:
            raise UsageError(f"model={model!r} disagrees with the tuple's model {named!r}")
        return llm_kind(client, model=named)
    cls_name = type(llm).__name__
    inner = _langchain_inner(llm)
    if inner is not None:
        name = _known_class(inner, _LANGCHAIN_VENDORS)
        vendor = _LANGCHAIN_VENDORS.get(name)
        if vendor == "openai":
            vendor = _openai_vendor(_text_attr(inner, "openai_api_base"))
        return LLMKind(
            "langchain",
            vendor,
            model or _framework_model(inner, "langchain"),
            llm,
            class_name=name,
        )
    if _is_llamaindex_llm(llm):
        name = _known_class(llm, _LLAMAINDEX_VENDORS)
        return LLMKind(
            "llamaindex",
            _LLAMAINDEX_VENDORS.get(name),
            model or _framework_model(llm, "llamaindex"),
            llm,
            class_name=name,
        )
    if _sdk_client(llm, "openai", _OPENAI_CLIENTS):
        base = _openai_base_url(llm)
        return LLMKind(
            "openai",
            _openai_vendor(base),
            model,
            llm,
            async_only=cls_name.startswith("Async"),
            class_name=cls_name,
            base_url=base,
        )
    if _sdk_client(llm, "anthropic", _ANTHROPIC_CLIENTS):
        return LLMKind(
            "anthropic",
            "anthropic",
            model,
            llm,
            async_only=cls_name.startswith("Async"),
            class_name=cls_name,
        )
    if _sdk_client(llm, "google.genai", _GEMINI_CLIENTS):
        return LLMKind(
            "gemini",
            "gemini",
            model,
            llm,
            async_only=cls_name == "AsyncClient",
            class_name=cls_name,
        )
    if callable(llm) and not isinstance(llm, type):
        return LLMKind(
            "callable", None, model, llm, async_only=_is_async_callable(llm), class_name=cls_name
        )
    raise UsageError(f"cannot use a {cls_name} as an llm: expected {ACCEPTED}")


def _is_async_callable(fn: object) -> bool:
    while hasattr(fn, "func") and not inspect.isfunction(fn):  # functools.partial
        fn = fn.func
    if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
        return True
    call = inspect.getattr_static(fn, "__call__", None)  # an instance with an async __call__
    return inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call)


# --- capabilities --------------------------------------------------------------------------


@dataclass(frozen=True)
class Capabilities:
    """What a model offers for citations (seed 000's ``supportsCitations``).

    Attributes:
        provider: The provider answering: ``openai``, ``anthropic``, ``gemini``,
            ``perplexity``; ``langchain`` / ``llamaindex`` for a framework model of a class
            unicite does not know, ``callable`` for a plain function.
        model: The model name, when known.
        native_citations: The provider cites documents you give it, itself, and unicite's
            native path (``generate_cited(strategy="native")``) can use it through this llm.
        grounding: The model can ground answers in a search it runs (web search tool, Google
            Search, Sonar), with citations `extract` reads.
        streaming_citations: Those citations also arrive while streaming.
        notes: How, and any caveat, in words.
    """

    provider: str
    model: str | None
    native_citations: bool
    grounding: bool
    streaming_citations: bool
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Family:
    """One row of the capability table: a provider's models whose name matches `pattern`."""

    provider: str
    pattern: str
    """A regular expression searched in the lower-cased model name; ``""`` matches any."""
    native_citations: bool
    grounding: bool
    streaming_citations: bool
    note: str

    def matches(self, model: str | None) -> bool:
        """Whether this row describes `model` (a row with an empty pattern describes any)."""
        if not self.pattern:
            return True
        return model is not None and re.search(self.pattern, model.lower()) is not None


_CLAUDE = (
    "Claude 3.5+ / 4: cites documents and search results given to it (citations API: "
    "char, page, content-block and search-result locations), web_search server tool, "
    "citations_delta events while streaming"
)
_OPENAI_TOOL = (
    "no citations for documents you give it; grounding through the Responses API web_search "
    "tool (url_citation annotations, streamed as response.output_text.annotation.added)"
)
_GEMINI = (
    "no citations for documents you give it (File Search stores only); Google Search "
    "grounding (google_search tool) with groundingMetadata supports, also on the last stream "
    "chunks"
)
_GROK_TOOLS = (
    "Agent Tools API (Responses web_search / x_search): url_citation annotations titled with "
    "the number of the inline [[n]](url) link they enclose and a citations list of every URL "
    "met, read when a stream ends; no citations for documents you give it"
)
_SONAR = (
    "Sonar: every answer is web-grounded; citations and search_results with [n] markers, "
    "also in stream chunks; no citations for documents you give it"
)

_MISTRAL = (
    "cites documents given to it with reference ids (reference chunks naming them; the "
    "documents' titles and URLs stay the caller's), grounds through the Agents / Conversations "
    "web_search connector (tool_reference chunks with URLs); both also streamed, read when the "
    "stream ends"
)

_BEDROCK_CLAUDE = (
    "Claude 3.5+ / 4 on Bedrock Converse: cites documents (document blocks with citations "
    "enabled: char, page and chunk locations) and search results (searchResult blocks) given "
    "to it, as citationsContent blocks; citation deltas while streaming; no web search tool"
)
_NOVA = (
    "Nova 2 / Nova Premier: web grounding through the nova_grounding system tool (web "
    "citations with url and domain, after the text they support; US regions); no citations "
    "for documents you give it"
)

FAMILIES: tuple[Family, ...] = (
    # Anthropic: the citations API and the web_search tool came with Claude 3.5; Claude 3
    # Haiku (and the retired Claude 3 Opus/Sonnet, Claude 2, Instant) have neither.
    Family(
        "anthropic", r"claude-(instant|2)|claude-3-(haiku|opus|sonnet)", False, False, False,
        "Claude 3 Haiku and older: no citations API, no web search tool",
    ),
    Family("anthropic", r"claude", True, True, True, _CLAUDE),
    Family("anthropic", "", True, True, True, _CLAUDE),
    # OpenAI: search models always search (Chat Completions url_citation annotations); the
    # Responses web_search tool takes GPT-4o, GPT-4.1 (not nano), o3, o4-mini and GPT-5.
    Family(
        "openai", r"search-preview|search-api", False, True, True,
        "Chat Completions search model: every answer is web-grounded, url_citation "
        "annotations (also in stream chunks); no citations for documents you give it",
    ),
    Family(
        "openai", r"gpt-4\.1-nano", False, False, False,
        "no web search tool for gpt-4.1-nano; no citations for documents you give it",
    ),
    Family("openai", r"^(gpt-5|gpt-4\.1|gpt-4o|o3|o4-mini)", False, True, True, _OPENAI_TOOL),
    Family(
        "openai", "", False, False, False,
        "no web search known for this model; no citations for documents you give it",
    ),
    Family("perplexity", "", False, True, True, _SONAR),
    # xAI: server-side search tools (the Agent Tools API) from Grok 4; the older Live Search
    # (search_parameters on Chat Completions) answers 410 since its deprecation.
    Family("xai", r"^grok-[4-9]", False, True, True, _GROK_TOOLS),
    Family(
        "xai", "", False, False, False,
        "Grok before Grok 4: no server-side search tools (Live Search is deprecated); no "
        "citations for documents you give it",
    ),
    # Gemini: Google Search grounding from 1.5 (google_search_retrieval) and 2.0 on.
    Family(
        "gemini", r"gemini-1\.0|gemini-pro$|gemma", False, False, False,
        "no Google Search grounding for this model; no citations for documents you give it",
    ),
    Family("gemini", "", False, True, True, _GEMINI),
    # AWS Bedrock Converse: Claude 3.5+ cites documents and search results given to it; Nova 2
    # and Nova Premier ground in a web search (the nova_grounding system tool).
    Family(
        "bedrock", r"claude-(instant|v2)|claude-3-(haiku|opus|sonnet)", False, False, False,
        "Claude 3 Haiku and older on Bedrock: no citations",
    ),
    Family("bedrock", r"anthropic\.claude", True, False, True, _BEDROCK_CLAUDE),
    Family("bedrock", r"nova-(2|premier)", False, True, True, _NOVA),
    Family(
        "bedrock", "", False, False, False,
        "no citations known for this model on Bedrock Converse",
    ),
    # Mistral: the chat models cite documents handed to them with reference ids (reference
    # chunks); the Agents / Conversations web_search connector grounds in a web search
    # (tool_reference chunks). Code, maths and speech models are not trained to cite.
    Family(
        "mistral", r"codestral|devstral|mathstral|voxtral|open-(mistral-7b|mixtral)", False,
        False, False,
        "no citations known for this Mistral model (code, speech or legacy open model)",
    ),
    Family("mistral", r"", True, True, True, _MISTRAL),
)  # fmt: skip
"""The capability table, first matching row per provider wins; extend it with more rows."""

_AZURE_CLASSES = frozenset({"AzureOpenAI", "AsyncAzureOpenAI", "AzureChatOpenAI"})
"""Azure OpenAI clients and framework models (the SDK's, LangChain's, LlamaIndex's)."""
_ON_YOUR_DATA = (
    "Azure OpenAI On Your Data (data_sources in the request, any chat deployment) cites the "
    "retrieved documents with [docN] markers, which extract reads (also streamed); a request "
    "option, not a model capability, so the flags above do not count it; LangChain's "
    "AzureChatOpenAI drops the documents"
)

_NATIVE_THROUGH = {"anthropic": ("anthropic", "langchain")}
"""Kinds of llm through which unicite's native path reaches a provider's document citations:
the Anthropic client itself, or LangChain's ``ChatAnthropic``."""


def _family(provider: str, model: str | None) -> Family | None:
    return next((f for f in FAMILIES if f.provider == provider and f.matches(model)), None)


def capabilities(llm: object, model: str | None = None) -> Capabilities:
    """What `llm` offers for citations: native document citations, grounding, streaming.

    Per provider and model family (the rows of `FAMILIES`, first match wins):

    - **Anthropic** Claude 3.5+ / 4: native citations of given documents and search results
      (True), web search grounding (True), citations while streaming (True, ``citations_delta``).
      Claude 3 Haiku and older: none.
    - **OpenAI**: no native citations of given documents (False); grounding (True) for the
      search models (``gpt-4o-search-preview``, ``gpt-4o-mini-search-preview``) and for models
      that take the Responses ``web_search`` tool (GPT-4o, GPT-4.1, o3, o4-mini, GPT-5);
      ``url_citation`` annotations while streaming (True).
    - **Gemini**: no native citations of given documents (False); Google Search grounding
      (True) with grounding metadata while streaming (True).
    - **Perplexity** Sonar (an OpenAI client whose ``base_url`` is Perplexity's): grounding
      (True), citations while streaming (True).
    - **xAI** Grok 4 and later (an OpenAI client, or ``ChatOpenAI``, whose ``base_url`` is
      ``api.x.ai``; LangChain's ``ChatXAI``): grounding through the Agent Tools API's
      ``web_search`` / ``x_search`` (True), citations while streaming (True, read when the
      stream ends); older Grok models: none (Live Search is deprecated).
    - **Azure OpenAI** clients and framework models (``AzureOpenAI``, ``AzureChatOpenAI``)
      answer like OpenAI's models; a note adds that On Your Data (``data_sources`` in the
      request) cites its retrieved documents with ``[docN]`` markers `extract` reads.
    - **AWS Bedrock** Converse (model ids as Bedrock names them, inference profiles
      included): Claude 3.5+ / 4 cite documents and search results given to them (True; the
      native path does not reach them: False through any llm), no web search (False),
      citation deltas while streaming (True); Nova 2 and Nova Premier ground in a web search
      (True). Other models: none.
    - **Mistral** (LangChain's ``ChatMistralAI``, LlamaIndex's ``MistralAI``): the chat models
      cite documents given to them with reference ids (True; the native path does not reach
      them: False through any llm), ground through the Conversations ``web_search``
      connector (True), citations while streaming (True, read when the stream ends); Codestral,
      Devstral, Mathstral, Voxtral and the legacy open models: none.
    - **LangChain / LlamaIndex** models answer like the provider of the wrapped class
      (``ChatAnthropic``, ``ChatOpenAI``, ``ChatGoogleGenerativeAI``; LlamaIndex ``Anthropic``,
      ``OpenAI``, ``GoogleGenAI``); unknown classes, and **callables**, offer nothing (False).

    ``native_citations`` also says whether unicite's native path reaches the API through this
    llm: the Anthropic client and LangChain's ``ChatAnthropic`` do; LlamaIndex's ``Anthropic``
    does not (a note says so), and the answer is then False.

    Args:
        llm: Anything `llm_kind` recognises.
        model: The model name, for SDK clients (a tuple's model also counts).

    Raises:
        UsageError: `llm` is not an llm unicite knows.
    """
    kind = llm_kind(llm, model=model)
    notes: list[str] = []
    if kind.kind in ("langchain", "llamaindex"):
        frame = "LangChain" if kind.kind == "langchain" else "LlamaIndex"
        notes.append(f"through {frame} {kind.class_name}")
    provider = kind.vendor
    if provider is None:
        who = "a callable" if kind.kind == "callable" else f"{kind.class_name}"
        notes.append(f"{who}: provider unknown, no citation support assumed")
        return Capabilities(kind.kind, kind.model, False, False, False, tuple(notes))
    if kind.kind == "openai" and provider == "openai" and kind.base_url:
        host = urlsplit(kind.base_url).hostname or ""
        if host != "api.openai.com" and not host.endswith(".openai.azure.com"):
            notes.append(
                f"OpenAI-compatible server at {host or kind.base_url}: its citation support "
                "is unknown, none assumed"
            )
            return Capabilities(provider, kind.model, False, False, False, tuple(notes))
    family = _family(provider, kind.model)
    if family is None:  # a provider with no row: nothing known
        notes.append(f"no capability row for {provider}")
        return Capabilities(provider, kind.model, False, False, False, tuple(notes))
    if kind.model is None:
        notes.append("no model given: the provider's current models are assumed")
    notes.append(family.note)
    if kind.class_name in _AZURE_CLASSES:
        notes.append(_ON_YOUR_DATA)
    native = family.native_citations
    if native and kind.kind not in _NATIVE_THROUGH.get(provider, ()):
        native = False
        notes.append(
            f"unicite's native path does not reach {provider}'s citations through "
            f"{kind.class_name}: markers are used (pass the SDK client for native citations)"
        )
    return Capabilities(
        provider, kind.model, native, family.grounding, family.streaming_citations, tuple(notes)
    )
