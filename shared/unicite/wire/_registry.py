"""The wire protocols by name."""

from __future__ import annotations

from typing import Literal

from unicite._marks import check_choice
from unicite.wire._openai import OpenAIProtocol
from unicite.wire._openwebui import OpenWebUIProtocol
from unicite.wire._protocol import Protocol
from unicite.wire._unicite import UniciteProtocol
from unicite.wire._vercel import VercelProtocol

__all__ = ["PROTOCOLS", "WireProtocol", "protocol_named"]

WireProtocol = Literal["unicite", "vercel", "openwebui", "openai"]
"""The protocols `unicite.wire` speaks."""

PROTOCOLS: dict[str, Protocol] = {
    "unicite": UniciteProtocol(),
    "vercel": VercelProtocol(),
    "openwebui": OpenWebUIProtocol(),
    "openai": OpenAIProtocol(),
}


def protocol_named(name: object) -> Protocol:
    """The protocol called ``name``.

    Raises:
        UsageError: No protocol has that name.
    """
    check_choice("protocol", name, tuple(PROTOCOLS))
    return PROTOCOLS[str(name)]
