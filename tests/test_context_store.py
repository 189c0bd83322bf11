"""The context store: user context over inferred context, sources, history, relevance, the extraction
cache and its TTL; on its own and persisted through a run's working memory.
"""

from __future__ import annotations

import pytest

import webmem
from webmem import InvalidInput
from webmem.working.context_store import EXTRACTION_TTL_SECONDS, ContextStore
from webmem.working.memory import AgentMemory

SHOP = "https://www.example-shop.com/"


class Clock:
    """A clock the test sets by hand."""

    def __init__(self, now: float = 5_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> ContextStore:
    return ContextStore(clock=clock)


def test_user_context_overrides_inferred_context(store: ContextStore) -> None:
    store.add_inferred_context("username", "guest", source="page header")
    store.add_inferred_context("login_required", True, source="detected login form")
    assert store.get("username") == "guest" and store.source_of("username") == "page header"
    store.set_user_context({"username": "user@example.com", "preferred_language": "English", "max_items": 100})
    assert store.get("username") == "user@example.com"
    assert store.source_of("username") == "user"
    store.add_inferred_context("username", "someone else", source="a later page")  # still overridden
    assert store.get("username") == "user@example.com"
    assert store.get_all() == {"username": "user@example.com", "login_required": True,
                               "preferred_language": "English", "max_items": 100}
    assert store.get("missing") is None and store.get("missing", "default") == "default"
    assert store.source_of("missing") is None


def test_set_user_context_replaces_the_previous_user_context(store: ContextStore) -> None:
    store.add_inferred_context("currency", "USD", source="price labels")
    store.set_user_context({"currency": "EUR", "max_items": 10})
    store.set_user_context({"max_items": 20})
    assert store.get_all() == {"currency": "USD", "max_items": 20}  # the inferred value shows again
    assert store.source_of("currency") == "price labels"


def test_inferred_context_keeps_its_source(store: ContextStore) -> None:
    store.add_inferred_context("pagination_type", "infinite_scroll", source="page analysis")
    store.add_inferred_context("pagination_type", "numbered", source="a pager at the bottom")
    assert store.get("pagination_type") == "numbered"
    assert store.source_of("pagination_type") == "a pager at the bottom"


def test_the_history_records_every_change_in_order(store: ContextStore, clock: Clock) -> None:
    store.set_user_context({"b": 1, "a": 2})
    clock.now += 10
    store.add_inferred_context("login_required", True, source="detected login form")
    clock.now += 5
    store.set_user_context({})
    assert store.history == [
        {"at": 5_000.0, "kind": "user", "keys": ["a", "b"]},
        {"at": 5_010.0, "kind": "inferred", "keys": ["login_required"], "source": "detected login form"},
        {"at": 5_015.0, "kind": "user", "keys": []},
    ]
    store.history.clear()  # a copy
    assert len(store.history) == 3


def test_relevant_context_is_what_shares_a_word_with_the_task(store: ContextStore) -> None:
    store.set_user_context({"username": "user@example.com", "preferred_language": "English", "max_items": 100})
    store.add_inferred_context("login_required", True, source="detected login form")
    store.add_inferred_context("pagination_type", "infinite_scroll", source="page analysis")
    store.add_inferred_context("product_grid", "3 columns", source="layout")
    relevant = store.get_relevant_context("login to the website and navigate to products")
    assert relevant == {"login_required": True}
    assert store.get_relevant_context("Scroll down the PAGINATION") == {"pagination_type": "infinite_scroll"}
    assert store.get_relevant_context("reply in english please") == {"preferred_language": "English"}
    assert store.get_relevant_context("show the product grid") == {"product_grid": "3 columns"}


def test_nothing_is_relevant_when_nothing_shares_a_meaningful_word(store: ContextStore) -> None:
    store.set_user_context({"theme": "the dark one", "shipping": "to my office in the city"})
    store.add_inferred_context("banner", "it is on the top of a page", source="layout")
    assert store.get_relevant_context("add the cheapest watch to the cart") == {}
    assert store.get_relevant_context("") == {}
    assert ContextStore().get_relevant_context("anything at all") == {}
    with pytest.raises(InvalidInput):
        store.get_relevant_context(None)  # type: ignore[arg-type]


def test_the_extraction_cache_expires_after_300_seconds_by_default(store: ContextStore, clock: Clock) -> None:
    assert EXTRACTION_TTL_SECONDS == 300
    store.cache_extraction("product_list", [{"name": "Watch", "price": 99}])
    clock.now += 300
    assert store.get_cached_extraction("product_list") == [{"name": "Watch", "price": 99}]
    assert store.extractions() == {"product_list": [{"name": "Watch", "price": 99}]}
    clock.now += 0.5
    assert store.get_cached_extraction("product_list") is None
    assert store.extractions() == {}
    assert store.get_cached_extraction("product_list", max_age_seconds=600) is not None
    assert store.extractions(max_age_seconds=600) != {}
    assert store.get_cached_extraction("never cached") is None


def test_a_shorter_max_age_and_a_fresh_write(store: ContextStore, clock: Clock) -> None:
    store.cache_extraction("prices", "old")
    clock.now += 60
    assert store.get_cached_extraction("prices", max_age_seconds=30) is None
    store.cache_extraction("prices", "new")  # written again: fresh
    assert store.get_cached_extraction("prices", max_age_seconds=30) == "new"


def test_registered_values_are_redacted() -> None:
    secrets = webmem.SecretRegistry({"password": "s3cret-value"})
    store = ContextStore(redact=secrets.redact)
    store.set_user_context({"login": "ann / s3cret-value", "nested": {"list": ["s3cret-value"]}})
    store.add_inferred_context("hint", "typed s3cret-value", source="the field showed s3cret-value")
    store.cache_extraction("page", {"text": "your password is s3cret-value"})
    assert "s3cret-value" not in repr(store.to_dict())
    assert store.get("nested") == {"list": ["{password}"]}
    assert store.source_of("hint") == "the field showed {password}"


def test_the_state_round_trips(store: ContextStore, clock: Clock) -> None:
    store.set_user_context({"currency": "EUR"})
    store.add_inferred_context("login_required", False, source="no login form")
    store.cache_extraction("prices", [1, 2, 3])
    again = ContextStore(clock=clock)
    again.load(store.to_dict())
    assert again.to_dict() == store.to_dict()
    assert again.get_all() == {"currency": "EUR", "login_required": False}
    assert again.get_cached_extraction("prices") == [1, 2, 3]


@pytest.mark.parametrize("key", ["", "   ", None, 3, "k" * 201])
def test_keys_must_be_short_names(store: ContextStore, key: object) -> None:
    with pytest.raises(InvalidInput):
        store.add_inferred_context(key, 1, source="s")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.set_user_context({key: 1})  # type: ignore[dict-item]
    with pytest.raises(InvalidInput):
        store.cache_extraction(key, 1)  # type: ignore[arg-type]


def test_other_bad_input_is_refused(store: ContextStore) -> None:
    with pytest.raises(InvalidInput):
        store.set_user_context(["not", "a", "mapping"])  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.set_user_context({"when": object()})
    with pytest.raises(InvalidInput):
        store.add_inferred_context("x", {1, 2}, source="s")
    for source in ("", "   ", None):
        with pytest.raises(InvalidInput):
            store.add_inferred_context("x", 1, source=source)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        store.add_inferred_context("x", "v" * 20_001, source="s")  # over the value limit
    with pytest.raises(InvalidInput):
        store.cache_extraction("x", object())
    assert store.get_all() == {} and store.history == [] and store.extractions() == {}
    store.cache_extraction("big", "v" * 100_000)  # extractions may be much larger than values
    assert len(store.get_cached_extraction("big")) == 100_000


# --- through a run's working memory ---------------------------------------------------------------


def test_the_context_store_is_persisted_with_the_run(mem: webmem.Memory) -> None:
    clock = Clock(1_000.0)
    run = mem.start_run(goal="log in and list the products", start_url=SHOP)
    working = AgentMemory.load(mem.scope, run.id, patterns=mem.patterns, clock=clock)
    working.start_task("log in and list the products", user_context={"username": "ann", "max_items": 40})
    clock.now += 1
    working.add_inferred_context("login_required", True, source="detected login form")
    working.add_inferred_context("username", "guest", source="header")
    working.add_extraction("product_list", ["Watch A", "Watch B"])

    later = Clock(1_002.0)
    loaded = AgentMemory.load(mem.scope, run.id, patterns=mem.patterns, clock=later)
    store = loaded.context_store
    assert store.to_dict() == working.context_store.to_dict()
    assert store.get("username") == "ann" and store.source_of("login_required") == "detected login form"
    assert [change["kind"] for change in store.history] == ["user", "inferred", "inferred"]
    assert store.get_relevant_context("login first") == {"login_required": True}
    assert store.get_cached_extraction("product_list") == ["Watch A", "Watch B"]
    later.now = 1_001.0 + 300.5
    assert store.get_cached_extraction("product_list") is None  # the TTL counts from when it was cached
    assert mem.get_run(run.id).working.context_store.get("max_items") == 40


def test_only_relevant_inferred_context_and_all_user_context_reach_the_prompt(mem: webmem.Memory) -> None:
    working = mem.start_run(goal="log in", start_url=SHOP).working
    working.start_task("login to the shop", user_context={"currency": "EUR"})
    working.add_inferred_context("login_required", True, source="detected login form")
    working.add_inferred_context("footer_links", 12, source="page analysis")
    working.add_inferred_context("theme", "the dark one", source="css")
    text = working.format_for_prompt()
    section = text.split("## CONTEXT\n")[1].split("\n\n")[0]
    assert section.splitlines() == [
        "- login_required: true (inferred from detected login form)",
        '- currency: "EUR" (given by the user)',
    ]
