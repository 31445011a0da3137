"""Built-in extractors on realistic tool outputs (tests/data/tools, from documented formats)."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from unicite import Source, normalize_url
from unicite.model import SourceOrigin
from unicite.sources import from_tool_output

DATA = Path(__file__).resolve().parents[1] / "data" / "tools"


def text(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def data(name: str) -> Any:
    return json.loads(text(name))


def read(
    tool: str, output: Any, arguments: dict[str, Any] | None = None
) -> tuple[list[Source], list[str]]:
    notes: list[str] = []
    found = from_tool_output(tool, output, call_id="call_1", arguments=arguments, diagnostics=notes)
    return found, notes


# --- every fixture --------------------------------------------------------------------------

FIXTURES = sorted(p.name for p in DATA.iterdir())
ERRORS = {n for n in FIXTURES if "error" in n or "not_found" in n}
CASES = [(n, True) for n in FIXTURES] + [(n, False) for n in FIXTURES if n.endswith(".json")]


@pytest.mark.parametrize(("name", "as_text"), CASES)
def test_every_fixture_reads_the_same_as_text_or_data(name: str, as_text: bool) -> None:
    raw = text(name)
    output: Any = raw if as_text else json.loads(raw)
    found, notes = read("some_tool", output)
    again, _ = read("some_tool", raw)
    assert found == again  # the same sources from JSON text and from parsed data, deterministic
    if name in ERRORS:
        assert found == []
        assert any("failed" in note for note in notes)
        return
    assert found, notes
    for source in found:
        assert source.origin == SourceOrigin(tool="some_tool", call_id="call_1")
        assert source.url or source.content or source.snippet
    # An unknown tool name gets the same sources as the tool's own name: shape sniffing works.
    assert [s.url for s in found] == [s.url for s in read(name.split("_")[0], raw)[0]]


# --- web search -----------------------------------------------------------------------------


def test_tavily_search_results() -> None:
    payload = data("tavily_search.json")
    found, notes = read("tavily_search_results_json", text("tavily_search.json"))
    assert notes == []
    assert [s.url for s in found] == [r["url"] for r in payload["results"]]
    assert [s.rank for s in found] == [0, 1, 2]
    assert {s.kind for s in found} == {"web"}
    first, nasa, _ = found
    # Tavily's "content" is a short extract: a snippet. "raw_content" is the page: content.
    assert first.snippet == payload["results"][0]["content"]
    assert first.content is None
    assert nasa.content == payload["results"][1]["raw_content"].strip()
    assert first.title == "James Webb Space Telescope - Wikipedia"
    assert first.extras["score"] == pytest.approx(0.9352)
    assert nasa.domain == "nasa.gov"


def test_tavily_news_date_is_parsed() -> None:
    [source], _ = read("tavily_search", text("tavily_news.json"))
    assert source.published_at == datetime(2024, 5, 30, 16, 5, tzinfo=timezone.utc)


def test_tavily_extract_reports_failed_urls() -> None:
    [page], notes = read("tavily_extract", text("tavily_extract.json"))
    assert page.url == "https://webbtelescope.org/news/first-images"
    assert page.title == "Webb's First Images"  # from the page's heading
    assert page.content is not None
    assert page.content.startswith("# Webb's First Images")
    assert any("https://example.invalid/missing" in note for note in notes)


def test_langchain_tavily_list_of_url_and_content() -> None:
    found, _ = read("tavily_search_results_json", text("langchain_tavily_results.json"))
    assert [s.url for s in found] == [r["url"] for r in data("langchain_tavily_results.json")]
    assert all(s.snippet and s.kind == "web" for s in found)


def test_serper_organic_answer_box_graph_and_questions() -> None:
    payload = data("serper_search.json")
    found, _ = read("google_serper", payload)
    organic = [s for s in found if "section" not in s.extras]
    assert [s.url for s in organic] == [r["link"] for r in payload["organic"]]
    # Serper positions are 1-based; ranks are 0-based.
    assert [s.rank for s in organic] == [r["position"] - 1 for r in payload["organic"]]
    assert organic[0].snippet == payload["organic"][0]["snippet"]
    assert organic[1].published_at == datetime(2024, 1, 12, tzinfo=timezone.utc)
    assert organic[2].published_at is None
    assert organic[2].extras["date"] == "3 days ago"  # relative dates are kept, not guessed
    sections = {s.extras.get("section"): s for s in found if "section" in s.extras}
    assert sections["answerBox"].url == payload["answerBox"]["link"]
    assert sections["knowledgeGraph"].title == "Eiffel Tower"
    assert sections["knowledgeGraph"].extras["publisher"] == "Wikipedia"
    assert sections["peopleAlsoAsk"].extras["question"].startswith("Why is the Eiffel Tower")


def test_serper_news() -> None:
    found, _ = read("serper_news", text("serper_news.json"))
    assert [s.extras["section"] for s in found] == ["news", "news"]
    assert found[0].published_at == datetime(2024, 2, 26, tzinfo=timezone.utc)


def test_google_custom_search_ranks_continue_across_pages() -> None:
    payload = data("google_cse.json")
    found, _ = read("google_search", payload)
    assert [s.url for s in found] == [i["link"] for i in payload["items"]]
    assert [s.rank for s in found] == [10, 11]  # startIndex 11: the second page
    blog = found[1]
    assert blog.published_at == datetime(2024, 3, 4, 10, tzinfo=timezone.utc)
    assert blog.modified_at == datetime(2024, 6, 1, 8, 30, tzinfo=timezone.utc)
    assert blog.snippet == payload["items"][1]["snippet"]


def test_brave_strips_highlighting_and_keeps_extra_snippets() -> None:
    found, _ = read("brave_web_search", text("brave_web_search.json"))
    docs, realpython, lwn = found
    assert docs.snippet is not None
    assert "<strong>" not in docs.snippet
    assert docs.snippet.startswith("The asyncio.TaskGroup class provides")
    assert realpython.title == "Python 3.11 asyncio TaskGroups & exception groups explained"
    assert docs.published_at == datetime(2024, 6, 7, 10, 12, 33, tzinfo=timezone.utc)
    assert len(docs.extras["extra_snippets"]) == 2
    assert "<strong>" not in docs.extras["extra_snippets"][1]
    assert lwn.extras["section"] == "news"
    assert [docs.rank, realpython.rank, lwn.rank] == [0, 1, 0]


def test_brave_mcp_server_text_format() -> None:
    found, _ = read("brave_web_search", text("brave_mcp.txt"))
    assert [s.url for s in found] == [
        "https://docs.python.org/3/library/asyncio-task.html",
        "https://realpython.com/python311-exception-groups/",
    ]
    assert found[0].snippet is not None
    assert "<strong>" not in found[0].snippet


def test_exa_text_is_content_highlights_or_summary_the_snippet() -> None:
    payload = data("exa_search.json")
    paper, preprint = read("exa_search", payload)[0]
    assert paper.content == payload["results"][0]["text"]
    assert paper.snippet == payload["results"][0]["summary"]
    assert preprint.snippet == payload["results"][1]["highlights"][0]
    assert paper.published_at == datetime(2023, 11, 16, tzinfo=timezone.utc)
    assert paper.extras["author"] == "Chen, P. J.; Liu, D. R."


def test_searxng_reports_unresponsive_engines() -> None:
    found, notes = read("searx_search_results", text("searxng.json"))
    assert [s.rank for s in found] == [0, 1]
    assert found[0].extras["engines"] == ["duckduckgo", "google", "startpage"]
    assert found[1].published_at == datetime(2022, 8, 5, tzinfo=timezone.utc)
    assert any("brave" in note for note in notes)


def test_bing_web_pages_and_news() -> None:
    payload = data("bing_web_search.json")
    found, _ = read("bing_search", payload)
    pages = [s for s in found if s.extras.get("section") is None]
    assert [s.title for s in pages] == [v["name"] for v in payload["webPages"]["value"]]
    # Seven fractional digits, no zone: read as UTC.
    assert pages[0].published_at == datetime(2024, 8, 7, tzinfo=timezone.utc)
    [news] = [s for s in found if s.extras.get("section") == "news"]
    assert news.extras["publisher"] == "ABC News"
    assert news.snippet == payload["news"]["value"][0]["description"]


@pytest.mark.parametrize("name", ["duckduckgo_results.txt", "duckduckgo_news.txt"])
def test_langchain_duckduckgo_string_format(name: str) -> None:
    found, _ = read("duckduckgo_results_json", text(name))
    assert all(s.kind == "web" and s.url and s.title and s.snippet for s in found)
    assert [s.rank for s in found] == list(range(len(found)))
    # Snippets keep their own commas.
    assert all(", title:" not in (s.snippet or "") and "link:" not in (s.url or "") for s in found)


def test_duckduckgo_bracketed_results() -> None:
    found, _ = read("duckduckgo_search", text("duckduckgo_results.txt"))
    assert [s.url for s in found] == [
        "https://en.wikipedia.org/wiki/Paris",
        "https://www.britannica.com/place/Paris",
        "https://www.insee.fr/fr/statistiques/1405599?geo=COM-75056",
    ]
    assert found[0].snippet is not None
    assert found[0].snippet.endswith("in the European Union.")
    assert found[1].title == "Paris | Definition, Map, Population, Facts, & History | Britannica"


def test_duckduckgo_news_backend_has_dates_and_publishers() -> None:
    found, _ = read("ddg_news", text("duckduckgo_news.txt"))
    assert [s.extras["publisher"] for s in found] == ["Le Monde", "France 24"]
    assert found[0].published_at == datetime(2024, 1, 16, 9, 32, tzinfo=timezone.utc)


def test_answer_engine_citations_carry_their_inline_numbers_and_claims() -> None:
    payload = data("answer_engine.json")
    found, _ = read("perplexity_ask", payload)
    assert [s.url for s in found] == payload["citations"]
    assert [s.extras["inline_marker"] for s in found] == [1, 2, 3]
    assert found[0].title == "Malaria - World Health Organization"
    assert found[0].snippet == "Malaria caused an estimated 608,000 deaths in 2022"
    assert found[1].modified_at == datetime(2023, 10, 5, tzinfo=timezone.utc)


def test_prose_with_a_sources_block() -> None:
    found, _ = read("research_agent", text("research_agent.txt"))
    assert [s.extras["inline_marker"] for s in found] == [1, 2, 3]
    bnef, catl, iea = found
    assert bnef.title == "Lithium-ion Battery Pack Prices Hit Record Low of $139/kWh"
    assert catl.title == "CATL sodium-ion launch"
    assert iea.url == "https://www.iea.org/reports/global-ev-outlook-2024"
    assert bnef.snippet == "Lithium-ion battery prices fell 14% in 2023 to a record low of $139/kWh"
    assert catl.snippet is not None
    assert "mass production in China" in catl.snippet


# --- pages ----------------------------------------------------------------------------------


def test_mcp_fetch_server_output() -> None:
    [page], _ = read("fetch", text("mcp_fetch.txt"), {"url": "https://peps.python.org/pep-0654/"})
    assert page.kind == "web"
    assert page.url == "https://peps.python.org/pep-0654/"
    assert page.title == "PEP 654 – Exception Groups and except*"
    assert page.content is not None
    assert "<error>" not in page.content  # the truncation notice is the tool's, not the page's
    assert page.content.endswith("at most one exception at a time.")


def test_jina_reader_text_and_json() -> None:
    [from_text], _ = read("jina_reader", text("jina_reader.txt"))
    [from_json], _ = read("jina_reader", text("jina_reader.json"))
    for page in (from_text, from_json):
        assert page.url == "https://blog.rust-lang.org/2024/07/25/Rust-1.80.0.html"
        assert page.title == "Rust 1.80.0 is now available"
        assert page.published_at == datetime(2024, 7, 25, tzinfo=timezone.utc)
        assert page.content is not None
        assert "LazyCell and LazyLock" in page.content
    assert from_text.content is not None
    assert not from_text.content.startswith("Title:")
    assert from_json.snippet is not None
    assert from_json.snippet.startswith("Rust 1.80 stabilises")


def test_firecrawl_scrape() -> None:
    [page], _ = read("firecrawl_scrape", text("firecrawl_scrape.json"))
    assert page.url == "https://foundation.mozilla.org/en/who-we-are/"
    assert page.title == "Our Mission | Mozilla Foundation"
    assert (
        page.snippet
        == "The Mozilla Foundation works to ensure the internet remains a public resource."
    )
    assert page.content is not None
    assert page.content.startswith("# Our Mission")
    assert page.modified_at == datetime(2024, 4, 2, 13, tzinfo=timezone.utc)


def test_fetched_html_page_uses_the_url_argument_and_the_page_title() -> None:
    url = "https://www.coastal-almanac.example/tides/explained"
    [page], _ = read("fetch_url", text("page.html"), {"url": url})
    assert page.url == url
    assert page.title == "Tide tables explained – Coastal Almanac"
    assert page.snippet == "How tide tables are calculated from harmonic constituents."
    assert page.content is not None
    assert "harmonic constituents: the M2 lunar tide" in page.content
    assert "analytics" not in page.content
    assert "font-family" not in page.content
    assert page.published_at is not None
    assert page.published_at.utcoffset() is not None


def test_plain_text_from_a_fetch_tool_with_a_url_argument() -> None:
    url = "https://example.org/notes"
    [page], _ = read("read_webpage", "# Notes\n\nPlain text page.", {"url": url})
    assert (page.kind, page.url, page.title) == ("web", url, "Notes")


# --- HTTP -----------------------------------------------------------------------------------


def test_http_json_body_is_an_api_source_at_its_url() -> None:
    payload = data("http_json_response.json")
    [source], _ = read("http_get", payload)
    assert source.kind == "api"
    assert source.url == payload["url"]
    assert source.content is not None
    assert json.loads(source.content) == payload["body"]
    # The response's shape makes it an API response, whatever the tool is called.
    [unnamed], _ = read("some_tool", payload)
    assert (unnamed.kind, unnamed.url) == ("api", payload["url"])


def test_http_tool_output_that_is_not_a_response_is_an_api_source() -> None:
    # Seed 001's http_client: a tool the "http" extractor reads returns the JSON body alone.
    body = data("http_json_response.json")["body"]
    url = "https://api.open-meteo.com/v1/forecast"
    for tool in ("http_client", "requests_get", "api_call", "curl"):
        [source], _ = read(tool, body)
        assert source.kind == "api", tool
        assert source.content is not None
        assert json.loads(source.content) == body
    [plain], _ = read("http_client", "17.4")
    assert (plain.kind, plain.content) == ("api", "17.4")
    # The same output of a tool of no known kind stays a tool source.
    [other], _ = read("weather_lookup", body)
    assert other.kind == "tool"
    # An HTML page or search results fetched through an HTTP tool are web pages still.
    html = data("http_html_response.json")["text"]
    [page], _ = read("http_client", html, {"url": url})
    assert (page.kind, page.url) == ("web", url)
    results = json.loads(data("http_search_api_response.json")["body"])
    [hit], _ = read("http_client", results)
    assert hit.kind == "web"


def test_http_html_body_is_a_page_with_last_modified() -> None:
    [page], _ = read("requests_get", text("http_html_response.json"))
    assert page.kind == "web"
    assert page.title == "Tide tables explained"
    assert page.content == "The M2 lunar tide has a period of 12.42 hours."
    assert page.modified_at == datetime(2023, 9, 20, 7, 30, tzinfo=timezone.utc)


def test_http_body_holding_search_results_gives_the_results() -> None:
    [result], _ = read("http_post", text("http_search_api_response.json"))
    assert result.url == "https://tidesandcurrents.noaa.gov/predhist.html"
    assert result.rank == 0
    assert result.kind == "web"  # a search API's results are web pages, not the API's answer


def test_http_error_status() -> None:
    found, notes = read("http_get", text("http_not_found.json"))
    assert found == []
    assert any("HTTP 404" in note for note in notes)


def test_http_client_response_objects() -> None:
    httpx = pytest.importorskip("httpx")
    request = httpx.Request("GET", "https://www.coastal-almanac.example/tides/explained")
    html = data("http_html_response.json")["text"]
    response = httpx.Response(200, text=html, request=request)
    [page], _ = read("http_get", response)
    assert page.url == "https://www.coastal-almanac.example/tides/explained"
    assert page.title == "Tide tables explained"
    assert page.kind == "web"
    body = data("http_json_response.json")["body"]
    [api], _ = read("http_get", httpx.Response(200, json=body, request=request))
    assert (api.kind, api.url) == ("api", "https://www.coastal-almanac.example/tides/explained")
    failed, notes = read("http_get", httpx.Response(503, text="busy", request=request))
    assert failed == []
    assert any("HTTP 503" in note for note in notes)


# --- retrieval ------------------------------------------------------------------------------


def test_langchain_documents() -> None:
    payload = data("langchain_documents.json")
    found, _ = read("retriever", payload)
    assert [s.kind for s in found] == ["document"] * 3
    assert [s.content for s in found] == [d["page_content"] for d in payload]
    pdf_page, next_page, press = found
    assert pdf_page.url is None
    assert pdf_page.title == "annual-report-2023.pdf"
    assert pdf_page.extras["path"] == "reports/annual-report-2023.pdf"
    assert (pdf_page.extras["page"], pdf_page.extras["page_label"]) == (11, "12")
    assert (pdf_page.extras["page_number"], next_page.extras["page_number"]) == (12, 13)
    assert "page_number" not in press.extras  # a web page has no page number
    assert pdf_page.id == payload[0]["id"]  # the document's own id
    assert pdf_page.id != next_page.id
    assert press.url == payload[2]["metadata"]["source"]
    assert press.title == "Q4 2023 results press release"
    assert press.extras["score"] == pytest.approx(0.91)


def test_langchain_serialized_documents() -> None:
    [doc], _ = read("retriever", text("langchain_documents_serialized.json"))
    assert doc.kind == "document"
    assert doc.url == "https://docs.python.org/3/library/functools.html"
    assert doc.content is not None
    assert doc.content.startswith("The functools module")


def test_langchain_document_objects() -> None:
    documents = pytest.importorskip("langchain_core.documents")
    docs = [documents.Document(**d) for d in data("langchain_documents.json")]
    assert read("retriever", docs) == read("retriever", data("langchain_documents.json"))


def test_llamaindex_nodes_with_scores() -> None:
    payload = data("llamaindex_nodes.json")
    handbook, policy = read("query_engine", payload)[0]
    assert handbook.kind == policy.kind == "document"
    assert handbook.provider_id == payload[0]["node"]["id_"] == handbook.id
    assert handbook.content == payload[0]["node"]["text"]
    assert handbook.title == "handbook.pdf"
    assert (handbook.extras["page_label"], handbook.extras["page_number"]) == ("7", 7)
    assert "page_number" not in policy.extras
    assert handbook.extras["score"] == pytest.approx(0.8423)
    assert (handbook.extras["start_char"], handbook.extras["end_char"]) == (1840, 1927)
    assert handbook.modified_at == datetime(2024, 3, 2, tzinfo=timezone.utc)
    # Newer nodes keep their text in text_resource.
    assert policy.content == payload[1]["node"]["text_resource"]["text"]
    assert policy.url == "https://intranet.example.com/policies/remote-work"


def test_llamaindex_objects() -> None:
    schema = pytest.importorskip("llama_index.core.schema")
    node = schema.TextNode(
        text="Leave accrues monthly.", id_="n-1", metadata={"file_name": "a.pdf"}
    )
    [source], _ = read("retriever", [schema.NodeWithScore(node=node, score=0.5)])
    assert (source.id, source.content, source.extras["score"]) == (
        "n-1",
        "Leave accrues monthly.",
        0.5,
    )
    # The node's metadata is read too (its to_dict() names it "extra_info").
    assert source.title == "a.pdf"


# --- Wikipedia ------------------------------------------------------------------------------


def test_wikipedia_search_builds_article_urls_in_the_right_language() -> None:
    found, _ = read("wikipedia_search", text("wikipedia_search.json"))
    assert [s.url for s in found] == [
        "https://en.wikipedia.org/wiki/Ada_Lovelace",
        "https://en.wikipedia.org/wiki/Analytical_engine",
    ]
    assert found[0].snippet is not None
    assert "<span" not in found[0].snippet
    assert "née Byron" in found[0].snippet
    assert "&amp;" not in found[0].snippet
    assert found[0].modified_at == datetime(2024, 5, 30, 14, 3, 11, tzinfo=timezone.utc)
    [german, _] = read("wikipedia_search", text("wikipedia_rest_search.json"), {"lang": "de"})[0]
    assert normalize_url(german.url or "") == "https://de.wikipedia.org/wiki/Z%C3%BCrich"


def test_wikipedia_summary_opensearch_and_langchain_text() -> None:
    [summary], _ = read("wikipedia", text("wikipedia_summary.json"))
    assert summary.url == "https://en.wikipedia.org/wiki/Ada_Lovelace"
    assert summary.snippet is not None
    assert summary.snippet.startswith("Augusta Ada King")
    opensearch, _ = read("wikipedia", text("wikipedia_opensearch.json"))
    assert [s.title for s in opensearch] == ["Zürich", "Zürich Airport", "Lake Zürich"]
    langchain, _ = read("wikipedia", text("wikipedia_langchain.txt"))
    assert [s.url for s in langchain] == [
        "https://en.wikipedia.org/wiki/Ada_Lovelace",
        "https://en.wikipedia.org/wiki/Note_G",
    ]
    assert langchain[1].content is not None
    assert langchain[1].content.startswith("Note G is")


def test_wikipedia_tool_returning_bare_text_uses_the_title_argument() -> None:
    [page], _ = read("wikipedia", "Ada Lovelace was a mathematician.", {"title": "Ada Lovelace"})
    assert page.url == "https://en.wikipedia.org/wiki/Ada_Lovelace"


# --- MCP and tool-result envelopes ----------------------------------------------------------


@pytest.mark.parametrize("tool", ["mcp__docs__search", "mcp.docs__search", "search_files"])
def test_mcp_resources_and_links(tool: str) -> None:
    found, _ = read(tool, text("mcp_call_tool_result.json"))
    retention, backups, wiki = found
    # MCP resources are MCP sources (the result's shape says so, whatever the tool's name);
    # a link to a web page is a web page.
    assert (retention.kind, retention.url, retention.title) == (
        "mcp",
        "file:///srv/docs/policies/data-retention.md",
        "Data retention policy",
    )
    assert retention.snippet == "Retention periods for customer and employee records"
    assert backups.kind == "mcp"
    assert backups.content is not None
    assert backups.content.startswith("# Backups")
    assert (wiki.kind, wiki.title) == ("web", "Retention (wiki)")
    assert [s.rank for s in found] == [1, 2, 3]  # positions among the content blocks


def test_mcp_embedded_resource_at_a_web_uri_is_a_web_page() -> None:
    resource = {"uri": "https://example.org/a", "mimeType": "text/html", "text": "A page."}
    output = {"content": [{"type": "resource", "resource": resource}], "isError": False}
    [page], _ = read("mcp__browser__read", output)
    assert (page.kind, page.url, page.content) == ("web", "https://example.org/a", "A page.")


def test_mcp_structured_content_is_read_once() -> None:
    [result], _ = read("mcp__search", text("mcp_structured_result.json"))
    assert result.url == "https://tidesandcurrents.noaa.gov/predhist.html"
    assert result.kind == "web"  # search results with URLs are web pages


def test_mcp_text_holding_search_json() -> None:
    [paper], _ = read("mcp__exa__web_search_exa", text("mcp_search_text_result.json"))
    assert paper.url == "https://arxiv.org/abs/1706.03762"
    assert paper.published_at == datetime(2017, 6, 12, tzinfo=timezone.utc)
    assert paper.kind == "web"


def test_mcp_fetch_result_is_a_web_page() -> None:
    output = {"content": [{"type": "text", "text": text("mcp_fetch.txt")}], "isError": False}
    for tool, payload in (
        ("mcp__fetch__fetch", output),
        ("mcp.fetch__fetch", text("mcp_fetch.txt")),
    ):
        [page], _ = read(tool, payload)
        assert (page.kind, page.url) == ("web", "https://peps.python.org/pep-0654/"), tool


@pytest.mark.parametrize("tool", ["mcp__weather__forecast", "mcp.weather__forecast", "forecast"])
def test_mcp_result_text_no_reader_recognises_is_an_mcp_source(tool: str) -> None:
    output = {"content": [{"type": "text", "text": "Sunny, 17 °C."}], "isError": False}
    [source], _ = read(tool, output)
    assert (source.kind, source.title, source.content) == ("mcp", tool, "Sunny, 17 °C.")


def test_mcp_tool_by_name_keeps_unrecognised_output_as_mcp() -> None:
    # LangChain's MCP adapters hand over the text of the result; the name says it is MCP.
    [text_result], _ = read("mcp__weather__forecast", "Sunny, 17 °C.")
    assert text_result.kind == "mcp"
    [data_result], _ = read("mcp.github__get_issue", {"number": 7, "state": "open"})
    assert data_result.kind == "mcp"
    # A bare list of text blocks from an unnamed tool may be Anthropic's: it stays a tool source.
    [plain], _ = read("forecast", [{"type": "text", "text": "Sunny."}])
    assert plain.kind == "tool"
    # Structured content no reader recognises is kept once, as an MCP source.
    output = {
        "content": [{"type": "text", "text": '{"temp": 17}'}],
        "structuredContent": {"temp": 17},
    }
    [structured], _ = read("forecast", output)
    assert structured.kind == "mcp"
    assert json.loads(structured.content or "") == {"temp": 17}


def test_anthropic_mcp_tool_result_block_is_an_mcp_result() -> None:
    block = {
        "type": "mcp_tool_result",
        "tool_use_id": "mcptoolu_1",
        "is_error": False,
        "content": [{"type": "text", "text": "Sunny, 17 °C."}],
    }
    [source] = from_tool_output("forecast", block)
    assert source.kind == "mcp"
    assert source.origin == SourceOrigin(tool="forecast", call_id="mcptoolu_1")
    failed, notes = read("forecast", {**block, "is_error": True})
    assert failed == []
    assert any("failed" in note for note in notes)


def test_mcp_image_content_is_skipped_with_a_diagnostic() -> None:
    output = {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}
    found, notes = read("mcp__screenshot", output)
    assert found == []
    assert any("image" in note for note in notes)


def test_langchain_tool_message_prefers_the_artifact() -> None:
    found, _ = read("tavily_search", data("langchain_tool_message.json"))
    [result] = found
    assert result.snippet == "NOAA tide predictions are computed from harmonic constituents."
    assert result.origin == SourceOrigin(tool="tavily_search", call_id="call_1")
    # Without an explicit call id, the message's tool_call_id is recorded.
    [unnamed] = from_tool_output("tavily_search", data("langchain_tool_message.json"))
    assert unnamed.origin == SourceOrigin(tool="tavily_search", call_id="call_Zq5mXbqk2LJ3")


def test_langchain_tool_message_objects() -> None:
    messages = pytest.importorskip("langchain_core.messages")
    payload = data("langchain_tool_message.json")
    message = messages.ToolMessage(
        content=payload["content"],
        tool_call_id=payload["tool_call_id"],
        artifact=payload["artifact"],
    )
    assert from_tool_output("tavily_search", message) == from_tool_output("tavily_search", payload)


def test_langchain_tool_message_with_error_status() -> None:
    message = {"type": "tool", "tool_call_id": "c", "content": "Timeout", "status": "error"}
    found, notes = read("tavily_search", message)
    assert found == []
    assert any("Timeout" in note for note in notes)


def test_anthropic_tool_result_search_result_blocks() -> None:
    web, doc = read("search_docs", text("anthropic_tool_result.json"))[0]
    assert (web.kind, web.url, web.title) == (
        "web",
        "https://docs.example.com/api/rate-limits",
        "Rate limits",
    )
    assert web.content == "Each API key may make 60 requests per minute."
    assert (doc.kind, doc.url, doc.extras["source"]) == ("document", None, "handbook/support.md")


def test_openai_function_call_output_item() -> None:
    item = {
        "type": "function_call_output",
        "call_id": "call_abc",
        "output": text("tavily_search.json"),
    }
    found = from_tool_output("web_search", item)
    assert len(found) == 3
    assert found[0].origin == SourceOrigin(tool="web_search", call_id="call_abc")


@pytest.mark.parametrize(
    "output",
    [
        {"query": "fête des lumières 1852", "results": [], "answer": None, "response_time": 0.41},
        {"q": "Genève lac", "items": [], "status": "ok"},
        {"query": "Zürich Einwohner", "results": [], "images": [], "follow_up_questions": None},
    ],
)
def test_a_search_that_found_nothing_gives_no_source(output: dict[str, object]) -> None:
    notes: list[str] = []
    assert from_tool_output("tavily_search", output, diagnostics=notes) == []
    assert notes == ["tavily_search: found no results"]


def test_an_answer_next_to_empty_results_is_still_content() -> None:
    output = {"query": "capitale", "results": [], "answer": "Paris est la capitale de la France."}
    [source] = from_tool_output("tavily_search", output)
    assert "Paris est la capitale" in (source.content or "")
