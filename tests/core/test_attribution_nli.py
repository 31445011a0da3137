"""NLIScorer: a local cross-encoder in ONNX, loaded from a folder the tests build themselves.

The model is a bag of words: each token adds its row of a small weight table to the logits.
Its probabilities are worked out here from that table, independently of the scorer.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from unicite import Source, UsageError
from unicite.attribution import NLIScorer, Scorer, attribute

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "eiffel", "tower", "paris", "built", "not", "berlin"]
# Logit rows (contradiction, neutral, entailment) added by each token of the pair.
ROWS = {
    "eiffel": (0.0, 0.2, 1.1),
    "tower": (0.0, 0.1, 0.4),
    "paris": (0.0, 0.0, 0.9),
    "built": (0.1, 0.3, 0.2),
    "not": (1.7, 0.0, -0.8),
    "berlin": (0.6, 0.4, -0.5),
}
NLI_LABELS = {"0": "contradiction", "1": "neutral", "2": "entailment"}


def _table(classes: int) -> list[list[float]]:
    return [list(ROWS.get(word, (0.0, 0.0, 0.0)))[-classes:] for word in VOCAB]


def build_model(
    folder: Path,
    *,
    classes: int = 3,
    labels: dict[str, str] | None = NLI_LABELS,
    token_types: bool = False,
    model_file: str = "model.onnx",
    output: str = "logits",
) -> Path:
    """Write an ONNX model, its tokenizer and its config into `folder`."""
    onnx = pytest.importorskip("onnx")
    tokenizers = pytest.importorskip("tokenizers")
    from onnx import TensorProto, helper

    flat = [x for row in _table(classes) for x in row]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
    ]
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["rows"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
    ]
    if token_types:
        # The second text of the pair (token type 1) counts twice: the order matters.
        inputs.append(
            helper.make_tensor_value_info("token_type_ids", TensorProto.INT64, ["batch", "seq"])
        )
        nodes += [
            helper.make_node("Cast", ["token_type_ids"], ["types"], to=TensorProto.FLOAT),
            helper.make_node("Add", ["types", "one"], ["times"]),
            helper.make_node("Mul", ["mask", "times"], ["scale"]),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["mask"], ["scale"]))
    nodes += [
        helper.make_node("Unsqueeze", ["scale", "last"], ["scale3"]),
        helper.make_node("Mul", ["rows", "scale3"], ["kept"]),
        helper.make_node("ReduceSum", ["kept", "seq_axis"], [output], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "bag_of_words",
        inputs,
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["batch", classes])],
        initializer=[
            helper.make_tensor("table", TensorProto.FLOAT, [len(VOCAB), classes], flat),
            helper.make_tensor("last", TensorProto.INT64, [1], [2]),
            helper.make_tensor("seq_axis", TensorProto.INT64, [1], [1]),
            helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    (folder / model_file).parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(folder / model_file))

    tok = tokenizers.Tokenizer(
        tokenizers.models.WordLevel({w: n for n, w in enumerate(VOCAB)}, unk_token=VOCAB[1])
    )
    tok.normalizer = tokenizers.normalizers.Lowercase()
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.post_processor = tokenizers.processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tok.save(str(folder / "tokenizer.json"))
    config: dict[str, object] = {"model_type": "bag-of-words"}
    if labels is not None:
        config["id2label"] = labels
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def expected(
    premise: str, hypothesis: str, label: int, classes: int = 3, second: float = 1.0
) -> float:
    """The model's probability for a pair, from the weight table (softmax over the classes).

    `second` is what a word of the second text counts (2 for the model reading token types).
    """
    logits = [0.0] * classes
    for text, times in ((premise, 1.0), (hypothesis, second)):
        for word in (w.strip(".,").lower() for w in text.split()):
            for k, value in enumerate(list(ROWS.get(word, (0.0, 0.0, 0.0)))[-classes:]):
                logits[k] += times * value
    if classes == 1:
        return 1.0 / (1.0 + math.exp(-logits[0]))
    exps = [math.exp(x) for x in logits]
    return exps[label] / sum(exps)


@pytest.fixture
def nli_folder(tmp_path: Path) -> Path:
    pytest.importorskip("onnxruntime")
    return build_model(tmp_path / "nli")


PAIRS = [
    ("The Eiffel Tower is in Paris.", "The Eiffel Tower stands in Paris, France."),
    ("The tower was built in Berlin.", "The Eiffel Tower was built in Paris."),
    ("It is not in Paris.", "Paris has a tower."),
    ("Unrelated words only.", "Nothing here either."),
]


def test_scores_are_the_models_entailment_probability(nli_folder: Path) -> None:
    scorer = NLIScorer.from_pretrained(nli_folder)
    assert isinstance(scorer, Scorer)
    assert scorer.label == 2  # "entailment", read from config.json
    assert scorer.origin == "posthoc-nli"
    got = scorer.score(PAIRS)
    want = [expected(passage, claim, 2) for claim, passage in PAIRS]
    assert got == pytest.approx(want, abs=1e-6)
    assert got[0] > 0.8 > got[1]
    assert scorer.score([]) == []


def test_batches_give_what_one_call_gives(nli_folder: Path) -> None:
    whole = NLIScorer.from_pretrained(nli_folder, batch_size=16).score(PAIRS * 3)
    one_by_one = NLIScorer.from_pretrained(nli_folder, batch_size=1).score(PAIRS * 3)
    # Padding a pair to the longest of its batch must not change its score.
    assert whole == pytest.approx(one_by_one, abs=1e-6)


def test_label_by_name_or_index(nli_folder: Path) -> None:
    neutral = NLIScorer.from_pretrained(nli_folder, label="Neutral")
    assert neutral.label == 1
    assert neutral.score(PAIRS[:1]) == pytest.approx([expected(PAIRS[0][1], PAIRS[0][0], 1)])
    contradiction = NLIScorer.from_pretrained(nli_folder, label=0)
    assert contradiction.score(PAIRS[2:3]) == pytest.approx([expected(*PAIRS[2][::-1], 0)])


def test_unnamed_binary_and_single_logit_models(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    binary = NLIScorer.from_pretrained(build_model(tmp_path / "b", classes=2, labels=None))
    assert binary.label == 1
    assert binary.activation == "softmax"
    assert binary.score(PAIRS[:2]) == pytest.approx(
        [expected(p, c, 1, classes=2) for c, p in PAIRS[:2]]
    )
    single = NLIScorer.from_pretrained(build_model(tmp_path / "s", classes=1, labels=None))
    assert single.activation == "sigmoid"
    assert single.score(PAIRS[:2]) == pytest.approx(
        [expected(p, c, 0, classes=1) for c, p in PAIRS[:2]]
    )


def test_optimum_layout_token_types_and_another_output_name(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    folder = build_model(
        tmp_path / "m", token_types=True, model_file="onnx/model.onnx", output="scores"
    )
    scorer = NLIScorer.from_pretrained(folder)
    assert scorer.output == "scores"
    claim, passage = PAIRS[1]
    assert scorer.score([(claim, passage)]) == pytest.approx(
        [expected(passage, claim, 2, second=2.0)]
    )
    # The claim first: now the claim is the second text, counted twice.
    claim_first = NLIScorer.from_pretrained(folder, passage_first=False)
    assert claim_first.score([(claim, passage)]) == pytest.approx(
        [expected(claim, passage, 2, second=2.0)]
    )
    assert expected(claim, passage, 2, second=2.0) != pytest.approx(
        expected(passage, claim, 2, second=2.0)
    )


def test_attribute_cites_with_the_model(nli_folder: Path) -> None:
    scorer = NLIScorer.from_pretrained(nli_folder, threshold=0.6)
    paris = Source(id="paris", content="The Eiffel Tower stands in Paris. It was built in 1889.")
    berlin = Source(id="berlin", content="The tower in Berlin was not built by Eiffel.")
    answer = attribute("The Eiffel Tower was built in Paris.", [paris, berlin], scorer=scorer)
    (citation,) = answer.citations
    assert citation.origin == "posthoc-nli"
    assert citation.source_ids == ["paris"]
    # weight 1.0: the confidence is the model's probability for the located passage.
    passage = scorer.score(
        [(citation.text, "The Eiffel Tower stands in Paris. It was built in 1889.")]
    )
    assert citation.confidence == pytest.approx(round(passage[0], 4))


def test_a_scorer_built_by_hand_pads_and_names_model_failures(nli_folder: Path) -> None:
    onnxruntime = pytest.importorskip("onnxruntime")
    tokenizers = pytest.importorskip("tokenizers")
    session = onnxruntime.InferenceSession(
        str(nli_folder / "model.onnx"), providers=["CPUExecutionProvider"]
    )
    # A tokenizer as read from disk: no padding, no truncation.
    tokenizer = tokenizers.Tokenizer.from_file(str(nli_folder / "tokenizer.json"))
    scorer = NLIScorer(session, tokenizer, label=2)
    assert scorer.score(PAIRS) == pytest.approx(
        [expected(passage, claim, 2) for claim, passage in PAIRS], abs=1e-6
    )
    unknown = "word " * 5
    tokenizer.add_tokens(["word"])  # an id past the model's table
    with pytest.raises(UsageError, match=r"the model failed on 1 pair\(s\)"):
        scorer.score([("claim", unknown)])


def test_ambiguous_classes_need_a_label(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    folder = build_model(tmp_path / "x", labels={"0": "A", "1": "B", "2": "C"})
    with pytest.raises(UsageError, match="pass label="):
        NLIScorer.from_pretrained(folder)
    assert NLIScorer.from_pretrained(folder, label="c").label == 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: (f / "model.onnx").unlink(), "no ONNX model"),
        (lambda f: (f / "tokenizer.json").unlink(), "no tokenizer.json"),
        (lambda f: (f / "config.json").write_text("[1]"), "not a JSON object"),
        (lambda f: (f / "config.json").write_text("{"), "not readable JSON"),
        (
            lambda f: (f / "config.json").write_text('{"id2label": {"0": "a", "1": "b"}}'),
            "config.json names 2 classes, the model gives 3",
        ),
        (lambda f: (f / "model.onnx").write_bytes(b"not a model"), "cannot load the model"),
    ],
)
def test_broken_folders_are_named(nli_folder: Path, change: object, message: str) -> None:
    change(nli_folder)  # type: ignore[operator]
    with pytest.raises(UsageError, match=message):
        NLIScorer.from_pretrained(nli_folder)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"label": 3}, "label 3 is not a class"),
        ({"label": "yes"}, "no class 'yes'"),
        ({"label": True}, "label must be"),
        ({"weight": 2.0}, "weight must lie"),
        ({"batch_size": 0}, "batch_size must be"),
        ({"max_length": 2}, "max_length must be"),
        ({"activation": "relu"}, "activation must be"),
    ],
)
def test_bad_arguments(nli_folder: Path, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        NLIScorer.from_pretrained(nli_folder, **kwargs)  # type: ignore[arg-type]


def test_missing_folder(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    with pytest.raises(UsageError, match="not a folder"):
        NLIScorer.from_pretrained(tmp_path / "absent")


@pytest.mark.parametrize("module", ["onnxruntime", "tokenizers"])
def test_without_the_extra_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(UsageError, match=r"pip install 'unicite\[nli\]'"):
        NLIScorer.from_pretrained(tmp_path)
