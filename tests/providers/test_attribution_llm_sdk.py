"""LLM attribution through a real chat model client: the OpenAI SDK replayed from a cassette."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

openai = pytest.importorskip("openai")

from unicite import Source  # noqa: E402
from unicite.attribution import attribute  # noqa: E402

API_KEY = os.getenv("OPENAI_API_KEY", "mock-api-key")

ANSWER = (
    "Segundo o Censo 2022 do IBGE, a cidade de São Paulo tem 11.451.999 habitantes. "
    "A região metropolitana ultrapassa 20 milhões de pessoas. "
    "O clima da cidade é subtropical úmido."
)
SOURCES = [
    Source(
        url="https://www.ibge.gov.br/cidades-e-estados/sp/sao-paulo.html",
        title="São Paulo (SP) | Cidades e Estados | IBGE",
        snippet="População no último censo [2022]: 11.451.999 pessoas. Área da unidade "
        "territorial: 1.521,202 km².",
    ),
    Source(
        url="https://pt.wikipedia.org/wiki/Região_Metropolitana_de_São_Paulo",
        title="Região Metropolitana de São Paulo – Wikipédia",
        snippet="A Região Metropolitana de São Paulo reúne 39 municípios e mais de 20 milhões "
        "de habitantes, a maior aglomeração urbana do Brasil.",
    ),
]


@pytest.fixture
def client() -> Iterator[Any]:
    with openai.OpenAI(api_key=API_KEY) as sdk:
        yield sdk


@pytest.mark.vcr(match_on=["method", "uri", "body"])
def test_chat_completions_model_attributes_claims(client: Any) -> None:
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        response = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": prompt}],
            temperature=0,
        )
        return response.choices[0].message.content or ""

    answer = attribute(ANSWER, SOURCES, method="llm", llm=llm)

    assert len(prompts) == 1
    assert "[2]\nTitle: Região Metropolitana de São Paulo – Wikipédia" in prompts[0]
    assert [(c.text, c.source_ids, c.confidence, c.origin) for c in answer.citations] == [
        (
            "Segundo o Censo 2022 do IBGE, a cidade de São Paulo tem 11.451.999 habitantes.",
            [SOURCES[0].id],
            0.9,
            "posthoc-llm",
        ),
        (
            "A região metropolitana ultrapassa 20 milhões de pessoas.",
            [SOURCES[1].id],
            0.9,
            "posthoc-llm",
        ),
    ]
    # The model left the unsupported claim about the climate out.
    assert answer.diagnostics == []
    assert [s.id for s in answer.sources] == [SOURCES[0].id, SOURCES[1].id]
    assert answer.citations[1].quote == SOURCES[1].snippet
