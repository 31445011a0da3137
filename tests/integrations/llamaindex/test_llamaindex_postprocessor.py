"""CitationPostprocessor and source_from_node: nodes as citable sources with ids and offsets."""

from __future__ import annotations

import pytest

pytest.importorskip("llama_index.core")

from concurrent.futures import ThreadPoolExecutor

from _llamaindex_fakes import ScriptedLLM
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import (
    MetadataMode,
    NodeRelationship,
    NodeWithScore,
    QueryBundle,
    RelatedNodeInfo,
    TextNode,
)

from unicite import CitedAnswer, render
from unicite.markers import parse_markers
from unicite.sources import SourceLedger, ledger_scope
from unicite_llamaindex import CitationPostprocessor, CitedQueryEngine, source_from_node

SENTENCES = [
    f"Phrase numéro {n} décrit la baie du Mont-Saint-Michel et ses marées d’équinoxe. "
    for n in range(60)
]
LONG = "".join(SENTENCES)


def scored(node: TextNode, score: float = 0.5) -> NodeWithScore:
    return NodeWithScore(node=node, score=score)


class Labelled:
    """What a postprocessor returned, and the sources its nodes read back as."""

    def __init__(self, postprocessor: CitationPostprocessor, nodes: list[NodeWithScore]) -> None:
        self.nodes = postprocessor.postprocess_nodes(nodes)
        self.sources = [source_from_node(n) for n in self.nodes]


def test_labels_nodes_and_reads_metadata() -> None:
    nodes = [
        scored(
            TextNode(
                id_="doc-a",
                text="Le pont-passerelle date de 2014.",
                metadata={"url": "https://example.org/pont", "title": "Le pont", "page_label": "7"},
            ),
            0.9,
        ),
        scored(TextNode(id_="doc-b", text="Une trentaine d’habitants.", metadata={}), 0.4),
    ]
    labelled = Labelled(CitationPostprocessor(), nodes)

    texts = [n.node.get_content(metadata_mode=MetadataMode.LLM) for n in labelled.nodes]
    assert texts == [
        "Source 1:\nLe pont-passerelle date de 2014.\n",
        "Source 2:\nUne trentaine d’habitants.\n",
    ]
    first, second = labelled.sources
    assert (first.id, first.url, first.title, first.kind) == (
        "doc-a",
        "https://example.org/pont",
        "Le pont",
        "document",
    )
    assert first.content == "Le pont-passerelle date de 2014."
    assert first.extras["page"] == "7"
    assert first.extras["score"] == 0.9
    assert (second.id, second.url) == ("doc-b", None)
    # The labelled nodes keep their scores and carry the source ids.
    assert [n.score for n in labelled.nodes] == [0.9, 0.4]
    assert [n.node.node_id for n in labelled.nodes] == ["doc-a", "doc-b"]
    # Reading a labelled node back gives the very source it was labelled with (ranks included).
    internal = CitationPostprocessor()._label_nodes(nodes)
    assert [source_from_node(n, rank=k) for k, n in enumerate(internal.nodes)] == internal.sources
    assert [s.rank for s in internal.sources] == [0, 1]


def test_postprocess_nodes_is_the_llamaindex_entry_point() -> None:
    nodes = [scored(TextNode(id_="x", text="Texte."))]
    out = CitationPostprocessor().postprocess_nodes(nodes, query_str="question ?")
    assert out[0].node.get_content() == "Source 1:\nTexte.\n"


def test_splits_long_nodes_into_chunks_with_their_own_ids_and_offsets() -> None:
    node = TextNode(
        id_="long-doc",
        text=LONG,
        metadata={"url": "https://example.org/baie", "title": "La baie"},
        start_char_idx=1000,
        end_char_idx=1000 + len(LONG),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="parent-doc")},
    )
    postprocessor = CitationPostprocessor(chunk_size=64, chunk_overlap=8)
    labelled = Labelled(postprocessor, [scored(node)])

    assert len(labelled.sources) > 3
    ids = [s.id for s in labelled.sources]
    assert len(set(ids)) == len(ids)
    for number, (source, labelled_node) in enumerate(
        zip(labelled.sources, labelled.nodes, strict=True), start=1
    ):
        start, end = source.extras["chunk_start"], source.extras["chunk_end"]
        assert source.id == f"long-doc:{start}-{end}"
        assert LONG[start:end] == source.content
        assert (source.extras["start_char"], source.extras["end_char"]) == (
            1000 + start,
            1000 + end,
        )
        assert source.extras["node_id"] == "long-doc"
        assert source.extras["ref_doc_id"] == "parent-doc"
        assert source.url == "https://example.org/baie"
        assert labelled_node.node.get_content() == f"Source {number}:\n{source.content}\n"
        assert labelled_node.node.node_id == source.id
    # The chunks cover the text in order.
    starts = [s.extras["chunk_start"] for s in labelled.sources]
    assert starts == sorted(starts)
    assert starts[0] == 0
    # The splitter trims the text's final space.
    assert labelled.sources[-1].extras["chunk_end"] == len(LONG.rstrip())


def test_short_nodes_are_not_split() -> None:
    node = TextNode(id_="court", text="Une seule phrase.")
    labelled = Labelled(CitationPostprocessor(chunk_size=64), [scored(node)])
    assert [s.id for s in labelled.sources] == ["court"]
    assert "chunk_start" not in labelled.sources[0].extras


def test_a_node_retrieved_twice_is_labelled_once() -> None:
    node = TextNode(id_="dup", text="Même nœud.")
    labelled = Labelled(CitationPostprocessor(), [scored(node, 0.9), scored(node, 0.8)])
    assert [n.node.get_content() for n in labelled.nodes] == ["Source 1:\nMême nœud.\n"]


def test_ledger_numbers_continue_across_calls() -> None:
    ledger = SourceLedger()
    postprocessor = CitationPostprocessor(ledger=ledger)
    first = Labelled(postprocessor, [scored(TextNode(id_="a", text="Premier."))])
    second = Labelled(
        postprocessor,
        [scored(TextNode(id_="b", text="Deuxième.")), scored(TextNode(id_="a", text="Premier."))],
    )
    assert [n.node.get_content() for n in first.nodes] == ["Source 1:\nPremier.\n"]
    assert [n.node.get_content() for n in second.nodes] == [
        "Source 2:\nDeuxième.\n",
        "Source 1:\nPremier.\n",
    ]
    assert [s.id for s in ledger.sources] == ["a", "b"]
    answer = parse_markers("Deuxième [2], premier [1].", ledger)
    assert [c.source_ids for c in answer.citations] == [["b"], ["a"]]


def test_current_ledger_is_used_when_no_ledger_is_given() -> None:
    with ledger_scope() as ledger:
        CitationPostprocessor().postprocess_nodes([scored(TextNode(id_="z", text="Texte."))])
    assert [s.id for s in ledger.sources] == ["z"]


def test_metadata_is_shown_under_the_label_when_asked() -> None:
    node = TextNode(id_="m", text="Contenu.", metadata={"title": "Titre"})
    labelled = Labelled(CitationPostprocessor(metadata_mode=MetadataMode.LLM), [scored(node)])
    shown = labelled.nodes[0].node.get_content(metadata_mode=MetadataMode.LLM)
    assert shown == "Source 1:\ntitle: Titre\n\nContenu.\n"
    # The source's text is the node's own text, without label or metadata.
    assert labelled.sources[0].content == "Contenu."


class _Twelve(BaseRetriever):
    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [scored(TextNode(id_=f"n{k}", text=f"Texte {k}.")) for k in range(12)]


def test_a_relabelled_node_keeps_its_source() -> None:
    labelled = Labelled(CitationPostprocessor(), _Twelve().retrieve("?"))
    # The model cites the twelfth node: renumbered, it is [1], and its node is relabelled.
    response = CitedQueryEngine(retriever=_Twelve(), llm=ScriptedLLM(reply="Texte [12].")).query(
        "Que dit le texte ?"
    )
    item = response.source_nodes[0]
    assert item.node.get_content() == "Source 1:\nTexte 11.\n"
    assert source_from_node(item) == labelled.sources[11]


def test_hostile_metadata_is_kept_raw_and_rendered_safely() -> None:
    node = TextNode(
        id_="hostile",
        text="Texte ordinaire.",
        metadata={
            "url": "javascript:alert(document.cookie)",
            "title": "Titre\x1b]8;;https://evil.example\x07piégé\x1b[31m\u202e",
        },
    )
    labelled = Labelled(CitationPostprocessor(), [scored(node)])
    [source] = labelled.sources
    # Only http(s) metadata makes a source URL; the title is kept as received.
    assert source.url is None
    assert source.title == node.metadata["title"]
    answer = parse_markers("Une affirmation [1].", labelled.sources)
    assert isinstance(answer, CitedAnswer)
    assert answer.citations[0].source_ids == ["hostile"]
    for fmt in ("terminal", "markdown", "html", "text"):
        out = render(answer, fmt, hyperlinks=True)
        assert "javascript:" not in out.lower()
        assert "\x1b]8;;https://evil" not in out
        assert "\u202e" not in out
        assert "\x07" not in out


def test_labelling_is_safe_to_share_between_threads() -> None:
    postprocessor = CitationPostprocessor(chunk_size=64)

    def run(k: int) -> list[str]:
        nodes = [scored(TextNode(id_=f"t{k}-{j}", text=f"Texte {k}.{j}.")) for j in range(5)]
        return [n.node.get_content() for n in postprocessor.postprocess_nodes(nodes)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(run, range(32)))
    for k, texts in enumerate(results):
        assert texts == [f"Source {j + 1}:\nTexte {k}.{j}.\n" for j in range(5)]
