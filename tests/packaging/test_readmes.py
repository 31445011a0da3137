"""The distributions' READMEs (their PyPI pages) show code that runs against the real API.

Each adapter README's snippet leaves the model and the data to the reader; here they are
offline stand-ins, given to the snippet under the names it uses.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = {
    "unicite": ROOT / "shared" / "README.md",
    "unicite_langchain": ROOT / "integrations" / "langchain" / "README.md",
    "unicite_llamaindex": ROOT / "integrations" / "llamaindex" / "README.md",
    "unicite_pydantic_ai": ROOT / "integrations" / "pydantic_ai" / "README.md",
    "unicite_haystack": ROOT / "integrations" / "haystack" / "README.md",
}

ZURICH = "Zürich zählt rund 440 000 Einwohner."
ZURICH_URL = "https://www.stadt-zuerich.ch/"


def blocks(module: str) -> list[str]:
    text = READMES[module].read_text("utf-8")
    return re.findall(r"```python\n(.*?)```", text, re.DOTALL)


def run(module: str, namespace: dict[str, Any]) -> None:
    code = compile(blocks(module)[0], str(READMES[module]), "exec")
    exec(code, namespace)  # noqa: S102 - our own README


@pytest.mark.parametrize("module", list(READMES))
def test_every_name_imported_from_the_package_is_public(module: str) -> None:
    package = pytest.importorskip(module)
    imported = []
    for block in blocks(module):
        for names in re.findall(rf"^from {module} import (.+)$", block, re.MULTILINE):
            imported += [name.strip() for name in names.split(",")]
    for name in imported:
        assert name in package.__all__, name


def test_the_core_readme_runs(capsys: pytest.CaptureFixture[str]) -> None:
    run("unicite", {})
    out = capsys.readouterr().out.splitlines()
    block = blocks("unicite")[0]
    # Each printed line is what the README's comment next to it says (up to two spaces).
    expected = [
        line.split("#", 1)[1].split("  ", 1)[0].strip()
        for line in block.splitlines()
        if line.startswith("print(answer.")
    ]
    assert out[: len(expected)] == expected
    assert "**Sources**" in out


@pytest.fixture
def langchain_stand_ins() -> dict[str, Any]:
    pytest.importorskip("langchain_core")
    from langchain_core.callbacks import CallbackManagerForRetrieverRun
    from langchain_core.documents import Document
    from langchain_core.language_models.fake_chat_models import FakeListChatModel
    from langchain_core.retrievers import BaseRetriever

    class Documents(BaseRetriever):
        documents: list[Document]

        def _get_relevant_documents(
            self, query: str, *, run_manager: CallbackManagerForRetrieverRun
        ) -> list[Document]:
            return self.documents

    document = Document(page_content=ZURICH, metadata={"source": ZURICH_URL, "title": "Zürich"})
    return {
        "retriever": Documents(documents=[document]),
        "model": FakeListChatModel(responses=["Rund 440 000 Menschen [1]."]),
    }


def test_the_langchain_readme_runs(
    langchain_stand_ins: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    namespace = dict(langchain_stand_ins)
    run("unicite_langchain", namespace)
    answer = namespace["answer"]
    assert answer.text == "Rund 440 000 Menschen [1]."
    assert [source.url for source in answer.sources] == [ZURICH_URL]
    out = capsys.readouterr().out
    assert f"'Rund 440 000 Menschen' -> Zürich ({ZURICH_URL})" in out


@pytest.fixture
def llamaindex_stand_ins(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    pytest.importorskip("llama_index.core")
    from llama_index.core import Document, MockEmbedding, Settings
    from llama_index.core.llms import (
        CompletionResponse,
        CompletionResponseGen,
        CustomLLM,
        LLMMetadata,
    )
    from llama_index.core.llms.callbacks import llm_completion_callback

    class Reply(CustomLLM):
        """Answers every prompt with `text`."""

        text: str

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata()

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            return CompletionResponse(text=self.text)

        @llm_completion_callback()
        def stream_complete(
            self, prompt: str, formatted: bool = False, **kwargs: Any
        ) -> CompletionResponseGen:
            yield CompletionResponse(text=self.text, delta=self.text)

    # The README leaves the embedding model to the reader's Settings.
    monkeypatch.setattr(Settings, "_embed_model", MockEmbedding(embed_dim=8))
    document = Document(text=ZURICH, metadata={"url": ZURICH_URL, "title": "Zürich"})
    return {"documents": [document], "llm": Reply(text="Rund 440 000 Menschen [1].")}


def test_the_llamaindex_readme_runs(
    llamaindex_stand_ins: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    namespace = dict(llamaindex_stand_ins)
    run("unicite_llamaindex", namespace)
    answer = namespace["answer"]
    assert answer.text == "Rund 440 000 Menschen [1]."
    assert [source.url for source in answer.sources] == [ZURICH_URL]
    out = capsys.readouterr().out
    assert f"'Rund 440 000 Menschen' -> Zürich ({ZURICH_URL})" in out


@pytest.fixture
def pydantic_ai_stand_ins() -> dict[str, Any]:
    pytest.importorskip("pydantic_ai.agent")
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("search", {"query": "Köhlbrandbrücke"})])
        return ModelResponse(parts=[TextPart("Sie ist 3 618 Meter lang [1].")])

    def search(query: str) -> list[dict[str, str]]:
        """Search the encyclopaedia."""
        return [{"url": KOEHLBRAND_URL, "title": "Köhlbrandbrücke", "content": KOEHLBRAND}]

    return {"model": FunctionModel(respond), "search": search}


KOEHLBRAND = "Die Köhlbrandbrücke in Hamburg ist 3 618 Meter lang."
KOEHLBRAND_URL = "https://de.wikipedia.org/wiki/K%C3%B6hlbrandbr%C3%BCcke"


def test_the_pydantic_ai_readme_runs(
    pydantic_ai_stand_ins: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    namespace = dict(pydantic_ai_stand_ins)
    run("unicite_pydantic_ai", namespace)
    answer = namespace["answer"]
    assert [source.url for source in answer.sources] == [KOEHLBRAND_URL]
    out = capsys.readouterr().out
    assert f"'Sie ist 3 618 Meter lang' -> Köhlbrandbrücke ({KOEHLBRAND_URL})" in out


@pytest.fixture
def haystack_stand_ins() -> dict[str, Any]:
    pytest.importorskip("haystack.core")
    from haystack import Document
    from haystack.document_stores.in_memory import InMemoryDocumentStore
    from integrations.haystack.scripted import ScriptedChatGenerator

    def reply(prompt: str) -> str:
        number = next(line[1] for line in prompt.splitlines() if KOEHLBRAND in line)
        return f"Sie ist 3 618 Meter lang [{number}] [7]."

    store = InMemoryDocumentStore()
    store.write_documents(
        [
            Document(content=ZURICH, meta={"url": ZURICH_URL, "title": "Zürich"}),
            Document(content=KOEHLBRAND, meta={"url": KOEHLBRAND_URL, "title": "Brücke"}),
        ]
    )
    return {"generator": ScriptedChatGenerator(reply), "document_store": store}


def test_the_haystack_readme_runs(
    haystack_stand_ins: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    namespace = dict(haystack_stand_ins)
    run("unicite_haystack", namespace)
    assert namespace["cited"].text == "Sie ist 3 618 Meter lang [1]."  # [7] names nothing
    out = capsys.readouterr().out
    assert f"1 {KOEHLBRAND_URL}" in out


def test_the_adapter_readmes_install_what_they_import() -> None:
    for module, distribution in [
        ("unicite_langchain", "unicite-langchain"),
        ("unicite_llamaindex", "unicite-llamaindex"),
    ]:
        text = READMES[module].read_text("utf-8")
        assert f"pip install {distribution}" in text
        assert f'pip install "unicite[{distribution.split("-")[1]}]"' in text
