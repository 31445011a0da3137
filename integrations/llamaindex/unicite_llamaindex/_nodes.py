"""LlamaIndex nodes as unicite sources: ids, metadata, labels and offset-keeping chunks."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from llama_index.core.node_parser import SentenceSplitter, TextSplitter
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore

from unicite import Source, segment
from unicite.sources import from_tool_output

__all__ = [
    "CHUNK_KEY",
    "LABEL_KEY",
    "OWN_KEYS",
    "PARENT_KEY",
    "SOURCE_ID_KEY",
    "TEXT_KEY",
    "Chunk",
    "SourceCache",
    "cached_sources",
    "default_splitter",
    "label_number",
    "node_content",
    "node_metadata",
    "node_text",
    "source_from_node",
    "sources_from_nodes",
    "split_text",
]

LABEL_KEY = "unicite_label"
"""Metadata key of a labelled node: the number the prompt shows (``Source N:``)."""
SOURCE_ID_KEY = "unicite_source_id"
"""Metadata key of a labelled node: the id of the source it stands for."""
PARENT_KEY = "unicite_parent_id"
"""Metadata key of a labelled node: the id of the retrieved node it was cut from."""
CHUNK_KEY = "unicite_chunk"
"""Metadata key of a labelled node: ``[start, end]`` of its text in the parent node's text."""
TEXT_KEY = "unicite_text"
"""Metadata key of a labelled node: ``[start, end]`` of the source's text in the node's text."""
OWN_KEYS = (LABEL_KEY, SOURCE_ID_KEY, PARENT_KEY, CHUNK_KEY, TEXT_KEY)

_LABEL_RE = re.compile(r"\A\s*Source (\d{1,6}):[ \t]*\r?\n?")
_PAGE_KEYS = ("page_label", "page", "page_number", "page_num")
# Metadata a source's URL and title are read from: a value of another type is reported.
_TEXT_KEYS = ("url", "link", "href", "uri", "source_url", "title", "document_title", "file_name")
_TOOL_NAME = "retriever"


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a node's text: its position among the pieces and its offsets in the text.

    ``start``/``end`` are None when the splitter rewrote the piece so it cannot be found.
    """

    text: str
    index: int
    start: int | None
    end: int | None


def _sentences(text: str) -> list[str]:
    """Sentence pieces that join back to `text` exactly (unicite's segmenter, not nltk)."""
    pieces: list[str] = []
    previous = 0
    for seg in segment(text):
        if seg.start > previous:
            pieces.append(text[previous : seg.start])
            previous = seg.start
    pieces.append(text[previous:])
    return [piece for piece in pieces if piece]


# Tokens a tokenizer may add to any text (BOS/EOS and the like).
_ADDED_TOKENS = 8


class _SentenceSplitter(SentenceSplitter):
    """LlamaIndex's sentence splitter, known to count tokens of at least one byte each."""

    @classmethod
    def class_name(cls) -> str:
        """Class name."""
        return "UniciteSentenceSplitter"


def _too_short(text: str, splitter: TextSplitter) -> bool:
    """Whether the default splitter would return `text` whole, known without tokenizing.

    A token is at least one UTF-8 byte for byte- and character-level tokenizers, so a text of
    ``chunk_size - 8`` bytes or fewer is one chunk; `CitationQueryEngine` tokenizes every node
    of every query to learn that.
    """
    return isinstance(splitter, _SentenceSplitter) and (
        len(text.encode("utf-8", "surrogatepass")) + _ADDED_TOKENS <= splitter.chunk_size
    )


def default_splitter(chunk_size: int, chunk_overlap: int) -> TextSplitter:
    """LlamaIndex's sentence splitter, cutting sentences with unicite's offset-exact segmenter.

    The stock splitter falls back to nltk's punkt, which needs a data download (and refuses
    hard-linked data files in recent nltk); unicite's segmenter needs neither.
    """
    return _SentenceSplitter(
        chunk_size=chunk_size, chunk_overlap=chunk_overlap, chunking_tokenizer_fn=_sentences
    )


def split_text(text: str, splitter: TextSplitter, diagnostics: list[str]) -> list[Chunk]:
    """Split `text` with `splitter` and find each chunk's offsets in `text`.

    Splitters return substrings in order, overlapping by at most the chunk overlap, so each
    chunk is searched from just after the previous chunk's start. A chunk the splitter rewrote
    (normalised whitespace) gets no offsets and a diagnostic.
    """
    pieces = [text] if _too_short(text, splitter) else splitter.split_text(text)
    if len(pieces) <= 1:
        return [Chunk(text, 0, 0, len(text))]
    chunks: list[Chunk] = []
    search = 0
    for index, piece in enumerate(pieces):
        start = text.find(piece, search)
        if start < 0:
            diagnostics.append(
                "a chunk of a split node is not a substring of the node's text; "
                "it has no source offsets"
            )
            chunks.append(Chunk(piece, index, None, None))
            continue
        chunks.append(Chunk(piece, index, start, start + len(piece)))
        search = start + 1
    return chunks


def node_metadata(node: BaseNode) -> dict[str, Any]:
    """The node's metadata; an empty dict when a node was built without a dict there."""
    metadata = getattr(node, "metadata", None)
    return metadata if isinstance(metadata, dict) else {}


_READ = object()
"""Stands for "read the node's content now" where a caller may pass what it already read."""
_FAILED = object()
"""`node_content` of a node whose ``get_content`` raised."""


def node_content(node: BaseNode) -> object:
    """What ``get_content`` gives without metadata, or `_FAILED` when it raises.

    Reading a node's content is the costly part of reading a node: a caller that needs it
    several times reads it once and passes it on (``content=``).
    """
    try:
        return node.get_content(metadata_mode=MetadataMode.NONE)
    except Exception:
        return _FAILED


def node_text(node: BaseNode, *, content: object = _READ) -> str:
    """The node's own text, without metadata (and without a ``Source N:`` label we added)."""
    text = node_content(node) if content is _READ else content
    if not isinstance(text, str):
        return ""
    span = node_metadata(node).get(TEXT_KEY)
    if (
        isinstance(span, list)
        and len(span) == 2
        and all(isinstance(n, int) for n in span)
        and 0 <= span[0] <= span[1] <= len(text)
    ):
        return text[span[0] : span[1]]
    match = _LABEL_RE.match(text)
    if match is not None:
        # A node labelled by LlamaIndex's CitationQueryEngine: "Source N:\n<chunk>\n".
        text = text[match.end() :]
        if text.endswith("\n"):
            text = text[:-1]
    return text


def label_number(node: BaseNode, *, content: object = _READ) -> int | None:
    """The ``Source N:`` number a prompt shows for this node, when it carries one."""
    value = node_metadata(node).get(LABEL_KEY)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    text = node_content(node) if content is _READ else content
    match = _LABEL_RE.match(text) if isinstance(text, str) else None
    return int(match.group(1)) if match is not None else None


def _page(metadata: dict[str, Any]) -> int | str | None:
    for key in _PAGE_KEYS:
        value = metadata.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int) or (isinstance(value, str) and value.strip()):
            return value
    return None


def _char_range(base: BaseNode) -> tuple[int | None, int | None]:
    """Where the node lies in its document, when it knows (text nodes only)."""
    first = getattr(base, "start_char_idx", None)
    last = getattr(base, "end_char_idx", None)
    valid = isinstance(first, int) and not isinstance(first, bool)
    return (first, last if isinstance(last, int) else None) if valid else (None, None)


def _identity(base: BaseNode, chunk: Chunk | None) -> tuple[str, str, str, Any, Any, Any]:
    """Source id, parent node id, text, document offsets and chunk offsets of a node or chunk.

    A node labelled by `CitationPostprocessor` carries these in its metadata, so reading it
    again gives the source it was labelled with.
    """
    metadata = node_metadata(base)
    own_id = metadata.get(SOURCE_ID_KEY)
    first, last = _char_range(base)
    if chunk is None and isinstance(own_id, str) and own_id:
        parent = metadata.get(PARENT_KEY)
        offsets = metadata.get(CHUNK_KEY)
        return (
            own_id,
            parent if isinstance(parent, str) and parent else base.node_id,
            node_text(base),
            first,
            last,
            offsets if isinstance(offsets, list) and len(offsets) == 2 else None,
        )
    text = node_text(base)
    if chunk is None or (chunk.start == 0 and chunk.end == len(text)):
        return base.node_id, base.node_id, text, first, last, None
    if chunk.start is None or chunk.end is None:
        return f"{base.node_id}:part{chunk.index}", base.node_id, chunk.text, None, None, None
    doc_start = doc_end = None
    if first is not None:
        doc_start, doc_end = first + chunk.start, first + chunk.end
    return (
        f"{base.node_id}:{chunk.start}-{chunk.end}",
        base.node_id,
        chunk.text,
        doc_start,
        doc_end,
        [chunk.start, chunk.end],
    )


def _oddities(base: BaseNode, metadata: dict[str, Any]) -> list[str]:
    """What of a node could not be read: text or metadata of the wrong type."""
    diagnostics: list[str] = []
    name = base.node_id
    if not isinstance(getattr(base, "metadata", None), dict):
        kind = type(getattr(base, "metadata", None)).__name__
        diagnostics.append(f"node {name}: its metadata is not a dict (type {kind}); ignored")
    try:
        content: Any = base.get_content(metadata_mode=MetadataMode.NONE)
    except Exception as err:
        diagnostics.append(f"node {name}: its text could not be read ({type(err).__name__})")
    else:
        if not isinstance(content, str):
            kind = type(content).__name__
            diagnostics.append(f"node {name}: its text is not a str (type {kind}); no content")
    for key in _TEXT_KEYS:
        value = metadata.get(key)
        if value is not None and not isinstance(value, str):
            kind = type(value).__name__
            diagnostics.append(f"node {name}: metadata {key!r} is not text (type {kind}); ignored")
    for key in _PAGE_KEYS:
        value = metadata.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, str))):
            kind = type(value).__name__
            diagnostics.append(
                f"node {name}: metadata {key!r} is not a page (type {kind}); ignored"
            )
    return diagnostics


NodeRef = tuple["NodeWithScore | BaseNode", "int | None", "Chunk | None"]
"""A node, its rank among the retrieved nodes, and the chunk of it a source stands for."""


def source_from_node(
    node: NodeWithScore | BaseNode,
    *,
    rank: int | None = None,
    chunk: Chunk | None = None,
    tool: str = _TOOL_NAME,
    diagnostics: list[str] | None = None,
) -> Source:
    """The `Source` a retrieved node (or one chunk of it) stands for.

    The id is the node's id (``<node id>:<start>-<end>`` for a chunk of a split node); URL,
    title, page and dates come from the node's metadata through unicite's retriever reader, so
    a LlamaIndex node reads exactly as the same document would from any other framework.
    ``extras`` keep the node id, the chunk's offsets in the node's text and, when the node
    knows where it lies in its document, the offsets there (``start_char``/``end_char``).
    A node labelled by `CitationPostprocessor` reads back as the source it was labelled with.

    Args:
        node: A node, or a `NodeWithScore` (its score is kept in ``extras``).
        rank: The node's position among the retrieved nodes.
        chunk: The piece of the node's text this source stands for; the whole text by default.
        tool: Recorded as the source's `origin` tool.
        diagnostics: A list to append what was odd to.
    """
    return sources_from_nodes([(node, rank, chunk)], tool=tool, diagnostics=diagnostics)[0]


def sources_from_nodes(
    refs: Sequence[NodeRef],
    *,
    tool: str = _TOOL_NAME,
    call_id: str | None = None,
    diagnostics: list[str] | None = None,
) -> list[Source]:
    """`source_from_node` for many nodes, read by unicite's retriever reader in one call.

    ``call_id`` is the agent's tool call that returned them, recorded in their `origin`.
    """
    items: list[dict[str, Any]] = []
    extras: list[dict[str, Any]] = []
    for node, _, chunk in refs:
        score = node.score if isinstance(node, NodeWithScore) else None
        base = node.node if isinstance(node, NodeWithScore) else node
        source_id, node_id, text, doc_start, doc_end, offsets = _identity(base, chunk)
        metadata = {k: v for k, v in node_metadata(base).items() if k not in OWN_KEYS}
        if diagnostics is not None:
            for note in _oddities(base, metadata):
                if note not in diagnostics:  # once per node, however many chunks it has
                    diagnostics.append(note)
        items.append(
            {
                "id_": source_id,
                "text": text,
                "metadata": metadata,
                "start_char_idx": doc_start,
                "end_char_idx": doc_end,
                "score": score,
            }
        )
        own: dict[str, Any] = {"node_id": node_id}
        if offsets is not None:
            own["chunk_start"], own["chunk_end"] = offsets
        if isinstance(base.ref_doc_id, str):
            own["ref_doc_id"] = base.ref_doc_id
        page = _page(metadata)
        if page is not None:
            own["page"] = page
        extras.append(own)
    notes: list[str] = []
    found = (
        {s.id: s for s in from_tool_output(tool, items, call_id=call_id, diagnostics=notes)}
        if items
        else {}
    )
    if diagnostics is not None:
        diagnostics.extend(notes)
    sources = []
    for (_, rank, _), item, own in zip(refs, items, extras, strict=True):
        read = found.get(item["id_"])
        if read is None:
            # Nothing the reader could use (no text, no URL, no title): still a source.
            text = item["text"]
            sources.append(
                Source(id=item["id_"], kind="document", content=text or None, rank=rank, extras=own)
            )
            continue
        update: dict[str, Any] = {"extras": {**read.extras, **own}, "raw": None, "rank": rank}
        sources.append(read.model_copy(update=update))
    return sources


class SourceCache:
    """Sources already read from nodes, shared by the runs of one handler or engine.

    A query engine retrieves from a fixed index: the same nodes come back query after query, so
    each is read once. An entry is keyed by everything its source is read from (node type and
    id, text, metadata, document offsets, parent document, score, rank, chunk), so a node that
    changed in any of them is read again. What was odd about a node (its diagnostics) is kept
    with its source and given again on every hit. Bounded: least recently used out; safe to
    share between threads.
    """

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, tuple[Source, tuple[str, ...]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> tuple[Source, tuple[str, ...]] | None:
        """The source read for `key` and the notes reading it gave, or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: Hashable, source: Source, notes: Sequence[str]) -> None:
        """Remember what reading the node of `key` gave."""
        with self._lock:
            self._entries[key] = (source, tuple(notes))
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


def cached_sources(
    refs: Sequence[tuple[NodeWithScore, int, Chunk | None]],
    cache: SourceCache,
    notes: list[str],
    contents: Sequence[object] | None = None,
) -> list[Source]:
    """The source of each node (rank, chunk): from `cache` when read before, else read now.

    `contents` are the nodes' `node_content`, when the caller read them already.
    """
    sources: list[Source] = []
    for k, ref in enumerate(refs):
        key = _cache_key(ref, _READ if contents is None else contents[k])
        hit = cache.get(key) if key is not None else None
        if hit is None:
            read_notes: list[str] = []
            source = sources_from_nodes([ref], diagnostics=read_notes)[0]
            if key is not None:
                cache.put(key, source, read_notes)
        else:
            source, read_notes = hit[0], list(hit[1])
        if read_notes:
            notes.extend(note for note in read_notes if note not in notes)
        sources.append(source)
    return sources


def _cache_key(
    ref: tuple[NodeWithScore, int, Chunk | None], content: object = _READ
) -> Hashable | None:
    """Everything the source of a node (rank, chunk) is read from; None when it cannot be told."""
    node, rank, chunk = ref
    base = node.node if isinstance(node, NodeWithScore) else node
    score = node.score if isinstance(node, NodeWithScore) else None
    metadata = getattr(base, "metadata", None)
    if content is _READ:
        content = node_content(base)
    if content is _FAILED:
        return None
    try:
        shown = (
            tuple(sorted((str(k), repr(v)) for k, v in metadata.items()))
            if isinstance(metadata, dict)
            else repr(metadata)
        )
        key = (
            type(base),
            base.node_id,
            content if isinstance(content, str) else repr(content),
            shown,
            getattr(base, "start_char_idx", None),
            getattr(base, "end_char_idx", None),
            base.ref_doc_id,
            score,
            rank,
            chunk,
        )
        hash(key)
    except Exception:
        return None
    return key
