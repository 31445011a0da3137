"""`reconcile`: keep the sources that bear on the task, scored locally (BM25) or by an LLM."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from unicite._text import sanitize_display, truncate
from unicite.exceptions import UsageError
from unicite.model import Source
from unicite.sources._ledger import as_source

__all__ = ["reconcile", "terms"]

_K1 = 1.2
_B = 0.75
_PREVIEW = 2000  # characters of content scored when a source has no snippet
_WORD_RE = re.compile(r"\w+")
_CJK_RE = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_STOPWORD_TEXT = """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself
    just me more most my no nor not of off on once only or other our ours out over own same
    she should so some such than that the their theirs them then there these they this those
    through to too under until up very was we were what when where which while who whom why
    will with would you your yours
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _stem(word: str) -> str:
    """A light English plural/possessive stemmer: enough to match ``cities`` with ``city``."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms(text: str) -> list[str]:
    """Index terms of a text: casefolded words without stopwords, CJK split per character."""
    out: list[str] = []
    for match in _WORD_RE.finditer(text.casefold()):
        word = match.group()
        if _CJK_RE.search(word):
            out.extend(ch for ch in word if not ch.isspace())
        elif word not in _STOPWORDS:
            out.append(_stem(word))
    return out


def _preview(source: Source) -> str:
    return source.snippet or (source.content or "")[:_PREVIEW]


def _bm25(documents: list[list[str]], queries: list[list[str]]) -> list[float]:
    """Per document, the best BM25 score over the queries, each scaled by its top score."""
    count = len(documents)
    frequencies = [Counter(doc) for doc in documents]
    lengths = [len(doc) for doc in documents]
    average = (sum(lengths) / count) or 1.0
    document_frequency: Counter[str] = Counter()
    for freq in frequencies:
        document_frequency.update(freq.keys())
    best = [0.0] * count
    for query in queries:
        unique = list(dict.fromkeys(query))
        idf = {
            t: math.log(1 + (count - document_frequency[t] + 0.5) / (document_frequency[t] + 0.5))
            for t in unique
        }
        scores = []
        for freq, length in zip(frequencies, lengths, strict=True):
            norm = _K1 * (1 - _B + _B * length / average)
            scores.append(
                sum(idf[t] * freq[t] * (_K1 + 1) / (freq[t] + norm) for t in unique if t in freq)
            )
        top = max(scores, default=0.0)
        if top > 0:
            best = [max(b, s / top) for b, s in zip(best, scores, strict=True)]
    return best


_PROMPT = """You judge which sources help with a task. Score each source from 0.0 (irrelevant) to \
1.0 (directly answers it), using only its title and preview.

Task: {objective}
{queries}
Sources:
{sources}

Reply with JSON only, one entry per source:
{{"scores": [{{"sid": 1, "relevance": 0.8}}, {{"sid": 2, "relevance": 0.0}}]}}"""


def _prompt(objective: str, queries: Sequence[str], sources: list[Source]) -> str:
    blocks = []
    for n, source in enumerate(sources, 1):
        title = sanitize_display(source.title or source.domain or source.url or "Untitled")
        preview = truncate(sanitize_display(_preview(source)), 500)
        blocks.append(f"[{n}] {title}\n{preview}".rstrip())
    listed = "".join(f"- {q}\n" for q in queries)
    return _PROMPT.format(
        objective=sanitize_display(objective),
        queries=f"Search queries:\n{sanitize_display(listed, allow_newlines=True)}"
        if listed
        else "",
        sources="\n\n".join(blocks),
    )


_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def _json_in(reply: str) -> Any:
    fenced = _FENCE_RE.search(reply)
    text = fenced.group(1) if fenced else reply
    decoder = json.JSONDecoder()
    for index, char in enumerate(text):
        if char in "[{":
            try:
                return decoder.raw_decode(text, index)[0]
            except ValueError:
                continue
    raise ValueError("no JSON object in the reply")


def _number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


# Seed 004's reconciler replies with "o_relevance" (and "objective_relevance" on its rows).
_SCORE_KEYS = ("relevance", "score", "o_relevance", "objective_relevance")


def _llm_scores(reply: str, count: int, diagnostics: list[str]) -> dict[int, float]:
    """Scores by 1-based sid from an LLM reply (the JSON contract of `reconcile`)."""
    data = _json_in(reply)
    if isinstance(data, Mapping) and isinstance(data.get("scores"), (list, Mapping)):
        data = data["scores"]
    pairs: list[tuple[object, object]] = []
    if isinstance(data, Mapping):
        pairs = list(data.items())
    elif isinstance(data, list):
        for entry in data:
            if isinstance(entry, Mapping):
                sid = next((entry[k] for k in ("sid", "id", "index", "source") if k in entry), None)
                value = next((entry[k] for k in _SCORE_KEYS if k in entry), None)
                pairs.append((sid, value))
    else:
        raise ValueError("the reply's JSON is neither an object nor a list")
    scores: dict[int, float] = {}
    for sid_value, raw in pairs:
        sid = _number(sid_value)
        value = _number(raw)
        if sid is None or not sid.is_integer() or not 1 <= sid <= count:
            diagnostics.append(f"reconcile: ignored an LLM score for unknown sid {sid_value!r}")
            continue
        if value is None:
            diagnostics.append(f"reconcile: ignored LLM score {raw!r} for sid {int(sid)}")
            continue
        if not 0.0 <= value <= 1.0:
            diagnostics.append(f"reconcile: LLM score {value} for sid {int(sid)} clamped to [0, 1]")
            value = min(max(value, 0.0), 1.0)
        scores[int(sid)] = value
    return scores


def reconcile(
    sources: Sequence[Source | Mapping[str, Any]],
    objective: str,
    queries: Sequence[str] = (),
    *,
    llm: Callable[[str], str] | None = None,
    min_relevance: float = 0.0,
    top_k: int | None = None,
    diagnostics: list[str] | None = None,
) -> list[Source]:
    """Keep the sources relevant to a task, each with a `relevance` score in [0, 1].

    Locally (the default) each source's title and snippet (or the first 2,000 characters of
    its content when it has no snippet) is scored with BM25 against the objective and against
    each query; a source's relevance is its best score for any of them divided by that
    query's top score, so the best match of every query gets 1.0. Sources sharing no term
    with any of them score 0 and are dropped.

    With ``llm``, the callable gets one prompt listing the objective, the queries and the
    sources numbered from 1 (title and a 500-character preview), and must reply with JSON::

        {"scores": [{"sid": 1, "relevance": 0.8}, {"sid": 2, "relevance": 0.0}]}

    (a bare list of such entries, ``"score"``, ``"o_relevance"`` or ``"objective_relevance"``
    for ``"relevance"`` or ``{"1": 0.8}`` are read too; code fences around the JSON are
    fine). Scores outside [0, 1] are clamped. Sources the reply leaves out are kept unscored
    (``relevance=None``) rather than lost; a reply that cannot be read, or an ``llm`` that
    raises, falls back to the local scores. Each of these is reported in ``diagnostics``.

    Args:
        sources: `Source` objects or dicts with the same keys, seed-004 rows included (their
            ``text`` is the snippet scored; their ``sid`` stays in ``extras["sid"]``).
        objective: What the answer must do (the user's question or the agent's task).
        queries: The search queries that found the sources.
        llm: Any ``str -> str`` callable, for an LLM judge.
        min_relevance: Drop sources scored below this (in [0, 1]).
        top_k: Keep at most this many, the highest scored (earlier first on ties).
        diagnostics: A list to append what was odd or dropped to.

    Returns:
        The kept sources, in their input order, with `relevance` set.

    Raises:
        UsageError: No objective or query, or an argument out of range.
    """
    if isinstance(queries, str):
        raise UsageError("queries must be a list of strings, not one string")
    texts = [q for q in (objective, *queries) if isinstance(q, str) and q.strip()]
    if not isinstance(objective, str) or not texts:
        raise UsageError("reconcile needs a non-empty objective or query")
    if not 0.0 <= min_relevance <= 1.0:
        raise UsageError(f"min_relevance must be in [0, 1], got {min_relevance}")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 0):
        raise UsageError(f"top_k must be a non-negative integer, got {top_k!r}")
    notes: list[str] = []
    items = [as_source(s) for s in sources]
    if not items:
        return []
    scores: list[float | None]
    local = _bm25(
        [terms(f"{s.title or ''} {_preview(s)}") for s in items], [terms(q) for q in texts]
    )
    scores = list(local)
    if llm is not None:
        if not callable(llm):
            raise UsageError("llm must be a callable taking a prompt and returning text")
        try:
            reply = llm(_prompt(objective, texts[1:] if objective.strip() else texts, items))
            if not isinstance(reply, str):
                raise TypeError(f"llm returned {type(reply).__name__}, not text")
            judged = _llm_scores(reply, len(items), notes)
        except Exception as err:
            notes.append(f"reconcile: LLM judge failed ({err}); used local BM25 scores")
        else:
            scores = [judged.get(n) for n in range(1, len(items) + 1)]
            missing = [n for n, score in enumerate(scores, 1) if score is None]
            if missing:
                notes.append(f"reconcile: the LLM did not score sids {missing}; kept unscored")
    keep = [
        n
        for n, score in enumerate(scores)
        if score is None or (score > 0.0 and score >= min_relevance)
    ]
    if top_k is not None and len(keep) > top_k:
        ranked = sorted(keep, key=lambda n: (-(scores[n] or 0.0), n))
        keep = sorted(ranked[:top_k])
    if len(keep) < len(items):
        notes.append(f"reconcile: kept {len(keep)} of {len(items)} sources")
    if diagnostics is not None:
        diagnostics.extend(notes)
    return [items[n].model_copy(update={"relevance": scores[n]}) for n in keep]
