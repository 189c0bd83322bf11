"""Token estimates by content type, message overhead, and the exact tokenizer hook."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from webmem.core import tokens
from webmem.core.errors import InvalidInput
from webmem.core.tokens import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD_TOKENS,
    REPLY_PRIMING_TOKENS,
    ContentType,
    TokenCounter,
    TokenEstimate,
    detect_content_type,
    estimate,
    estimate_messages,
)

LINKS_PAGE = Path(__file__).parent / "data" / "links_page.html"

PROSE = """\
The agent opened the product page and compared the three offers. The cheapest one was out of
stock; the second shipped in two weeks, so it picked the third. It then went back to the cart,
which still held an item from last week (a pair of socks), and removed it before paying.
"""

MARKDOWN_WITH_URLS = """\
## Sources
- [Getting started](https://docs.example.com/start) - the first steps
- [API reference](https://docs.example.com/api) - every endpoint, with examples
- https://github.com/example/repo/issues/12 (the known bug with logins)
    - nested note: fixed in 2.1
1. Open https://example.com/login and sign in.
2. Go to https://example.com/account/orders?status=open to see the open orders.
"""

PYTHON_SNIPPET = """\
import json
from pathlib import Path


def load_products(path: Path) -> list[dict]:
    with path.open() as handle:
        products = json.load(handle)
    return [p for p in products if p["price"] > 0]


class Catalog:
    def __init__(self, products):
        self.products = products
"""

JAVASCRIPT_SNIPPET = """\
const express = require("express");
const app = express();
app.get("/products", async (req, res) => {
  const items = await db.query("select * from products");
  res.json(items);
});
app.listen(3000);
"""

JSON_OBJECT = '{"name": "Glide Lite 4", "price": 99.0, "sizes": [8, 9, 10], "in_stock": true}'
TRUNCATED_JSON = (
    '{"items": [{"name": "a", "price": 1, "url": "/a"}, {"name": "b", "price": 2, "url": "/b"}, '
    '{"name": "c", "pri'
)


# --- detection ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sample", "expected"),
    [
        (PROSE, ContentType.TEXT),
        (MARKDOWN_WITH_URLS, ContentType.TEXT),
        ("Wrap the block in a <div> and it renders as a card; the rest of the page is unchanged.", ContentType.TEXT),
        ("[Products](https://example.com/products) and [About](https://example.com/about)", ContentType.TEXT),
        ("", ContentType.TEXT),
        (PYTHON_SNIPPET, ContentType.CODE),
        (JAVASCRIPT_SNIPPET, ContentType.CODE),
        (JSON_OBJECT, ContentType.JSON),
        ('[{"id": 1}, {"id": 2}]', ContentType.JSON),
        (TRUNCATED_JSON, ContentType.JSON),
        ('<div class="card"><a href="/p/1">Shoe</a><p>$89.99</p><button>Add</button></div>', ContentType.HTML),
    ],
    ids=[
        "prose", "markdown-list-with-urls", "prose-mentioning-a-tag", "markdown-links", "empty", "python",
        "javascript", "json-object", "json-array", "truncated-json", "html-fragment",
    ],
)
def test_detect_content_type_of_samples(sample: str, expected: ContentType) -> None:
    assert detect_content_type(sample) is expected


def test_a_real_html_page_is_html() -> None:
    assert detect_content_type(LINKS_PAGE.read_text(encoding="utf-8")) is ContentType.HTML


def test_detection_rejects_non_strings() -> None:
    with pytest.raises(InvalidInput, match="text"):
        detect_content_type(b"bytes")  # type: ignore[arg-type]


# --- estimates ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [(ContentType.TEXT, 25), (ContentType.CODE, 29), (ContentType.JSON, 34), (ContentType.HTML, 40)],
)
def test_chars_per_token_by_type(content_type: ContentType, expected: int) -> None:
    result = estimate("x" * 100, content_type)
    assert result == TokenEstimate(tokens=expected, content_type=content_type, confidence=1.0)


def test_ratios_are_the_documented_ones() -> None:
    assert dict(CHARS_PER_TOKEN) == {
        ContentType.TEXT: 4.0, ContentType.CODE: 3.5, ContentType.JSON: 3.0, ContentType.HTML: 2.5,
    }


def test_estimate_rounds_up_and_empty_costs_nothing() -> None:
    assert estimate("abcde", ContentType.TEXT).tokens == 2
    assert estimate("").tokens == 0
    assert estimate("", ContentType.HTML).tokens == 0


def test_estimate_detects_the_type_when_not_given() -> None:
    prose, json_ = estimate(PROSE), estimate(JSON_OBJECT)
    assert prose.content_type is ContentType.TEXT and prose.tokens == -(-len(PROSE) // 4)
    assert json_.content_type is ContentType.JSON and json_.tokens == -(-len(JSON_OBJECT) // 3)
    assert 0 < prose.confidence < 1 and 0 < json_.confidence < 1


def test_denser_content_costs_more_tokens_for_the_same_length() -> None:
    page = LINKS_PAGE.read_text(encoding="utf-8")
    assert estimate(page).tokens > estimate(page, ContentType.TEXT).tokens


def test_estimate_accepts_the_type_by_name_and_rejects_unknown_names() -> None:
    assert estimate("abcdef", "json").content_type is ContentType.JSON
    with pytest.raises(InvalidInput, match="content_type"):
        estimate("abc", "yaml")


# --- messages ----------------------------------------------------------------------------------


def test_estimate_messages_adds_overhead_per_message_and_reply_priming() -> None:
    messages = [
        {"role": "system", "content": "You are a browser agent."},
        {"role": "user", "content": PROSE},
    ]
    content = sum(estimate(m["content"]).tokens for m in messages)
    assert estimate_messages(messages) == content + 2 * MESSAGE_OVERHEAD_TOKENS + REPLY_PRIMING_TOKENS
    assert MESSAGE_OVERHEAD_TOKENS == 4


def test_estimate_messages_of_nothing_is_zero_and_none_content_is_empty() -> None:
    assert estimate_messages([]) == 0
    assert estimate_messages([{"role": "assistant", "content": None}]) == MESSAGE_OVERHEAD_TOKENS + REPLY_PRIMING_TOKENS


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ("hello", "messages"),
        ([{"role": "user", "content": "hi"}, "hi"], r"messages\[1\]"),
        ([{"role": "user", "content": ["part"]}], r"messages\[0\]\.content"),
    ],
)
def test_estimate_messages_rejects_malformed_messages(messages: object, field: str) -> None:
    with pytest.raises(InvalidInput, match=field):
        estimate_messages(messages)  # type: ignore[arg-type]


# --- the counter and its tokenizer hook --------------------------------------------------------


def words(text: str) -> int:
    """An exact tokenizer for the tests: one token per whitespace-separated word."""
    return len(text.split())


def test_counter_without_tokenizer_uses_the_estimate() -> None:
    counter = TokenCounter()
    assert not counter.exact
    assert counter.count(PYTHON_SNIPPET) == estimate(PYTHON_SNIPPET).tokens


def test_exact_tokenizer_replaces_the_estimate() -> None:
    counter = TokenCounter(tokenizer=words)
    assert counter.exact
    assert counter.count("one two three four five six seven eight") == 8
    assert estimate("one two three four five six seven eight").tokens == 10
    messages = [{"role": "user", "content": "a b c"}]
    assert counter.count_messages(messages) == 3 + MESSAGE_OVERHEAD_TOKENS + REPLY_PRIMING_TOKENS


def test_a_tokenizer_returning_tokens_is_counted_by_length() -> None:
    counter = TokenCounter(tokenizer=lambda text: text.split(","))
    assert counter.count("a,b,c") == 3
    assert TokenCounter(tokenizer=lambda text: tuple(text)).count("abcd") == 4


def test_a_tokenizer_that_is_not_callable_is_refused() -> None:
    with pytest.raises(InvalidInput, match="tokenizer"):
        TokenCounter(tokenizer=42)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, 2.5, "3", True, None])
def test_a_tokenizer_returning_a_bad_count_is_refused(bad: object) -> None:
    counter = TokenCounter(tokenizer=lambda text: bad)  # type: ignore[arg-type,return-value]
    with pytest.raises(InvalidInput, match="tokenizer"):
        counter.count("hello")


def test_fits_and_budget_validation() -> None:
    counter = TokenCounter(tokenizer=words)
    assert counter.fits("a b c", 3)
    assert not counter.fits("a b c d", 3)
    with pytest.raises(InvalidInput, match="budget"):
        counter.fits("a", -1)
    with pytest.raises(InvalidInput, match="budget"):
        counter.cut_to_budget("a", 1.5)  # type: ignore[arg-type]


def test_cut_to_budget_with_an_exact_tokenizer_keeps_the_longest_prefix() -> None:
    counter = TokenCounter(tokenizer=words)
    text = "alpha beta gamma delta epsilon"
    cut = counter.cut_to_budget(text, 3)
    assert cut == "alpha beta gamma "
    assert counter.count(cut) == 3
    assert counter.cut_to_budget(text, 10) == text
    assert counter.cut_to_budget(text, 0) == ""


def test_cut_to_budget_with_the_estimate() -> None:
    counter = TokenCounter()
    cut = counter.cut_to_budget(PROSE, 10)
    assert PROSE.startswith(cut)
    assert counter.count(cut) <= 10 < counter.count(PROSE[: len(cut) + 1])


@given(text=st.text(max_size=400), budget=st.integers(min_value=0, max_value=120))
def test_cut_to_budget_always_fits_and_is_a_prefix(text: str, budget: int) -> None:
    counter = TokenCounter()
    cut = counter.cut_to_budget(text, budget)
    assert text.startswith(cut)
    assert counter.count(cut) <= budget
    if counter.count(text) <= budget:
        assert cut == text


@given(text=st.text(alphabet="ab \n", max_size=300), budget=st.integers(min_value=0, max_value=40))
def test_cut_to_budget_with_a_monotone_tokenizer_is_the_longest_prefix(text: str, budget: int) -> None:
    counter = TokenCounter(tokenizer=words)
    cut = counter.cut_to_budget(text, budget)
    assert text.startswith(cut) and counter.count(cut) <= budget
    if cut != text:
        assert counter.count(text[: len(cut) + 1]) > budget


def test_the_type_of_a_text_is_remembered_only_for_texts_up_to_a_context_parts_size() -> None:
    part = "Known selectors on shop.example:\n- button Buy: #buy (worked 3 times)\n" * 3
    large = "def handler(event):\n    return event\n" * (tokens.REMEMBERED_DETECTION_CHARS // 30)
    assert len(large) > tokens.REMEMBERED_DETECTION_CHARS
    tokens._remembered_detection.cache_clear()
    assert estimate(part) == estimate(part) and estimate(large).content_type == "code"
    assert tokens._remembered_detection.cache_info().currsize == 1  # the part, not the large text
