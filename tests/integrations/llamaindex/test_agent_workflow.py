"""Agents and workflows cite through `CitationEventHandler`: `FunctionAgent`, `AgentWorkflow`.

Real LlamaIndex agents over `MockFunctionCallingLLM`, scripted turn by turn: the model calls
the tools, then answers citing the sources by the numbers the tool results showed it
(``[sid:N] Title``), read from its own prompt as a model would.

The module keeps its annotations evaluated (no ``from __future__ import annotations``): a tool
taking the workflow's `Context` is recognised by its parameter's annotation.
"""

import pytest

pytest.importorskip("llama_index.core")

import asyncio
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from _llamaindex_fakes import ScriptedLLM, build_index, corpus_nodes
from llama_index.core.agent.workflow import (
    AgentOutput,
    AgentWorkflow,
    FunctionAgent,
    ReActAgent,
)
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.base.response.schema import PydanticResponse, Response, StreamingResponse
from llama_index.core.bridge.pydantic import BaseModel
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.query_engine import CitationQueryEngine
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle
from llama_index.core.tools import FunctionTool, QueryEngineTool
from llama_index.core.workflow import Context, StartEvent, StopEvent, Workflow, step

from unicite import CitedAnswer, UsageError
from unicite.sources import SourceLedger, ledger_scope
from unicite_llamaindex import (
    AsyncCitedStreamingResponse,
    CitationEventHandler,
    CitationPostprocessor,
    CitedQueryEngine,
    CitedStreamingResponse,
    CitedSynthesizer,
    CitedTool,
    citations_of,
    cite_tools,
)

# llama-index-workflows inspects the agents' members, touching pydantic's deprecated attributes.
pytestmark = [
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20"),
    pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince211"),
]

NODES = {node.node_id: node for node in corpus_nodes()}
URLS = {node_id: node.metadata["url"] for node_id, node in NODES.items()}
TITLES = {
    "msm-marees": "Les marées",
    "msm-abbaye": "Abbaye du Mont-Saint-Michel",
    "msm-pont": "Le pont-passerelle",
    "msm-habitants": "Le Mont-Saint-Michel — Insee",
}
"""How each node's title starts, as the tool results list it."""
QUESTION = "Que faut-il savoir du Mont-Saint-Michel ?"

Respond = Callable[[list[ChatMessage]], ChatMessage]
_LISTED = re.compile(r"\[sid:(\d+)\] (.+)$", re.MULTILINE)


def found(nodes: Sequence[str]) -> list[NodeWithScore]:
    return [NodeWithScore(node=NODES[n], score=1.0 - k / 10) for k, n in enumerate(nodes)]


def marees(requete: str) -> list[NodeWithScore]:
    """Cherche dans les pages sur les marées."""
    return found(["msm-marees", "msm-pont"])


def histoire(requete: str) -> list[NodeWithScore]:
    """Cherche dans les pages d’histoire."""
    return found(["msm-abbaye", "msm-marees"])


def numbers(messages: Sequence[ChatMessage]) -> dict[str, int]:
    """The number each node was shown under in the tool results of the prompt, by node id."""
    shown: dict[str, int] = {}
    for message in messages:
        for number, title in _LISTED.findall(message.content or ""):
            for node_id, start in TITLES.items():
                if title.startswith(start):
                    shown.setdefault(node_id, int(number))
    return shown


def call(name: str, call_id: str, **arguments: Any) -> ChatMessage:
    block = ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=arguments)
    return ChatMessage(role="assistant", blocks=[block])


def tool_results(messages: Sequence[ChatMessage]) -> list[str]:
    return [m.content or "" for m in messages if m.role == "tool"]


def scripted(respond: Respond) -> MockFunctionCallingLLM:
    def generate(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        return respond(list(messages))

    return MockFunctionCallingLLM(response_generator=generate, is_chat_model=True)


class _Fixed(BaseRetriever):
    """A retriever returning the same nodes for any query."""

    def __init__(self, node_ids: list[str]) -> None:
        super().__init__()
        self.node_ids = node_ids

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return found(self.node_ids)


ANSWER = (
    "L’abbaye bénédictine a été fondée en 966 [{msm-abbaye}]. Le pont-passerelle laisse la "
    "mer entourer le Mont [{msm-pont}], où l’écart des marées atteint 14 mètres [{msm-marees}]."
)


def two_tools_answer(prompts: list[list[ChatMessage]], answer: str = ANSWER) -> Respond:
    """Ask `marees`, then `histoire`, then answer `answer` with the numbers shown."""

    def respond(messages: list[ChatMessage]) -> ChatMessage:
        prompts.append(messages)
        done = len(tool_results(messages))
        if done == 0:
            return call("marees", "call_1", requete="marées")
        if done == 1:
            return call("histoire", "call_2", requete="abbaye")
        shown = numbers(messages)
        return ChatMessage(role="assistant", content=answer.format_map(_Numbers(shown)))

    return respond


class _Numbers(dict[str, int]):
    def __missing__(self, key: str) -> str:
        raise KeyError(f"{key} was never shown to the model")


@pytest.fixture
def handler() -> Iterator[CitationEventHandler]:
    with CitationEventHandler() as attached:
        yield attached
    assert attached._state_size() == 0


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def ask(workflow: Workflow, *args: Any, **kwargs: Any) -> Any:
    """``await workflow.run(...)`` in a fresh event loop."""

    async def go() -> Any:
        return await workflow.run(*args, **kwargs)

    return asyncio.run(go())


def check_exact(answer: CitedAnswer) -> None:
    for citation in answer.citations:
        assert answer.text[citation.start : citation.end] == citation.text


# --- one agent, two tools ------------------------------------------------------------------


def test_agent_cites_the_nodes_its_two_tools_returned(handler: CitationEventHandler) -> None:
    prompts: list[list[ChatMessage]] = []
    agent = FunctionAgent(
        tools=cite_tools([marees, histoire]), llm=scripted(two_tools_answer(prompts))
    )
    output = ask(agent, QUESTION)
    assert isinstance(output, AgentOutput)
    # The model saw every node numbered by the run: a node found twice kept its number.
    first, second = tool_results(prompts[-1])
    assert _LISTED.findall(first) == [
        ("1", "Les marées – Office de tourisme du Mont-Saint-Michel"),
        ("2", "Le pont-passerelle"),
    ]
    assert _LISTED.findall(second) == [
        ("3", "Abbaye du Mont-Saint-Michel — Wikipédia"),
        ("1", "Les marées – Office de tourisme du Mont-Saint-Michel"),
    ]
    assert "l’écart entre basse et haute mer atteint jusqu’à 14 mètres" in first
    assert str(output) == ANSWER.format_map({"msm-abbaye": 3, "msm-pont": 2, "msm-marees": 1})
    answer = citations_of(output)
    assert answer is not None
    # Renumbered in reading order; each marker names the node the model saw under it.
    assert answer.text == (
        "L’abbaye bénédictine a été fondée en 966 [1]. Le pont-passerelle laisse la mer "
        "entourer le Mont [2], où l’écart des marées atteint 14 mètres [3]."
    )
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("L’abbaye bénédictine a été fondée en 966", ["msm-abbaye"]),
        ("Le pont-passerelle laisse la mer entourer le Mont", ["msm-pont"]),
        ("où l’écart des marées atteint 14 mètres", ["msm-marees"]),
    ]
    check_exact(answer)
    assert [s.url for s in answer.sources] == [
        URLS["msm-abbaye"],
        URLS["msm-pont"],
        URLS["msm-marees"],
    ]
    assert {c.origin for c in answer.citations} == {"marker"}
    assert answer.diagnostics == []
    # The same answer everywhere: the handler's run, its last answer, the agent's output.
    assert handler.answer == answer
    [root] = handler.answers
    assert root.startswith("FunctionAgent.run-")
    assert handler.answers[root] == answer


def test_a_marker_naming_nothing_stays_uncited(handler: CitationEventHandler) -> None:
    wrong = "L’abbaye a été fondée en 966 [{msm-abbaye}] ; le Mont compte 900 marches [7]."
    agent = FunctionAgent(
        tools=cite_tools([marees, histoire]), llm=scripted(two_tools_answer([], wrong))
    )
    output = ask(agent, QUESTION)
    answer = citations_of(output)
    assert answer is not None
    assert answer.text == "L’abbaye a été fondée en 966 [1] ; le Mont compte 900 marches."
    assert [c.source_ids for c in answer.citations] == [["msm-abbaye"]]
    assert [s.id for s in answer.sources] == ["msm-abbaye"]
    at = str(output).index("[7]")
    assert answer.diagnostics == [f"marker '[7]' at {at}: source 7 out of range (3 sources given)"]


def test_plain_tools_are_read_as_they_returned(handler: CitationEventHandler) -> None:
    """Without `cite_tools` the sources are still what the tools returned, not their repr."""

    def recherche(requete: str) -> list[dict[str, str]]:
        """Cherche sur le web."""
        return [
            {
                "url": "https://www.example.fr/marées?utm_source=x",
                "title": "Marées – un guide",
                "content": "Les coefficients dépassent parfois 110.",
            }
        ]

    def respond(messages: list[ChatMessage]) -> ChatMessage:
        done = len(tool_results(messages))
        if done == 0:
            return call("marees", "call_1", requete="marées")
        if done == 1:
            return call("recherche", "call_2", requete="coefficients")
        return ChatMessage(role="assistant", content="Des coefficients au-delà de 110 [3].")

    agent = FunctionAgent(
        tools=[FunctionTool.from_defaults(marees), FunctionTool.from_defaults(recherche)],
        llm=scripted(respond),
    )
    with CitationEventHandler(sources="all") as listing:
        output = ask(agent, QUESTION)
    answer = citations_of(output)
    assert answer is not None
    assert [(s.id, s.kind) for s in answer.sources][1:] == [
        ("msm-marees", "document"),
        ("msm-pont", "document"),
    ]
    web = answer.sources[0]
    assert (web.kind, web.title, web.domain) == ("web", "Marées – un guide", "example.fr")
    assert [c.source_ids for c in answer.citations] == [[web.id]]
    assert listing.answer == answer


# --- concurrent runs -----------------------------------------------------------------------


def topic_agent() -> FunctionAgent:
    """An agent whose tool finds the nodes of the topic the question names."""
    topics = {"marées": ["msm-marees", "msm-pont"], "histoire": ["msm-abbaye", "msm-habitants"]}

    async def chercher(sujet: str) -> list[NodeWithScore]:
        """Cherche les pages d’un sujet."""
        # The second run's tool ends last: its results come after the other run's.
        await asyncio.sleep(0.02 if sujet == "histoire" else 0)
        return found(topics[sujet])

    def respond(messages: list[ChatMessage]) -> ChatMessage:
        asked = " ".join(m.content or "" for m in messages if m.role == "user")
        sujet = "marées" if "marées" in asked else "histoire"
        if not tool_results(messages):
            # The same call id in every run: runs must not share what they have seen.
            return call("chercher", "call_1", sujet=sujet)
        shown = numbers(messages)
        first, second = topics[sujet]
        return ChatMessage(
            role="assistant",
            content=f"Sur {sujet} : d’abord [{shown[second]}], puis [{shown[first]}].",
        )

    return FunctionAgent(tools=cite_tools([chercher]), llm=scripted(respond))


def check_topic(answer: CitedAnswer | None, first: str, second: str) -> None:
    assert answer is not None
    assert [c.source_ids for c in answer.citations] == [[second], [first]]
    assert answer.diagnostics == []


def test_concurrent_runs_keep_their_sources_apart(handler: CitationEventHandler) -> None:
    agent = topic_agent()

    async def both() -> tuple[Any, Any, Any, Any]:
        marees_run, histoire_run = agent.run("Les marées ?"), agent.run("Et l’histoire ?")
        outputs = await asyncio.gather(marees_run, histoire_run)
        return marees_run, histoire_run, *outputs

    marees_run, histoire_run, marees_out, histoire_out = run(both())
    check_topic(citations_of(marees_out), "msm-marees", "msm-pont")
    check_topic(citations_of(histoire_out), "msm-abbaye", "msm-habitants")
    # The workflow handlers `run()` returned give the same answers.
    assert citations_of(marees_run) == citations_of(marees_out)
    assert citations_of(histoire_run) == citations_of(histoire_out)
    assert len(handler.answers) == 2


class _Both(Workflow):
    """One step running two agent runs at once: nested runs, concurrent."""

    def __init__(self, agent: FunctionAgent) -> None:
        super().__init__(timeout=30)
        self.agent = agent

    @step
    async def ask(self, ev: StartEvent) -> StopEvent:
        outputs = await asyncio.gather(
            self.agent.run("Les marées ?"), self.agent.run("Et l’histoire ?")
        )
        return StopEvent(result=outputs)


def test_runs_gathered_inside_a_workflow_step_keep_their_sources_apart(
    handler: CitationEventHandler,
) -> None:
    marees_out, histoire_out = ask(_Both(topic_agent()))
    check_topic(citations_of(marees_out), "msm-marees", "msm-pont")
    check_topic(citations_of(histoire_out), "msm-abbaye", "msm-habitants")


# --- AgentWorkflow -------------------------------------------------------------------------


def test_agent_workflow_handoff_keeps_the_sources_of_both_agents() -> None:
    def chercheur(messages: list[ChatMessage]) -> ChatMessage:
        if not tool_results(messages):
            return call("marees", "call_1", requete="marées")
        return call("handoff", "call_2", to_agent="historien", reason="une question d’histoire")

    def historien(messages: list[ChatMessage]) -> ChatMessage:
        if not any("Abbaye" in result for result in tool_results(messages)):
            return call("histoire", "call_3", requete="abbaye")
        shown = numbers(messages)
        return ChatMessage(
            role="assistant",
            content=(
                f"L’abbaye date de 966 [{shown['msm-abbaye']}] ; la mer monte de 14 mètres "
                f"[{shown['msm-marees']}]."
            ),
        )

    workflow = AgentWorkflow(
        agents=[
            FunctionAgent(
                name="chercheur",
                description="Les marées.",
                tools=cite_tools([marees]),
                llm=scripted(chercheur),
                can_handoff_to=["historien"],
            ),
            FunctionAgent(
                name="historien",
                description="L’histoire.",
                tools=cite_tools([histoire]),
                llm=scripted(historien),
            ),
        ],
        root_agent="chercheur",
    )
    with CitationEventHandler(sources="all") as handler:
        output = ask(workflow, user_msg=QUESTION)
    assert output.current_agent_name == "historien"
    assert str(output) == "L’abbaye date de 966 [3] ; la mer monte de 14 mètres [1]."
    answer = citations_of(output)
    assert answer is not None
    assert answer.text == "L’abbaye date de 966 [1] ; la mer monte de 14 mètres [2]."
    assert [c.source_ids for c in answer.citations] == [["msm-abbaye"], ["msm-marees"]]
    # Both agents' sources, the first agent's uncited one listed too; the handoff message is
    # no source.
    assert [s.id for s in answer.sources] == ["msm-abbaye", "msm-marees", "msm-pont"]
    [root] = handler.answers
    assert root.startswith("AgentWorkflow.run-")
    assert handler._state_size() == 0


# --- other tools and agents ----------------------------------------------------------------


def test_an_agent_run_as_a_tool_hands_its_sources_over(handler: CitationEventHandler) -> None:
    def historien(messages: list[ChatMessage]) -> ChatMessage:
        if not tool_results(messages):
            return call("histoire", "call_1", requete="abbaye")
        shown = numbers(messages)
        return ChatMessage(role="assistant", content=f"Fondée en 966 [{shown['msm-abbaye']}].")

    sub_agent = FunctionAgent(tools=cite_tools([histoire]), llm=scripted(historien))

    async def demander_historien(question: str) -> AgentOutput:
        """Pose une question d’histoire à l’historien."""
        output: AgentOutput = await sub_agent.run(question)
        return output

    prompts: list[list[ChatMessage]] = []

    def guide(messages: list[ChatMessage]) -> ChatMessage:
        prompts.append(messages)
        done = len(tool_results(messages))
        if done == 0:
            return call("marees", "call_1", requete="marées")
        if done == 1:
            return call("demander_historien", "call_2", question="L’abbaye ?")
        shown = numbers(messages)
        return ChatMessage(
            role="assistant",
            content=f"L’abbaye date de 966 [{shown['msm-abbaye']}] ; la mer monte de 14 mètres "
            f"[{shown['msm-marees']}].",
        )

    agent = FunctionAgent(tools=cite_tools([marees, demander_historien]), llm=scripted(guide))
    output = ask(agent, QUESTION)
    # The sub-agent numbered the abbey 1 in its own run; the guide was shown its answer with
    # the number the abbey has in the guide's run.
    said = tool_results(prompts[-1])[1].split("\n\nSources:\n\n")[0]
    assert said == "Fondée en 966 [3]."
    answer = citations_of(output)
    assert answer is not None
    assert answer.text == "L’abbaye date de 966 [1] ; la mer monte de 14 mètres [2]."
    assert [c.source_ids for c in answer.citations] == [["msm-abbaye"], ["msm-marees"]]
    # Each run's answer: the sub-agent's run and the guide's.
    assert len(handler.answers) == 2


def test_query_engine_tool_shows_its_answer_numbered_like_its_sources(
    handler: CitationEventHandler,
) -> None:
    # The engine's model cites the prompt's Source 2 and Source 1 (renumbered 1, 2 there).
    engine = CitedQueryEngine(
        retriever=_Fixed(["msm-habitants", "msm-marees", "msm-pont"]),
        llm=ScriptedLLM(reply="L’écart atteint 14 mètres [2]. Une trentaine d’habitants [1]."),
    )
    docs = QueryEngineTool.from_defaults(engine, name="docs", description="Le Mont.")
    prompts: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage]) -> ChatMessage:
        prompts.append(messages)
        if not tool_results(messages):
            return call("docs", "call_1", input="marées et habitants")
        shown = numbers(messages)
        return ChatMessage(
            role="assistant",
            content=f"Trente habitants [{shown['msm-habitants']}], 14 mètres "
            f"[{shown['msm-marees']}].",
        )

    output = ask(FunctionAgent(tools=cite_tools([docs]), llm=scripted(respond)), QUESTION)
    [result] = tool_results(prompts[-1])
    said, listed = result.split("\n\nSources:\n\n")
    # The engine's sources numbered by the run (in the order it retrieved them, the cited
    # first), under its answer, whose markers name them by those very numbers.
    assert _LISTED.findall(listed) == [
        ("2", "Les marées – Office de tourisme du Mont-Saint-Michel"),
        ("1", "Le Mont-Saint-Michel — Insee"),
        ("3", "Le pont-passerelle"),
    ]
    assert said == "L’écart atteint 14 mètres [2]. Une trentaine d’habitants [1]."
    answer = citations_of(output)
    assert answer is not None
    assert answer.text == "Trente habitants [1], 14 mètres [2]."
    assert [c.source_ids for c in answer.citations] == [["msm-habitants"], ["msm-marees"]]


# LlamaIndex's ReActAgent asks its context whether it runs, which workflows deprecated.
@pytest.mark.filterwarnings("ignore:is_running called from within a step:DeprecationWarning")
def test_react_agent_answer_is_its_final_text(handler: CitationEventHandler) -> None:
    asked: list[str] = []

    async def chercher(ctx: Context, requete: str) -> list[NodeWithScore]:
        """Cherche dans les pages sur les marées."""
        asked.append(type(ctx).__name__)
        return found(["msm-marees", "msm-pont"])

    def respond(messages: list[ChatMessage]) -> ChatMessage:
        if not any((m.content or "").startswith("Observation") for m in messages):
            return ChatMessage(
                role="assistant",
                content=(
                    'Thought: je cherche.\nAction: chercher\nAction Input: {"requete": "marées"}'
                ),
            )
        shown = numbers(messages)
        return ChatMessage(
            role="assistant",
            content=f"Thought: je sais.\nAnswer: Jusqu’à 14 mètres [{shown['msm-marees']}].",
        )

    output = ask(ReActAgent(tools=cite_tools([chercher]), llm=scripted(respond)), QUESTION)
    assert asked == ["Context"]  # the wrapped tool still gets the workflow's Context
    assert str(output) == "Jusqu’à 14 mètres [1]."
    answer = citations_of(output)
    assert answer is not None
    assert answer.text == "Jusqu’à 14 mètres [1]."
    assert [(c.text, c.source_ids) for c in answer.citations] == [
        ("Jusqu’à 14 mètres", ["msm-marees"])
    ]
    assert handler.answer == answer


def test_cited_tools_without_a_handler() -> None:
    [tool] = cite_tools([marees])
    assert isinstance(tool, CitedTool)
    assert tool.metadata.name == "marees"
    # No run to number by: each call numbers from 1, unless a ledger is in scope.
    assert _LISTED.findall(tool(requete="marées").content)[0][0] == "1"
    ledger = SourceLedger()
    ledger.add({"id": "autre", "url": "https://autre.example.org/", "title": "Autre"})
    with ledger_scope(ledger):
        output = tool(requete="marées")
    assert [n for n, _ in _LISTED.findall(output.content)] == ["2", "3"]
    with ledger_scope() as empty:  # a ledger of its own, even empty
        tool(requete="marées")
    assert [s.id for s in empty.sources] == ["msm-marees", "msm-pont"]
    assert output.raw_output[0].node.node_id == "msm-marees"  # what the tool returned


def test_cite_tools_refuses_what_is_no_tool() -> None:
    with pytest.raises(UsageError):
        cite_tools(marees)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        cite_tools([42])  # type: ignore[list-item]
    with pytest.raises(UsageError):
        cite_tools([marees], budget_tokens=-1)


# --- citations_of --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def index() -> Any:
    return build_index(corpus_nodes())


REPLY = "La mer entoure de nouveau le Mont [3]. L’écart atteint 14 mètres [1]."


def test_citations_of_query_engine_responses(index: Any) -> None:
    cited = CitedQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    response = cited.query(QUESTION)
    assert citations_of(response) is response.metadata["citations"]
    streaming = CitedQueryEngine.from_args(
        index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3, streaming=True
    )
    stream = streaming.query(QUESTION)
    assert isinstance(stream, StreamingResponse)
    assert citations_of(stream) is None  # not consumed yet
    assert "".join(stream.response_gen)
    assert citations_of(stream) == citations_of(response)
    # LlamaIndex's own engine: cited while a handler is attached, else nothing.
    plain = CitationQueryEngine.from_args(index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3)
    assert citations_of(plain.query(QUESTION)) is None
    with CitationEventHandler():
        answered = plain.query(QUESTION)
        plain_stream = CitationQueryEngine.from_args(
            index, llm=ScriptedLLM(reply=REPLY), similarity_top_k=3, streaming=True
        ).query(QUESTION)
        assert citations_of(plain_stream) is None
        "".join(plain_stream.response_gen)
    assert citations_of(answered) == citations_of(response)
    assert citations_of(plain_stream) == citations_of(response)


def test_citations_of_cited_synthesizer_streams(index: Any) -> None:
    llm = ScriptedLLM(reply="Les marées atteignent 14 mètres [[S:1]].")
    engine = index.as_query_engine(
        llm=llm, response_synthesizer=CitedSynthesizer(llm=llm, streaming=True)
    )
    stream = engine.query(QUESTION)
    assert isinstance(stream, CitedStreamingResponse)
    assert citations_of(stream) is None
    "".join(stream.response_gen)
    answer = citations_of(stream)
    assert answer is not None
    assert answer is stream.metadata["citations"]
    assert len(answer.citations) == 1

    async def consume() -> Any:
        response = await engine.aquery(QUESTION)
        assert citations_of(response) is None
        "".join([delta async for delta in response.async_response_gen()])
        return response

    async_stream = run(consume())
    assert isinstance(async_stream, AsyncCitedStreamingResponse)
    assert citations_of(async_stream) == answer


class _RAG(Workflow):
    """A workflow of its own: retrieves, numbers the nodes, answers with a plain string."""

    @step
    async def answer(self, ev: StartEvent) -> StopEvent:
        nodes = await _Fixed(["msm-marees", "msm-pont", "msm-abbaye"]).aretrieve(ev.question)
        labelled = CitationPostprocessor().postprocess_nodes(nodes)
        context = "\n".join(n.node.get_content() for n in labelled)
        reply = await ScriptedLLM(reply=REPLY).acomplete(f"{context}\n{ev.question}")
        return StopEvent(result=reply.text)


def test_citations_of_a_workflow_returning_text(handler: CitationEventHandler) -> None:
    async def go() -> tuple[Any, Any]:
        workflow_run = _RAG(timeout=30).run(question=QUESTION)
        return workflow_run, await workflow_run

    workflow_run, result = run(go())
    assert result == REPLY
    with pytest.raises(UsageError):
        citations_of(result)  # a plain string: ask its run
    answer = citations_of(workflow_run)
    assert answer is not None
    assert [c.source_ids for c in answer.citations] == [["msm-abbaye"], ["msm-marees"]]
    assert citations_of(workflow_run.get_stop_event()) == answer


def test_citations_of_workflow_results(handler: CitationEventHandler) -> None:
    agent = FunctionAgent(tools=cite_tools([marees, histoire]), llm=scripted(two_tools_answer([])))

    async def go() -> tuple[Any, Any]:
        workflow_run = agent.run(QUESTION)
        assert citations_of(workflow_run) is None  # not finished
        return workflow_run, await workflow_run

    workflow_run, output = run(go())
    answer = citations_of(output)
    assert answer is not None
    assert citations_of(workflow_run) == answer
    assert citations_of(workflow_run.get_stop_event()) == answer
    assert citations_of(output.response) == answer  # the agent's ChatMessage
    assert citations_of(answer) is answer


def test_citations_of_an_llm_reply(handler: CitationEventHandler) -> None:
    llm = scripted(lambda messages: ChatMessage(role="assistant", content="Sans source [1]."))
    reply = llm.chat([ChatMessage(role="user", content=QUESTION)])
    answer = citations_of(reply)
    assert answer is not None
    assert answer.text == "Sans source."  # nothing was found: [1] names nothing
    assert answer.diagnostics == ["marker '[1]' at 12: source 1 out of range (0 sources given)"]
    assert citations_of(reply.message) == answer == handler.answer


def test_citations_of_gives_none_when_there_is_nothing() -> None:
    assert citations_of(Response("Sans source.")) is None
    assert citations_of(Response("Sans métadonnées.", metadata={"citations": "x"})) is None

    class Shape(BaseModel):
        name: str

    assert citations_of(PydanticResponse(Shape(name="x"))) is None
    # An agent run with no handler attached: nothing cited.
    agent = FunctionAgent(tools=cite_tools([marees, histoire]), llm=scripted(two_tools_answer([])))
    output = ask(agent, QUESTION)
    assert citations_of(output) is None
    assert citations_of(ChatMessage(role="assistant", content="x")) is None


@pytest.mark.parametrize("value", ["texte", None, 42, {"citations": None}, [Response("x")]])
def test_citations_of_refuses_other_types(value: Any) -> None:
    with pytest.raises(UsageError, match="citations_of takes"):
        citations_of(value)
