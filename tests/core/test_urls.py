import json
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from unicite import Source, is_redirect_url, normalize_url, registrable_domain, safe_href
from unicite.sources import SourceLedger, page_key

hostile_chars = st.one_of(
    st.characters(),
    st.integers(0xD800, 0xDFFF).map(chr),
    st.integers(0, 0x9F).map(chr),
    st.sampled_from([*":/?#[]@%&=.\\ \t\n\"'<>`", "\u202e", "\u200f", "\u00fc"]),
)
tokens = st.sampled_from(["%41", "%zz", "%", "xn--", "www.", ":443", "[::1]", "@", "utm_x=1&"])
hostile_text = st.lists(st.one_of(hostile_chars, tokens), max_size=60).map("".join)
url_like = st.one_of(
    hostile_text,
    st.builds(
        lambda scheme, rest: scheme + rest,
        st.sampled_from(["http://", "https://", "HTTP://", "//", "javascript:", "ftp://", ""]),
        hostile_text,
    ),
)


# --- normalize_url ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("HTTPS://Example.COM:443/a?b=1&utm_source=x&c=2#frag", "https://example.com/a?b=1&c=2"),
        ("http://[::1]:80/", "http://[::1]/"),
        ("http://[2001:DB8::1]:8080/x", "http://[2001:db8::1]:8080/x"),
        ("http://example.com:80", "http://example.com/"),
        ("https://example.com:80/", "https://example.com:80/"),
        ("http://example.com:443/", "http://example.com:443/"),
        ("http://example.com:/p", "http://example.com/p"),
        ("  https://example.com/path  \n", "https://example.com/path"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com?", "https://example.com/"),
        ("https://example.com/?utm_source=a&UTM_Medium=b", "https://example.com/"),
        ("https://example.com/#only-fragment", "https://example.com/"),
        ("https://user:Pw@Example.com/", "https://user:Pw@example.com/"),
        ("https://example.com/CaseKept/Path", "https://example.com/CaseKept/Path"),
        ("ftp://FTP.Example.com/file", "ftp://ftp.example.com/file"),
    ],
)
def test_normalize_url(raw: str, expected: str) -> None:
    diagnostics: list[str] = []
    assert normalize_url(raw, diagnostics) == expected
    assert diagnostics == []


def test_tracking_params_dropped_others_kept_in_order_and_encoding() -> None:
    raw = (
        "https://example.com/s?z=9&utm_campaign=x&q=caf%C3%A9+au+lait&gclid=1&fbclid=2"
        "&mc_cid=3&mc_eid=4&mc_other=5&a=%2F&ref_src=twsrc&yclid=6&msclkid=7&dclid=8"
        "&gbraid=9&wbraid=10&igshid=11&_hsenc=12&_hsmi=13&mkt_tok=14&srsltid=15"
        "&oly_enc_id=16&oly_anon_id=17&vero_id=18&flag&ref=keep&b=2"
    )
    assert (
        normalize_url(raw)
        == "https://example.com/s?z=9&q=caf%C3%A9+au+lait&a=%2F&flag&ref=keep&b=2"
    )


def test_tracking_param_names_match_case_insensitively_and_encoded() -> None:
    raw = "https://example.com/?GCLID=1&Utm_Source=2&utm%5Fterm=3&keep=1"
    assert normalize_url(raw) == "https://example.com/?keep=1"


def test_params_that_only_look_like_tracking_are_kept() -> None:
    raw = "https://example.com/?utm=1&xutm_source=2&mcid=3&source=4"
    assert normalize_url(raw) == raw


def test_idn_hosts_normalize_equal() -> None:
    unicode_form = normalize_url("https://B\u00fccher.de/x")
    assert unicode_form == normalize_url("https://xn--bcher-kva.de/x")
    assert unicode_form == "https://xn--bcher-kva.de/x"


def test_unencodable_idn_host_falls_back_to_lowercase() -> None:
    host = "\u00dc" + "a" * 70 + ".de"  # label too long for IDNA
    assert normalize_url(f"https://{host}/") == f"https://{host.lower()}/"


def test_trailing_whitespace_left_by_dropped_parts_is_stripped() -> None:
    assert normalize_url("http://a.com/x #frag") == "http://a.com/x"
    assert normalize_url("http://a.com/x?a=1 &utm_source=2") == "http://a.com/x?a=1"
    assert normalize_url("http://a.com/x?a=1& &&b=2") == "http://a.com/x?a=1&b=2"


@pytest.mark.parametrize(
    "raw",
    [
        "localhost:8000",
        "192.168.0.1",
        "example.com/path",
        "/relative/path",
        "just some words",
        "mailto:someone@example.com",
        "http://",
        "http://user@/",
        "",
    ],
)
def test_not_absolute_urls_returned_stripped_with_diagnostic(raw: str) -> None:
    diagnostics: list[str] = []
    assert normalize_url(f"  {raw} ", diagnostics) == raw
    assert len(diagnostics) == 1
    assert "\n" not in diagnostics[0]


@pytest.mark.parametrize(
    "raw",
    [
        "http://example.com:99999/",
        "http://example.com:port/",
        "http://example.com:-1/",
        "http://[::1/",
        "http://::1]/",
        "http://[::1]x/",
        "http://0::",
        "http://::/",
        "http://\uff03evil.com/",  # fullwidth '#' normalizes into a delimiter
    ],
)
def test_unparsable_urls_returned_with_diagnostic(raw: str) -> None:
    diagnostics: list[str] = []
    assert normalize_url(raw, diagnostics) == raw
    assert len(diagnostics) == 1


def test_non_string_returns_empty_with_diagnostic() -> None:
    diagnostics: list[str] = []
    assert normalize_url(None, diagnostics) == ""  # type: ignore[arg-type]
    assert normalize_url(b"http://x.com", diagnostics) == ""  # type: ignore[arg-type]
    assert len(diagnostics) == 2
    assert "NoneType" in diagnostics[0]


def test_diagnostics_are_optional() -> None:
    assert normalize_url("http://[::1/") == "http://[::1/"


def test_diagnostic_is_one_line_even_for_hostile_input() -> None:
    diagnostics: list[str] = []
    normalize_url("\x1b]8;;x\x07\nnot a url\u202e" + "y" * 500, diagnostics)
    (message,) = diagnostics
    assert message.isprintable()
    assert len(message) < 300


@given(url_like)
def test_normalize_never_raises(raw: str) -> None:
    diagnostics: list[str] = []
    assert isinstance(normalize_url(raw, diagnostics), str)


@given(url_like)
def test_normalize_is_idempotent_on_parsed_http_urls(raw: str) -> None:
    diagnostics: list[str] = []
    once = normalize_url(raw, diagnostics)
    if diagnostics or not once.startswith(("http://", "https://")):
        return
    again: list[str] = []
    assert normalize_url(once, again) == once
    assert again == []


label = st.text(st.sampled_from("abcXYZ019-\u00fc\u00e9\u4e2d"), min_size=1, max_size=10)
param = st.tuples(
    st.sampled_from(["q", "utm_source", "UTM_x", "gclid", "page", "mc_eid", "a b", "%41"]),
    st.text(st.sampled_from("az09%+=/ \u00e9"), max_size=6),
)


@given(
    st.sampled_from(["http", "https", "HTTP", "HtTpS"]),
    st.lists(label, min_size=1, max_size=3),
    st.sampled_from(["", ":80", ":443", ":8080", ":"]),
    st.text(st.sampled_from("/abcAB%20~.-\u00e9"), max_size=12),
    st.lists(param, max_size=4),
    st.sampled_from(["", "#", "#frag"]),
)
def test_normalize_is_idempotent_on_generated_urls(
    scheme: str,
    labels: list[str],
    port: str,
    path: str,
    params: list[tuple[str, str]],
    fragment: str,
) -> None:
    query = "&".join(f"{k}={v}" for k, v in params)
    raw = f"{scheme}://{'.'.join(labels)}.com{port}/{path}{'?' if params else ''}{query}{fragment}"
    diagnostics: list[str] = []
    once = normalize_url(raw, diagnostics)
    assert normalize_url(once) == once
    if not diagnostics:
        assert "#" not in once
        assert "utm_" not in once.lower()
        assert urlsplit(once).scheme in ("http", "https")


# --- registrable_domain -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("forums.bbc.co.uk", "bbc.co.uk"),
        ("https://www.nytimes.com/a", "nytimes.com"),
        ("https://WWW.NYTimes.COM:443/a?b#c", "nytimes.com"),
        ("user.github.io", "user.github.io"),
        ("https://deep.sub.user.github.io/x", "user.github.io"),
        ("example.com", "example.com"),
        ("example.com.", "example.com"),
        ("example.com/some/path", "example.com"),
        ("//cdn.example.org/lib.js", "example.org"),
        ("https://user:pw@mail.example.net/", "example.net"),
        ("localhost", "localhost"),
        ("localhost:8000", "localhost"),
        ("http://localhost:8000/x", "localhost"),
        ("192.168.0.1", "192.168.0.1"),
        ("http://192.168.0.1:8080/", "192.168.0.1"),
        ("http://[::1]:80/", "::1"),
        ("[::1]", "::1"),
        ("::1", "::1"),
        ("[2001:DB8:0:0::1]", "2001:db8::1"),
        ("intranet", "intranet"),
        ("wiki.intranet", "wiki.intranet"),
        ("co.uk", "co.uk"),
        ("https://B\u00fccher.de/x", "xn--bcher-kva.de"),
        ("shop.xn--bcher-kva.de", "xn--bcher-kva.de"),
        ("  Forums.BBC.co.uk  ", "bbc.co.uk"),
    ],
)
def test_registrable_domain(value: str, expected: str) -> None:
    assert registrable_domain(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "http://",
        "https:///path",
        "http://[::1/",
        "mailto:x",
        "hello world",
        "a\u202eb.com",
    ],
)
def test_registrable_domain_none_for_empty_or_unparsable(value: str) -> None:
    assert registrable_domain(value) is None


def test_registrable_domain_non_string() -> None:
    assert registrable_domain(None) is None  # type: ignore[arg-type]
    assert registrable_domain(123) is None  # type: ignore[arg-type]


def _in_a_new_interpreter(code: str, *args: str) -> Any:
    """What ``code`` prints as JSON, run where unicite has not looked anything up yet."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


OFFLINE = """
import json, os, socket, sys

attempts = []

def no_network(*args, **kwargs):
    attempts.append(repr(args[1:])[:80])
    raise OSError("registrable_domain must not touch the network")

socket.socket.connect = no_network
socket.socket.connect_ex = no_network
socket.getaddrinfo = no_network
socket.create_connection = no_network
# Even if the environment points tldextract at a cache or a suffix-list URL, none is used.
os.environ["TLDEXTRACT_CACHE"] = sys.argv[1]
os.environ["TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS"] = "https://publicsuffix.org/list/"

from unicite import registrable_domain

found = [registrable_domain("forums.bbc.co.uk"), registrable_domain("someone.github.io")]
print(json.dumps({"found": found, "attempts": attempts}))
"""


def test_registrable_domain_is_strictly_offline(tmp_path: Path) -> None:
    result = _in_a_new_interpreter(OFFLINE, str(tmp_path))
    assert result == {"found": ["bbc.co.uk", "someone.github.io"], "attempts": []}
    assert list(tmp_path.iterdir()) == []


COUNTED = """
import json

import tldextract

built, looked_up = [], []
init, call = tldextract.TLDExtract.__init__, tldextract.TLDExtract.__call__

def counting_init(self, *args, **kwargs):
    built.append(1)
    init(self, *args, **kwargs)

def counting_call(self, *args, **kwargs):
    looked_up.append(args[0])
    return call(self, *args, **kwargs)

walk = tldextract.tldextract._PublicSuffixListTLDExtractor.suffix_index

def counting_walk(self, labels, *args, **kwargs):
    looked_up.append(".".join(labels))
    return walk(self, labels, *args, **kwargs)

tldextract.TLDExtract.__init__ = counting_init
tldextract.TLDExtract.__call__ = counting_call
# Plain DNS names skip tldextract's URL parsing and go straight to its suffix walk.
tldextract.tldextract._PublicSuffixListTLDExtractor.suffix_index = counting_walk

from unicite import registrable_domain

registrable_domain("a.example.com")
registrable_domain("b.example.com")
registrable_domain("https://a.example.com/other/page")
print(json.dumps({"built": len(built), "looked_up": looked_up}))
"""


def test_extractor_is_built_once_and_lookups_cached() -> None:
    result = _in_a_new_interpreter(COUNTED)
    assert result == {"built": 1, "looked_up": ["a.example.com", "b.example.com"]}


@given(url_like)
def test_registrable_domain_never_raises(value: str) -> None:
    result = registrable_domain(value)
    assert result is None or (isinstance(result, str) and result)


# --- is_redirect_url --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC123", True),
        ("https://VertexAISearch.Cloud.Google.com/grounding-api-redirect/x", True),
        ("  https://vertexaisearch.cloud.google.com:443/grounding-api-redirect/x  ", True),
        ("https://vertexaisearch.cloud.google.com/other/x", False),
        ("https://vertexaisearch.cloud.google.com/grounding-api-redirect", False),
        ("https://example.com/grounding-api-redirect/x", False),
        ("https://vertexaisearch.cloud.google.com.evil.com/grounding-api-redirect/x", False),
        ("https://evil.com/?u=vertexaisearch.cloud.google.com/grounding-api-redirect/", False),
        ("vertexaisearch.cloud.google.com/grounding-api-redirect/x", False),
        ("http://[::1/", False),
        ("", False),
    ],
)
def test_is_redirect_url(url: str, expected: bool) -> None:
    assert is_redirect_url(url) is expected


def test_is_redirect_url_non_string() -> None:
    assert is_redirect_url(None) is False  # type: ignore[arg-type]


@given(url_like)
def test_is_redirect_url_never_raises(value: str) -> None:
    assert isinstance(is_redirect_url(value), bool)


# --- safe_href --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "java\tscript:alert(1)",
        " javascript:alert(1)",
        "javascript://example.com/%0aalert(1)",
        "data:text/html,<script>alert(1)</script>",
        "data:text/html;base64,PHNjcmlwdD4=",
        "vbscript:msgbox(1)",
        "file:///etc/passwd",
        "ftp://example.com/",
        "//evil.com",
        "//evil.com/path",
        "/relative/path",
        "relative/path",
        "example.com",
        "https://",
        "https:///path",
        "https:example.com",
        "http:\\\\evil.com",
        "ht\ttp://evil.com/",
        "h\nttps://evil.com/",
        "https\x00://evil.com/",
        "https://ev\til.com/",
        "https://evil\u202e.com/",
        "https://evil.com\u200f/",
        "https://ex ample.com/",
        "https://evil.com:99999/",
        "https://evil.com:abc/",
        "https://[::1/",
        "https://[not-an-ip]/",
        'https://exa"mple.com/',
        "https://exa<mple.com/",
        "https://a..b/",
        "https://\ud800.com/",
        "",
    ],
)
def test_safe_href_rejects(url: str) -> None:
    assert safe_href(url) is None


@pytest.mark.parametrize("value", [None, 42, b"https://example.com/", ["https://x.com"]])
def test_safe_href_non_string(value: object) -> None:
    assert safe_href(value) is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/a?b=1#c", "https://example.com/a?b=1#c"),
        ("HTTPS://Example.COM/Path", "https://example.com/Path"),
        ("  http://example.com  ", "http://example.com"),
        ("https://example.com:8443/x", "https://example.com:8443/x"),
        ("https://example.com:/x", "https://example.com/x"),
        ("https://[2001:DB8::1]:8080/x", "https://[2001:db8::1]:8080/x"),
        ("https://127.0.0.1/", "https://127.0.0.1/"),
        ("https://B\u00fccher.de/x", "https://xn--bcher-kva.de/x"),
        ("https://example.com/caf%C3%A9?q=%41", "https://example.com/caf%C3%A9?q=%41"),
        ("https://example.com/caf\u00e9", "https://example.com/caf%C3%A9"),
        ("https://example.com/100%", "https://example.com/100%25"),
        ("https://example.com/%zz", "https://example.com/%25zz"),
        ("https://example.com/a b\tc\nd", "https://example.com/a%20b%09c%0Ad"),
        ("https://example.com/\x1b]8;;x\x07", "https://example.com/%1B]8;;x%07"),
        ("https://example.com/x\u202ey", "https://example.com/x%E2%80%AEy"),
        ("https://example.com/\ud800", "https://example.com/%EF%BF%BD"),
        ("https://example.com?a=1", "https://example.com?a=1"),
        ("https://u:p@example.com/", "https://u:p@example.com/"),
        ("https://a@b@example.com/", "https://a%40b@example.com/"),
        # A backslash ends the host for browsers; the result must keep evil.com the host.
        ("https://evil.com\\@good.com", "https://evil.com/%5C@good.com"),
    ],
)
def test_safe_href_accepts(url: str, expected: str) -> None:
    assert safe_href(url) == expected


def test_safe_href_encodes_attribute_breakers_in_path() -> None:
    href = safe_href("https://example.com/a \"b\" <c> 'd' `e` \\f ^{|}")
    assert href == (
        "https://example.com/a%20%22b%22%20%3Cc%3E%20%27d%27%20%60e%60%20%5Cf%20%5E%7B%7C%7D"
    )


def test_safe_href_host_survives_reparse() -> None:
    href = safe_href("https://Example.com:8080/p?q#f")
    assert href is not None
    parts = urlsplit(href)
    assert (parts.hostname, parts.port, parts.path) == ("example.com", 8080, "/p")


@given(url_like)
def test_safe_href_output_is_safe(value: str) -> None:
    href = safe_href(value)
    if href is None:
        return
    assert href.isascii()
    assert all(0x21 <= ord(char) <= 0x7E for char in href)
    assert not any(char in href for char in "\"'<>\\`")
    assert href.startswith(("http://", "https://"))
    parts = urlsplit(href)
    assert parts.hostname
    assert registrable_domain(href) is not None
    assert safe_href(href) == href


@pytest.mark.parametrize(
    ("url", "host"),
    [
        # IDNA 2008 / UTS #46, as browsers: sharp s and final sigma are letters of their own.
        ("http://fa\u00df.de/", "xn--fa-hia.de"),
        ("http://FASS.de/", "fass.de"),
        ("https://\u03b2\u03cc\u03bb\u03bf\u03c2.com/", "xn--nxasmm1c.com"),
        ("https://\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com/", "example.com"),
        # Disallowed by IDNA 2008 but mapped by the URL Standard: punycoded label by label.
        ("https://\u2603.net/", "xn--n3h.net"),
    ],
)
def test_idn_hosts_follow_idna_2008(url: str, host: str) -> None:
    assert normalize_url(url) == url.split("//")[0] + "//" + host + "/"
    assert safe_href(url) == normalize_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "https://xn--\u00df\u200c\uaaf6\u18a5.com/",
        "https://XN--\u00df.com/a",
        "https://www.xn--b\u00e9.com/",
        # Fullwidth letters map to "xn--" too.
        "https://\uff58\uff4e\uff0d\uff0d\u00df.com/",
    ],
)
def test_an_xn_label_holding_non_ascii_is_an_invalid_host(url: str) -> None:
    # UTS #46: a label starting with "xn--" must be ASCII. Punycoding it again would invent
    # another domain (xn--xn---...).
    assert registrable_domain(url) is None
    diagnostics: list[str] = []
    assert normalize_url(url, diagnostics) == url
    assert len(diagnostics) == 1
    assert "no valid host" in diagnostics[0]
    assert safe_href(url) is None


def test_sharp_s_and_ss_are_two_registered_domains() -> None:
    assert registrable_domain("http://fa\u00df.de/") != registrable_domain("http://fass.de/")
    ledger = SourceLedger()
    ledger.add(Source(url="http://fa\u00df.de/a"))
    ledger.add(Source(url="http://fass.de/a"))
    assert len(ledger) == 2


# --- the fast paths for simple URLs and DNS names -------------------------------------------------

_LABELS = ["www", "a", "b-c", "x9", "ck", "jp", "city", "s3", "kawasaki", "github", "co", "uk"]
_SUFFIXES = [
    "com",
    "co.uk",
    "github.io",
    "blogspot.com",
    "ck",
    "www.ck",
    "kawasaki.jp",
    "city.kawasaki.jp",
    "s3.amazonaws.com",
    "xn--p1ai",
    "nom.br",
    "appspot.com",
    "uk",
    "compute.amazonaws.com",
    "notasuffix",
    "x-y",
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_LABELS), max_size=3),
    st.sampled_from(_SUFFIXES),
    st.sampled_from(["", "/", "/a/b", "/p?utm_source=x&q=1", "/p?q=1#frag", "?gclid=2"]),
)
def test_simple_urls_read_as_the_general_path_reads_them(
    labels: list[str], suffix: str, rest: str
) -> None:
    import tldextract

    host = ".".join([*labels, suffix])
    url = f"https://{host}{rest}"
    # Upper case in the scheme and host sends a URL down the general path, which lowercases
    # both: the results must be those of the simple path.
    shouted = f"HTTPS://{host.upper()}{rest}"
    assert normalize_url(url) == normalize_url(shouted)
    assert page_key(url) == page_key(shouted)
    assert registrable_domain(url) == registrable_domain(shouted)
    extracted = tldextract.TLDExtract(
        cache_dir=None, suffix_list_urls=(), include_psl_private_domains=True
    )(host)
    expected = (
        f"{extracted.domain}.{extracted.suffix}" if extracted.domain and extracted.suffix else host
    )
    assert registrable_domain(host) == expected
