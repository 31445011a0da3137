"""The provider registry: which readers `extract` and `collect_stream` consult, in what order."""

from __future__ import annotations

import threading

from unicite.exceptions import UsageError
from unicite.providers._base import Provider
from unicite.providers.anthropic import ANTHROPIC
from unicite.providers.azure import AZURE_ON_YOUR_DATA
from unicite.providers.bedrock import BEDROCK_CONVERSE
from unicite.providers.bedrock_kb import BEDROCK_KNOWLEDGE_BASES
from unicite.providers.cohere import COHERE
from unicite.providers.gemini import GEMINI
from unicite.providers.mistral import MISTRAL
from unicite.providers.openai import OPENAI_CHAT, OPENAI_RESPONSES, XAI_CHAT, XAI_RESPONSES
from unicite.providers.perplexity import PERPLEXITY

__all__ = ["BUILTIN_PROVIDERS", "register", "registered", "unregister"]

BUILTIN_PROVIDERS: tuple[Provider, ...] = (
    XAI_RESPONSES,
    OPENAI_RESPONSES,
    XAI_CHAT,
    PERPLEXITY,
    AZURE_ON_YOUR_DATA,
    MISTRAL,
    OPENAI_CHAT,
    ANTHROPIC,
    GEMINI,
    COHERE,
    BEDROCK_CONVERSE,
    BEDROCK_KNOWLEDGE_BASES,
)
"""The built-in readers, in their detection order."""

_lock = threading.Lock()
_providers: tuple[Provider, ...] = ()
"""Registered readers in detection order; replaced whole, so readers need no lock."""


def _key(provider: Provider) -> tuple[str, str | None]:
    return provider.name.lower(), provider.api


def register(provider: Provider, *, before: str | None = None) -> None:
    """Register a provider reader with `extract`, `collect_stream` and detection.

    Detection asks each registered reader in turn and the first that recognises the data reads
    it. The order is deterministic:

    1. the built-in readers, registered at import in this order: xAI Responses, OpenAI
       Responses, xAI Chat Completions, Perplexity, Azure OpenAI On Your Data, Mistral,
       OpenAI Chat Completions, Anthropic, Gemini, Cohere, Bedrock Converse, Bedrock
       Knowledge Bases (xAI before OpenAI and Perplexity: its answers are theirs with a Grok
       model or a ``citations`` list; Perplexity, Azure On Your Data and Mistral before Chat
       Completions: their answers are Chat Completions with extra fields, or with content
       chunks and a Mistral model);
    2. then the providers the application registers, in the order it registers them.

    A provider whose ``name`` and ``api`` (case-insensitive name) equal a registered reader's
    replaces it where it stands, so a subclass of a built-in reader takes its place in the
    order. ``before`` places a new provider just ahead of the first reader named so instead
    of last: for a shape a registered reader would also claim, as a gateway answering in
    Chat Completions shape with extra fields (``before="openai"``). ``extract(provider=name)``
    asks only the readers of that name, in this order.

    Args:
        provider: A `Provider` instance with a non-empty ``name``.
        before: The name of a registered provider to consult this one ahead of.

    Raises:
        UsageError: ``provider`` is not a `Provider`, has no name, or ``before`` names no
            registered provider.
    """
    global _providers
    if not isinstance(provider, Provider):
        raise UsageError(f"register expects a Provider, got {type(provider).__name__}")
    name = getattr(provider, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise UsageError(f"{type(provider).__name__} has no name to register under")
    if before is not None and not isinstance(before, str):
        raise UsageError(f"before must be a provider name, got {type(before).__name__}")
    key = _key(provider)
    with _lock:
        providers = list(_providers)
        for n, existing in enumerate(providers):
            if _key(existing) == key:
                providers[n] = provider
                _providers = tuple(providers)
                return
        if before is None:
            providers.append(provider)
        else:
            target = before.lower()
            at = next((n for n, p in enumerate(providers) if p.name.lower() == target), None)
            if at is None:
                raise UsageError(f"before={before!r} names no registered provider")
            providers.insert(at, provider)
        _providers = tuple(providers)


def unregister(provider: str | Provider) -> tuple[Provider, ...]:
    """Remove readers from the registry; return those removed (none when nothing matched).

    A name removes every reader of that name (both OpenAI readers for ``"openai"``); a
    `Provider` removes the reader with its ``name`` and ``api``. A built-in reader removed can
    be registered again (it then comes last unless ``before`` says otherwise).

    Raises:
        UsageError: ``provider`` is neither a name nor a `Provider`.
    """
    global _providers
    if isinstance(provider, Provider):
        key = _key(provider)

        def matches(p: Provider) -> bool:
            return _key(p) == key

    elif isinstance(provider, str):
        name = provider.lower()

        def matches(p: Provider) -> bool:
            return p.name.lower() == name

    else:
        raise UsageError(f"unregister expects a name or a Provider, got {type(provider).__name__}")
    with _lock:
        removed = tuple(p for p in _providers if matches(p))
        _providers = tuple(p for p in _providers if not matches(p))
    return removed


def registered() -> tuple[Provider, ...]:
    """The registered readers, in detection order."""
    return _providers


def _register_builtins() -> None:
    for provider in BUILTIN_PROVIDERS:
        register(provider)


_register_builtins()
