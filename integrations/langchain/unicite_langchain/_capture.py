"""Sources from retriever and tool runs, read into the root run's `SourceLedger`.

Retrieved documents and tool outputs go through the `unicite.sources` extractor registry.
A retriever returning garbage (items that are not documents, metadata that cannot be read)
loses only the unreadable part, and a diagnostic says what was left out.

A tool that runs a retriever and returns its documents as one text (``create_retriever_tool``
with ``response_format="content"``) loses their titles and URLs in that text:
`collect_retrieved` gathers the documents the retriever runs inside a tool call returned, and
`tool_sources` reads them, one source each, in place of the text.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.tracers.context import register_configure_hook
from pydantic_core import to_jsonable_python

from unicite import Source
from unicite.exceptions import describe_error
from unicite.sources import ExtractorRegistry, default_registry, from_tool_output
from unicite_langchain._runs import Root, RunTable, ToolRun

__all__ = [
    "CITED_TOOL_METADATA_KEY",
    "DocumentSources",
    "SourceCapture",
    "collect_retrieved",
    "read_documents",
    "run_name",
    "tool_sources",
]

CITED_TOOL_METADATA_KEY = "unicite_cited_tool"
"""Run metadata marking a `cite_tools` run: it adds its sources to the ledger itself."""


class DocumentSources:
    """Sources of retrieved documents already read, so a corpus is not re-read on every run.

    RAG retrieves from a fixed corpus: the same documents come back run after run. Each is
    keyed by its id, text and metadata (and the extractor that read it); a hit gives the same
    `Source` the registry made, re-ranked for its position. Bounded (least recently used out).
    """

    def __init__(self, registry: ExtractorRegistry | None, size: int = 4096) -> None:
        self._registry = registry
        self._size = size
        self.lock = threading.Lock()
        self._entries: OrderedDict[tuple[Any, ...], Source] = OrderedDict()

    @staticmethod
    def _key(extractor: int, name: str, document: Any) -> tuple[Any, ...] | None:
        if not isinstance(document, Document):
            return None
        try:
            # A string stands for itself; anything else by its type and repr, so 1, 1.0, True
            # and "1" differ. Metadata in another order is a miss, never a wrong hit.
            metadata = tuple(
                (k, v) if type(v) is str and type(k) is str else (repr(k), type(v), repr(v))
                for k, v in document.metadata.items()
            )
        except Exception:
            return None
        return (extractor, name, document.id, document.page_content, metadata)

    def _keys(self, name: str, documents: list[Any]) -> list[tuple[Any, ...] | None]:
        # The extractor that reads this tool name is part of the key: a new registration
        # for the name reads its documents afresh.
        extractor = id((self._registry or default_registry).extractor_for(name))
        return [self._key(extractor, name, document) for document in documents]

    def get(self, name: str, documents: list[Any]) -> list[Source] | None:
        """The sources of all `documents` when every one was read before, else None."""
        keys = self._keys(name, documents)
        found: list[Source] = []
        with self.lock:
            for key in keys:
                source = None if key is None else self._entries.get(key)
                if key is None or source is None:
                    return None
                self._entries.move_to_end(key)
                found.append(source)
        return [
            source if source.rank == rank else source.model_copy(update={"rank": rank})
            for rank, source in enumerate(found)
        ]

    def put(self, name: str, documents: list[Any], sources: list[Source | None]) -> None:
        """Remember what the registry read from each document (one source per document)."""
        if len(sources) != len(documents):
            return
        keys = self._keys(name, documents)
        with self.lock:
            for key, source in zip(keys, sources, strict=True):
                if key is not None and source is not None:
                    self._entries[key] = source
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)


class SourceCapture:
    """Reads what retriever and tool runs return into their root's ledger.

    ``documents`` may be shared by several captures (one per call of a `with_citations`
    runnable): the sources of a document depend on the document only.
    """

    def __init__(self, runs: RunTable, registry: ExtractorRegistry | None) -> None:
        self._runs = runs
        self.registry = registry
        self.documents = DocumentSources(registry)

    def retriever_started(self, root: Root, run_id: UUID, name: str, query: str) -> None:
        """Remember a retriever run's name and query, read with its documents."""
        with self._runs.lock:
            root.tools[run_id] = ToolRun(name, None, {"query": query}, False)

    def tool_started(
        self,
        root: Root,
        run_id: UUID,
        name: str,
        call_id: Any,
        arguments: Any,
        metadata: Mapping[str, Any] | None,
    ) -> None:
        """Remember a tool run's name, arguments and the model's tool-call id."""
        tool = ToolRun(
            name,
            call_id if isinstance(call_id, str) and call_id else None,
            arguments if isinstance(arguments, Mapping) else None,
            bool((metadata or {}).get(CITED_TOOL_METADATA_KEY)),
        )
        with self._runs.lock:
            root.tools[run_id] = tool

    def retrieved(
        self, root: Root, run_id: UUID, documents: list[Any], parent_run_id: UUID | None = None
    ) -> None:
        """Add a retriever's documents to the ledger (from the cache when read before)."""
        with self._runs.lock:
            tool = root.tools.get(run_id)
            parent = root.tools.get(parent_run_id) if parent_run_id is not None else None
            if parent is not None:
                parent.retrieved = True
        if tool is None:
            tool = ToolRun("retriever", None, None, False)
        sources = self.documents.get(tool.name, documents)
        if sources is not None:
            root.ledger.add_all(sources)
            return
        notes: list[str] = []
        found = read_documents(
            tool.name, documents, notes, arguments=tool.arguments, registry=self.registry
        )
        ids = root.ledger.add_all(found)
        if notes:
            with self._runs.lock:
                root.diagnostics.extend(notes)
        self.documents.put(tool.name, documents, [root.ledger.get(i) for i in ids])

    def tool_output(self, root: Root, run_id: UUID, output: Any) -> None:
        """Add the sources in a tool's output (``ToolMessage`` content or artifact)."""
        with self._runs.lock:
            tool = root.tools.get(run_id)
        if tool is None:
            tool = ToolRun("tool", None, None, False)
        if tool.cited:
            return  # a cite_tools wrapper added these sources itself
        if tool.retrieved:
            # A retriever ran inside the tool: its documents, one source each, are the tool's
            # sources; output that reads only as raw text (their texts joined) adds nothing.
            notes: list[str] = []
            found = from_tool_output(
                tool.name,
                output,
                call_id=tool.call_id,
                arguments=tool.arguments,
                diagnostics=notes,
                registry=self.registry,
            )
            if all(source.kind == "tool" for source in found):
                return
            root.ledger.add_all(found)
            if notes:
                with self._runs.lock:
                    root.diagnostics.extend(notes)
            return
        root.ledger.add_tool_output(
            tool.name,
            output,
            call_id=tool.call_id,
            arguments=tool.arguments,
            registry=self.registry,
        )

    def failed(self, root: Root, run_id: UUID, error: BaseException, what: str) -> None:
        """A failed tool or retriever gives no sources; the answer says so."""
        with self._runs.lock:
            tool = root.tools.get(run_id)
            name = tool.name if tool is not None else what
            root.diagnostics.append(f"{name} failed: {describe_error(error)}")


def run_name(serialized: dict[str, Any] | None, kwargs: Mapping[str, Any], default: str) -> str:
    """A tool or retriever run's name: the run's, else its serialized name or class."""
    name = kwargs.get("name")
    if isinstance(name, str) and name.strip():
        return name
    if isinstance(serialized, Mapping):
        name = serialized.get("name")
        if isinstance(name, str) and name.strip():
            return name
        ident = serialized.get("id")
        if isinstance(ident, list) and ident and isinstance(ident[-1], str):
            return ident[-1]
    return default


def read_documents(
    name: str,
    documents: list[Any],
    notes: list[str],
    *,
    arguments: Mapping[str, Any] | None = None,
    registry: ExtractorRegistry | None = None,
    call_id: str | None = None,
) -> list[Source]:
    """The sources of retrieved documents; garbage among them is skipped and reported in `notes`.

    A retriever may return items that are not documents, or documents whose metadata cannot
    be read as data (objects that fail to serialize, or raise on ``str()``). Read as a whole,
    such a list can lose its good documents silently; so when fewer sources than documents
    come back, or the list was read as raw output, it is read again without what cannot be
    read.
    """
    read: list[str] = []
    found: list[Source] | None = None
    if all(_well_formed(document) for document in documents):
        try:
            found = from_tool_output(
                name,
                documents,
                call_id=call_id,
                arguments=arguments,
                diagnostics=read,
                registry=registry,
            )
        except Exception:
            found = None
    # A list the extractors could not read as documents comes back as one raw "tool" source.
    if (
        found is not None
        and len(found) >= len(documents)
        and not any(source.kind == "tool" for source in found)
    ):
        notes.extend(read)
        return found
    readable = _readable_documents(name, documents, notes)
    read.clear()
    try:
        found = from_tool_output(
            name,
            readable,
            call_id=call_id,
            arguments=arguments,
            diagnostics=read,
            registry=registry,
        )
    except Exception as err:
        notes.append(f"{name}: its documents could not be read ({describe_error(err)})")
        return []
    notes.extend(read)
    if len(found) < len(documents):
        notes.append(
            f"{name}: {len(documents) - len(found)} of {len(documents)} retrieved items "
            "gave no source"
        )
    return found


def _well_formed(document: Any) -> bool:
    """Whether a retrieved item is a `Document` as LangChain types it, its metadata plain data.

    Metadata that is not plain data is read here rather than by the extractors, so what
    cannot be read is named in a diagnostic instead of vanishing.
    """
    return (
        isinstance(document, Document)
        and isinstance(document.page_content, str)
        and isinstance(document.metadata, dict)
        and all(isinstance(k, str) and _is_data(v) for k, v in document.metadata.items())
    )


def _is_data(value: Any) -> bool:
    if value is None or isinstance(value, (str, int, float)):
        return True
    try:
        to_jsonable_python(value)
    except Exception:
        return False
    return True


def _plain(value: Any) -> tuple[bool, Any]:
    """Whether a metadata value can be read as data, and the value to read.

    NumPy scalars (scores and ids some vector stores put in metadata) become Python numbers.
    """
    try:
        to_jsonable_python(value)
        return True, value
    except Exception:
        item = getattr(value, "item", None)
    if not callable(item):
        return False, None
    try:
        number = item()
        to_jsonable_python(number)
    except Exception:
        return False, None
    return True, number


def _readable_documents(name: str, documents: list[Any], notes: list[str]) -> list[Any]:
    """The readable part of a retriever's output, with what cannot be read left out.

    Items that are neither documents nor mappings are skipped; a document keeps only the
    metadata values that can be read as data, and text that is not a string is dropped.
    Each thing left out is reported in `notes`.
    """
    readable: list[Any] = []
    skipped: list[str] = []
    for number, item in enumerate(documents, start=1):
        if isinstance(item, Mapping):
            readable.append(item)
            continue
        if not isinstance(item, Document):
            skipped.append(type(item).__name__)
            continue
        metadata = item.metadata if isinstance(item.metadata, Mapping) else {}
        kept: dict[str, Any] = {}
        dropped: list[str] = []
        for key, value in metadata.items():
            ok, plain = _plain(value)
            if ok and isinstance(key, str):
                kept[key] = plain
            else:
                dropped.append(key if isinstance(key, str) else type(key).__name__)
        text = item.page_content
        if not isinstance(text, str):
            notes.append(f"{name}: document {number} has no text ({type(text).__name__})")
            text = ""
        if dropped:
            notes.append(
                f"{name}: metadata of document {number} could not be read and was ignored: "
                + ", ".join(sorted(dropped)[:10])
                + (f" (and {len(dropped) - 10} more)" if len(dropped) > 10 else "")
            )
        document_id = item.id if isinstance(item.id, str) else None
        readable.append(Document.model_construct(id=document_id, page_content=text, metadata=kept))
    if skipped:
        kinds = ", ".join(sorted(set(skipped)))
        notes.append(f"{name}: {len(skipped)} retrieved items are not documents ({kinds}); skipped")
    return readable


# --- documents retrieved inside a tool call -----------------------------------------------------


class _Retrieved(BaseCallbackHandler):
    """Collects the documents of every retriever run it is attached to, in the order they end."""

    run_inline = True
    ignore_llm = True
    ignore_chat_model = True
    ignore_chain = True
    ignore_agent = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.documents: list[Any] = []

    def on_retriever_end(self, documents: Sequence[Any], **kwargs: Any) -> None:
        """Keep the documents a retriever returned."""
        with self.lock:
            self.documents.extend(documents)


_RETRIEVED: ContextVar[_Retrieved | None] = ContextVar("unicite_retrieved", default=None)
# Every callback manager configured while the variable is set (the tool's run, the runs inside
# it) gets the collector as an inheritable handler: the way LangChain's own run collectors work.
register_configure_hook(_RETRIEVED, inheritable=True)


@contextmanager
def collect_retrieved() -> Iterator[list[Any]]:
    """Collect what retriever runs started inside the block return.

    Yields the list the documents are added to as each retriever run ends. The collector lives
    in a context variable: each thread and asyncio task collects its own tool call's documents.
    """
    collector = _Retrieved()
    token = _RETRIEVED.set(collector)
    try:
        yield collector.documents
    finally:
        _RETRIEVED.reset(token)


def tool_sources(
    name: str,
    output: Any,
    documents: list[Any],
    notes: list[str],
    *,
    call_id: str | None = None,
    arguments: Mapping[str, Any] | str | None = None,
    registry: ExtractorRegistry | None = None,
) -> list[Source]:
    """The sources of one tool result: its own, else the documents its retrievers returned.

    A result that reads only as raw text (one ``"tool"`` source) while retrievers ran inside
    the call stands for those documents (``create_retriever_tool`` joins their texts and drops
    their metadata): each document becomes its own source, its title and URL from its metadata.
    What was odd or left out goes to `notes`.
    """
    read: list[str] = []
    found = from_tool_output(
        name, output, call_id=call_id, arguments=arguments, diagnostics=read, registry=registry
    )
    if documents and all(source.kind == "tool" for source in found):
        retrieved: list[str] = []
        sources = read_documents(
            name,
            list(documents),
            retrieved,
            arguments=arguments if isinstance(arguments, Mapping) else None,
            registry=registry,
            call_id=call_id,
        )
        if sources:
            notes.extend(retrieved)
            return sources
    notes.extend(read)
    return found
