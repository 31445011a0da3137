"""LlamaIndex responses as `CitedAnswer`s, and answers as LlamaIndex `CitationBlock`s and back.

LlamaIndex's LLM integrations keep what the provider sent in different places: the OpenAI
integration keeps the SDK response in ``raw`` and the annotations in ``additional_kwargs``, the
Anthropic one a shallow ``dict`` of the message in ``raw`` and search-result citations as
``CitationBlock``s, the Gemini one the first candidate's dump in ``raw``, the Bedrock Converse
one boto3's response dict (each stream event, when streaming), the Mistral one a shallow
``dict`` of the completion with its content chunks (each stream event, or, for a delta holding
a chunk list, that list's last chunk, which the Mistral reader says loses the references). Each
is handed as it is to unicite's provider readers, which read those shapes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, get_args

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CitationBlock,
    CompletionResponse,
    TextBlock,
)
from llama_index.core.base.response.schema import (
    AsyncStreamingResponse,
    PydanticResponse,
    Response,
    StreamingResponse,
)
from llama_index.core.schema import NodeWithScore
from pydantic import ValidationError

from unicite import (
    BlockLocation,
    CharLocation,
    Citation,
    CitationOrigin,
    CitedAnswer,
    CitePolicy,
    Location,
    PageLocation,
    SearchResultLocation,
    Source,
    UrlLocation,
    UsageError,
    collect_stream,
    extract,
    normalize_url,
)
from unicite.providers import detect_provider, extract_content
from unicite.sources import SourceLedger
from unicite_llamaindex._nodes import (
    SOURCE_ID_KEY,
    Chunk,
    SourceCache,
    cached_sources,
    label_number,
    node_content,
    node_metadata,
    node_text,
)
from unicite_llamaindex._policy import answer_input, cite_answer, resolve_policy

__all__ = [
    "from_citation_blocks",
    "from_llamaindex_response",
    "table_from_nodes",
    "to_citation_blocks",
]

_ORIGINS: tuple[str, ...] = get_args(CitationOrigin)


# --- CitationBlocks -----------------------------------------------------------------------


def _location_info(citation: Citation) -> dict[str, int]:
    """The citation's location in Anthropic's key names (LlamaIndex's own convention)."""
    loc = citation.location
    info: dict[str, int] = {}
    if isinstance(loc, CharLocation):
        info.update(start_char_index=loc.start, end_char_index=loc.end)
    elif isinstance(loc, PageLocation):
        info.update(start_page_number=loc.start_page, end_page_number=loc.end_page)
    elif isinstance(loc, BlockLocation):
        info.update(start_block_index=loc.start_block, end_block_index=loc.end_block)
    elif isinstance(loc, SearchResultLocation):
        info["search_result_index"] = loc.search_result_index
        if loc.start_block is not None:
            info["start_block_index"] = loc.start_block
        if loc.end_block is not None:
            info["end_block_index"] = loc.end_block
    elif isinstance(loc, UrlLocation):
        info["url_location"] = 1
    document = getattr(loc, "document_index", None)
    if isinstance(document, int):
        info["document_index"] = document
    return info


def to_citation_blocks(answer: CitedAnswer) -> list[TextBlock | CitationBlock]:
    """The answer as LlamaIndex content blocks: its text, each citation after what it cites.

    The text is cut at every citation's start and end; each citation becomes one
    `CitationBlock` per cited source, placed right after the text block its span ends with
    (the convention of LlamaIndex's Anthropic integration). ``source`` is the source's URL, or
    its id when it has none; ``cited_content`` the quote; ``additional_location_info`` holds
    the span in the answer (``answer_start``/``answer_end``, str offsets), the citation's
    index, the marker span, the origin and the location in its (first) source, so
    `from_citation_blocks` reads back what it held.

    Raises:
        UsageError: ``answer`` is not a `CitedAnswer`.
    """
    if not isinstance(answer, CitedAnswer):
        raise UsageError(f"to_citation_blocks expects a CitedAnswer, got {type(answer).__name__}")
    text = answer.text
    cuts = {0, len(text)}
    ending: dict[int, list[Citation]] = {}
    for citation in answer.citations:
        cuts.update((citation.start, citation.end))
        ending.setdefault(citation.end, []).append(citation)
    index = {id(citation): n for n, citation in enumerate(answer.citations)}
    blocks: list[TextBlock | CitationBlock] = []
    ordered = sorted(cuts)
    for n, position in enumerate(ordered):
        if n > 0 and ordered[n - 1] < position:
            blocks.append(TextBlock(text=text[ordered[n - 1] : position]))
        for citation in ending.get(position, ()):
            blocks.extend(_citation_blocks(answer, citation, index[id(citation)]))
    return blocks


def _citation_blocks(answer: CitedAnswer, citation: Citation, index: int) -> list[CitationBlock]:
    info = _location_info(citation)
    info.update(answer_start=citation.start, answer_end=citation.end, citation_index=index)
    if citation.marker_span is not None:
        info.update(marker_start=citation.marker_span[0], marker_end=citation.marker_span[1])
    info["origin"] = _ORIGINS.index(citation.origin)
    blocks = []
    for source_id in citation.source_ids:
        source = answer.source(source_id)
        number = answer.footnote_number(source_id)
        blocks.append(
            CitationBlock(
                cited_content=TextBlock(text=citation.quote or ""),
                source=(source.url if source is not None and source.url else source_id),
                title=(source.title if source is not None and source.title else ""),
                additional_location_info={**info, "source_number": number or 0},
            )
        )
    return blocks


def _int(info: Mapping[str, Any], key: str) -> int | None:
    value = info.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _location_from(info: Mapping[str, Any], source: Source, notes: list[str]) -> Location | None:
    document = _int(info, "document_index")
    try:
        if _int(info, "search_result_index") is not None:
            return SearchResultLocation(
                search_result_index=info["search_result_index"],
                start_block=_int(info, "start_block_index"),
                end_block=_int(info, "end_block_index"),
            )
        start, end = _int(info, "start_char_index"), _int(info, "end_char_index")
        if start is not None and end is not None:
            return CharLocation(start=start, end=end, document_index=document)
        start, end = _int(info, "start_page_number"), _int(info, "end_page_number")
        if start is not None and end is not None:
            return PageLocation(start_page=start, end_page=end, document_index=document)
        start, end = _int(info, "start_block_index"), _int(info, "end_block_index")
        if start is not None and end is not None:
            return BlockLocation(start_block=start, end_block=end, document_index=document)
    except ValidationError as err:
        notes.append(f"citation block location dropped: {err.errors()[0]['msg']}")
        return None
    if info.get("url_location") == 1 and source.url:
        return UrlLocation(url=source.url)
    return None


class _SourceResolver:
    """Sources named by `CitationBlock.source`: the caller's by id or URL, else built from it."""

    def __init__(self, sources: Sequence[Source | Mapping[str, Any]] | SourceLedger | None):
        known = sources.sources if isinstance(sources, SourceLedger) else list(sources or ())
        self.by_id: dict[str, Source] = {}
        self.by_url: dict[str, Source] = {}
        for item in known:
            source = item if isinstance(item, Source) else Source.model_validate(dict(item))
            self.by_id.setdefault(source.id, source)
            if source.url:
                self.by_url.setdefault(normalize_url(source.url), source)

    def resolve(self, name: str, title: str) -> Source | None:
        found = self.by_id.get(name)
        if found is None and name.lower().startswith(("http://", "https://")):
            found = self.by_url.get(normalize_url(name))
        if found is not None:
            return found
        if name.lower().startswith(("http://", "https://")):
            return Source(url=name, title=title or None, kind="web")
        if name:
            return Source(id=name, title=title or None, kind="document")
        if title:
            return Source(title=title, kind="document")
        return None


def from_citation_blocks(
    blocks: Sequence[Any],
    *,
    sources: Sequence[Source | Mapping[str, Any]] | SourceLedger | None = None,
) -> CitedAnswer:
    """Read content blocks with `CitationBlock`s (from `to_citation_blocks` or an LLM) back.

    The text is the text blocks joined; a `CitationBlock` cites the span its
    ``additional_location_info`` names (``answer_start``/``answer_end``), else the text block
    just before it (without its surrounding spaces), as LlamaIndex's Anthropic integration
    places them. ``source`` names a source of ``sources`` by id or URL; otherwise a source is
    built from ``source`` and ``title``. Blocks citing one span alike make one citation of
    all their sources. Other blocks (thinking, tool calls, images) are skipped.

    Raises:
        UsageError: ``blocks`` is not a sequence of blocks, or ``sources`` holds non-sources.
    """
    if isinstance(blocks, (str, bytes, Mapping)) or not isinstance(blocks, Sequence):
        raise UsageError(f"blocks must be a list of content blocks, got {type(blocks).__name__}")
    try:
        resolver = _SourceResolver(sources)
    except (ValidationError, TypeError, ValueError) as err:
        raise UsageError(f"sources must be Source objects or dicts: {err}") from err
    return _read_blocks(blocks, resolver, cite_next=False)


def _read_blocks(
    blocks: Sequence[Any], resolver: _SourceResolver, *, cite_next: bool
) -> CitedAnswer:
    """The answer the blocks hold; ``cite_next``: a citation block cites the text block after it.

    That is the order of a streamed Anthropic response in LlamaIndex: a citation arrives
    before the text it supports, and the text block is added only when it is complete.
    """
    notes: list[str] = []
    parts: list[str] = []
    size = 0
    last: tuple[int, int] | None = None
    found: list[tuple[CitationBlock, tuple[int, int] | None]] = []
    waiting: list[CitationBlock] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append(block.text)
            last = (size, size + len(block.text))
            size += len(block.text)
            found.extend((waiting_block, last) for waiting_block in waiting)
            waiting.clear()
        elif isinstance(block, CitationBlock):
            if cite_next:
                waiting.append(block)
            else:
                found.append((block, last))
    found.extend((block, None) for block in waiting)
    text = "".join(parts)
    ordered: dict[str, Source] = {}
    groups: dict[tuple[Any, ...], Citation] = {}
    for block, span in found:
        citation = _read_citation_block(block, span, text, resolver, ordered, notes)
        if citation is None:
            continue
        # Blocks of one citation (one per source) share its index; other blocks citing one
        # span alike are one citation too.
        index = _int(block.additional_location_info, "citation_index")
        key: tuple[Any, ...] = (
            ("index", index)
            if index is not None
            else (
                citation.start,
                citation.end,
                citation.quote,
                citation.location,
                citation.origin,
                citation.marker_span,
            )
        )
        kept = groups.get(key)
        if kept is None:
            groups[key] = citation
        elif citation.source_ids[0] not in kept.source_ids:
            ids = [*kept.source_ids, citation.source_ids[0]]
            groups[key] = kept.model_copy(update={"source_ids": ids})
    return CitedAnswer(
        text=text,
        sources=list(ordered.values()),
        citations=list(groups.values()),
        diagnostics=notes,
    )


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the spaces around it (a block often starts or ends with one)."""
    first, last = start, end
    while first < last and text[first].isspace():
        first += 1
    while last > first and text[last - 1].isspace():
        last -= 1
    return (first, last) if first < last else (start, end)


def _read_citation_block(
    block: CitationBlock,
    before: tuple[int, int] | None,
    text: str,
    resolver: _SourceResolver,
    ordered: dict[str, Source],
    notes: list[str],
) -> Citation | None:
    info = block.additional_location_info
    start, end = _int(info, "answer_start"), _int(info, "answer_end")
    if start is None or end is None or not 0 <= start <= end <= len(text):
        if before is None:
            notes.append(f"citation block for {block.source!r} has no text to cite; dropped")
            return None
        start, end = _trimmed(text, *before)
    source = resolver.resolve(block.source, block.title)
    if source is None:
        notes.append("citation block names no source and no title; dropped")
        return None
    source = ordered.setdefault(source.id, source)
    quote = block.cited_content.text if isinstance(block.cited_content, TextBlock) else None
    marker = (_int(info, "marker_start"), _int(info, "marker_end"))
    marker_span = None
    if marker[0] is not None and marker[1] is not None and 0 <= marker[0] <= marker[1] <= len(text):
        marker_span = (marker[0], marker[1])
    origin_index = _int(info, "origin")
    origin = (
        _ORIGINS[origin_index]
        if origin_index is not None and 0 <= origin_index < len(_ORIGINS)
        else "native"
    )
    return Citation(
        start=start,
        end=end,
        text=text[start:end],
        source_ids=[source.id],
        quote=quote or None,
        location=_location_from(info, source, notes),
        origin=origin,
        marker_span=marker_span,
    )


# --- responses ------------------------------------------------------------------------------


def table_from_nodes(
    nodes: Sequence[NodeWithScore],
    notes: list[str],
    retrieved: Sequence[NodeWithScore] = (),
    cache: SourceCache | None = None,
) -> dict[int, Source]:
    """The sources a prompt numbered: by the ``Source N:`` labels of the nodes, else in order.

    Nodes labelled by LlamaIndex's own `CitationQueryEngine` lost their ids; each is traced
    back to the `retrieved` node whose text holds its text, so it cites that node (or the
    chunk of it, with its offsets). A repeated label keeps its first node, with a diagnostic.
    """
    cache = SourceCache() if cache is None else cache
    tracer = _Tracer(retrieved) if retrieved else None
    refs: list[tuple[NodeWithScore, int, Chunk | None]] = []
    contents: list[object] = []
    labels: list[int | None] = []
    for n, node in enumerate(nodes):
        # Each node's content is read once: tracing, labels and the cache key all need it.
        content = node_content(node.node)
        labels.append(label_number(node.node, content=content))
        if tracer is not None and SOURCE_ID_KEY not in node_metadata(node.node):
            ref, k = tracer.trace(node, n, node_text(node.node, content=content))
            if k is not None:
                content = tracer.contents[k]
        else:
            ref = (node, n, None)
        refs.append(ref)
        contents.append(content)
    sources = cached_sources(refs, cache, notes, contents)
    table: dict[int, Source] = {}
    for position, (label, source) in enumerate(zip(labels, sources, strict=True)):
        number = label if label is not None else position + 1
        if number in table:
            if table[number].id != source.id:
                notes.append(f"two nodes carry the label Source {number}; the first is kept")
            continue
        table[number] = source
    return table


class _Tracer:
    """Finds the retrieved node a prompt node's text comes from: by equal text, else inside."""

    def __init__(self, retrieved: Sequence[NodeWithScore]) -> None:
        self.retrieved = retrieved
        self.contents = [node_content(node.node) for node in retrieved]
        self.texts = [
            node_text(node.node, content=content)
            for node, content in zip(retrieved, self.contents, strict=True)
        ]
        self.whole: dict[str, int] = {}
        for k, text in enumerate(self.texts):
            self.whole.setdefault(text.strip(), k)

    def trace(
        self, node: NodeWithScore, rank: int, text: str
    ) -> tuple[tuple[NodeWithScore, int, Chunk | None], int | None]:
        """The retrieved node (and chunk of it) whose text `node` shows (`text`), else `node`.

        Returned with the position of that retrieved node (None for `node` itself).
        """
        text = text.strip()
        if not text:
            return (node, rank, None), None
        k = self.whole.get(text)
        if k is not None:
            return (self.retrieved[k], k, None), k
        for k, whole in enumerate(self.texts):
            start = whole.find(text)
            if start >= 0:
                return (self.retrieved[k], k, Chunk(text, 0, start, start + len(text))), k
        return (node, rank, None), None


def _text_of_message(message: ChatMessage) -> str:
    return message.content or ""


def _from_annotations(text: str, annotations: Any, notes: list[str]) -> CitedAnswer | None:
    """OpenAI annotations kept in ``additional_kwargs``, on the text they annotate."""
    if not isinstance(annotations, list) or not annotations:
        return None
    block = {"type": "text", "text": text, "annotations": annotations}
    answer = extract_content([block], "openai")
    notes.append("read from the annotations in additional_kwargs (the raw response was missing)")
    return answer


def _is_stream_event(raw: Any) -> bool:
    """Whether ``raw`` is one event of a provider stream (a streamed call's last chunk)."""
    return raw is not None and collect_stream([raw]).provider is not None


def _native(response: Any, text: str, notes: list[str]) -> CitedAnswer | None:
    """Provider citations of a chat or completion response, or None when it carries none."""
    raw = getattr(response, "raw", None)
    if raw is not None and detect_provider(raw) is not None:
        answer = extract(raw)
        if answer.text or not text:
            return answer
        notes.append("the raw response holds no text; read the blocks instead")
    message = getattr(response, "message", None)
    if isinstance(message, ChatMessage) and any(
        isinstance(b, CitationBlock) for b in message.blocks
    ):
        # A streamed response's citation blocks come before the text they support.
        streamed = _is_stream_event(raw)
        return _read_blocks(message.blocks, _SourceResolver(None), cite_next=streamed)
    additional = getattr(response, "additional_kwargs", None)
    if isinstance(additional, Mapping) and additional.get("annotations"):
        return _from_annotations(text, additional["annotations"], notes)
    unplaced = getattr(response, "citations", None)
    if isinstance(unplaced, list) and unplaced:
        notes.append(
            f"{len(unplaced)} Anthropic citation(s) could not be placed: the response says "
            "which text block they belong to only in its raw message, which is missing"
        )
    if text and _is_stream_event(raw):
        # A stream's last chunk, whose text is the whole answer: what only the earlier chunks
        # held (Azure On Your Data's context, in the first) is gone; the core's readers say
        # what the text alone shows.
        found = extract_content(text)
        if found.provider is not None:
            return found
    return None


def _with_notes(answer: CitedAnswer, notes: list[str]) -> CitedAnswer:
    if not notes:
        return answer
    return answer.model_copy(update={"diagnostics": [*answer.diagnostics, *notes]})


_DEFAULT = CitePolicy()
"""The policy of a call that names none (a `CitePolicy` is immutable: one serves every call)."""


def from_llamaindex_response(
    response: Any,
    *,
    sources: Sequence[Source | Mapping[str, Any]] | SourceLedger | None = None,
    policy: CitePolicy | None = None,
    **options: Any,
) -> CitedAnswer:
    """Read the citations a LlamaIndex object carries into a `CitedAnswer`.

    Accepts:

    - `ChatResponse` / `CompletionResponse` (and the Anthropic integration's subclasses): the
      provider's native citations, read from ``raw`` by unicite's provider readers (OpenAI
      Responses and Chat Completions, Anthropic messages, Gemini candidates), else from
      `CitationBlock`s in the message, else from OpenAI annotations in ``additional_kwargs``;
    - a `ChatMessage` (an agent's answer): its `CitationBlock`s;
    - a query engine `Response` (or a consumed `StreamingResponse`): the `CitedAnswer` a
      `CitedQueryEngine` put in ``metadata["citations"]``, else `unicite.cite` of its text
      against its ``source_nodes`` (numbered by their ``Source N:`` labels).

    With ``sources`` (the sources the prompt numbered), a policy or options, a chat or
    completion answer goes through `unicite.cite` against those sources; without them it is
    read as it is (its native citations, its text untouched). Never raises on odd data: it
    records diagnostics.

    Args:
        response: The LlamaIndex object.
        sources: What the prompt numbered: `Source` objects or dicts in prompt order, or a
            `SourceLedger`.
        policy: How the answer is cited (`unicite.CitePolicy`); its ``sources`` field (which
            sources the answer lists) is set here, ``sources=`` being the numbered ones.
        **options: `CitePolicy` fields overriding ``policy``'s.

    Raises:
        UsageError: ``response`` is none of the above, or an option is unknown or invalid.
    """
    cite_policy = resolve_policy(policy, options) if policy is not None or options else _DEFAULT
    if isinstance(response, CitedAnswer):
        return response
    if isinstance(response, (Response, StreamingResponse, AsyncStreamingResponse)):
        return _from_query_response(response, cite_policy)
    if isinstance(response, PydanticResponse):
        return CitedAnswer(diagnostics=["a structured (Pydantic) response has no text to cite"])
    notes: list[str] = []
    if isinstance(response, ChatMessage):
        text = _text_of_message(response)
        native = (
            from_citation_blocks(response.blocks)
            if any(isinstance(b, CitationBlock) for b in response.blocks)
            else None
        )
    elif isinstance(response, (ChatResponse, CompletionResponse)):
        text = (
            _text_of_message(response.message)
            if isinstance(response, ChatResponse)
            else response.text or ""
        )
        try:
            native = _native(response, text, notes)
        except Exception as err:
            notes.append(f"internal error reading the response: {err!r}")
            native = None
    else:
        raise UsageError(
            "expected a ChatResponse, CompletionResponse, ChatMessage or query engine Response, "
            f"got {type(response).__name__}"
        )
    if sources is None and policy is None and not options:
        if native is not None:
            return _with_notes(native, notes)
        return CitedAnswer(text=text, diagnostics=notes)
    base = answer_input(native, text)
    return cite_answer(base, () if sources is None else sources, cite_policy, notes)


def _from_query_response(
    response: Response | StreamingResponse | AsyncStreamingResponse, policy: CitePolicy
) -> CitedAnswer:
    metadata = response.metadata or {}
    cited = metadata.get("citations")
    if isinstance(cited, CitedAnswer):
        return cited
    text = response.response if isinstance(response, Response) else response.response_txt
    if text is None:
        return CitedAnswer(diagnostics=["the streaming response has not been consumed yet"])
    notes: list[str] = []
    table = table_from_nodes(response.source_nodes, notes)
    return cite_answer(text, table, policy, notes)
