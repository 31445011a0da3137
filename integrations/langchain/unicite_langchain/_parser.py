"""`CitationOutputParser`: a model's text or message, cited by `unicite.cite`, as a chain step."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.messages import BaseMessage
from langchain_core.output_parsers import BaseOutputParser
from langchain_core.outputs import ChatGeneration, Generation
from langchain_core.runnables import RunnableConfig
from pydantic import ConfigDict, Field

from unicite import CitedAnswer, CitePolicy, MarkerStyle, Source, UsageError, cite
from unicite.sources import SourceLedger, as_source
from unicite_langchain._context import run_ledgers
from unicite_langchain._messages import from_ai_message
from unicite_langchain._options import citation_policy

__all__ = ["CitationOutputParser"]

# `sources` is the parser's own field (the sources shown), so the policy's is set through
# ``policy=``; the other policy fields are keywords of the parser too.
_POLICY_OPTIONS = frozenset(f.name for f in dataclasses.fields(CitePolicy)) - {
    "sources",
    "renumber",
    "on_invalid",
}


class CitationOutputParser(BaseOutputParser[CitedAnswer]):
    """Parse a model's answer into a `CitedAnswer`, cited by `unicite.cite`.

    The answer (text, or a message with the provider's native citations) is cited against
    ``sources`` when given, else against the sources a `CitationCallbackHandler` captured for
    the run so far (the numbers `number_sources` showed the model). Every `unicite.CitePolicy`
    field but ``sources`` is also a keyword (``CitationOutputParser(attribute="lexical")``).
    """

    sources: Sequence[Source | Mapping[str, Any]] | None = None
    """The sources the model was shown, in prompt order; None to use the run's ledger."""
    style: Literal["auto"] | MarkerStyle | None = None
    """Which markers to read (the policy's ``markers``); None for the policy's."""
    on_invalid: Literal["drop", "keep"] | None = None
    """What happens to markers naming no source; None for the policy's (``"drop"``)."""
    renumber: bool | None = None
    """Renumber sources in first-cited order; None for the policy's (on)."""
    policy: CitePolicy = Field(default_factory=CitePolicy)
    """The rest of the citation policy."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def __init__(self, **data: Any) -> None:
        """Build the parser; `CitePolicy` field names are folded into ``policy``."""
        options = {name: data.pop(name) for name in list(data) if name in _POLICY_OPTIONS}
        data["policy"] = citation_policy(data.pop("policy", None), options)
        super().__init__(**data)
        self._policy()

    @property
    def _type(self) -> str:
        return "unicite_citation"

    def _policy(self) -> CitePolicy:
        fields = {"markers": self.style, "on_invalid": self.on_invalid, "renumber": self.renumber}
        return self.policy.replace(**{k: v for k, v in fields.items() if v is not None})

    def _given(self) -> list[Source] | None:
        if self.sources is None:
            return None
        if isinstance(self.sources, (str, bytes)):
            raise UsageError("sources must be a list of sources")
        return [as_source(source) for source in self.sources]

    def _cite(
        self, answer: str | CitedAnswer, sources: list[Source] | SourceLedger | None
    ) -> CitedAnswer:
        return cite(answer, () if sources is None else sources, policy=self._policy())

    def parse(self, text: str) -> CitedAnswer:
        """Cite marker text against ``sources``."""
        if not isinstance(text, str):
            raise UsageError(f"expected text, got {type(text).__name__}")
        return self._cite(text, self._given())

    def parse_result(self, result: list[Generation], *, partial: bool = False) -> CitedAnswer:
        """Cite the first generation: its message (native citations and all), or its text."""
        if not result:
            raise UsageError("no generation to parse")
        return self._cite(_answer_of(result[0]), self._given())

    def invoke(
        self, input: str | BaseMessage, config: RunnableConfig | None = None, **kwargs: Any
    ) -> CitedAnswer:
        """Cite a model's text or message against the given sources, else the run's."""
        return self._call_with_config(self._run, input, config, run_type="parser")

    async def ainvoke(
        self,
        input: str | BaseMessage,
        config: RunnableConfig | None = None,
        **kwargs: Any | None,
    ) -> CitedAnswer:
        """`invoke`; citing is CPU-only, so it runs as is."""
        return await self._acall_with_config(self._arun, input, config, run_type="parser")

    async def _arun(
        self,
        input: str | BaseMessage,
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> CitedAnswer:
        return self._parse_input(input, run_manager.run_id, config)

    def _run(
        self,
        input: str | BaseMessage,
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> CitedAnswer:
        return self._parse_input(input, run_manager.run_id, config)

    def _parse_input(self, input: Any, run_id: Any, config: RunnableConfig) -> CitedAnswer:
        sources: list[Source] | SourceLedger | None = self._given()
        if sources is None:
            found = run_ledgers(config.get("callbacks"), run_id)
            sources = found[0][0] if found else None
        if isinstance(input, BaseMessage):
            return self._cite(from_ai_message(input), sources)
        if not isinstance(input, str):
            raise UsageError(f"expected text or a message, got {type(input).__name__}")
        return self._cite(input, sources)


def _answer_of(generation: Generation) -> str | CitedAnswer:
    if isinstance(generation, ChatGeneration):
        return from_ai_message(generation.message)
    return generation.text
