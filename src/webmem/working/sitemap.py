"""A sitemap graph for exploring a site breadth-first within limits.

The agent starts from a homepage, feeds in the links it finds on each page it visits,
and asks which page to visit next. The graph keeps only links of the same site,
normalises their URLs so that one page is one node, stops at the limits (depth, pages
per depth, pages in all), and describes what was explored. It is plain data: the caller
persists it with :meth:`SitemapGraph.to_dict` and :meth:`SitemapGraph.from_dict`.

Same site: the same host, where a leading ``www.`` does not count (``example.com`` and
``www.example.com`` are one site, as sites almost always serve both), whatever the
scheme (``http`` links on an ``https`` site are the same pages), and the same port
(``localhost:8000`` and ``localhost:8001`` are two sites; default ports are dropped by
normalisation, so ``http://x`` and ``https://x`` compare equal). Pages of one site are
told apart by path and query, so ``http://www.x.com/a`` and ``https://x.com/a`` are one
page, kept under the form it was first discovered in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any
from urllib.parse import SplitResult, urljoin, urlsplit, urlunsplit

from ..core.errors import InvalidInput
from ..core.text import clean_for_prompt

FORMAT_VERSION = 1
HOMEPAGE_LINK_TYPE = "homepage"
MAX_LINK_TYPE_CHARS = 40
MAX_LINK_TEXT_CHARS = 200
MAX_TITLE_CHARS = 200
MAX_SUMMARY_CHARS = 1000
MAX_URL_CHARS = 4096
_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class SitemapLimits:
    """How far exploration goes: depth below the homepage, pages per depth, pages in all (homepage included)."""

    max_depth: int = 2
    max_pages_per_level: int = 10
    max_pages: int = 50

    def __post_init__(self) -> None:
        for name in ("max_depth", "max_pages_per_level", "max_pages"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidInput(f"{name}: expected a positive whole number, got {type(value).__name__}")
            if value < 1:
                raise InvalidInput(f"{name}: must be at least 1, got {value}")


@dataclass(frozen=True)
class SitemapPage:
    """One page of the graph: where it was found, and what the visit found there."""

    url: str
    depth: int
    parent: str | None
    link_type: str
    link_text: str
    order: int  # discovery order, 0 for the homepage
    visited: bool = False
    skipped: bool = False
    title: str = ""
    summary: str = ""
    section_count: int = 0
    skip_reason: str = ""

    @property
    def done(self) -> bool:
        return self.visited or self.skipped


# --- URL normalisation -------------------------------------------------------------------------


def _remove_dot_segments(path: str) -> str:
    """Resolve ``.`` and ``..`` segments of an absolute path (RFC 3986, section 5.2.4)."""
    segments = path.split("/")
    if "." not in segments and ".." not in segments:
        return path
    kept: list[str] = []
    for segment in segments:
        if segment == ".":
            continue
        if segment == "..":
            if len(kept) > 1:  # kept[0] is the empty segment before the leading slash
                kept.pop()
            continue
        kept.append(segment)
    resolved = "/".join(kept)
    if segments[-1] in (".", ".."):
        resolved += "/"
    return resolved if resolved.startswith("/") else "/" + resolved


def _host_port(parts: SplitResult) -> tuple[str, int | None] | None:
    try:
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").lower().rstrip(".")
    if not host or port == 0:
        return None
    if port == _DEFAULT_PORTS[parts.scheme.lower()]:
        port = None
    return host, port


def normalize_url(url: str, *, base: str | None = None) -> str | None:
    """The canonical form of an http(s) URL, resolved against ``base``; None for anything else.

    Drops the fragment, the credentials, a default port and a trailing slash (except on
    the root path ``/``), resolves ``.`` and ``..`` segments, and lower-cases the scheme
    and host. ``mailto:``, ``javascript:``, ``tel:``, ``data:`` and unparsable URLs give
    None. Applying it twice changes nothing.
    """
    if not isinstance(url, str):
        raise InvalidInput(f"url: expected a string, got {type(url).__name__}")
    if base is not None:
        if not isinstance(base, str):
            raise InvalidInput(f"base: expected a URL string, got {type(base).__name__}")
        if normalize_url(base) is None:
            raise InvalidInput(f"base: {base[:80]!r} is not an http(s) URL")
    text = url.strip()
    if not text and base is None:
        return None
    if len(text) > MAX_URL_CHARS or any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in text):
        return None
    try:
        if base is not None:
            text = urljoin(base.strip(), text)
        parts = urlsplit(text)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        return None
    host_port = _host_port(parts)
    if host_port is None:
        return None
    host, port = host_port
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    path = _remove_dot_segments(parts.path or "/")
    if not path.startswith("/"):
        path = "/" + path
    path = path.rstrip("/") or "/"
    return urlunsplit((scheme, netloc, path, parts.query, ""))


def _site_of(normal: str) -> tuple[str, int | None]:
    parts = urlsplit(normal)
    host, port = _host_port(parts) or ("", None)
    return (host[4:] if host.startswith("www.") else host), port


def _page_key(normal: str) -> str:
    parts = urlsplit(normal)
    return parts.path + ("?" + parts.query if parts.query else "")


# --- the graph ---------------------------------------------------------------------------------


def _check_short_text(value: object, field: str, limit: int, *, required: bool = False) -> str:
    if not isinstance(value, str):
        raise InvalidInput(f"{field}: expected a string, got {type(value).__name__}")
    text = clean_for_prompt(value, limit)
    if required and not text:
        raise InvalidInput(f"{field}: must not be empty")
    return text


def _check_count(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{field}: expected a whole number, got {type(value).__name__}")
    if value < 0:
        raise InvalidInput(f"{field}: must be 0 or more, got {value}")
    return value


class SitemapGraph:
    """The pages of one site found so far, explored breadth-first within :class:`SitemapLimits`."""

    def __init__(self, homepage_url: str, *, limits: SitemapLimits = SitemapLimits()) -> None:
        if not isinstance(limits, SitemapLimits):
            raise InvalidInput(f"limits: expected SitemapLimits, got {type(limits).__name__}")
        if not isinstance(homepage_url, str):
            raise InvalidInput(f"homepage_url: expected a URL string, got {type(homepage_url).__name__}")
        normal = normalize_url(homepage_url)
        if normal is None:
            raise InvalidInput(f"homepage_url: {homepage_url[:80]!r} is not an http(s) URL")
        self._limits = limits
        self._homepage = normal
        self._site = _site_of(normal)
        self._pages: dict[str, SitemapPage] = {}
        self._next_order = 0
        self._insert(SitemapPage(url=normal, depth=0, parent=None, link_type=HOMEPAGE_LINK_TYPE, link_text="", order=0))

    def _insert(self, page: SitemapPage) -> None:
        self._pages[_page_key(page.url)] = page
        self._next_order = max(self._next_order, page.order + 1)

    @property
    def homepage_url(self) -> str:
        return self._homepage

    @property
    def limits(self) -> SitemapLimits:
        return self._limits

    def __len__(self) -> int:
        return len(self._pages)

    def __contains__(self, url: object) -> bool:
        return isinstance(url, str) and self.page(url) is not None

    def _key_of(self, url: str) -> str | None:
        normal = normalize_url(url)
        if normal is None or _site_of(normal) != self._site:
            return None
        return _page_key(normal)

    def page(self, url: str) -> SitemapPage | None:
        """The page stored for ``url`` (in any of its forms), or None."""
        key = self._key_of(url)
        return None if key is None else self._pages.get(key)

    def pages(self) -> list[SitemapPage]:
        """Every page, in discovery order."""
        return sorted(self._pages.values(), key=lambda page: page.order)

    def is_same_site(self, url: str) -> bool:
        """Whether ``url`` (absolute) belongs to the homepage's site, as described in the module docstring."""
        return self._key_of(url) is not None

    def _count_at(self, depth: int) -> int:
        return sum(1 for page in self._pages.values() if page.depth == depth)

    def add_links(self, parent_url: str, links: Sequence[Mapping[str, Any]], *, link_type: str) -> list[str]:
        """Add the same-site links found on ``parent_url``; return the URLs added, normalised.

        ``links`` are ``{"url": ..., "text": ...}`` dicts, relative URLs resolved against
        the parent. Links to other sites, non-web links, pages already known, children of
        a page at ``max_depth`` and links beyond ``max_pages_per_level`` or ``max_pages``
        are left out.
        """
        parent = self._require(parent_url, "parent_url")
        kind = _check_short_text(link_type, "link_type", MAX_LINK_TYPE_CHARS, required=True)
        if not isinstance(links, Sequence) or isinstance(links, (str, bytes)):
            raise InvalidInput(f"links: expected a list of {{'url', 'text'}} dicts, got {type(links).__name__}")
        checked = [self._check_link(index, link) for index, link in enumerate(links)]
        depth = parent.depth + 1
        if depth > self._limits.max_depth:
            return []
        at_depth = self._count_at(depth)
        added = []
        for url, text in checked:
            if at_depth >= self._limits.max_pages_per_level or len(self._pages) >= self._limits.max_pages:
                break
            normal = normalize_url(url, base=parent.url)
            if normal is None or _site_of(normal) != self._site or _page_key(normal) in self._pages:
                continue
            self._insert(SitemapPage(
                url=normal, depth=depth, parent=parent.url, link_type=kind, link_text=text, order=self._next_order,
            ))
            at_depth += 1
            added.append(normal)
        return added

    @staticmethod
    def _check_link(index: int, link: object) -> tuple[str, str]:
        if not isinstance(link, Mapping):
            raise InvalidInput(f"links[{index}]: expected a dict with 'url' and 'text', got {type(link).__name__}")
        url = link.get("url")
        if not isinstance(url, str):
            raise InvalidInput(f"links[{index}].url: expected a string, got {type(url).__name__}")
        text = link.get("text") or ""
        return url, _check_short_text(text, f"links[{index}].text", MAX_LINK_TEXT_CHARS)

    def _require(self, url: object, field: str) -> SitemapPage:
        if not isinstance(url, str):
            raise InvalidInput(f"{field}: expected a URL string, got {type(url).__name__}")
        page = self.page(url)
        if page is None:
            raise InvalidInput(f"{field}: {url[:80]!r} is not a page of this sitemap")
        return page

    def mark_visited(self, url: str, *, title: str, summary: str = "", section_count: int = 0) -> None:
        """Record the visit of a page of the graph: its title, a summary and how many sections it has."""
        page = self._require(url, "url")
        self._insert(replace(
            page,
            visited=True,
            skipped=False,
            skip_reason="",
            title=_check_short_text(title, "title", MAX_TITLE_CHARS),
            summary=_check_short_text(summary, "summary", MAX_SUMMARY_CHARS),
            section_count=_check_count(section_count, "section_count"),
        ))

    def mark_skipped(self, url: str, *, reason: str = "") -> None:
        """Give up on a page (it failed to load, say) so that it is not offered again."""
        page = self._require(url, "url")
        if not page.visited:
            self._insert(replace(page, skipped=True, skip_reason=_check_short_text(reason, "reason", MAX_TITLE_CHARS)))

    def next_page_to_visit(self) -> str | None:
        """The unvisited page of lowest depth, the earliest discovered among equals; None when done."""
        waiting = [page for page in self._pages.values() if not page.done]
        if not waiting:
            return None
        return min(waiting, key=lambda page: (page.depth, page.order)).url

    def is_complete(self) -> bool:
        """Whether every page of the graph has been visited (or skipped)."""
        return all(page.done for page in self._pages.values())

    def summary(self) -> str:
        """A textual account of the exploration: counts, pages per depth, and each visited page."""
        pages = self.pages()
        visited = [page for page in pages if page.visited]
        state = "complete" if self.is_complete() else "in progress"
        lines = [
            f"Site exploration of {self._homepage} ({state}): "
            f"{len(visited)} of {len(pages)} discovered pages visited."
        ]
        for depth in sorted({page.depth for page in pages}):
            at_depth = [page for page in pages if page.depth == depth]
            seen = sum(1 for page in at_depth if page.visited)
            lines.append(f"Depth {depth}: {len(at_depth)} discovered, {seen} visited")
        skipped = [page for page in pages if page.skipped]
        if skipped:
            lines.append(f"Skipped: {len(skipped)} ({', '.join(page.url for page in skipped)})")
        if visited:
            lines.append("Visited pages:")
            for page in visited:
                entry = f"- {page.title or '(untitled)'} ({page.url}, depth {page.depth}, {page.link_type})"
                if page.summary:
                    entry += f": {page.summary}"
                if page.section_count:
                    entry += f" [{page.section_count} sections]"
                lines.append(entry)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready) that :meth:`from_dict` turns back into an equal graph."""
        return {
            "version": FORMAT_VERSION,
            "homepage_url": self._homepage,
            "limits": asdict(self._limits),
            "pages": [asdict(page) for page in self.pages()],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SitemapGraph:
        """Rebuild a graph saved by :meth:`to_dict`; malformed data raises InvalidInput."""
        if not isinstance(data, Mapping):
            raise InvalidInput(f"data: expected a dict, got {type(data).__name__}")
        if data.get("version") != FORMAT_VERSION:
            raise InvalidInput(f"data.version: expected {FORMAT_VERSION}, got {data.get('version')!r}")
        limits = data.get("limits")
        if not isinstance(limits, Mapping):
            raise InvalidInput("data.limits: expected a dict")
        try:
            graph = cls(data.get("homepage_url"), limits=SitemapLimits(**limits))  # type: ignore[arg-type]
        except TypeError as exc:
            raise InvalidInput(f"data.limits: {exc}") from exc
        pages = data.get("pages")
        if not isinstance(pages, Iterable) or isinstance(pages, (str, bytes, Mapping)):
            raise InvalidInput("data.pages: expected a list of pages")
        graph._pages.clear()
        for index, raw in enumerate(pages):
            page = _page_from_dict(index, raw, graph)
            if _page_key(page.url) in graph._pages:
                raise InvalidInput(f"data.pages[{index}].url: {page.url[:80]!r} appears twice")
            graph._insert(page)
        if _page_key(graph._homepage) not in graph._pages:
            raise InvalidInput("data.pages: the homepage is missing")
        return graph


def _page_from_dict(index: int, raw: object, graph: SitemapGraph) -> SitemapPage:
    field = f"data.pages[{index}]"
    if not isinstance(raw, Mapping):
        raise InvalidInput(f"{field}: expected a dict, got {type(raw).__name__}")
    try:
        page = SitemapPage(**raw)
    except TypeError as exc:
        raise InvalidInput(f"{field}: {exc}") from exc
    if not isinstance(page.url, str) or normalize_url(page.url) != page.url or not graph.is_same_site(page.url):
        raise InvalidInput(f"{field}.url: {str(page.url)[:80]!r} is not a normalised URL of this site")
    for name in ("depth", "order", "section_count"):
        _check_count(getattr(page, name), f"{field}.{name}")
    for name in ("visited", "skipped"):
        if not isinstance(getattr(page, name), bool):
            raise InvalidInput(f"{field}.{name}: expected true or false")
    for name in ("link_type", "link_text", "title", "summary", "skip_reason"):
        if not isinstance(getattr(page, name), str):
            raise InvalidInput(f"{field}.{name}: expected a string")
    if page.parent is not None and not isinstance(page.parent, str):
        raise InvalidInput(f"{field}.parent: expected a URL string or null")
    if page.depth > graph.limits.max_depth:
        raise InvalidInput(f"{field}.depth: {page.depth} is beyond max_depth={graph.limits.max_depth}")
    return page
