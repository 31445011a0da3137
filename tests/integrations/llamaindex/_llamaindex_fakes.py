"""Offline stand-ins for LlamaIndex tests: a deterministic embedding and a scripted LLM."""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import Sequence
from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from llama_index.core.llms.callbacks import llm_completion_callback
from llama_index.core.schema import BaseNode, TextNode

_WORD = re.compile(r"\w{4,}", re.UNICODE)


class HashEmbedding(BaseEmbedding):
    """Bag-of-words vectors from hashed words: similar texts get similar vectors, offline."""

    dim: int = 64

    @classmethod
    def class_name(cls) -> str:
        return "HashEmbedding"

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self.dim
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            vector[int.from_bytes(digest, "big") % self.dim] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)


class ScriptedLLM(CustomLLM):
    """Answers with scripted text (streamed a few characters at a time when asked).

    ``rules`` map a piece of prompt to the reply for prompts containing it; other prompts get
    ``reply``.
    """

    reply: str = ""
    rules: dict[str, str] = Field(default_factory=dict)
    chunk: int = Field(default=3, description="Characters per streamed token.")
    chat_model: bool = Field(default=False, description="Report itself as a chat model.")
    _prompts: list[str] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted", is_chat_model=self.chat_model)

    @property
    def prompts(self) -> list[str]:
        with self._lock:
            return list(self._prompts)

    def _record(self, prompt: str) -> str:
        with self._lock:
            self._prompts.append(prompt)
        return next((r for key, r in self.rules.items() if key in prompt), self.reply)

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self._record(prompt))

    @llm_completion_callback()
    def stream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseGen:
        reply, size = self._record(prompt), self.chunk

        def gen() -> CompletionResponseGen:
            text = ""
            for start in range(0, len(reply), size):
                delta = reply[start : start + size]
                text += delta
                yield CompletionResponse(text=text, delta=delta)

        return gen()


def build_index(nodes: Sequence[BaseNode]) -> VectorStoreIndex:
    """A vector index over `nodes` with the offline embedding."""
    return VectorStoreIndex(list(nodes), embed_model=HashEmbedding())


CORPUS: tuple[tuple[str, str, str, str], ...] = (
    (
        "msm-marees",
        "https://www.ot-montsaintmichel.com/decouvrir/les-marees",
        "Les marées – Office de tourisme du Mont-Saint-Michel",
        "Les marées de la baie du Mont-Saint-Michel comptent parmi les plus fortes d’Europe "
        "continentale : l’écart entre basse et haute mer atteint jusqu’à 14 mètres lors des "
        "grandes marées.",
    ),
    (
        "msm-abbaye",
        "https://fr.wikipedia.org/wiki/Abbaye_du_Mont-Saint-Michel",
        "Abbaye du Mont-Saint-Michel — Wikipédia",
        "L’abbaye bénédictine a été fondée en 966, à la demande du duc de Normandie "
        "Richard Ier ; la « Merveille » fut bâtie au XIIIe siècle.",
    ),
    (
        "msm-pont",
        "https://www.bay-mont-saint-michel.fr/pont-passerelle",
        "Le pont-passerelle",
        "Le pont-passerelle, ouvert en 2014, a remplacé la digue-route de 1879 afin que la "
        "mer entoure de nouveau le Mont lors des grandes marées.",
    ),
    (
        "msm-habitants",
        "https://www.insee.fr/fr/statistiques/mont-saint-michel",
        "Le Mont-Saint-Michel — Insee",
        "La commune du Mont-Saint-Michel compte une trentaine d’habitants permanents, pour "
        "près de trois millions de visiteurs par an.",
    ),
)
"""Four passages about the Mont-Saint-Michel: (node id, URL, title, text)."""


def corpus_nodes(**metadata: Any) -> list[TextNode]:
    """The corpus as text nodes with URL and title metadata (`metadata` overrides both)."""
    return [
        TextNode(id_=node_id, text=text, metadata={"url": url, "title": title, **metadata})
        for node_id, url, title, text in CORPUS
    ]


def moved_nodes() -> list[TextNode]:
    """The corpus nodes, same ids and texts, each at a new URL (``?v=2`` appended)."""
    return [
        TextNode(
            id_=node.id_,
            text=node.text,
            metadata={**node.metadata, "url": node.metadata["url"] + "?v=2"},
        )
        for node in corpus_nodes()
    ]
