"""`CitationStreamingCallback`: streamed text whose markers already carry their final numbers."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from haystack import Document
from haystack.dataclasses import StreamingChunk

from unicite import CitedAnswer, CitePolicy, MarkerStream
from unicite_haystack._documents import to_sources

__all__ = ["CitationStreamingCallback"]

SyncCallback = Callable[[StreamingChunk], None]
AsyncCallback = Callable[[StreamingChunk], Awaitable[None]]


class CitationStreamingCallback:
    """A Haystack ``streaming_callback`` that renumbers markers as the text streams.

    Give it the documents the prompt numbers (1..n in order) and, optionally, your own
    callback: each text chunk goes through `unicite.MarkerStream`, and your callback gets a
    copy of the chunk whose ``content`` is the rewritten text (chunks without text, such as
    tool-call deltas, pass unchanged). Joined, the contents your callback got equal
    ``answer.text`` and the ``data`` of `CitedAnswerBuilder`'s answer for the same reply and
    documents: what was shown never has to change.

    Pass the instance as a generator's ``streaming_callback`` for ``run``, and its `acall`
    for ``run_async`` (your callback may then be sync or async). The stream closes on the
    chunk carrying a ``finish_reason``; `close` closes it by hand (idempotent). One instance
    serves one reply.

    Example:
        ```python
        from haystack import Document
        from haystack.dataclasses import StreamingChunk
        from unicite_haystack import CitationStreamingCallback

        shown = []
        docs = [Document(content="Köln liegt am Rhein."), Document(content="Lyon est en France.")]
        stream = CitationStreamingCallback(docs, lambda chunk: shown.append(chunk.content))
        for piece in ["Lyon [", "2] et Köln [1]."]:
            stream(StreamingChunk(content=piece))
        stream.close()
        assert "".join(shown) == stream.answer.text == "Lyon [1] et Köln [2]."
        ```
    """

    def __init__(
        self,
        documents: Sequence[Document] = (),
        callback: SyncCallback | AsyncCallback | None = None,
        *,
        policy: CitePolicy | None = None,
    ) -> None:
        """Create the callback.

        Args:
            documents: The documents the prompt numbers, in order.
            callback: Your own streaming callback; it receives the rewritten chunks.
            policy: The `unicite.CitePolicy` the answer is cited with (its ``renumber`` and
                ``on_invalid`` apply while streaming).
        """
        policy = policy or CitePolicy()
        self.callback = callback
        self._enabled = policy.enabled
        sources, self._notes = to_sources(documents)
        self._stream = MarkerStream(
            sources,
            renumber=policy.renumber,
            on_invalid=policy.on_invalid,
            keep_unused=policy.sources == "all",
        )
        self._text: list[str] = []
        self._closed = False
        self._last: StreamingChunk | None = None
        self._lock = threading.Lock()

    @property
    def answer(self) -> CitedAnswer:
        """The answer streamed so far (final once closed)."""
        if not self._enabled:
            return CitedAnswer(text="".join(self._text))
        answer = self._stream.answer
        if self._notes:
            answer = answer.model_copy(update={"diagnostics": [*answer.diagnostics, *self._notes]})
        return answer

    def _rewrite(self, chunk: StreamingChunk) -> list[StreamingChunk]:
        with self._lock:
            if self._closed:
                return [chunk]
            self._last = chunk
            live = chunk.content
            if chunk.content:
                self._text.append(chunk.content)
                if self._enabled:
                    live = self._stream.feed(chunk.content)
            # The finish reason moves to the last chunk, after the held-back text.
            out = [replace(chunk, content=live, finish_reason=None)]
            if chunk.finish_reason is not None:
                rest = self._close()
                if rest:
                    out.append(_text_chunk(chunk, rest))
                out[-1] = replace(out[-1], finish_reason=chunk.finish_reason)
            return out

    def _close(self) -> str:
        if self._closed:
            return ""
        self._closed = True
        return self._stream.close() if self._enabled else ""

    def close(self) -> StreamingChunk | None:
        """End the stream; the held-back text, also sent to your callback (None if none)."""
        with self._lock:
            rest = self._close()
            base = self._last
        if not rest:
            return None
        chunk = _text_chunk(base, rest)
        if self.callback is not None and not asyncio.iscoroutinefunction(self.callback):
            self.callback(chunk)
        return chunk

    async def aclose(self) -> StreamingChunk | None:
        """`close` for a stream fed through `acall`."""
        with self._lock:
            rest = self._close()
            base = self._last
        if not rest:
            return None
        chunk = _text_chunk(base, rest)
        await self._emit_async([chunk])
        return chunk

    def __call__(self, chunk: StreamingChunk) -> None:
        """Take one chunk from a synchronous generator run."""
        for piece in self._rewrite(chunk):
            if self.callback is not None:
                self.callback(piece)

    async def acall(self, chunk: StreamingChunk) -> None:
        """Take one chunk from an asynchronous generator run (``run_async``)."""
        await self._emit_async(self._rewrite(chunk))

    async def _emit_async(self, pieces: list[StreamingChunk]) -> None:
        if self.callback is None:
            return
        for piece in pieces:
            result: Any = self.callback(piece)
            if asyncio.iscoroutine(result):
                await result


def _text_chunk(base: StreamingChunk | None, text: str) -> StreamingChunk:
    if base is None:
        return StreamingChunk(content=text)
    return StreamingChunk(
        content=text, meta=dict(base.meta), component_info=base.component_info, index=base.index
    )
