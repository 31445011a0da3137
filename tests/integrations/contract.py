"""The adapter contract: written once, run against every framework entry point.

Each entry point (the LangChain handler, ``with_citations``, ``CitedQueryEngine``,
``CitationEventHandler``) subclasses `AdapterContract` and says how to build its adapter and
run one question through its framework, with a retriever returning the run's documents and a
scripted model answering from the prompt it got. The contract then checks what every
adapter promises:

- the answer is the one ``unicite.cite()`` gives for the same text and sources (so every
  entry point gives the same answer for the same run);
- 32 concurrent runs through one adapter stay isolated;
- faults (a callback that raises, a document that cannot be read) never change the caller's
  result and are reported in ``diagnostics``;
- disabled, the adapter changes nothing, cites nothing and logs nothing;
- streamed, the live text already carries the final numbers: it equals the final text.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

import unicite
from unicite import CitedAnswer, CitePolicy, Source

RUNS = 32


@dataclass(frozen=True)
class Doc:
    """A retrieved document, whatever the framework calls it."""

    id: str
    url: str
    title: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """What one run gave: the caller's result, the adapter's answer, and live text if streamed."""

    result: str
    """The text the caller got back from the framework."""
    answer: CitedAnswer | None
    """The adapter's `CitedAnswer` (None when it produced none)."""
    live: list[str] | None = None
    """The text deltas a streaming run emitted, in order."""


Retrieve = Callable[[str], Sequence[Doc]]
Answer = Callable[[str], str]


DOCS = [
    Doc(
        "millau",
        "https://fr.wikipedia.org/wiki/Viaduc_de_Millau",
        "Viaduc de Millau — Wikipédia",
        "Le viaduc de Millau culmine à 343 mètres au sommet de son pylône le plus haut. "
        "Il a été inauguré le 14 décembre 2004.",
    ),
    Doc(
        "normandie",
        "https://fr.wikipedia.org/wiki/Pont_de_Normandie",
        "Pont de Normandie — Wikipédia",
        "Le pont de Normandie, long de 2 143 mètres, relie Le Havre à Honfleur depuis le "
        "20 janvier 1995.",
    ),
    Doc(
        "koehlbrand",
        "https://de.wikipedia.org/wiki/K%C3%B6hlbrandbr%C3%BCcke",
        "Köhlbrandbrücke – Wikipedia",
        "Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang und wurde 1974 eröffnet.",
    ),
    Doc(
        "akashi",
        "https://ja.wikipedia.org/wiki/明石海峡大橋",
        "明石海峡大橋 - Wikipedia",
        "明石海峡大橋は全長3,911メートルの吊り橋で、1998年4月5日に開通しました。",
    ),
]

QUESTION = "Quelle est la hauteur du viaduc de Millau et quand a-t-il été inauguré ?"

MARKED = (
    "Die Köhlbrandbrücke ist 3 618 Meter lang [3]. Le viaduc de Millau culmine à 343 mètres "
    "[1][3]; il a été inauguré en 2004 [1]. 明石海峡大橋は1998年に開通しました[4]。"
    " Ce pont n'existe pas [9]."
)
"""An answer citing out of order, with a glued marker and an invalid one."""

GLUED = (
    "Set x[1] to zero; self.items[2] is removed and f(x)[1] is read, as row[0] and row[1] are. "
    "OpenAI[1] and GPT-4o[2] are cited, as are CO2[1] and Kubernetes[3][4]. "
    "明石海峡大橋[4]は1998年に開通しました。"
)
"""An answer with indexes in prose, which name sources but cite none, and glued citations."""
GLUED_CITED = ["OpenAI[1]", "GPT-4o[2]", "CO2[1]", "Kubernetes[3][4]", "明石海峡大橋[4]"]

UNMARKED = (
    "Le viaduc de Millau culmine à 343 mètres au sommet de son pylône le plus haut. "
    "Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang."
)
"""An answer citing nothing, for post-hoc attribution."""

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"renumber": False},
    {"on_invalid": "keep"},
    {"sources": "all"},
]


def sources_of(docs: Sequence[Doc]) -> list[Source]:
    return [Source(id=d.id, url=d.url, title=d.title, content=d.text) for d in docs]


def projection(answer: CitedAnswer) -> tuple[Any, ...]:
    """What an answer says, independent of the ids a framework gives its sources."""
    url = {s.id: s.url for s in answer.sources}
    return (
        answer.text,
        [s.url for s in answer.sources],
        [
            (c.start, c.end, c.text, [url[sid] for sid in c.source_ids], c.marker_span, c.origin)
            for c in answer.citations
        ],
        answer.sources_used,
    )


def expected(reply: str, docs: Sequence[Doc], options: dict[str, Any]) -> CitedAnswer:
    """The answer `unicite.cite` gives for the reply and the documents, numbered in order."""
    options = dict(options)
    policy = CitePolicy(sources=options.pop("sources", "cited"))
    return unicite.cite(reply, sources_of(docs), policy=policy, **options)


def own_docs(run: int) -> list[Doc]:
    return [
        Doc(
            f"run{run:02d}-{page}",
            f"https://run{run:02d}.example.org/page-{page}",
            f"Run {run:02d} page {page}",
            f"Run {run:02d}, fact {page}: the deck of bridge {run} spans {run + page} metres.",
        )
        for page in range(3)
    ]


_RUN_RE = re.compile(r"Run (\d{2}), fact")


_RETRIEVE: ContextVar[Retrieve] = ContextVar("contract_retrieve")
_ANSWER: ContextVar[Answer] = ContextVar("contract_answer")
_CHUNK: ContextVar[int | None] = ContextVar("contract_chunk", default=None)
_CALLBACK: ContextVar[Callable[[CitedAnswer], object] | None] = ContextVar(
    "contract_callback", default=None
)


def retrieve(query: str) -> Sequence[Doc]:
    """What the run in progress retrieves (framework retrievers call this)."""
    return _RETRIEVE.get()(query)


def reply(prompt: str) -> str:
    """The scripted model's reply in the run in progress (framework models call this)."""
    return _ANSWER.get()(prompt)


def stream_chunk() -> int | None:
    """How many characters each streamed delta of the run in progress holds (None: no stream)."""
    return _CHUNK.get()


def dispatch(answer: CitedAnswer) -> None:
    """The ``on_citations`` every adapter is built with: calls the run's own callback."""
    callback = _CALLBACK.get()
    if callback is not None:
        callback(answer)


@contextmanager
def answers_of_this_run() -> Iterator[list[CitedAnswer]]:
    """Collect what `dispatch` delivers inside the block (the run's own callback still runs)."""
    seen: list[CitedAnswer] = []
    outer = _CALLBACK.get()

    def both(answer: CitedAnswer) -> None:
        seen.append(answer)
        if outer is not None:
            outer(answer)

    token = _CALLBACK.set(both)
    try:
        yield seen
    finally:
        _CALLBACK.reset(token)


class AdapterContract:
    """What every adapter entry point must satisfy.

    Subclasses build the adapter once per set of options (`build`, with ``on_citations=
    dispatch``; shared by every run with those options, concurrent ones included) and run one
    question through it (`invoke`). The framework's retriever and model call `retrieve`,
    `reply` and `stream_chunk`, which answer for the run in progress.
    """

    rewrites_result: ClassVar[bool] = True
    """Whether the caller's result is the cited text (False: the model's text, untouched)."""

    def build(self, **options: Any) -> Any:
        """The adapter for `options` (`unicite.CitePolicy` fields), calling `dispatch`."""
        raise NotImplementedError

    def invoke(self, adapter: Any, question: str, chunk: int | None) -> Outcome:
        """Run `question` once through the framework with `adapter`."""
        raise NotImplementedError

    def close(self, adapter: Any) -> None:
        """Release an adapter built by `build` (detach a handler, ...)."""

    def setup_method(self) -> None:
        self._adapters: dict[str, Any] = {}
        self._lock = threading.Lock()

    def teardown_method(self) -> None:
        for adapter in self._adapters.values():
            self.close(adapter)

    def run(
        self,
        retrieve: Retrieve,
        answer: Answer,
        *,
        question: str = QUESTION,
        chunk: int | None = None,
        on_citations: Callable[[CitedAnswer], object] | None = None,
        **options: Any,
    ) -> Outcome:
        """Run `question` once: `retrieve` feeds the retriever, `answer` scripts the model."""
        key = repr(sorted(options.items()))
        with self._lock:
            if key not in self._adapters:
                self._adapters[key] = self.build(**options)
            adapter = self._adapters[key]
        tokens = (
            _RETRIEVE.set(retrieve),
            _ANSWER.set(answer),
            _CHUNK.set(chunk),
            _CALLBACK.set(on_citations),
        )
        try:
            return self.invoke(adapter, question, chunk)
        finally:
            for var, token in zip((_RETRIEVE, _ANSWER, _CHUNK, _CALLBACK), tokens, strict=True):
                var.reset(token)  # type: ignore[attr-defined]

    # --- the answer is cite()'s --------------------------------------------------------------

    @pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(o) or "defaults")
    def test_answer_is_what_cite_gives(self, options: dict[str, Any]) -> None:
        outcome = self.run(lambda _: DOCS, lambda _: MARKED, **options)
        assert outcome.answer is not None
        want = expected(MARKED, DOCS, options)
        assert projection(outcome.answer) == projection(want)
        if self.rewrites_result:
            assert outcome.result == want.text
        else:
            assert outcome.result == MARKED
        for citation in outcome.answer.citations:
            assert outcome.answer.text[citation.start : citation.end] == citation.text

    def test_renumbered_markers_name_the_right_source(self) -> None:
        outcome = self.run(lambda _: DOCS, lambda _: MARKED)
        assert outcome.answer is not None
        answer = outcome.answer
        assert answer.text.startswith("Die Köhlbrandbrücke ist 3 618 Meter lang [1].")
        assert "[9]" not in answer.text
        for number, source in enumerate(answer.sources, start=1):
            assert answer.footnote_number(source.id) == number
        # "[1]" now means the Köhlbrandbrücke page, the first one cited.
        assert answer.sources[0].url == DOCS[2].url
        assert any("9" in note for note in answer.diagnostics)

    def test_indexes_are_never_cited_and_glued_citations_are(self) -> None:
        outcome = self.run(lambda _: DOCS, lambda _: GLUED, renumber=False)
        assert outcome.answer is not None
        answer = outcome.answer
        assert projection(answer) == projection(expected(GLUED, DOCS, {"renumber": False}))
        marked = sorted(
            answer.text[a:b] for c in answer.citations if c.marker_span for a, b in [c.marker_span]
        )
        assert marked == sorted(m[m.index("[") :] for m in GLUED_CITED)
        for cited in GLUED_CITED:
            start = answer.text.index(cited) + cited.index("[")
            assert any(c.marker_span and c.marker_span[0] == start for c in answer.citations)

    def test_attribution_when_nothing_is_cited(self) -> None:
        outcome = self.run(lambda _: DOCS, lambda _: UNMARKED, attribute="lexical")
        assert outcome.answer is not None
        want = expected(UNMARKED, DOCS, {"attribute": "lexical"})
        assert want.citations  # the fixture is attributable
        assert projection(outcome.answer) == projection(want)

    def test_uncited_answer_says_why(self) -> None:
        outcome = self.run(lambda _: DOCS, lambda _: UNMARKED)
        assert outcome.answer is not None
        assert outcome.answer.citations == []
        assert any("attribute='lexical'" in note for note in outcome.answer.diagnostics)

    def test_callback_gets_the_answer(self) -> None:
        got: list[CitedAnswer] = []
        outcome = self.run(lambda _: DOCS, lambda _: MARKED, on_citations=got.append)
        assert outcome.answer is not None
        assert [projection(a) for a in got] == [projection(outcome.answer)]

    # --- isolation ---------------------------------------------------------------------------

    def test_concurrent_runs_stay_isolated(self) -> None:
        barrier = threading.Barrier(RUNS, timeout=60)

        def retrieve(query: str) -> list[Doc]:
            found = re.search(r"run (\d{2})", query)
            assert found is not None
            barrier.wait()
            return own_docs(int(found.group(1)))

        def reply(prompt: str) -> str:
            runs = set(_RUN_RE.findall(prompt))
            assert len(runs) == 1, "a prompt mixed runs"
            run = runs.pop()
            return f"Run {run}: bridge {int(run)} is long [2]; its deck spans metres [1]."

        def one(run: int) -> Outcome:
            return self.run(retrieve, reply, question=f"How long is the bridge of run {run:02d}?")

        with ThreadPoolExecutor(max_workers=RUNS) as pool:
            outcomes = list(pool.map(one, range(RUNS)))
        for run, outcome in enumerate(outcomes):
            assert outcome.answer is not None
            mine = own_docs(run)
            want = expected(
                f"Run {run:02d}: bridge {run} is long [2]; its deck spans metres [1].", mine, {}
            )
            assert projection(outcome.answer) == projection(want), run

    # --- faults ------------------------------------------------------------------------------

    def test_a_raising_callback_changes_nothing_for_the_caller(self) -> None:
        clean = self.run(lambda _: DOCS, lambda _: MARKED)

        def explode(answer: CitedAnswer) -> None:
            raise RuntimeError("callback failed")

        faulty = self.run(lambda _: DOCS, lambda _: MARKED, on_citations=explode)
        assert faulty.result == clean.result
        assert faulty.answer is not None
        assert clean.answer is not None
        assert projection(faulty.answer) == projection(clean.answer)

    def test_an_unreadable_document_becomes_a_diagnostic(self) -> None:
        class Hostile:
            def __str__(self) -> str:
                raise RuntimeError("no text")

            __repr__ = __str__

        broken = Doc("broken", "https://broken.example.org/", "Broken", "Texte cassé.")
        docs = [*DOCS, Doc(**{**broken.__dict__, "metadata": {"score": Hostile()}})]
        clean = self.run(lambda _: [*DOCS, broken], lambda _: MARKED)
        faulty = self.run(lambda _: docs, lambda _: MARKED)
        assert faulty.result == clean.result
        assert faulty.answer is not None
        assert clean.answer is not None
        assert faulty.answer.citations
        assert [s.url for s in faulty.answer.cited_sources()] == [
            s.url for s in clean.answer.cited_sources()
        ]

    # --- disabled ----------------------------------------------------------------------------

    def test_disabled_is_silent(self, caplog: pytest.LogCaptureFixture) -> None:
        got: list[CitedAnswer] = []
        caplog.set_level(logging.DEBUG, logger="unicite")
        caplog.set_level(logging.DEBUG, logger="unicite_llamaindex")
        outcome = self.run(lambda _: DOCS, lambda _: MARKED, enabled=False, on_citations=got.append)
        assert outcome.result == MARKED
        assert got == []
        assert outcome.answer is None or not outcome.answer.citations
        assert [r for r in caplog.records if r.name.startswith("unicite")] == []


class StreamingAdapterContract(AdapterContract):
    """An entry point that streams text: `invoke` streams when given a chunk size."""

    @pytest.mark.parametrize("chunk", [1, 3, 7])
    @pytest.mark.parametrize("options", [{}, {"renumber": False}, {"sources": "all"}], ids=str)
    def test_live_text_equals_final_text(self, chunk: int, options: dict[str, Any]) -> None:
        outcome = self.run(lambda _: DOCS, lambda _: MARKED, chunk=chunk, **options)
        assert outcome.live is not None
        assert outcome.answer is not None
        assert "".join(outcome.live) == outcome.answer.text
        assert projection(outcome.answer) == projection(expected(MARKED, DOCS, options))

    @pytest.mark.parametrize("chunk", [1, 4])
    def test_indexes_stay_text_live(self, chunk: int) -> None:
        outcome = self.run(lambda _: DOCS, lambda _: GLUED, chunk=chunk)
        assert outcome.live is not None
        assert outcome.answer is not None
        assert "".join(outcome.live) == outcome.answer.text
        assert projection(outcome.answer) == projection(expected(GLUED, DOCS, {}))
        assert len(outcome.answer.citations) == len(GLUED_CITED)


def chunks(text: str, size: int) -> Iterator[str]:
    """`text` in deltas of `size` characters."""
    for start in range(0, len(text), size):
        yield text[start : start + size]
