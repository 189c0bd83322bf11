"""Extractive compression: head and tail, and a compressor that keeps every URL, selector and field."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from webmem.core.errors import InvalidInput
from webmem.working.compression import (
    FIELDS_HEADING,
    METHOD_EXTRACTIVE,
    METHOD_HOOK,
    METHOD_HOOK_FALLBACK,
    METHOD_OUTLINE,
    METHOD_UNCHANGED,
    SELECTORS_HEADING,
    URLS_HEADING,
    CompressionResult,
    compress_extraction,
    compress_with,
    head_tail,
)

LINKS_PAGE = Path(__file__).parent / "data" / "links_page.html"


@pytest.fixture(scope="module")
def page() -> str:
    return LINKS_PAGE.read_text(encoding="utf-8")


def hrefs_of(page: str) -> list[str]:
    """Every link target of the page, found independently of the code under test."""
    found = [html.unescape(value).strip() for value in re.findall(r'\b(?:href|action)="([^"]*)"', page)]
    return sorted({value for value in found if value not in ("", "#") and not value.startswith("javascript:")})


def present(item: str, text: str) -> bool:
    """The item appears as a whole token: not as a piece of a longer URL or name."""
    return re.search(rf"(?<![\w/.#?&=%~+@:-]){re.escape(item)}(?![\w/#?&=%~+@-])", text) is not None


# --- head and tail -----------------------------------------------------------------------------


def test_head_tail_leaves_short_text_alone() -> None:
    assert head_tail("short text", 100) == "short text"
    assert head_tail("exact", 5) == "exact"


def test_head_tail_keeps_both_ends_and_says_how_much_was_cut() -> None:
    text = "".join(f"line {n:04d}\n" for n in range(500))
    result = head_tail(text, 400)
    assert len(result) <= 400
    assert result.startswith("line 0000\nline 0001")
    assert result.endswith("line 0499\n")
    cut = int(re.search(r"\[\.\.\. (\d+) characters cut \.\.\.\]", result).group(1))  # type: ignore[union-attr]
    marker = f"\n[... {cut} characters cut ...]\n"
    assert len(result) - len(marker) + cut == len(text)


def test_head_tail_with_a_custom_marker_and_no_room_for_it() -> None:
    text = "a" * 50 + "b" * 50
    assert head_tail(text, 20, marker="<{cut}>") == "a" * 10 + "<84>" + "b" * 6
    assert head_tail(text, 3, marker="[cut {cut}]") == "aaa"


@given(text=st.text(max_size=500), max_chars=st.integers(min_value=0, max_value=600))
def test_head_tail_never_exceeds_max_chars(text: str, max_chars: int) -> None:
    result = head_tail(text, max_chars)
    assert len(result) <= max_chars
    if len(text) <= max_chars:
        assert result == text


@pytest.mark.parametrize(("text", "max_chars", "field"), [(b"x", 3, "text"), ("x", -1, "max_chars"), ("x", 2.0, "max_chars")])
def test_head_tail_validates_its_arguments(text: object, max_chars: object, field: str) -> None:
    with pytest.raises(InvalidInput, match=field):
        head_tail(text, max_chars)  # type: ignore[arg-type]


# --- the saved HTML page -----------------------------------------------------------------------


def test_the_saved_page_is_a_real_page_with_over_100_links(page: str) -> None:
    assert len(hrefs_of(page)) >= 120
    assert any(href.startswith("https://") for href in hrefs_of(page))
    assert any(href.startswith("/") for href in hrefs_of(page))
    assert any(href.startswith("?") for href in hrefs_of(page))
    for piece in ("<nav", "<footer", "<article", "product-grid", "<form", "<script", "<style"):
        assert piece in page


@pytest.mark.parametrize("max_chars", [2_000, 9_000])
def test_every_href_of_the_page_survives_compression(page: str, max_chars: int) -> None:
    result = compress_extraction(page, max_chars=max_chars)
    missing = [href for href in hrefs_of(page) if not present(href, result.text)]
    assert missing == []
    assert result.preserved_urls
    assert result.original_chars == len(page)
    assert result.compressed_chars == len(result.text)
    assert result.method in (METHOD_EXTRACTIVE, METHOD_OUTLINE)


def test_a_small_budget_keeps_the_inventory_and_says_it_is_over(page: str) -> None:
    result = compress_extraction(page, max_chars=2_000)
    assert not result.within_budget
    assert len(result.text) > 2_000
    assert len(result.text) < len(page) / 2
    assert result.preserved_urls and result.preserved_selectors and result.preserved_fields
    assert any("over max_chars" in note for note in result.notes)


def test_a_reasonable_budget_is_respected(page: str) -> None:
    result = compress_extraction(page, max_chars=9_000)
    assert result.within_budget
    assert len(result.text) <= 9_000 < len(page)
    assert result.notes == ()


def test_ids_and_test_ids_of_the_page_are_kept(page: str) -> None:
    result = compress_extraction(page, max_chars=9_000)
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    test_ids = set(re.findall(r'data-testid="([^"]+)"', page))
    assert len(ids) > 20 and len(test_ids) > 40
    assert [i for i in ids if not present("#" + i, result.text)] == []
    assert [t for t in test_ids if f'[data-testid="{t}"]' not in result.text] == []
    assert result.preserved_selectors


def test_form_fields_of_the_page_are_kept_with_their_labels(page: str) -> None:
    result = compress_extraction(page, max_chars=9_000)
    names = set(re.findall(r'<(?:input|select|textarea)\b[^>]*\bname="([^"]+)"', page))
    assert {"q", "email", "password", "country", "remember_me", "delivery_notes", "size"} <= names
    assert [name for name in names if f'name="{name}"' not in result.text] == []
    for label in ("Email address", "Password", "Keep me signed in", "Country", "Search products", "Max price"):
        assert f'label="{label}"' in result.text
    assert result.preserved_fields


def test_scripts_styles_and_field_values_are_dropped(page: str) -> None:
    result = compress_extraction(page, max_chars=9_000)
    for piece in ("dataLayer", "gtag(", "border-radius", "addToCart", "JSON.stringify", "a81f2c"):
        assert piece not in result.text


def test_the_outline_reads_like_the_page(page: str) -> None:
    result = compress_extraction(page, max_chars=9_000)
    assert "[Sign in](/account/login) #login-link" in result.text
    assert "### [" in result.text  # product names are headings with their links
    assert 'form: action="/account/login" method="post" #login-form' in result.text
    assert "button: Search #search-btn" in result.text


def test_a_roomy_budget_keeps_the_whole_outline(page: str) -> None:
    result = compress_extraction(page, max_chars=20_000)
    assert result.method == METHOD_OUTLINE
    assert "Runner's World" in result.text
    assert "$" in result.text and "out of 5" in result.text
    assert result.preserved_urls and result.preserved_selectors and result.preserved_fields


# --- plain text --------------------------------------------------------------------------------

LOG_TEXT = "\n".join(
    [
        "Results for 'trail shoes' on the shop.",
        *(f"Filler paragraph {n} about the weather and nothing the agent needs at all today." for n in range(40)),
        "The cheapest pair costs $74.50 and ships tomorrow.",
        "Click #add-to-cart or the .buy-now button; the email field is input[name=email].",
        "Details: https://shop.example.com/p/terra-trek-8?ref=search and https://shop.example.com/help.",
        "The test id is [data-testid=\"checkout\"] on the checkout page.",
        *(f"More filler {n}: the sky was grey and the coffee was lukewarm." for n in range(40)),
        "Docs at https://docs.example.com/api/v2/orders (see section 3).",
    ]
)


def test_plain_text_keeps_urls_selectors_and_important_lines() -> None:
    result = compress_extraction(LOG_TEXT, max_chars=600)
    assert result.method == METHOD_EXTRACTIVE
    assert result.within_budget and len(result.text) <= 600
    for url in ("https://shop.example.com/p/terra-trek-8?ref=search", "https://shop.example.com/help",
                "https://docs.example.com/api/v2/orders"):
        assert present(url, result.text)
    for selector in ("#add-to-cart", ".buy-now", "input[name=email]", '[data-testid="checkout"]'):
        assert selector in result.text
    assert "$74.50" in result.text
    assert "Filler paragraph 7 " not in result.text
    assert result.preserved_urls and result.preserved_selectors and result.preserved_fields


def test_kept_lines_stay_in_their_original_order() -> None:
    result = compress_extraction(LOG_TEXT, max_chars=600)
    body = [line for line in result.text.splitlines() if line in LOG_TEXT.splitlines()]
    assert body == [line for line in LOG_TEXT.splitlines() if line in body]
    assert len(body) >= 3


def test_urls_that_no_line_can_carry_go_to_the_inventory() -> None:
    text = "x" * 2_000 + " https://example.com/deep/link?id=42 " + "y" * 2_000
    result = compress_extraction(text, max_chars=200)
    assert result.text.splitlines()[-1] == "https://example.com/deep/link?id=42"
    assert URLS_HEADING in result.text
    assert result.preserved_urls and result.within_budget


def test_prose_is_not_mistaken_for_selectors() -> None:
    text = ("We open at 9 a.m. on weekdays; see example.com or e.g. the F.A.Q. page. " * 30).strip()
    result = compress_extraction(text, max_chars=300)
    assert SELECTORS_HEADING not in result.text
    assert FIELDS_HEADING not in result.text


def test_form_controls_embedded_in_text_are_fields() -> None:
    text = "Filler. " * 200 + '\nThe form has <input type="text" name="coupon_code"> and <select name=\'region\'>.\n' + "More. " * 200
    result = compress_extraction(text, max_chars=400)
    assert re.search(r"name=[\"']?coupon_code", result.text)
    assert re.search(r"name=[\"']?region", result.text)
    assert result.preserved_fields


def test_text_that_fits_is_returned_unchanged() -> None:
    result = compress_extraction("Go to https://example.com/a", max_chars=100)
    assert result == CompressionResult(
        text="Go to https://example.com/a", original_chars=27, compressed_chars=27, preserved_urls=True,
        preserved_selectors=True, preserved_fields=True, method=METHOD_UNCHANGED, within_budget=True,
    )


def test_compress_extraction_validates_its_arguments() -> None:
    with pytest.raises(InvalidInput, match="max_chars"):
        compress_extraction("abc", max_chars=-5)
    with pytest.raises(InvalidInput, match="text"):
        compress_extraction(None, max_chars=10)  # type: ignore[arg-type]


_word = st.sampled_from(["price", "shoe", "$19.99", "the", "cart", "42", "red", "sold", "out", "and"])
_segment = st.sampled_from(["p", "terra-trek-8", "help", "api", "v2", "orders", "42", "a-b"])
_url = st.builds(
    lambda host, path, query: f"https://{host}.example.com/{'/'.join(path)}{query}",
    st.sampled_from(["shop", "docs", "www", "api"]),
    st.lists(_segment, min_size=1, max_size=3),
    st.sampled_from(["", "?q=1", "?ref=search&id=7"]),
)
_name = st.sampled_from(["login-btn", "price", "buy-now", "cart", "nav-main", "email", "q2"])
_selector = st.builds(lambda kind, name: kind.format(name), st.sampled_from(["#{}", ".{}", "input[name={}]"]), _name)
_line = st.lists(st.one_of(_word, _word, _word, _url, _selector), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(_line, min_size=1, max_size=40), max_chars=st.integers(min_value=0, max_value=800))
def test_every_url_and_selector_survives_any_budget(lines: list[str], max_chars: int) -> None:
    text = "\n".join(lines)
    result = compress_extraction(text, max_chars=max_chars)
    urls = set(re.findall(r"https://\S+", text))
    selectors = set(re.findall(r"(?<!\S)(?:#[a-z][\w-]+|\.[a-z][\w-]+|input\[name=[\w-]+\])(?!\S)", text))
    assert all(present(url, result.text) for url in urls)
    assert all(selector in result.text for selector in selectors)
    assert result.preserved_urls and result.preserved_selectors
    assert result.within_budget == (len(result.text) <= max_chars)
    inventory_only = "\n".join(
        [URLS_HEADING, *urls] * bool(urls) + [SELECTORS_HEADING, *selectors] * bool(selectors)
    )
    if len(inventory_only) <= max_chars:
        assert result.within_budget


@settings(max_examples=80, deadline=None)
@given(text=st.text(alphabet=st.characters(codec="utf-8"), max_size=600), max_chars=st.integers(min_value=0, max_value=300))
def test_any_text_compresses_with_everything_kept(text: str, max_chars: int) -> None:
    result = compress_extraction(text, max_chars=max_chars)
    assert result.preserved_urls and result.preserved_selectors and result.preserved_fields
    assert result.within_budget == (len(result.text) <= max_chars)
    assert result.compressed_chars == len(result.text) and result.original_chars == len(text)


# --- the compressor hook -----------------------------------------------------------------------


def test_a_hook_that_drops_urls_is_rejected_for_the_extractive_fallback(page: str) -> None:
    def summarise(text: str, max_chars: int) -> str:
        return "A category page listing running shoes."

    result = compress_with(summarise, page, max_chars=9_000)
    assert result.method == METHOD_HOOK_FALLBACK
    assert result.preserved_urls
    assert [href for href in hrefs_of(page) if not present(href, result.text)] == []
    assert any("dropped" in note and "URLs" in note for note in result.notes)


def test_a_hook_that_overshoots_is_rejected() -> None:
    result = compress_with(lambda text, max_chars: text + text, LOG_TEXT, max_chars=600)
    assert result.method == METHOD_HOOK_FALLBACK
    assert len(result.text) <= 600
    assert any("over max_chars" in note for note in result.notes)


def test_a_good_hook_is_used_and_its_output_is_checked() -> None:
    urls = "https://shop.example.com/p/terra-trek-8?ref=search https://shop.example.com/help https://docs.example.com/api/v2/orders"

    def llm(text: str, max_chars: int) -> str:
        return f"Cheapest pair $74.50. Links: {urls}"

    result = compress_with(llm, LOG_TEXT, max_chars=600)
    assert result.method == METHOD_HOOK
    assert result.text == llm(LOG_TEXT, 600)
    assert result.preserved_urls and result.within_budget
    assert not result.preserved_selectors  # checked on the hook's output, not assumed


def test_the_hook_is_not_called_when_the_text_fits_or_absent() -> None:
    calls: list[int] = []

    def hook(text: str, max_chars: int) -> str:
        calls.append(max_chars)
        return text

    assert compress_with(hook, "short", max_chars=100).method == METHOD_UNCHANGED
    assert calls == []
    assert compress_with(None, LOG_TEXT, max_chars=600).method == METHOD_EXTRACTIVE


def test_a_hook_returning_something_else_than_text_is_an_error() -> None:
    with pytest.raises(InvalidInput, match="compressor"):
        compress_with(lambda text, max_chars: None, LOG_TEXT, max_chars=600)  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidInput, match="compressor"):
        compress_with("not callable", LOG_TEXT, max_chars=600)  # type: ignore[arg-type]
