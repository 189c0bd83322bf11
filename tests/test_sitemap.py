"""The sitemap graph: URL normalisation, same-site links, limits, breadth-first order, summary, round trip."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webmem.core.errors import InvalidInput
from webmem.working.sitemap import SitemapGraph, SitemapLimits, SitemapPage, normalize_url

HOME = "https://www.example.com/"


def links(*urls: str) -> list[dict[str, str]]:
    return [{"url": url, "text": url.rsplit("/", 1)[-1].title()} for url in urls]


# --- normalisation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.example.com", "https://www.example.com/"),
        ("https://www.example.com/", "https://www.example.com/"),
        ("https://www.example.com/products/", "https://www.example.com/products"),
        ("https://www.example.com/products#reviews", "https://www.example.com/products"),
        ("HTTPS://WWW.Example.COM/Products", "https://www.example.com/Products"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com:8443/a", "https://example.com:8443/a"),
        ("https://example.com/a/./b/../c", "https://example.com/a/c"),
        ("https://example.com/search?q=shoes&page=2#top", "https://example.com/search?q=shoes&page=2"),
        ("https://example.com/?", "https://example.com/"),
        ("https://user:secret@example.com/a", "https://example.com/a"),
        ("  https://example.com/padded  ", "https://example.com/padded"),
        ("http://[::1]:8000/a/", "http://[::1]:8000/a"),
    ],
)
def test_normalize_url(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    "url",
    [
        "mailto:help@example.com", "javascript:void(0)", "tel:+18005550199", "data:text/plain,hi",
        "ftp://example.com/file", "/relative/without/base", "", "https://", "http://exa mple.com/",
        "https://example.com:99999/", "https://example.com:0/",
    ],
)
def test_normalize_url_refuses_what_is_not_a_web_page(url: str) -> None:
    assert normalize_url(url) is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/about", "https://www.example.com/about"),
        ("contact/", "https://www.example.com/shop/contact"),
        ("../help#faq", "https://www.example.com/help"),
        ("?page=2", "https://www.example.com/shop/list?page=2"),
        ("#reviews", "https://www.example.com/shop/list"),
        ("", "https://www.example.com/shop/list"),
        ("//cdn.example.com/a", "https://cdn.example.com/a"),
        ("https://other.org/x/", "https://other.org/x"),
        ("mailto:a@b.c", None),
    ],
)
def test_normalize_url_resolves_relative_links_against_the_base(url: str, expected: str | None) -> None:
    assert normalize_url(url, base="https://www.example.com/shop/list") == expected


def test_normalize_url_validates_its_arguments() -> None:
    with pytest.raises(InvalidInput, match="url"):
        normalize_url(42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="base"):
        normalize_url("/a", base="mailto:a@b.c")


_urls = st.builds(
    lambda scheme, host, port, path, query, fragment: f"{scheme}://{host}{port}{path}{query}{fragment}",
    st.sampled_from(["http", "https", "HTTP", "hTTps"]),
    st.sampled_from(["example.com", "WWW.Example.com", "127.0.0.1", "[::1]", "a.b.c", "xn--bcher-kva.example"]),
    st.sampled_from(["", ":80", ":443", ":8080", ":1"]),
    st.lists(st.sampled_from(["", ".", "..", "a", "B", "%20", "c.d", "é"]), max_size=5).map(lambda parts: "/" + "/".join(parts)),
    st.sampled_from(["", "?", "?q=1", "?a=1&b=/x/"]),
    st.sampled_from(["", "#", "#top", "#/route"]),
)


@given(url=_urls)
def test_normalize_url_is_idempotent_on_web_urls(url: str) -> None:
    once = normalize_url(url)
    assert once is not None
    assert normalize_url(once) == once
    assert "#" not in once
    path = urlsplit(once).path
    assert path == "/" or (path.startswith("/") and not path.endswith("/"))


@given(text=st.text(max_size=60), base=st.sampled_from([None, HOME, "http://shop.example.com:8080/a/b"]))
def test_normalize_url_is_idempotent_on_any_text(text: str, base: str | None) -> None:
    once = normalize_url(text, base=base)
    if once is not None:
        assert normalize_url(once) == once
        assert once.startswith(("http://", "https://"))


# --- limits and construction -------------------------------------------------------------------


def test_default_limits() -> None:
    assert SitemapLimits() == SitemapLimits(max_depth=2, max_pages_per_level=10, max_pages=50)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_depth": 0}, "max_depth"), ({"max_pages_per_level": -3}, "max_pages_per_level"),
        ({"max_pages": True}, "max_pages"), ({"max_depth": "2"}, "max_depth"), ({"max_pages": 2.5}, "max_pages"),
    ],
)
def test_limits_must_be_positive_whole_numbers(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput, match=field):
        SitemapLimits(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("homepage", ["mailto:a@b.c", "not a url", "", "/relative", 42])
def test_an_invalid_homepage_is_refused(homepage: object) -> None:
    with pytest.raises(InvalidInput, match="homepage_url"):
        SitemapGraph(homepage)  # type: ignore[arg-type]


def test_the_homepage_is_the_first_page() -> None:
    graph = SitemapGraph("HTTPS://www.Example.com")
    assert graph.homepage_url == HOME
    assert len(graph) == 1
    assert graph.next_page_to_visit() == HOME
    page = graph.page(HOME)
    assert page is not None and page.depth == 0 and page.parent is None and not page.visited


# --- adding links ------------------------------------------------------------------------------


def test_only_links_of_the_same_site_are_added() -> None:
    graph = SitemapGraph(HOME)
    added = graph.add_links(
        HOME,
        links(
            "https://www.example.com/products",
            "/about",  # relative to the homepage
            "https://example.com/contact",  # no www.: the same site
            "http://www.example.com/blog",  # http: the same site
            "https://shop.example.com/cart",  # another subdomain: another site
            "https://www.example.com:8443/admin",  # another port: another site
            "https://other.org/",
            "mailto:help@example.com",
            "javascript:void(0)",
        ),
        link_type="main_nav",
    )
    assert added == [
        "https://www.example.com/products",
        "https://www.example.com/about",
        "https://example.com/contact",
        "http://www.example.com/blog",
    ]
    assert graph.is_same_site("https://EXAMPLE.com/x")
    assert not graph.is_same_site("https://shop.example.com/x")


def test_a_non_default_port_is_its_own_site() -> None:
    graph = SitemapGraph("http://localhost:8000/")
    added = graph.add_links(
        "http://localhost:8000", links("http://localhost:8000/a", "http://localhost:8001/b", "http://localhost/c"),
        link_type="content",
    )
    assert added == ["http://localhost:8000/a"]


def test_duplicates_are_skipped_in_any_of_their_forms() -> None:
    graph = SitemapGraph(HOME)
    first = graph.add_links(HOME, links("/products", "/products/", "/products#top", "/", HOME), link_type="main_nav")
    assert first == ["https://www.example.com/products"]
    again = graph.add_links(HOME, links("https://example.com/products", "http://www.example.com/products/"), link_type="footer")
    assert again == []
    assert len(graph) == 2
    page = graph.page("https://example.com/products/")
    assert page is not None and page.link_type == "main_nav" and page.link_text == "Products"


def test_relative_links_resolve_against_their_parent() -> None:
    graph = SitemapGraph(HOME)
    graph.add_links(HOME, links("/shop/shoes"), link_type="main_nav")
    added = graph.add_links("https://www.example.com/shop/shoes", links("running", "../socks", "?page=2"), link_type="content")
    assert added == [
        "https://www.example.com/shop/running",
        "https://www.example.com/socks",
        "https://www.example.com/shop/shoes?page=2",
    ]
    assert graph.page("https://www.example.com/socks").parent == "https://www.example.com/shop/shoes"  # type: ignore[union-attr]


def test_children_of_a_page_at_max_depth_are_not_added() -> None:
    graph = SitemapGraph(HOME, limits=SitemapLimits(max_depth=1))
    assert graph.add_links(HOME, links("/a", "/b"), link_type="main_nav") == [
        "https://www.example.com/a", "https://www.example.com/b",
    ]
    assert graph.add_links("https://www.example.com/a", links("/a/1", "/a/2"), link_type="content") == []
    assert len(graph) == 3


def test_depth_two_is_reached_and_not_passed() -> None:
    graph = SitemapGraph(HOME)
    graph.add_links(HOME, links("/a"), link_type="main_nav")
    assert graph.add_links("https://www.example.com/a", links("/a/1"), link_type="content") == ["https://www.example.com/a/1"]
    assert graph.page("https://www.example.com/a/1").depth == 2  # type: ignore[union-attr]
    assert graph.add_links("https://www.example.com/a/1", links("/a/1/x"), link_type="content") == []


def test_pages_per_level_are_limited_across_parents() -> None:
    graph = SitemapGraph(HOME, limits=SitemapLimits(max_pages_per_level=3))
    assert graph.add_links(HOME, links("/a", "/b", "/c", "/d", "/e"), link_type="main_nav") == [
        "https://www.example.com/a", "https://www.example.com/b", "https://www.example.com/c",
    ]
    assert graph.add_links("https://www.example.com/a", links("/a/1", "/a/2", "/a/3", "/a/4"), link_type="content") == [
        "https://www.example.com/a/1", "https://www.example.com/a/2", "https://www.example.com/a/3",
    ]
    assert graph.add_links("https://www.example.com/b", links("/b/1"), link_type="content") == []


def test_total_pages_are_limited_homepage_included() -> None:
    graph = SitemapGraph(HOME, limits=SitemapLimits(max_pages=4, max_pages_per_level=10))
    assert len(graph.add_links(HOME, links("/a", "/b"), link_type="main_nav")) == 2
    assert graph.add_links("https://www.example.com/a", links("/a/1", "/a/2", "/a/3"), link_type="content") == [
        "https://www.example.com/a/1",
    ]
    assert len(graph) == 4
    assert graph.add_links(HOME, links("/c"), link_type="footer") == []


def test_add_links_validates_its_arguments() -> None:
    graph = SitemapGraph(HOME)
    with pytest.raises(InvalidInput, match="parent_url"):
        graph.add_links("https://www.example.com/unknown", links("/a"), link_type="content")
    with pytest.raises(InvalidInput, match="link_type"):
        graph.add_links(HOME, links("/a"), link_type="  ")
    with pytest.raises(InvalidInput, match=r"links\[1\]\.url"):
        graph.add_links(HOME, [{"url": "/a"}, {"text": "no url"}], link_type="content")
    with pytest.raises(InvalidInput, match="links"):
        graph.add_links(HOME, "/a", link_type="content")  # type: ignore[arg-type]
    assert len(graph) == 1  # nothing was added by a refused call


# --- visiting ----------------------------------------------------------------------------------


def test_next_page_is_breadth_first_then_in_discovery_order() -> None:
    graph = SitemapGraph(HOME)
    order = []
    graph.add_links(HOME, links("/a", "/b"), link_type="main_nav")
    graph.mark_visited(HOME, title="Home")
    order.append(HOME)
    # /a is visited first and reveals depth-2 pages before /c (depth 1) is even found
    url = graph.next_page_to_visit()
    assert url == "https://www.example.com/a"
    graph.add_links(url, links("/a/1", "/a/2"), link_type="content")
    graph.mark_visited(url, title="A")
    order.append(url)
    graph.add_links("https://www.example.com/b", links("/c"), link_type="footer")  # a depth-2 page found from /b
    graph.add_links(HOME, links("/d"), link_type="footer")  # a depth-1 page found late
    while (url := graph.next_page_to_visit()) is not None:
        graph.mark_visited(url, title=url.rsplit("/", 1)[-1])
        order.append(url)
    assert order == [
        HOME,
        "https://www.example.com/a",
        "https://www.example.com/b",
        "https://www.example.com/d",
        "https://www.example.com/a/1",
        "https://www.example.com/a/2",
        "https://www.example.com/c",
    ]
    assert graph.is_complete()


def test_completion_and_skipped_pages() -> None:
    graph = SitemapGraph(HOME)
    assert not graph.is_complete()
    graph.add_links(HOME, links("/a", "/broken"), link_type="main_nav")
    graph.mark_visited(HOME, title="Home")
    graph.mark_visited("https://www.example.com/a", title="A")
    assert not graph.is_complete()
    assert graph.next_page_to_visit() == "https://www.example.com/broken"
    graph.mark_skipped("https://www.example.com/broken", reason="HTTP 500")
    assert graph.is_complete()
    assert graph.next_page_to_visit() is None


def test_mark_visited_records_what_the_visit_found() -> None:
    graph = SitemapGraph(HOME)
    graph.add_links(HOME, links("/products"), link_type="main_nav")
    graph.mark_visited("https://example.com/products/#top", title="Products", summary="Catalog of 50 items", section_count=5)
    page = graph.page("https://www.example.com/products")
    assert page == SitemapPage(
        url="https://www.example.com/products", depth=1, parent=HOME, link_type="main_nav", link_text="Products",
        order=1, visited=True, title="Products", summary="Catalog of 50 items", section_count=5,
    )


def test_mark_visited_validates_its_arguments() -> None:
    graph = SitemapGraph(HOME)
    with pytest.raises(InvalidInput, match="url"):
        graph.mark_visited("https://www.example.com/never-found", title="x")
    with pytest.raises(InvalidInput, match="section_count"):
        graph.mark_visited(HOME, title="Home", section_count=-1)
    with pytest.raises(InvalidInput, match="title"):
        graph.mark_visited(HOME, title=None)  # type: ignore[arg-type]
    assert not graph.page(HOME).visited  # type: ignore[union-attr]


def test_text_from_pages_is_bounded_and_cleaned() -> None:
    graph = SitemapGraph(HOME)
    graph.add_links(HOME, [{"url": "/a", "text": "Line\x00one\n\ttwo " + "x" * 500}], link_type="content")
    graph.mark_visited("https://www.example.com/a", title="T\x1b[31mitle", summary="s" * 5000)
    page = graph.page("https://www.example.com/a")
    assert page is not None
    assert "\x00" not in page.link_text and "\n" not in page.link_text and len(page.link_text) <= 200
    assert "\x1b" not in page.title
    assert len(page.summary) <= 1000


# --- summary and persistence -------------------------------------------------------------------


def explored_graph() -> SitemapGraph:
    graph = SitemapGraph(HOME, limits=SitemapLimits(max_depth=2, max_pages_per_level=5, max_pages=20))
    graph.add_links(HOME, links("/products", "/about", "/contact"), link_type="main_nav")
    graph.mark_visited(HOME, title="Example Shop", summary="Homepage with featured products", section_count=4)
    graph.add_links("https://www.example.com/products", links("/products/shoes", "/products/socks"), link_type="content")
    graph.mark_visited("https://www.example.com/products", title="Products", summary="Catalog with 50 items", section_count=5)
    return graph


def test_summary_describes_the_exploration() -> None:
    summary = explored_graph().summary()
    lines = summary.splitlines()
    assert lines[0] == f"Site exploration of {HOME} (in progress): 2 of 6 discovered pages visited."
    assert "Depth 0: 1 discovered, 1 visited" in lines
    assert "Depth 1: 3 discovered, 1 visited" in lines
    assert "Depth 2: 2 discovered, 0 visited" in lines
    assert f"- Example Shop ({HOME}, depth 0, homepage): Homepage with featured products [4 sections]" in lines
    assert "- Products (https://www.example.com/products, depth 1, main_nav): Catalog with 50 items [5 sections]" in lines
    assert "About" not in summary  # discovered, not visited


def test_summary_of_a_complete_exploration() -> None:
    graph = SitemapGraph(HOME)
    graph.mark_visited(HOME, title="Home")
    assert graph.summary().startswith(f"Site exploration of {HOME} (complete): 1 of 1 discovered pages visited.")


def test_to_dict_from_dict_round_trip() -> None:
    graph = explored_graph()
    graph.mark_skipped("https://www.example.com/contact", reason="timeout")
    data = json.loads(json.dumps(graph.to_dict()))
    restored = SitemapGraph.from_dict(data)
    assert restored.to_dict() == graph.to_dict()
    assert restored.pages() == graph.pages()
    assert restored.limits == graph.limits
    assert restored.next_page_to_visit() == graph.next_page_to_visit()
    assert restored.summary() == graph.summary()
    added = restored.add_links("https://www.example.com/about", links("/team"), link_type="content")
    assert added == ["https://www.example.com/team"]
    assert restored.page("https://www.example.com/team").order == 6  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.update(version=99), "version"),
        (lambda d: d.update(limits={"max_depth": 0}), "max_depth"),
        (lambda d: d.update(limits={"depth": 2}), "limits"),
        (lambda d: d.update(homepage_url="mailto:x@y.z"), "homepage_url"),
        (lambda d: d.update(pages="nope"), "pages"),
        (lambda d: d["pages"].pop(0), "homepage"),
        (lambda d: d["pages"][1].update(url="https://other.org/a"), r"pages\[1\]\.url"),
        (lambda d: d["pages"][1].update(url="https://www.example.com/a/"), r"pages\[1\]\.url"),
        (lambda d: d["pages"][1].update(depth=-1), r"pages\[1\]\.depth"),
        (lambda d: d["pages"][1].update(depth=7), r"pages\[1\]\.depth"),
        (lambda d: d["pages"][1].update(visited="yes"), r"pages\[1\]\.visited"),
        (lambda d: d["pages"][1].update(extra=1), r"pages\[1\]"),
    ],
)
def test_from_dict_refuses_malformed_data(mutate, field: str) -> None:  # type: ignore[no-untyped-def]
    data = explored_graph().to_dict()
    mutate(data)
    with pytest.raises(InvalidInput, match=field):
        SitemapGraph.from_dict(data)


_paths = st.sampled_from(["/a", "/b", "/c", "/a/1", "/a/2", "/b/1", "/x/y", "https://other.org/z", "mailto:q@w.e", "?p=2"])


@settings(max_examples=50, deadline=None)
@given(
    steps=st.lists(st.tuples(st.integers(0, 30), st.lists(_paths, max_size=6), st.booleans()), max_size=12),
    limits=st.builds(SitemapLimits, st.integers(1, 3), st.integers(1, 4), st.integers(1, 8)),
)
def test_limits_hold_and_round_trip_after_any_exploration(
    steps: list[tuple[int, list[str], bool]], limits: SitemapLimits
) -> None:
    graph = SitemapGraph(HOME, limits=limits)
    for pick, found, visit in steps:
        pages = graph.pages()
        parent = pages[pick % len(pages)]
        graph.add_links(parent.url, links(*found), link_type="content")
        if visit:
            graph.mark_visited(parent.url, title=f"page {pick}")
    pages = graph.pages()
    assert len(pages) <= limits.max_pages
    assert all(page.depth <= limits.max_depth for page in pages)
    for depth in range(1, limits.max_depth + 1):
        assert sum(1 for page in pages if page.depth == depth) <= limits.max_pages_per_level
    assert all(graph.is_same_site(page.url) for page in pages)
    assert len({page.url for page in pages}) == len(pages)
    assert SitemapGraph.from_dict(graph.to_dict()).to_dict() == graph.to_dict()
