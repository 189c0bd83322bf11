"""URL checks and the keys memory is filed under: the domain (host with port), the origin, and the site."""

from __future__ import annotations

import ipaddress
import re
from functools import lru_cache
from urllib.parse import SplitResult, urlsplit

from .errors import InvalidInput
from .public_suffixes import registrable_domain

MAX_URL_LENGTH = 4096
_WEB_SCHEMES = {"http": 80, "https": 443}
#: Memory is filed under a page's host: what to do instead, for the pages an agent often starts on.
_LOCAL_PAGE_HINTS = {
    "about": " (memory is filed under a page's host: start the run with the URL the agent opens first)",
    "file": " (memory is filed under a page's host: serve local pages on 127.0.0.1, e.g. python -m http.server)",
}
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f]")  # \s: every character str.isspace() accepts


def parse_web_url(url: object, *, field: str = "url") -> SplitResult:
    """Split an http(s) URL, or raise InvalidInput naming ``field`` and what is wrong."""
    if not isinstance(url, str):
        raise InvalidInput(f"{field}: expected a URL string, got {type(url).__name__}")
    text = url.strip()
    if not text:
        raise InvalidInput(f"{field}: the URL is empty")
    if len(text) > MAX_URL_LENGTH:
        raise InvalidInput(f"{field}: the URL is {len(text)} characters long (at most {MAX_URL_LENGTH})")
    if _SPACE_OR_CONTROL.search(text):
        raise InvalidInput(f"{field}: the URL contains whitespace or control characters: {text[:80]!r}")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidInput(f"{field}: {text[:80]!r} is not a valid URL ({exc})") from exc
    if parts.scheme.lower() not in _WEB_SCHEMES:
        raise InvalidInput(f"{field}: {text[:80]!r} is not an http(s) URL" + _LOCAL_PAGE_HINTS.get(parts.scheme.lower(), ""))
    if not parts.hostname:
        raise InvalidInput(f"{field}: {text[:80]!r} has no host")
    if parts.hostname.startswith(".") or ".." in parts.hostname:  # '..', '.x', 'a..b': empty labels
        raise InvalidInput(f"{field}: {text[:80]!r} has an empty label in its host")
    if port is not None and port == 0:
        raise InvalidInput(f"{field}: {text[:80]!r} has port 0")
    return parts


def _host_with_port(parts: SplitResult) -> str:
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = parts.port
    if port is not None and port != _WEB_SCHEMES[parts.scheme.lower()]:
        return f"{host}:{port}"
    return host


def domain_of(url: object, *, field: str = "url") -> str:
    """The domain key of a URL: its host with a non-default port, lower-cased (``localhost:5173``)."""
    if not isinstance(url, str):
        parse_web_url(url, field=field)  # raises, naming the field
    return _domain(str(url), field)


def origin_of(url: object, *, field: str = "url") -> str:
    """The origin of a URL: ``scheme://host[:port]``, lower-cased, default ports dropped."""
    if not isinstance(url, str):
        parse_web_url(url, field=field)
    return _origin(str(url), field)


@lru_cache(maxsize=4096)  # an agent asks for the keys of the same few URLs every turn
def _domain(url: str, field: str) -> str:
    return _host_with_port(parse_web_url(url, field=field)).lower()


@lru_cache(maxsize=4096)
def _origin(url: str, field: str) -> str:
    parts = parse_web_url(url, field=field)
    return f"{parts.scheme.lower()}://{_host_with_port(parts).lower()}"


def page_path(url: str, *, limit: int = 200) -> str:
    """The part of a URL that names a page within its domain: its path ("/" for none), at most ``limit`` long."""
    return (urlsplit(url).path or "/")[:limit]


def check_url(url: object, *, field: str = "url") -> str:
    """Return the URL stripped of surrounding space after checking that it is a valid http(s) URL."""
    if isinstance(url, str):
        return _checked(url, field)
    parse_web_url(url, field=field)  # raises, naming the field
    return str(url).strip()


@lru_cache(maxsize=4096)  # every step names its page: the same few URLs, run after run
def _checked(url: str, field: str) -> str:
    parse_web_url(url, field=field)
    return url.strip()


def check_domain(domain: object, *, field: str = "domain") -> str:
    """Accept a domain key (``www.example.com``, ``localhost:5173``) or a URL and return the key."""
    if not isinstance(domain, str):
        raise InvalidInput(f"{field}: expected a domain string, got {type(domain).__name__}")
    text = domain.strip()
    if "://" in text:
        return domain_of(text, field=field)
    if not text:
        raise InvalidInput(f"{field}: the domain is empty")
    if "/" in text:
        raise InvalidInput(f"{field}: {text[:80]!r} is not a domain (use a host such as 'www.example.com')")
    return domain_of(f"http://{text}", field=field)


def domain_matches(scope: str, site: str) -> bool:
    """Whether a record about ``scope`` applies on ``site``: the same host or a parent domain at a
    label boundary (``google.com`` matches ``www.google.com``, never ``notgoogle.com``).

    Ports are ignored unless the scope names one.
    """
    scope = scope.lower()
    host = site.lower() if ":" in scope else site.lower().rsplit(":", 1)[0]
    return host == scope or host.endswith("." + scope)


def scopes_on(site: str) -> list[str]:
    """Every scope that :func:`domain_matches` accepts on ``site`` (as stored: lower-case), so that records
    about a site are looked up by their scope: the host and each parent domain, with and without the port."""
    found: list[str] = []
    for text in dict.fromkeys((site.lower(), site.lower().rsplit(":", 1)[0])):
        found.append(text)
        found += [text[index + 1:] for index, char in enumerate(text) if char == "." and text[index + 1:]]
    return list(dict.fromkeys(found))


@lru_cache(maxsize=4096)
def site_of(domain: str) -> str:
    """The registrable site of a domain key: its eTLD+1 (``shop.example.co.uk`` -> ``example.co.uk``).

    Any port of ``localhost`` (or of a ``*.localhost`` name) is the one site ``localhost``; any port of
    one IP address is that address. A host that is itself a public suffix is its own site.
    """
    host = check_domain(domain)
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    host = host.rsplit(":", 1)[0]
    if _is_ip_address(host):
        return host
    if host == "localhost" or host.endswith(".localhost"):
        return "localhost"
    return registrable_domain(host) or host


def _is_ip_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def is_loopback_url(url: str) -> bool:
    """Whether a URL points at this machine (``localhost``, ``127.0.0.1``, ``[::1]``); False for anything
    that does not parse."""
    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return False
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
