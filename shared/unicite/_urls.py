"""URL helpers: canonical keys for de-duplication, registrable domains and safe links.

Everything here takes untrusted input and never raises; the public-suffix lookup uses
tldextract's bundled snapshot only and never touches the network or the disk.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote_plus, urlsplit

if TYPE_CHECKING:
    import tldextract

__all__ = ["is_redirect_url", "normalize_url", "registrable_domain", "safe_href"]

_DEFAULT_PORTS = {"http": "80", "https": "443"}

_TRACKING_PARAMS = frozenset(
    {
        "gclid",
        "fbclid",
        "ref_src",
        "yclid",
        "msclkid",
        "dclid",
        "gbraid",
        "wbraid",
        "igshid",
        "_hsenc",
        "_hsmi",
        "mkt_tok",
        "srsltid",
        "oly_enc_id",
        "oly_anon_id",
        "vero_id",
    }
)
_TRACKING_PREFIXES = ("utm_", "mc_")

_SCHEME_AUTHORITY_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):(?=//)")
_AUTHORITY_END_RE = re.compile(r"[/?#\\]")
_PORT_RE = re.compile(r"[0-9]+")
# C0, space, DEL, C1, bidi controls and marks, lone surrogates and any other whitespace.
_UNSAFE_AUTHORITY_RE = re.compile(
    "[\x00-\x20\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]|\\s"
)
_ASCII_HOST_RE = re.compile(r"[a-z0-9_~\-]+(?:\.[a-z0-9_~\-]+)*\.?")
# Kept verbatim in safe_href output: RFC 3986 unreserved and reserved characters except
# the apostrophe (so single-quoted attributes are safe too), plus valid %XX escapes.
_HREF_UNSAFE_RE = re.compile(r"%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&()*+,;=:@/?#\[\]%]")
_USERINFO_UNSAFE_RE = re.compile(r"%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&()*+,;=:%]")

# The URLs nearly every source has: http(s), a lowercase ASCII DNS name whose last label starts
# with a letter (so no IP address, no "localhost"), no user or port, and RFC 3986 characters
# only after it. For them normalizing, page keys and registrable domains need no parsing: each
# takes the same steps as for any URL, without the cases that cannot occur (tests check the
# results equal those of URLs that take the general path).
_SIMPLE_URL_RE = re.compile(
    r"(https?)://((?:[a-z0-9-]+\.)+[a-z][a-z0-9-]*)"
    r"(/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*)?"
    r"(?:\?([A-Za-z0-9\-._~!$&'()*+,;=:@/?%]*))?"
    r"(?:#[A-Za-z0-9\-._~!$&'()*+,;=:@/?%#]*)?"
)


def simple_url_parts(url: str) -> tuple[str, str, str, str] | None:
    """``(scheme, host, path, query)`` of a URL of the common simple form, else None."""
    match = _SIMPLE_URL_RE.fullmatch(url)
    if match is None:
        return None
    scheme, host, path, query = match.groups()
    return scheme, host, path or "", query or ""


def simple_normalized_parts(url: str) -> tuple[str, str, str, str] | None:
    """``(scheme, host, path, query)`` of `normalize_url` of a simple URL, else None."""
    simple = simple_url_parts(url)
    if simple is None:
        return None
    scheme, host, path, query = simple
    return scheme, host, path or "/", _kept_query(query) if query else ""


def _kept_query(query: str) -> str:
    return "&".join(
        segment
        for segment in query.split("&")
        if segment.strip() and not _is_tracking_param(segment)
    )


_REDIRECT_HOST = "vertexaisearch.cloud.google.com"
_REDIRECT_PATH_PREFIX = "/grounding-api-redirect/"

_EXTRACTOR: tldextract.TLDExtract | None = None  # built on first use
_EXTRACTOR_LOCK = threading.Lock()


def _shown(value: str) -> str:
    """A short, single-line rendering of untrusted input for diagnostics."""
    return repr(value[:120] + ("…" if len(value) > 120 else ""))


def _note(diagnostics: list[str] | None, message: str) -> None:
    if diagnostics is not None:
        diagnostics.append(message)


def _ascii_host(host: str) -> str | None:
    """Lowercase ``host`` and convert an IDN to its ASCII (punycode) form when possible.

    IDNA 2008 with UTS #46 non-transitional mapping, as browsers and tldextract do: ``faß.de``
    is ``xn--fa-hia.de``, never ``fass.de`` (Python's ``"idna"`` codec is IDNA 2003, which
    maps ``ß`` to ``ss`` and so names another registered domain). A label IDNA 2008 disallows
    (``☃``, ``a_b``) is mapped by UTS #46 and punycoded on its own, as the URL Standard does;
    a host that cannot be encoded stays as lowercased text.

    None for an invalid host: one with a label that starts with ``xn--`` (once mapped) but
    holds non-ASCII characters, which UTS #46 rejects. Punycoding such a label again would
    invent another name (``xn--xn---…``).
    """
    lowered = host.lower()
    if lowered.isascii():
        return lowered
    import idna  # only non-ASCII hosts need it

    try:
        return idna.encode(lowered, uts46=True, transitional=False, std3_rules=False).decode()
    except (idna.IDNAError, UnicodeError, ValueError):
        pass
    try:
        mapped = idna.uts46_remap(lowered, std3_rules=False, transitional=False)
        if any(label.startswith("xn--") and not label.isascii() for label in mapped.split(".")):
            return None
        labels = [
            label if label.isascii() else "xn--" + label.encode("punycode").decode("ascii")
            for label in mapped.split(".")
        ]
    except (idna.IDNAError, UnicodeError, ValueError):
        return lowered
    if any(len(label) > 63 for label in labels):
        return lowered  # no DNS name: keep what was written
    return ".".join(labels)


def _split_host_port(hostport: str) -> tuple[str, str | None] | None:
    """Split ``host[:port]`` (host may be a bracketed IPv6 literal); None if malformed."""
    if hostport.startswith("["):
        close = hostport.find("]")
        if close == -1:
            return None
        host, rest = hostport[: close + 1], hostport[close + 1 :]
        if not rest:
            return host, None
        if not rest.startswith(":"):
            return None
        return host, rest[1:]
    host, colon, port = hostport.rpartition(":")
    if not colon:
        return hostport, None
    if ":" in host:  # only bracketed IPv6 literals may contain colons
        return None
    return host, port


def _canonical_port(port: str | None) -> str | None:
    """``""`` for no port, the decimal port otherwise, None if it is not a valid port."""
    if not port:
        return ""
    if not _PORT_RE.fullmatch(port) or int(port) > 65535:
        return None
    return str(int(port))


def _is_tracking_param(segment: str) -> bool:
    key = unquote_plus(segment.partition("=")[0]).strip().lower()
    return key in _TRACKING_PARAMS or key.startswith(_TRACKING_PREFIXES)


def _normalize_url(url: str, diagnostics: list[str] | None = None) -> str:
    """Return a canonical form of ``url`` for comparing and de-duplicating sources.

    Lowercases the scheme and host, converts IDN hosts to punycode, drops default
    ports, fragments and tracking query parameters (``utm_*``, ``gclid``, ``fbclid``,
    ``mc_*`` and similar), keeps every other query parameter in its original order and
    encoding, and turns an empty path into ``/``.

    Args:
        url: The URL to normalise.
        diagnostics: If given, a one-line explanation is appended to it whenever the
            URL cannot be parsed.

    Returns:
        The normalised URL. Input that cannot be parsed as an absolute URL (no scheme
        or host, bad port or IPv6 literal, an invalid IDN host such as a label ``xn--…``
        holding non-ASCII characters) is returned stripped of surrounding whitespace,
        and non-string input gives ``""``. Never raises.
    """
    if not isinstance(url, str):
        _note(diagnostics, f"normalize_url: expected a str, got {type(url).__name__}")
        return ""
    stripped = url.strip()
    try:
        parts = urlsplit(stripped)
    except ValueError as exc:
        _note(diagnostics, f"normalize_url: cannot parse {_shown(stripped)}: {exc}")
        return stripped
    if not parts.scheme or not parts.netloc:
        _note(diagnostics, f"normalize_url: not an absolute URL: {_shown(stripped)}")
        return stripped

    scheme = parts.scheme.lower()
    userinfo, at, hostport = parts.netloc.rpartition("@")
    split = _split_host_port(hostport)
    if split is None or not split[0]:
        _note(diagnostics, f"normalize_url: no valid host in {_shown(stripped)}")
        return stripped
    host, raw_port = split
    port = _canonical_port(raw_port)
    if port is None:
        _note(diagnostics, f"normalize_url: invalid port in {_shown(stripped)}")
        return stripped
    if port == _DEFAULT_PORTS.get(scheme):
        port = ""

    ascii_host = _ascii_host(host)
    if ascii_host is None:
        # An invalid IDN host (see `_ascii_host`) is kept as written, as any host that
        # cannot be read: no other name is made up for it.
        _note(diagnostics, f"normalize_url: no valid host in {_shown(stripped)}")
        return stripped
    netloc = f"{userinfo}{at}{ascii_host}{':' if port else ''}{port}"
    # Empty and whitespace-only segments carry nothing; dropping them keeps the result a
    # fixed point once trailing whitespace is stripped below.
    kept = [
        segment
        for segment in parts.query.split("&")
        if segment.strip() and not _is_tracking_param(segment)
    ]
    query = "&".join(kept)
    result = f"{scheme}://{netloc}{parts.path or '/'}{'?' if query else ''}{query}"
    return result.rstrip()


def _split_authority(value: str) -> tuple[str | None, str, str]:
    """Split ``scheme://authority/rest``, ``//authority/rest`` or ``authority/rest``.

    Returns ``(lowercased scheme or None, authority, rest)``. The authority ends at the
    first ``/``, ``?``, ``#`` or backslash, as browsers parse http(s) URLs.
    """
    scheme: str | None = None
    match = _SCHEME_AUTHORITY_RE.match(value)
    if match is not None:
        scheme = match.group(1).lower()
        value = value[match.end() + 2 :]
    elif value.startswith("//"):
        value = value[2:]
    end = _AUTHORITY_END_RE.search(value)
    if end is None:
        return scheme, value, ""
    return scheme, value[: end.start()], value[end.start() :]


def _get_extractor() -> tldextract.TLDExtract:
    global _EXTRACTOR
    with _EXTRACTOR_LOCK:
        if _EXTRACTOR is None:
            # Imported here: tldextract pulls in requests, which would slow every import.
            import tldextract

            # No cache dir and no suffix-list URLs: the bundled snapshot is the only
            # source, so lookups never fetch from the network or write to disk.
            _EXTRACTOR = tldextract.TLDExtract(
                cache_dir=None,
                suffix_list_urls=(),
                include_psl_private_domains=True,
            )
        return _EXTRACTOR


def _lookup_registrable(host: str) -> str:
    if _DNS_NAME_RE.fullmatch(host):
        return _dns_registrable(host)
    return _extracted_registrable(host)


@functools.lru_cache(maxsize=4096)
def _dns_registrable(host: str) -> str:
    """`_lookup_registrable` of a host `_DNS_NAME_RE` matches (a simple URL's host does)."""
    labels = host.split(".")
    found = _suffix_index(labels)
    if found is None:
        return _extracted_registrable(host)
    if 0 < found < len(labels):
        return ".".join(labels[found - 1 :])
    return host


@functools.lru_cache(maxsize=4096)
def _extracted_registrable(host: str) -> str:
    try:
        result = _get_extractor()(host)
        domain, suffix = str(result.domain), str(result.suffix)
    except Exception:
        return host
    if domain and suffix:
        return f"{domain}.{suffix}"
    return host


_DNS_NAME_RE = re.compile(r"(?:[a-z0-9-]+\.)+[a-z][a-z0-9-]*")
_SUFFIX_WALK: Any = None  # tldextract's suffix trie walk, found on first use


def _suffix_index(labels: list[str]) -> int | None:
    """Where the public suffix of a lowercase ASCII DNS name starts, as tldextract finds it.

    The same trie walk tldextract's ``__call__`` ends in, without the URL parsing, IP
    address and Unicode-dot handling a name of `_DNS_NAME_RE` never needs (a third of a
    lookup). Returns ``len(labels)`` when no suffix matches, and None when this tldextract
    has no such walk to call (then the caller asks tldextract itself).
    """
    global _SUFFIX_WALK
    try:
        if _SUFFIX_WALK is None:
            _SUFFIX_WALK = _get_extractor()._get_tld_extractor().suffix_index
        found = _SUFFIX_WALK(labels, include_psl_private_domains=True)
    except (AttributeError, TypeError):
        return None
    if found is None:
        return len(labels)
    first = found[0]
    # tldextract 5.2 gives ((public index, node), (registry index, node)); 5.1 (index, private).
    index = first[0] if isinstance(first, tuple) else first
    return index if isinstance(index, int) else None


def _registrable_domain(url_or_host: str) -> str | None:
    """Return the registrable domain (eTLD+1) of a URL or bare host.

    Uses the public suffix list bundled with tldextract, including private suffixes,
    so ``user.github.io`` is its own registrable domain. Strictly offline.

    Args:
        url_or_host: A full URL (``https://www.nytimes.com/a``) or a host, optionally
            with a port or path (``forums.bbc.co.uk``, ``localhost:8000``).

    Returns:
        The lowercase ASCII registrable domain (``bbc.co.uk``). IP addresses (in
        compressed form, without brackets), ``localhost``, hosts without a known public
        suffix and bare public suffixes are returned as they are. None for empty or
        unparsable input and for an invalid IDN host (see `_ascii_host`). Never raises.
    """
    if not isinstance(url_or_host, str):
        return None
    value = url_or_host.strip()
    if not value:
        return None
    bare = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    try:
        return str(ipaddress.ip_address(bare))
    except ValueError:
        pass

    hostport = _split_authority(value)[1].rpartition("@")[2]
    host_port = _split_host_port(hostport)
    if host_port is None or _canonical_port(host_port[1]) is None:
        return None
    host = host_port[0]
    if host.startswith("["):
        try:
            return str(ipaddress.IPv6Address(host[1:-1]))
        except ValueError:
            return None
    ascii_host = _ascii_host(host)
    if ascii_host is None:
        return None
    host = ascii_host.rstrip(".")
    if not host or _UNSAFE_AUTHORITY_RE.search(host) or any(c in host for c in "%<>\"'`^|{}[]"):
        return None
    try:
        return str(ipaddress.IPv4Address(host))
    except ValueError:
        pass
    if host == "localhost":
        return host
    return _lookup_registrable(host)


_DOMAIN_LIKE = re.compile(r"^(?=.{1,253}$)([a-z0-9-]{1,63}\.)+[a-z][a-z0-9-]{1,62}$", re.IGNORECASE)


_BARE_DOMAIN_RE = re.compile(
    r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$",
    re.IGNORECASE,
)


def domain_hint(value: object) -> str | None:
    """The registrable domain of a title or host that is a bare domain name, else None.

    Gemini names the site behind a redirect URL in a chunk's title or domain field.
    """
    if not isinstance(value, str):
        return None
    candidate = value.strip().rstrip(".").lower()
    if candidate.startswith("www."):
        candidate = candidate[4:]
    if not _BARE_DOMAIN_RE.match(candidate):
        return None
    return registrable_domain(candidate) or candidate


def source_domain(url: str | None, title: object, redirect: bool) -> str | None:
    """The registrable domain a source with this URL and title is filed under.

    A redirect URL (Vertex ``grounding-api-redirect``) hides the site: the grounding chunk's
    title usually is its domain, and is used when it looks like one; otherwise None.
    """
    if url is None:
        return None
    if redirect:
        if isinstance(title, str) and _DOMAIN_LIKE.match(title.strip()):
            return registrable_domain(title.strip())
        return None
    return registrable_domain(url)


def is_redirect_url(url: str) -> bool:
    """Tell whether ``url`` is a Vertex AI Search grounding redirect.

    Args:
        url: Any URL.

    Returns:
        True if the host is ``vertexaisearch.cloud.google.com`` (any case) and the path
        starts with ``/grounding-api-redirect/``. Never raises.
    """
    if not isinstance(url, str) or _REDIRECT_PATH_PREFIX not in url:
        return False
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return False
    if host is None or host.rstrip(".") != _REDIRECT_HOST:
        return False
    return parts.path.startswith(_REDIRECT_PATH_PREFIX)


def _percent_encode(match: re.Match[str]) -> str:
    char = match.group()
    if "\ud800" <= char <= "\udfff":
        char = "\ufffd"
    return "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))


def safe_href(url: object) -> str | None:
    """Return a URL that is safe to put in an ``href`` or an OSC 8 hyperlink, or None.

    Only absolute ``http``/``https`` URLs with a non-empty host are accepted; other
    schemes (``javascript:``, ``data:``, ``file:`` ...), relative and protocol-relative
    URLs are rejected, as is any URL with control, whitespace or bidi characters in its
    scheme or authority. The result is printable ASCII only: the scheme is lowercased,
    an IDN host becomes punycode and every character outside the URL-safe set
    (including ``"``, ``'``, ``<``, ``>``, backslash, backtick, spaces, controls and
    non-ASCII) is percent-encoded, keeping existing ``%XX`` escapes.

    Args:
        url: The candidate URL; non-strings give None.

    Returns:
        The safe URL, or None if it must not be linked. Never raises.
    """
    if not isinstance(url, str):
        return None
    value = url.strip()
    match = _SCHEME_AUTHORITY_RE.match(value)
    if match is None:
        return None
    scheme = match.group(1).lower()
    if scheme not in _DEFAULT_PORTS:
        return None
    _, authority, rest = _split_authority(value)
    if _UNSAFE_AUTHORITY_RE.search(authority):
        return None

    userinfo, at, hostport = authority.rpartition("@")
    host_port = _split_host_port(hostport)
    if host_port is None:
        return None
    raw_host, raw_port = host_port
    port = _canonical_port(raw_port)
    if port is None:
        return None
    if raw_host.startswith("["):
        inner = raw_host[1:-1]
        if "%" in inner:
            return None
        try:
            host = f"[{ipaddress.IPv6Address(inner).compressed}]"
        except ValueError:
            return None
    else:
        ascii_host = _ascii_host(raw_host)
        if ascii_host is None or not _ASCII_HOST_RE.fullmatch(ascii_host):
            return None
        host = ascii_host

    if rest and rest[0] not in "/?#":
        # A leading backslash ends the authority for browsers; once encoded it no
        # longer would, so pin the host with an explicit path separator.
        rest = "/" + rest
    credentials = _USERINFO_UNSAFE_RE.sub(_percent_encode, userinfo) + at
    path = _HREF_UNSAFE_RE.sub(_percent_encode, rest)
    return f"{scheme}://{credentials}{host}{':' if port else ''}{port}{path}"


# Sources repeat the same few URLs many times over a run: both lookups are pure, so cache them.
@functools.lru_cache(maxsize=8192)
def _normalize_cached(url: str) -> tuple[str, tuple[str, ...]]:
    notes: list[str] = []
    return _normalize_url(url, notes), tuple(notes)


def normalize_url(url: str, diagnostics: list[str] | None = None) -> str:
    """Return a canonical form of ``url`` for comparing and de-duplicating sources.

    Lowercases the scheme and host, converts IDN hosts to punycode, drops default ports,
    fragments and tracking query parameters (``utm_*``, ``gclid``, ``fbclid``, ``mc_*`` and
    similar), keeps every other query parameter in its original order and encoding, and turns an
    empty path into ``/``.

    Args:
        url: The URL to normalise.
        diagnostics: If given, a one-line explanation is appended to it whenever the URL
            cannot be parsed.

    Returns:
        The normalised URL. Input that cannot be parsed as an absolute URL (no scheme or host,
        bad port or IPv6 literal, an invalid IDN host such as a label ``xn--…`` holding
        non-ASCII characters, which UTS #46 rejects) is returned stripped of surrounding
        whitespace, and non-string input gives ``""``. Never raises.
    """
    if not isinstance(url, str):
        return _normalize_url(url, diagnostics)
    simple = simple_normalized_parts(url)
    if simple is not None:
        scheme, host, path, query = simple
        return f"{scheme}://{host}{path}{'?' if query else ''}{query}"
    result, notes = _normalize_cached(url)
    if diagnostics is not None:
        diagnostics.extend(notes)
    return result


@functools.lru_cache(maxsize=8192)
def _registrable_cached(url_or_host: str) -> str | None:
    return _registrable_domain(url_or_host)


def registrable_domain(url_or_host: str) -> str | None:
    """Return the registrable domain (eTLD+1) of a URL or bare host.

    Uses the public suffix list bundled with tldextract, including private suffixes, so
    ``user.github.io`` is its own registrable domain. Strictly offline.

    Args:
        url_or_host: A full URL (``https://www.nytimes.com/a``) or a host, optionally with a
            port or path (``forums.bbc.co.uk``, ``localhost:8000``).

    Returns:
        The lowercase ASCII registrable domain (``bbc.co.uk``). IP addresses (in compressed
        form, without brackets), ``localhost``, hosts without a known public suffix and bare
        public suffixes are returned as they are. None for empty or unparsable input and for
        an invalid IDN host (a label ``xn--…`` holding non-ASCII characters, which UTS #46
        rejects: no domain is made up for it). Never raises.
    """
    if not isinstance(url_or_host, str):
        return None
    simple = simple_url_parts(url_or_host)
    if simple is not None:
        return _dns_registrable(simple[1])
    return _registrable_cached(url_or_host)
