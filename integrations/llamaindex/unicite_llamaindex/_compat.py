"""What older llama-index-core 0.14 releases lack, supplied where the adapter depends on it.

Up to llama-index-core 0.14.21 a `FunctionTool` made from a plain function runs it in an
executor thread without the caller's context variables: LlamaIndex's active span is lost there,
so what the tool retrieves is not seen inside the agent's tool call (an answer would cite the
tool's text instead of the nodes it retrieved). 0.14.22 copies the context into the thread;
for the releases before it, `FunctionTool` is given the same wrapper. The check is on what the
installed wrapper does, not on a version number.
"""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Awaitable, Callable
from typing import Any

from llama_index.core.tools import function_tool

__all__ = ["copies_context", "sync_to_async"]


def sync_to_async(fn: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """`fn` run in the loop's executor with the caller's context variables (as 0.14.22 does)."""

    async def _async_wrapped_fn(*args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        return await loop.run_in_executor(None, lambda: context.run(fn, *args, **kwargs))

    return _async_wrapped_fn


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def copies_context(wrapper: Callable[..., Any]) -> bool:
    """Whether a sync-to-async wrapper hands the caller's context variables to its thread."""
    code = getattr(wrapper, "__code__", None)
    return code is None or "copy_context" in _names(code)


if not copies_context(function_tool.sync_to_async):
    function_tool.sync_to_async = sync_to_async
