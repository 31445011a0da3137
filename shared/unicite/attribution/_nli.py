"""`NLIScorer`: a local NLI or fact-checking cross-encoder, run with ONNX Runtime.

Any sequence-classification model exported to ONNX in Hugging Face Optimum's layout
(``model.onnx``, or ``onnx/model.onnx``, beside ``tokenizer.json`` and ``config.json``) scores
the passages the local attributor located: MiniCheck-DeBERTa or -RoBERTa, an MNLI cross-encoder,
HHEM, or a model of one's own. Nothing is downloaded: the weights are the user's, on disk.
Needs the ``nli`` extra (onnxruntime and tokenizers).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from unicite.attribution._scorers import _check_weight
from unicite.exceptions import UsageError
from unicite.model import CitationOrigin

__all__ = ["SUPPORT_LABELS", "NLIScorer"]

SUPPORT_LABELS = frozenset(
    {
        "entailment",
        "entailed",
        "entails",
        "supported",
        "supports",
        "support",
        "consistent",
        "factual",
        "attributable",
    }
)
"""Class names (lowercase) read as "the passage supports the claim" in a model's config."""

_MODEL_FILES = ("model.onnx", "onnx/model.onnx")
_PAD_TOKENS = ("[PAD]", "<pad>", "<|pad|>")
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

Activation = Literal["softmax", "sigmoid", "none"]


def _import_runtime() -> tuple[Any, Any, Any]:
    try:
        import numpy
        import onnxruntime
        import tokenizers
    except ImportError as exc:
        raise UsageError(
            f"NLIScorer needs onnxruntime and tokenizers ({exc.name} is missing): "
            "pip install 'unicite[nli]'"
        ) from None
    return numpy, onnxruntime, tokenizers


def _model_file(folder: Path) -> Path:
    for name in _MODEL_FILES:
        if (folder / name).is_file():
            return folder / name
    raise UsageError(f"no ONNX model in {folder} (looked for {', '.join(_MODEL_FILES)})")


def _config(folder: Path) -> dict[str, Any]:
    path = folder / "config.json"
    if not path.is_file():
        return {}
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path} is not readable JSON: {exc}") from None
    if not isinstance(config, dict):
        raise UsageError(f"{path} holds {type(config).__name__}, not a JSON object")
    return config


def _labels(config: dict[str, Any]) -> list[str] | None:
    """The class names in logit order, from ``id2label``; None when the config has none."""
    id2label = config.get("id2label")
    if not isinstance(id2label, dict) or not id2label:
        return None
    try:
        by_index = {int(k): str(v) for k, v in id2label.items()}
    except (TypeError, ValueError):
        raise UsageError(f"config.json id2label has a key that is no number: {id2label}") from None
    if sorted(by_index) != list(range(len(by_index))):
        raise UsageError(f"config.json id2label does not number its classes 0..n-1: {id2label}")
    return [by_index[k] for k in range(len(by_index))]


def _classes(session: Any, output: str, labels: list[str] | None) -> int | None:
    """How many logits the model gives per pair (None when its output shape does not say)."""
    shape = next(o.shape for o in session.get_outputs() if o.name == output)
    width = shape[-1] if shape else None
    if isinstance(width, int) and width > 0:
        if labels is not None and len(labels) != width:
            raise UsageError(f"config.json names {len(labels)} classes, the model gives {width}")
        return width
    return len(labels) if labels is not None else None


def _support_class(label: int | str | None, labels: list[str] | None, classes: int | None) -> int:
    """The index of the supporting class among the model's logits."""
    if isinstance(label, bool) or (label is not None and not isinstance(label, (int, str))):
        raise UsageError(f"label must be a class index or name, got {label!r}")
    if isinstance(label, int):
        if label < 0 or (classes is not None and label >= classes):
            raise UsageError(f"label {label} is not a class of this model ({classes} classes)")
        return label
    if isinstance(label, str):
        names = [name.lower() for name in labels or ()]
        if label.lower() not in names:
            raise UsageError(f"no class {label!r} in config.json (classes: {labels})")
        return names.index(label.lower())
    found = [n for n, name in enumerate(labels or ()) if name.lower() in SUPPORT_LABELS]
    if len(found) == 1:
        return found[0]
    if classes == 1:
        return 0
    if classes == 2 and not found:
        return 1  # a binary classifier's positive class (LABEL_0 / LABEL_1)
    raise UsageError(
        f"cannot tell which class means 'supported' (classes: {labels or classes}): "
        "pass label= (its index or name)"
    )


def _pad_id(tokenizer: Any) -> int:
    """The id batches are padded with: the tokenizer's own, a pad token's, else 0."""
    padding = tokenizer.padding
    if padding:
        return int(padding["pad_id"])
    for token in _PAD_TOKENS:
        found = tokenizer.token_to_id(token)
        if found is not None:
            return int(found)
    return 0


def _columns(encodings: Sequence[Any], pad_id: int) -> dict[str, list[list[int]]]:
    """The model's input columns, every row padded to the longest (a tokenizer may not pad)."""
    width = max(len(e.ids) for e in encodings)
    columns: dict[str, list[list[int]]] = {name: [] for name in _INPUTS}
    for e in encodings:
        gap = width - len(e.ids)
        columns["input_ids"].append([*e.ids, *[pad_id] * gap])
        columns["attention_mask"].append([*e.attention_mask, *[0] * gap])
        columns["token_type_ids"].append([*e.type_ids, *[0] * gap])
    return columns


@dataclass(frozen=True)
class NLIScorer:
    """A local cross-encoder giving the probability that a passage supports a claim.

    Build it with `NLIScorer.from_pretrained`, then pass it to ``attribute(..., scorer=)``:
    the local attributor locates each claim's best passages and the model re-scores them.

    Args:
        session: An ``onnxruntime.InferenceSession`` of the model.
        tokenizer: A ``tokenizers.Tokenizer`` for it, truncating and padding pairs.
        label: Index of the supporting class among the model's logits.
        activation: How logits become a probability: ``"softmax"`` over the classes,
            ``"sigmoid"`` of the one logit, or ``"none"`` when the model outputs probabilities.
        weight: Share of the final confidence taken from the model (1.0: it decides).
        threshold: Blended probability needed to cite.
        batch_size: Pairs per model call.
        passage_first: Whether the model reads ``(passage, claim)`` (NLI premise first, as
            MNLI models and MiniCheck do) rather than ``(claim, passage)``.
        output: Name of the model output holding the logits.
    """

    session: Any
    tokenizer: Any
    label: int
    activation: Activation = "softmax"
    weight: float = 1.0
    threshold: float = 0.5
    batch_size: int = 16
    passage_first: bool = True
    output: str = "logits"
    origin: CitationOrigin = "posthoc-nli"
    _inputs: tuple[tuple[str, str], ...] = field(init=False, repr=False, compare=False)
    _pad_id: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_weight(self.weight, self.threshold)
        if self.activation not in ("softmax", "sigmoid", "none"):
            raise UsageError(
                f"activation must be 'softmax', 'sigmoid' or 'none', got {self.activation!r}"
            )
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int):
            raise UsageError(f"batch_size must be a positive int, got {self.batch_size!r}")
        if self.batch_size < 1:
            raise UsageError(f"batch_size must be a positive int, got {self.batch_size!r}")
        names = {o.name for o in self.session.get_outputs()}
        if self.output not in names:
            raise UsageError(f"the model has no output {self.output!r} (outputs: {sorted(names)})")
        wanted = tuple((i.name, i.type) for i in self.session.get_inputs())
        unknown = [name for name, _ in wanted if name not in _INPUTS]
        if unknown:
            raise UsageError(
                f"the model asks for inputs a tokenizer does not give: {unknown} "
                f"(known: {', '.join(_INPUTS)})"
            )
        object.__setattr__(self, "_inputs", wanted)
        object.__setattr__(self, "_pad_id", _pad_id(self.tokenizer))

    @classmethod
    def from_pretrained(
        cls,
        path: str | Path,
        *,
        label: int | str | None = None,
        activation: Activation | None = None,
        weight: float = 1.0,
        threshold: float = 0.5,
        batch_size: int = 16,
        max_length: int = 512,
        passage_first: bool = True,
        threads: int | None = None,
        providers: Sequence[str] | None = None,
    ) -> NLIScorer:
        """Load a model exported to ONNX from a local folder.

        Args:
            path: The folder: ``model.onnx`` (or ``onnx/model.onnx``), ``tokenizer.json`` and,
                when the classes are named, ``config.json``.
            label: The supporting class, as an index or a name from ``config.json``'s
                ``id2label``. By default the one class named like ``entailment`` or
                ``supported``; class 1 of an unnamed binary classifier; the one logit of a
                single-output model.
            activation: Default ``"sigmoid"`` for a single-output model, else ``"softmax"``.
            weight: Share of the final confidence taken from the model.
            threshold: Blended probability needed to cite.
            batch_size: Pairs per model call.
            max_length: Tokens per pair; longer pairs are cut, the longer text first (capped
                at the model's ``max_position_embeddings`` when its config gives one).
            passage_first: Whether the model reads ``(passage, claim)``.
            threads: ONNX Runtime's intra-op threads (its default when None).
            providers: ONNX Runtime execution providers (CPU when None).

        Raises:
            UsageError: The extra is not installed, a file is missing, or the classes are
                ambiguous.
        """
        _, onnxruntime, tokenizers = _import_runtime()
        folder = Path(path)
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder holding an ONNX model")
        if isinstance(max_length, bool) or not isinstance(max_length, int) or max_length < 8:
            raise UsageError(f"max_length must be an int of at least 8, got {max_length!r}")
        model_file = _model_file(folder)
        tokenizer_file = folder / "tokenizer.json"
        if not tokenizer_file.is_file():
            raise UsageError(f"no tokenizer.json in {folder} (the tokenizers library's format)")
        config = _config(folder)
        options = onnxruntime.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
        try:
            session = onnxruntime.InferenceSession(
                str(model_file),
                sess_options=options,
                providers=list(providers) if providers else ["CPUExecutionProvider"],
            )
            tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # onnxruntime and tokenizers raise their own types
            raise UsageError(f"cannot load the model in {folder}: {exc}") from exc
        positions = config.get("max_position_embeddings")
        if isinstance(positions, int) and not isinstance(positions, bool) and positions > 8:
            max_length = min(max_length, positions)
        # Batches are padded by `score` itself (`_columns`), whatever the tokenizer does.
        tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
        outputs = [o.name for o in session.get_outputs()]
        output = "logits" if "logits" in outputs else outputs[0]
        labels = _labels(config)
        classes = _classes(session, output, labels)
        support = _support_class(label, labels, classes)
        if activation is None:
            activation = "sigmoid" if classes == 1 else "softmax"
        return cls(
            session,
            tokenizer,
            support,
            activation=activation,
            weight=weight,
            threshold=threshold,
            batch_size=batch_size,
            passage_first=passage_first,
            output=output,
        )

    def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The model's probability of support for each ``(claim, passage)`` pair."""
        numpy, _, _ = _import_runtime()
        out: list[float] = []
        for first in range(0, len(pairs), self.batch_size):
            chunk = pairs[first : first + self.batch_size]
            texts = [(p, c) if self.passage_first else (c, p) for c, p in chunk]
            encodings = self.tokenizer.encode_batch(texts)
            columns = _columns(encodings, self._pad_id)
            feed = {
                name: numpy.asarray(columns[name], dtype="int32" if "int32" in kind else "int64")
                for name, kind in self._inputs
            }
            try:
                raw = self.session.run([self.output], feed)[0]
            except Exception as exc:  # ONNX Runtime raises its own exception types
                raise UsageError(f"the model failed on {len(chunk)} pair(s): {exc}") from exc
            logits = numpy.asarray(raw, dtype="float64")
            if logits.ndim == 1:
                logits = logits.reshape(-1, 1)
            if logits.ndim != 2 or logits.shape[0] != len(chunk):
                raise UsageError(
                    f"the model gave logits of shape {logits.shape} for {len(chunk)} pairs"
                )
            if self.label >= logits.shape[1]:
                raise UsageError(
                    f"label {self.label} is not a class of this model ({logits.shape[1]} classes)"
                )
            out.extend(self._probability([float(x) for x in row]) for row in logits)
        return out

    def _probability(self, row: list[float]) -> float:
        if any(math.isnan(x) for x in row):
            raise UsageError("the model gave NaN")
        value = row[self.label]
        if self.activation == "none":
            return min(1.0, max(0.0, value))
        if self.activation == "sigmoid":
            z = max(-60.0, min(60.0, value))
            return 1.0 / (1.0 + math.exp(-z))
        top = max(row)
        exps = [math.exp(x - top) for x in row]
        return exps[self.label] / sum(exps)
