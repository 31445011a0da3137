"""Run bookkeeping: which root run every LangChain run belongs to, and what is kept per root.

LangChain reports each run with its ``run_id`` and ``parent_run_id``; a run with no tracked
parent starts a root. Everything gathered for a root (its ledger, tool runs, streamed chunks,
the model's answer, notes) lives in one `Root` until the root ends, when it is forgotten.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk
from langchain_core.runnables import ensure_config

from unicite import CitedAnswer
from unicite.sources import SourceLedger
from unicite_langchain._request import Request

__all__ = ["Root", "RunTable", "ToolRun"]


class ToolRun:
    """What a tool or retriever run's start said, needed when it ends."""

    __slots__ = ("arguments", "call_id", "cited", "name", "retrieved")

    def __init__(
        self, name: str, call_id: str | None, arguments: Mapping[str, Any] | None, cited: bool
    ) -> None:
        self.name = name
        self.call_id = call_id
        self.arguments = arguments
        self.cited = cited
        self.retrieved = False
        """Whether a retriever ran inside the tool run (its documents are in the ledger)."""


class Root:
    """Everything kept about one root run until it ends."""

    __slots__ = (
        "adopted",
        "chunks",
        "diagnostics",
        "handlers",
        "ledger",
        "message",
        "metadata",
        "request",
        "requests",
        "run_id",
        "runs",
        "tags",
        "tools",
    )

    def __init__(
        self, run_id: UUID, tags: list[str] | None, metadata: dict[str, Any] | None
    ) -> None:
        self.run_id = run_id
        self.tags = list(tags or [])
        self.metadata = dict(metadata or {})
        self.ledger = SourceLedger()
        """The sources of the run, numbered as the prompt shows them (``[n]`` is sid n)."""
        self.runs: set[UUID] = {run_id}
        self.tools: dict[UUID, ToolRun] = {}
        self.chunks: dict[UUID, list[ChatGenerationChunk | GenerationChunk]] = {}
        self.message: BaseMessage | None = None
        """The latest model message that is an answer (not only tool calls)."""
        self.requests: dict[UUID, Request] = {}
        self.request: Request | None = None
        """The documents the request behind `message` carried."""
        self.diagnostics: list[str] = []
        self.handlers: list[BaseCallbackHandler] | None = None
        """The callback handlers of the run tree, to publish the custom event with."""
        self.adopted: tuple[BaseMessage | None, CitedAnswer] | None = None
        """An answer a `CitationMiddleware` in the run published, with the answer `message`
        was when it did: the run's answer while no later model message answers."""


class RunTable:
    """The roots in progress and the runs in each; safe across threads and tasks.

    ``lock`` guards the table and every `Root`'s mutable fields.
    """

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._roots: dict[UUID, Root] = {}
        self._runs: dict[UUID, Root] = {}

    def __len__(self) -> int:
        """How many runs (root and child) are in progress."""
        with self.lock:
            return len(self._runs)

    @property
    def roots(self) -> dict[UUID, Root]:
        """The roots in progress by run id (a copy)."""
        with self.lock:
            return dict(self._roots)

    def start(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        tags: list[str] | None,
        metadata: dict[str, Any] | None,
    ) -> Root:
        """Track a run that starts: in its parent's root, else as a new root."""
        with self.lock:
            root = self._runs.get(parent_run_id) if parent_run_id is not None else None
            if root is None:
                root = self._roots.get(run_id)
            if root is None:
                root = Root(run_id, tags, metadata)
                self._roots[run_id] = root
            self._runs[run_id] = root
            root.runs.add(run_id)
            capture = root.handlers is None and run_id != root.run_id
        if capture:
            self._capture_handlers(root)
        return root

    def _capture_handlers(self, root: Root) -> None:
        """Keep the callback handlers of the run tree.

        A child run starts inside its parent's config context, whose callback manager holds
        every inheritable handler of the tree (``astream_events``' collector included).
        """
        manager = ensure_config().get("callbacks")
        if isinstance(manager, BaseCallbackManager) and manager.parent_run_id in root.runs:
            with self.lock:
                if root.handlers is None:
                    root.handlers = list(manager.handlers)

    def root_of(self, run_id: UUID, parent_run_id: UUID | None = None) -> Root | None:
        """The root a run (or else its parent) belongs to, while it is in progress."""
        with self.lock:
            root = self._runs.get(run_id)
            if root is None and parent_run_id is not None:
                root = self._runs.get(parent_run_id)
            return root

    def root_locked(self, run_id: UUID) -> Root | None:
        """The root a run belongs to; the caller holds `lock`."""
        return self._runs.get(run_id)

    def end(self, run_id: UUID) -> tuple[Root | None, bool]:
        """Forget a finished run; return its root and whether the run was the root."""
        with self.lock:
            root = self._runs.pop(run_id, None)
            if root is None:
                return None, False
            root.runs.discard(run_id)
            root.tools.pop(run_id, None)
            root.chunks.pop(run_id, None)
            root.requests.pop(run_id, None)
            if run_id != root.run_id:
                return root, False
            self._roots.pop(run_id, None)
            for child in root.runs:
                self._runs.pop(child, None)
            root.runs.clear()
            return root, True

    def note(self, root: Root | None, message: str) -> None:
        """Add a diagnostic to a root's answer."""
        if root is not None:
            with self.lock:
                root.diagnostics.append(message)

    def tool(self, run_id: UUID) -> ToolRun | None:
        """The tool or retriever run `run_id`, while it is in progress."""
        with self.lock:
            root = self._runs.get(run_id)
            return None if root is None else root.tools.get(run_id)
