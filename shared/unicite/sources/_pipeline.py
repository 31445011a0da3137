"""`search` / `asearch`: seed 004's ``web_search`` stage, and its canonical source rows.

Queries run through any search function (a callable, a LangChain tool or retriever, a LlamaIndex
retriever); its output is read with the extractor registry, results are interleaved by rank across
the queries, deduplicated by the `SourceLedger`, numbered with ``sid``s, then optionally reconciled,
fetched and filtered. `to_seed_dict` writes a source back as the seed's canonical row.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from unicite._text import int_of, sanitize_display, truncate
from unicite.exceptions import UsageError
from unicite.model import Source
from unicite.sources._common import looks_like_html, shown
from unicite.sources._ledger import SourceLedger, as_source, seed_sid
from unicite.sources._registry import from_tool_output

__all__ = ["asearch", "search", "to_seed_dict", "to_seed_dicts"]

Hook = Mapping[str, Any] | Callable[..., Any] | bool | None
"""A pipeline stage option: ``None``/``False`` (off), ``True`` (defaults), options, a callable."""

_SEED_FIELDS = (
    ("title", "title"),
    ("url", "url"),
    ("text", "snippet"),
    ("content", "content"),
    ("objective_relevance", "relevance"),
)


# --- running calls: bounded, timed, sync callables in daemon threads ---------------------------


@dataclass
class _Outcome:
    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run a sync callable in a daemon thread (the caller's context copied) and await it.

    A daemon thread rather than an executor: a call abandoned after its timeout must neither
    keep the interpreter alive nor make ``asyncio.run`` wait for it on the way out.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(ok: bool, value: Any) -> None:
        if future.done():  # abandoned after a timeout or a cancellation
            if inspect.iscoroutine(value):
                value.close()
        elif ok:
            future.set_result(value)
        else:
            future.set_exception(value)

    def work() -> None:
        ok, value = True, None
        try:
            value = context.run(fn, *args)
        except StopIteration as err:  # a future cannot carry StopIteration
            ok, value = False, RuntimeError(f"StopIteration: {shown(err)}")
        except BaseException as err:
            ok, value = False, err
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:  # the loop is closed: nobody waits for this call any more
            if inspect.iscoroutine(value):
                value.close()

    threading.Thread(target=work, name="unicite-search", daemon=True).start()
    return await future


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Done callback of an abandoned task: read its outcome so asyncio does not warn."""
    if not task.cancelled():
        task.exception()


async def _bounded(
    calls: Sequence[Callable[[], Awaitable[Any]]], concurrency: int, timeout: float | None
) -> list[_Outcome]:
    """Run the calls, at most `concurrency` at once, each bounded by `timeout`; in order."""
    slots = asyncio.Semaphore(concurrency)

    async def one(call: Callable[[], Awaitable[Any]]) -> _Outcome:
        async with slots:
            task = asyncio.ensure_future(call())
            try:
                done, _ = await asyncio.wait({task}, timeout=timeout)
            except BaseException:
                task.cancel()
                task.add_done_callback(_retrieve)
                raise
            if not done:
                task.cancel()
                task.add_done_callback(_retrieve)
                return _Outcome(timed_out=True)
            error = task.exception()
            if error is not None:
                if not isinstance(error, Exception):
                    raise error
                return _Outcome(error=error)
            return _Outcome(value=task.result())

    return list(await asyncio.gather(*(one(call) for call in calls)))


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """Call a sync or async callable: coroutine functions on the loop, others in a thread."""
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - an async __call__ method, not callability
    ):
        result = fn(*args)
    else:
        result = await _in_thread(fn, *args)
    while inspect.isawaitable(result):
        result = await result
    return result


# --- search functions: callables, LangChain tools and retrievers, LlamaIndex retrievers --------


def _tool_name(search_fn: Any) -> str:
    for value in (getattr(search_fn, "name", None), getattr(search_fn, "__name__", None)):
        if isinstance(value, str) and value.strip() and value != "<lambda>":
            return value.strip()
    name = type(search_fn).__name__
    return name if name not in ("function", "partial", "method") else "search"


def _check_search_fn(search_fn: Any) -> None:
    if not (
        callable(getattr(search_fn, "retrieve", None))
        or callable(getattr(search_fn, "invoke", None))
        or callable(search_fn)
    ):
        raise UsageError(
            "search_fn must be a callable, a LangChain tool or retriever (.invoke) or a "
            f"LlamaIndex retriever (.retrieve), got {type(search_fn).__name__}"
        )


def _tool_input(search_fn: Any, query: str, call_id: str) -> Any:
    """What to invoke a LangChain runnable with: a tool call for ``content_and_artifact`` tools.

    Invoked with a plain string such a tool returns only its text content; invoked with a tool
    call it returns a ``ToolMessage`` whose ``artifact`` (the documents, the raw results) the
    extractors read.
    """
    if getattr(search_fn, "response_format", None) != "content_and_artifact":
        return query
    args = getattr(search_fn, "args", None)
    if not isinstance(args, Mapping) or len(args) != 1:
        return query
    (argument,) = args
    return {
        "name": getattr(search_fn, "name", None) or "search",
        "args": {argument: query},
        "id": call_id,
        "type": "tool_call",
    }


async def _run_search(search_fn: Any, query: str, call_id: str, prefer_async: bool) -> Any:
    if callable(getattr(search_fn, "retrieve", None)):  # a LlamaIndex retriever
        if prefer_async and callable(getattr(search_fn, "aretrieve", None)):
            return await _call(search_fn.aretrieve, query)
        return await _call(search_fn.retrieve, query)
    if callable(getattr(search_fn, "invoke", None)):  # a LangChain tool, retriever, runnable
        given = _tool_input(search_fn, query, call_id)
        if prefer_async and callable(getattr(search_fn, "ainvoke", None)):
            return await _call(search_fn.ainvoke, given)
        return await _call(search_fn.invoke, given)
    return await _call(search_fn, query)


# --- options -----------------------------------------------------------------------------------


@dataclass
class _Plan:
    queries: list[str]
    search_fn: Any
    tool: str
    fetch: Callable[[str], Any] | None
    reconcile: Mapping[str, Any] | Callable[..., Any] | None
    filter: Mapping[str, Any] | Callable[..., Any] | None
    max_per_query: int
    concurrency: int
    timeout: float | None
    diagnostics: list[str] | None
    notes: list[str] = field(default_factory=list)


def _positive_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError(f"{name} must be a positive integer, got {value!r}")
    return value


def _hook(name: str, value: Hook) -> Mapping[str, Any] | Callable[..., Any] | None:
    if value is None or value is False:
        return None
    if value is True:
        return {}
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise UsageError(f"{name} options must be keyword names")
        if "diagnostics" in value:
            raise UsageError(f"pass diagnostics to search itself, not in the {name} options")
        return value
    if callable(value):
        return value
    raise UsageError(f"{name} must be None, True, a dict of options or a callable")


def _plan(
    queries: Sequence[str] | str,
    search_fn: Any,
    fetch: Callable[[str], Any] | None,
    reconcile: Hook,
    filter: Hook,
    max_per_query: int,
    concurrency: int,
    timeout: float | None,
    diagnostics: list[str] | None,
) -> _Plan:
    if isinstance(queries, str):
        queries = [queries]
    if not isinstance(queries, Sequence):
        raise UsageError(f"queries must be a string or a list of strings, got {type(queries)}")
    listed = list(queries)
    for query in listed:
        if not isinstance(query, str) or not query.strip():
            raise UsageError(f"each query must be a non-empty string, got {query!r}")
    _check_search_fn(search_fn)
    if fetch is not None and not callable(fetch):
        raise UsageError(f"fetch must be a callable taking a URL, got {type(fetch).__name__}")
    options = _hook("reconcile", reconcile)
    if isinstance(options, Mapping) and not isinstance(options.get("objective", ""), str):
        raise UsageError("the reconcile objective must be a string")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        raise UsageError(f"timeout must be a positive number of seconds or None, got {timeout!r}")
    if diagnostics is not None and not isinstance(diagnostics, list):
        raise UsageError("diagnostics must be a list to append to")
    return _Plan(
        queries=listed,
        search_fn=search_fn,
        tool=_tool_name(search_fn),
        fetch=fetch,
        reconcile=options,
        filter=_hook("filter", filter),
        max_per_query=_positive_int("max_per_query", max_per_query),
        concurrency=_positive_int("concurrency", concurrency),
        timeout=None if timeout is None else float(timeout),
        diagnostics=diagnostics,
    )


def _shown_query(query: str) -> str:
    return repr(truncate(sanitize_display(query), 80))


def _failure(outcome: _Outcome, timeout: float | None) -> str:
    if outcome.timed_out:
        return f"timed out after {timeout:g} s"
    error = outcome.error
    return f"{type(error).__name__}: {truncate(sanitize_display(shown(error)), 300)}"


# --- the stages --------------------------------------------------------------------------------


async def _search_all(plan: _Plan, prefer_async: bool) -> list[list[Source]]:
    """Each query's sources in its rank order, cut to `max_per_query`."""

    def call(qid: int, query: str) -> Callable[[], Awaitable[Any]]:
        return lambda: _run_search(plan.search_fn, query, f"search-{qid}", prefer_async)

    outcomes = await _bounded(
        [call(qid, q) for qid, q in enumerate(plan.queries, 1)], plan.concurrency, plan.timeout
    )
    results: list[list[Source]] = []
    for qid, (query, outcome) in enumerate(zip(plan.queries, outcomes, strict=True), 1):
        where = f"search: query {qid} ({_shown_query(query)})"
        if outcome.timed_out or outcome.error is not None:
            plan.notes.append(f"{where} failed: {_failure(outcome, plan.timeout)}")
            results.append([])
            continue
        if outcome.value is None:
            plan.notes.append(f"{where} returned nothing")
            results.append([])
            continue
        notes: list[str] = []
        found = from_tool_output(
            plan.tool, outcome.value, call_id=f"search-{qid}", diagnostics=notes
        )
        plan.notes.extend(f"{where}: {note}" for note in notes)
        if not found and not notes:
            plan.notes.append(f"{where} found no results")
        results.append(found[: plan.max_per_query])
    return results


def _interleave(results: list[list[Source]]) -> list[Source]:
    """Rank 1 of every query, then rank 2, ...; deduplicated; numbered with sids from 1."""
    ledger = SourceLedger()
    hits: dict[str, list[tuple[int, int]]] = {}
    for rank in range(max((len(r) for r in results), default=0)):
        for qid, found in enumerate(results, 1):
            if rank < len(found):
                kept = ledger.add(found[rank])
                seen = hits.setdefault(kept, [])
                if all(q != qid for q, _ in seen):
                    seen.append((qid, rank + 1))
    numbered = []
    for sid, source in enumerate(ledger.sources, 1):
        found_by = sorted(hits[source.id])
        extras = {
            **source.extras,
            "sid": sid,
            "query_ids": [qid for qid, _ in found_by],
            "query_ranks": [rank for _, rank in found_by],
        }
        numbered.append(source.model_copy(update={"extras": extras}))
    return numbered


def _overlay(original: Source, row: Mapping[str, Any], stage: str, notes: list[str]) -> Source:
    """A stage's reply row (seed 004's ``{sid, o_relevance, q_relevance, reasoning}``) merged in."""
    try:
        reply = as_source({**row, "id": original.id})
    except UsageError as err:
        notes.append(f"{stage}: ignored an unreadable row for sid {seed_sid(original)}: {err}")
        return original
    update: dict[str, Any] = {
        name: getattr(reply, name)
        for name in (
            "title",
            "url",
            "snippet",
            "content",
            "relevance",
            "published_at",
            "modified_at",
        )
        if getattr(reply, name) is not None
    }
    update["extras"] = {**original.extras, **reply.extras, "sid": original.extras["sid"]}
    return original.model_copy(update=update)


def _sid_of(value: object) -> int | None:
    """A row's sid as an int (``3``, ``3.0``, ``"3"``), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        value = int_of(value)
    return value if isinstance(value, int) and value >= 1 else None


def _keep_sids(
    returned: object, by_sid: dict[int, Source], stage: str, notes: list[str]
) -> list[Source]:
    """A stage's result with every source under the sid it was shown with; never renumbered."""
    if not isinstance(returned, (list, tuple)):
        raise UsageError(f"{stage} must return a list of sources, got {type(returned).__name__}")
    by_id = {source.id: sid for sid, source in by_sid.items()}
    kept: list[Source] = []
    seen: set[int] = set()
    for item in returned:
        if isinstance(item, Mapping) and not isinstance(item, Source):
            sid = _sid_of(item.get("sid"))
            if sid is not None and sid in by_sid:
                source = _overlay(by_sid[sid], item, stage, notes)
            else:
                source = as_source(item)
                sid = seed_sid(source) or by_id.get(source.id)
        elif isinstance(item, Source):
            source = item
            sid = seed_sid(item) or by_id.get(item.id)
        else:
            notes.append(f"{stage}: ignored a {type(item).__name__} in its result")
            continue
        if sid is None or sid not in by_sid:
            notes.append(f"{stage}: dropped {source.id}, a source the search did not return")
            continue
        if sid in seen:
            notes.append(f"{stage}: dropped a second source under sid {sid}")
            continue
        seen.add(sid)
        if source.extras.get("sid") != sid:
            source = source.model_copy(update={"extras": {**source.extras, "sid": sid}})
        kept.append(source)
    return kept


def _reconcile(plan: _Plan, sources: list[Source]) -> list[Source]:
    from unicite import sources as public  # the public name, which may be extended or patched

    by_sid = {source.extras["sid"]: source for source in sources}
    if callable(plan.reconcile):
        returned = plan.reconcile(sources, queries=list(plan.queries))
    else:
        options = dict(plan.reconcile or {})
        objective = options.pop("objective", "")
        returned = public.reconcile(
            sources, objective, list(plan.queries), **options, diagnostics=plan.notes
        )
    return _keep_sids(returned, by_sid, "reconcile", plan.notes)


def _filter(plan: _Plan, sources: list[Source]) -> list[Source]:
    from unicite import sources as public

    by_sid = {source.extras["sid"]: source for source in sources}
    if callable(plan.filter):
        returned = plan.filter(sources)
    else:
        returned = public.filter_content(sources, **dict(plan.filter or {}), diagnostics=plan.notes)
    return _keep_sids(returned, by_sid, "filter", plan.notes)


def _page(output: Any, url: str, notes: list[str]) -> Source | None:
    """What a fetch returned, as a page: text as it is, HTML and other shapes through readers."""
    if isinstance(output, str) and not looks_like_html(output):
        return Source(url=url, content=output) if output.strip() else None
    read: list[str] = []
    pages = from_tool_output("fetch", output, arguments={"url": url}, diagnostics=read)
    notes.extend(read)
    return next((page for page in pages if page.content), None)


async def _fetch_all(plan: _Plan, sources: list[Source]) -> list[Source]:
    fetch = plan.fetch
    if fetch is None:
        return sources
    wanted = [n for n, source in enumerate(sources) if source.url and not source.content]

    def call(url: str) -> Callable[[], Awaitable[Any]]:
        return lambda: _call(fetch, url)

    urls = [str(sources[n].url) for n in wanted]
    outcomes = await _bounded([call(url) for url in urls], plan.concurrency, plan.timeout)
    filled = list(sources)
    for n, url, outcome in zip(wanted, urls, outcomes, strict=True):
        where = f"fetch {truncate(sanitize_display(url), 200)} (sid {seed_sid(sources[n])})"
        if outcome.timed_out or outcome.error is not None:
            plan.notes.append(
                f"{where} failed: {_failure(outcome, plan.timeout)}; kept without content"
            )
            continue
        notes: list[str] = []
        page = _page(outcome.value, url, notes)
        plan.notes.extend(f"{where}: {note}" for note in notes)
        if page is None:
            if not notes:
                plan.notes.append(f"{where} returned no text; kept without content")
            continue
        source = filled[n]
        update: dict[str, Any] = {"content": page.content}
        for name in ("title", "published_at", "modified_at"):
            if getattr(source, name) is None and getattr(page, name) is not None:
                update[name] = getattr(page, name)
        filled[n] = source.model_copy(update=update)
    return filled


async def _pipeline(plan: _Plan, prefer_async: bool) -> list[Source]:
    try:
        sources = _interleave(await _search_all(plan, prefer_async))
        if sources and plan.reconcile is not None:
            sources = _reconcile(plan, sources)
        if sources:
            sources = await _fetch_all(plan, sources)
        if sources and plan.filter is not None:
            sources = _filter(plan, sources)
        return sources
    finally:
        if plan.diagnostics is not None:
            plan.diagnostics.extend(plan.notes)


def search(
    queries: Sequence[str] | str,
    search_fn: Any,
    *,
    fetch: Callable[[str], Any] | None = None,
    reconcile: Hook = None,
    filter: Hook = None,
    max_per_query: int = 10,
    concurrency: int = 8,
    timeout: float | None = 30.0,
    diagnostics: list[str] | None = None,
) -> list[Source]:
    """Run search queries and return their results as deduplicated, numbered sources.

    Seed 004's ``web_search`` stage. In order:

    1. ``search_fn(query)`` runs for each query, at most `concurrency` at once, each bounded by
       `timeout`. Its output is read with `from_tool_output` (under the search function's
       name), so Tavily, Serper, Brave or Exa JSON, LangChain documents, LlamaIndex nodes and MCP
       results all work. A query whose search raises, times out or returns nothing readable
       adds a diagnostic and no results.
    2. The first `max_per_query` results of each query are interleaved by rank (the first result
       of every query in the order given, then the second, ...) and deduplicated as the
       `SourceLedger` does (same page by `page_key`: the best-ranked sighting is kept and later
       ones fill in what it lacks). Each source is numbered in that order: ``extras["sid"]`` is
       1, 2, ...; ``extras["query_ids"]`` lists the 1-based numbers of the queries that
       returned it and ``extras["query_ranks"]`` its 1-based rank in each of them (same order).
    3. With `reconcile`, `unicite.sources.reconcile` keeps the sources relevant to the task,
       scored on their snippets (``True`` for the defaults, or a dict of its options:
       ``{"objective": "...", "llm": judge, "min_relevance": 0.2, ...}``; the queries are
       passed for you). A callable replaces it: ``reconcile(sources, queries=[...])`` returns
       the sources to keep, as `Source` objects or seed rows (a reply row such as
       ``{"sid": 3, "o_relevance": 0.9, "reasoning": "..."}`` is merged into source 3).
    4. With `fetch`, ``fetch(url)`` (sync or async) fills the `content` of every kept source
       that has a URL and no content, at most `concurrency` at once, each bounded by
       `timeout`. Text is taken as it is; HTML and other shapes (bytes, JSON, a response) are
       read like a fetch tool's output. A failed or timed-out fetch keeps the source without
       content and adds a diagnostic naming the URL and the error.
    5. With `filter`, `unicite.sources.filter_content` drops near-duplicate pages (``True``
       for the defaults, a dict of its options, or a callable ``filter(sources)`` returning
       the sources to keep).

    The sids never change after step 2: a source dropped by a later stage leaves a gap, since
    a model may already have been shown the numbers. `to_seed_dicts` writes the result as
    seed 004's rows.

    Sync search and fetch callables run in daemon threads; a call that overruns `timeout` is
    abandoned (its result ignored) and its slot goes to the next call. Coroutine functions run
    on an event loop of this call's own (in a helper thread when this thread already runs
    one); use `asearch` from async code.

    Args:
        queries: One query or several; each a non-empty string.
        search_fn: A callable ``query -> results`` (sync or async), a LangChain tool,
            retriever or runnable (``.invoke``), or a LlamaIndex retriever (``.retrieve``).
        fetch: A callable ``url -> page text`` (sync or async), to fill in `content`.
        reconcile: ``None`` (off), ``True``, options for `unicite.sources.reconcile`, or a
            callable.
        filter: ``None`` (off), ``True``, options for `unicite.sources.filter_content`, or a
            callable.
        max_per_query: Results kept from each query, the best-ranked.
        concurrency: Searches, and then fetches, in flight at once.
        timeout: Seconds each search or fetch may take; ``None`` for no limit.
        diagnostics: A list to append what was odd, failed or dropped to.

    Returns:
        The sources, in sid order (each with ``extras["sid"]``).

    Raises:
        UsageError: An argument has the wrong type or is out of range, or a stage's options
            are rejected by `reconcile` / `filter_content`.
    """
    plan = _plan(
        queries,
        search_fn,
        fetch,
        reconcile,
        filter,
        max_per_query,
        concurrency,
        timeout,
        diagnostics,
    )
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_pipeline(plan, prefer_async=False))
    # This thread already runs an event loop (a notebook, an async framework calling sync
    # code): run ours in a helper thread, with the caller's context.
    box: list[list[Source]] = []
    errors: list[BaseException] = []
    context = contextvars.copy_context()

    def work() -> None:
        try:
            box.append(context.run(asyncio.run, _pipeline(plan, prefer_async=False)))
        except BaseException as err:
            errors.append(err)

    helper = threading.Thread(target=work, name="unicite-search-loop", daemon=True)
    helper.start()
    helper.join()
    if errors:
        raise errors[0]
    return box[0]


async def asearch(
    queries: Sequence[str] | str,
    search_fn: Any,
    *,
    fetch: Callable[[str], Any] | None = None,
    reconcile: Hook = None,
    filter: Hook = None,
    max_per_query: int = 10,
    concurrency: int = 8,
    timeout: float | None = 30.0,
    diagnostics: list[str] | None = None,
) -> list[Source]:
    """`search` for async code: the same stages and result, on the running event loop.

    Searches and fetches are asyncio tasks, at most `concurrency` in flight (a semaphore), each
    cancelled after `timeout`. LangChain tools and retrievers are called with ``.ainvoke``,
    LlamaIndex retrievers with ``.aretrieve``; coroutine functions are awaited and sync
    callables run in daemon threads, so none of them blocks the loop. See `search` for the
    arguments.
    """
    plan = _plan(
        queries,
        search_fn,
        fetch,
        reconcile,
        filter,
        max_per_query,
        concurrency,
        timeout,
        diagnostics,
    )
    return await _pipeline(plan, prefer_async=True)


# --- seed 004's canonical rows -----------------------------------------------------------------


def _iso(moment: datetime) -> str:
    """ISO 8601, ``Z`` for UTC (naive times are UTC, as everywhere in unicite)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    text = moment.isoformat()
    return text[: -len("+00:00")] + "Z" if text.endswith("+00:00") else text


def to_seed_dict(source: Source | Mapping[str, Any]) -> dict[str, Any]:
    """A source as seed 004's canonical row; absent values are left out.

    The keys, in this order: ``sid`` (``extras["sid"]``), ``title``, ``url``, ``text`` (the
    snippet), ``content``, ``objective_relevance`` (the relevance), ``query_relevance``,
    ``reasoning`` (from extras), ``published_time_iso`` and ``modified_time_iso`` (ISO 8601,
    ``Z`` for UTC). ``Source(**row)`` reads the row back into the same source.

    Raises:
        UsageError: `source` is neither a `Source` nor a dict of its fields.
    """
    item = as_source(source)
    row: dict[str, Any] = {}
    sid = seed_sid(item)
    if sid is not None:
        row["sid"] = sid
    for key, name in _SEED_FIELDS:
        value = getattr(item, name)
        if value is not None:
            row[key] = value
    for key in ("query_relevance", "reasoning"):
        value = item.extras.get(key)
        if value is not None and value != "":
            row[key] = value
    if item.published_at is not None:
        row["published_time_iso"] = _iso(item.published_at)
    if item.modified_at is not None:
        row["modified_time_iso"] = _iso(item.modified_at)
    return row


def to_seed_dicts(sources: Sequence[Source | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Sources as seed 004's rows (see `to_seed_dict`), numbered as they are shown.

    Sources with sids keep them; sources without any are numbered by position (1, 2, ...).

    Raises:
        UsageError: Some sources have a sid and others not, or two share one: the rows would
            not name each source by one number.
    """
    if isinstance(sources, (str, bytes)) or not isinstance(sources, Sequence):
        raise UsageError("sources must be a list of sources")
    items = [as_source(source) for source in sources]
    sids = [seed_sid(item) for item in items]
    if all(sid is None for sid in sids):
        return [{"sid": n, **to_seed_dict(item)} for n, item in enumerate(items, 1)]
    if any(sid is None for sid in sids) or len(set(sids)) != len(sids):
        shown_sids = ", ".join(str(sid) for sid in sids[:8])
        raise UsageError(
            f"the sources' sids ({shown_sids}) do not number them one to one: give each a "
            "distinct sid, or none"
        )
    return [to_seed_dict(item) for item in items]
