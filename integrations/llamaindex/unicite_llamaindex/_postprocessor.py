"""`CitationPostprocessor`: retrieved nodes numbered as citable sources for the prompt."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.node_parser import TextSplitter
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import MetadataMode, NodeWithScore, QueryBundle, TextNode

from unicite import Source
from unicite.sources import SourceLedger, current_ledger
from unicite_llamaindex._nodes import (
    CHUNK_KEY,
    LABEL_KEY,
    OWN_KEYS,
    PARENT_KEY,
    SOURCE_ID_KEY,
    TEXT_KEY,
    Chunk,
    SourceCache,
    cached_sources,
    default_splitter,
    label_number,
    node_metadata,
    node_text,
    split_text,
)

__all__ = ["CitationPostprocessor", "Labelled", "relabel"]


@dataclass
class Labelled:
    """The labelled nodes of one call, the source each stands for, and what was odd."""

    nodes: list[NodeWithScore] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    """The source of each labelled node, in node order."""
    ledger: SourceLedger | None = None
    """The ledger the labels are sids of; None when they are positions (1, 2, ...)."""
    diagnostics: list[str] = field(default_factory=list)

    def table(self) -> list[Source] | SourceLedger:
        """The sources by prompt number, as `unicite.parse_markers` takes them."""
        return self.ledger if self.ledger is not None else list(self.sources)


class CitationPostprocessor(BaseNodePostprocessor):
    """Number retrieved nodes as citable sources for a citing prompt (``Source N:``).

    Every node becomes a source with the node's id and the URL, title and page of its metadata;
    the returned nodes carry a ``Source N:`` label in their text, so a model told to cite
    ``[N]`` (LlamaIndex's citation prompts) cites a known source. With ``chunk_size`` set, long
    nodes are split into chunks that are sources of their own, each with its own id
    (``<node id>:<start>-<end>``) and its offsets in the node's (and, when known, the
    document's) text; `CitationQueryEngine` gives every chunk its node's id, or a fresh random
    id, depending on the llama-index-core version. `source_from_node` reads a labelled node back
    as the source it stands for.

    Labels are positions (1, 2, ...) in the returned list; with a `SourceLedger` (``ledger=``,
    or the `unicite.sources.current_ledger` of the run) they are the ledger's sids, so several
    retrievals in one run never reuse a number. Between calls the postprocessor keeps only the
    sources it read from nodes (a bounded, thread-safe cache: a corpus is read once, not per
    query): it is safe to share between threads and tasks.
    """

    chunk_size: int | None = Field(
        default=None, gt=0, description="Split nodes longer than this many tokens; None keeps them."
    )
    chunk_overlap: int = Field(default=20, ge=0, description="Tokens shared by adjacent chunks.")
    text_splitter: TextSplitter | None = Field(
        default=None, exclude=True, description="The splitter to use instead of the default one."
    )
    metadata_mode: MetadataMode = Field(
        default=MetadataMode.NONE,
        description="Which metadata the prompt shows under each label (none by default).",
    )
    ledger: SourceLedger | None = Field(
        default=None, exclude=True, description="Number sources by this ledger's sids."
    )

    _splitter: TextSplitter | None = PrivateAttr(default=None)
    _sources: SourceCache = PrivateAttr(default_factory=SourceCache)

    def model_post_init(self, context: Any, /) -> None:
        """Build the default splitter once."""
        if self.text_splitter is not None:
            self._splitter = self.text_splitter
        elif self.chunk_size is not None:
            self._splitter = default_splitter(self.chunk_size, self.chunk_overlap)

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "CitationPostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        """Return the nodes labelled ``Source N:`` (split into chunks when configured)."""
        return self._label_nodes(nodes).nodes

    def _label_nodes(self, nodes: list[NodeWithScore]) -> Labelled:
        """Label `nodes` and return them with the source each one stands for."""
        ledger = self.ledger if self.ledger is not None else current_ledger()
        result = Labelled(ledger=ledger)
        refs: list[tuple[NodeWithScore, int, Chunk | None]] = []
        for rank, item in enumerate(nodes):
            if not isinstance(item, NodeWithScore):
                result.diagnostics.append(
                    f"node {rank} is a {type(item).__name__}, not a NodeWithScore; skipped"
                )
                continue
            refs.extend((item, rank, chunk) for chunk in self._chunks(item, result.diagnostics))
        sources = cached_sources(refs, self._sources, result.diagnostics)
        seen: set[str] = set()
        for (item, _, chunk), source in zip(refs, sources, strict=True):
            if ledger is not None:
                number = ledger.sid(ledger.add(source)) or len(ledger)
            elif source.id in seen:
                continue
            else:
                number = len(result.nodes) + 1
            seen.add(source.id)
            result.nodes.append(self._labelled(item, chunk, source, number))
            result.sources.append(source)
        return result

    def _chunks(self, item: NodeWithScore, diagnostics: list[str]) -> list[Chunk | None]:
        if self._splitter is None:
            return [None]
        text = node_text(item.node)
        if not text:
            return [None]
        try:
            chunks = split_text(text, self._splitter, diagnostics)
        except Exception as err:
            diagnostics.append(f"could not split node {item.node.node_id}: {err!r}; kept whole")
            return [None]
        return [None] if len(chunks) == 1 else list(chunks)

    def _labelled(
        self, item: NodeWithScore, chunk: Chunk | None, source: Source, number: int
    ) -> NodeWithScore:
        base = item.node
        text = node_text(base) if chunk is None else chunk.text
        shown = ""
        if self.metadata_mode != MetadataMode.NONE:
            clean = {k: v for k, v in node_metadata(base).items() if k not in OWN_KEYS}
            probe = TextNode(
                text="",
                metadata=clean,
                excluded_llm_metadata_keys=list(base.excluded_llm_metadata_keys),
                excluded_embed_metadata_keys=list(base.excluded_embed_metadata_keys),
            )
            meta = probe.get_metadata_str(mode=self.metadata_mode).strip()
            shown = f"{meta}\n\n" if meta else ""
        metadata = {k: v for k, v in node_metadata(base).items() if k not in OWN_KEYS}
        metadata[LABEL_KEY] = number
        metadata[SOURCE_ID_KEY] = source.id
        metadata[PARENT_KEY] = source.extras.get("node_id", base.node_id)
        if chunk is not None and chunk.start is not None:
            metadata[CHUNK_KEY] = [chunk.start, chunk.end]
        prefix = f"Source {number}:\n{shown}"
        metadata[TEXT_KEY] = [len(prefix), len(prefix) + len(text)]
        start = source.extras.get("start_char")
        end = source.extras.get("end_char")
        node = TextNode(
            id_=source.id,
            text=f"{prefix}{text}\n",
            metadata=metadata,
            # Metadata the prompt shows is already under the label; the synthesizer must not
            # put it again in front of the label, where it would read as the previous source's.
            excluded_llm_metadata_keys=list(metadata),
            excluded_embed_metadata_keys=list(metadata),
            relationships=dict(base.relationships),
            start_char_idx=start if isinstance(start, int) else None,
            end_char_idx=end if isinstance(end, int) else None,
        )
        return NodeWithScore(node=node, score=item.score)


def relabel(item: NodeWithScore, number: int) -> None:
    """Change the ``Source N:`` label of a node in place (after renumbering).

    Works on nodes labelled here and on those of LlamaIndex's `CitationQueryEngine`.
    """
    node = item.node
    old = label_number(node)
    if old is None or old == number:
        return
    head, new_head = f"Source {old}:", f"Source {number}:"
    span = node_metadata(node).get(TEXT_KEY)
    if isinstance(span, list) and len(span) == 2 and isinstance(node, TextNode):
        if not node.text.startswith(head):
            return
        shift = len(new_head) - len(head)
        node.text = new_head + node.text[len(head) :]
        node.metadata[LABEL_KEY] = number
        node.metadata[TEXT_KEY] = [span[0] + shift, span[1] + shift]
        return
    text = node.get_content(metadata_mode=MetadataMode.NONE)
    if text.startswith(head):
        node.set_content(new_head + text[len(head) :])
