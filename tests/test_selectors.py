"""The selector cache: success counts, refs kept apart from stable selectors, the top entries."""

from __future__ import annotations

import pytest

import webmem

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"


def test_record_counts_successes(mem: webmem.Memory) -> None:
    first = mem.selectors.record(DOMAIN, 'button "Search"', "#search-btn")
    assert (first.success_count, first.stable_selector, first.last_ref) == (1, "#search-btn", None)
    for expected in (2, 3):
        entry = mem.selectors.record(DOMAIN, 'button "Search"', "#search-btn")
        assert entry.success_count == expected
    (stored,) = mem.selectors.list(DOMAIN)
    assert (stored.domain, stored.element, stored.success_count) == (DOMAIN, 'button "Search"', 3)


def test_a_ref_is_stored_as_last_ref_and_a_stable_selector_is_kept_beside_it(mem: webmem.Memory) -> None:
    ref_only = mem.selectors.record(DOMAIN, 'link "Cart"', "@e12")
    assert (ref_only.last_ref, ref_only.stable_selector) == ("@e12", None)

    mem.selectors.record(DOMAIN, 'button "Search"', "#search-btn")
    both = mem.selectors.record(DOMAIN, 'button "Search"', "@e3")
    assert (both.stable_selector, both.last_ref, both.success_count) == ("#search-btn", "@e3", 2)
    # a newer ref replaces the old ref, not the stable selector; a newer stable selector replaces the old one
    newer_ref = mem.selectors.record(DOMAIN, 'button "Search"', "@e9")
    assert (newer_ref.stable_selector, newer_ref.last_ref) == ("#search-btn", "@e9")
    newer_stable = mem.selectors.record(DOMAIN, 'button "Search"', "[data-testid='search']")
    assert (newer_stable.stable_selector, newer_stable.last_ref) == ("[data-testid='search']", "@e9")
    assert newer_stable.success_count == 4

    text = mem.selectors.format_for_prompt(DOMAIN)
    assert "- button \"Search\" -> selector [data-testid='search'], ref @e9 (4 successes)" in text
    assert '- link "Cart" -> ref @e12 (1 success)' in text


def test_entries_are_per_domain(mem: webmem.Memory) -> None:
    mem.selectors.record(DOMAIN, 'button "Search"', "#a")
    mem.selectors.record("localhost:5173", 'button "Search"', "#b")
    (here,) = mem.selectors.list(DOMAIN)
    (there,) = mem.selectors.list("localhost:5173")
    assert (here.stable_selector, there.stable_selector) == ("#a", "#b")
    assert here.success_count == there.success_count == 1
    assert mem.selectors.list(SHOP) == [here]  # a URL is accepted for its domain


def test_top_is_ordered_by_count_and_limited(mem: webmem.Memory) -> None:
    counts = {"alpha": 2, "bravo": 5, "charlie": 1, "delta": 4, "echo": 3}
    for element, count in counts.items():
        for _ in range(count):
            mem.selectors.record(DOMAIN, element, f"#{element}")
    assert [e.element for e in mem.selectors.list(DOMAIN)] == ["bravo", "delta", "echo", "alpha", "charlie"]
    assert [e.success_count for e in mem.selectors.list(DOMAIN, limit=3)] == [5, 4, 3]
    assert [e.element for e in mem.selectors.list(DOMAIN, limit=1)] == ["bravo"]


def test_top_defaults_to_twenty(mem: webmem.Memory) -> None:
    for i in range(23):
        mem.selectors.record(DOMAIN, f"element {i:02d}", f"#e{i}")
    assert len(mem.selectors.list(DOMAIN)) == 20


@pytest.mark.parametrize("limit", [0, -1, "5", True, 2.5])
def test_top_rejects_a_bad_limit(mem: webmem.Memory, limit: object) -> None:
    with pytest.raises(webmem.InvalidInput):
        mem.selectors.list(DOMAIN, limit=limit)  # type: ignore[arg-type]


@pytest.mark.parametrize(("element", "selector"), [("", "#a"), ("   ", "#a"), ('button "x"', ""), ('button "x"', None)])
def test_record_rejects_empty_element_or_selector(mem: webmem.Memory, element: str, selector: object) -> None:
    with pytest.raises(webmem.InvalidInput):
        mem.selectors.record(DOMAIN, element, selector)  # type: ignore[arg-type]
    assert mem.selectors.list(DOMAIN) == []


def test_known_selectors_in_the_context_are_the_top_twenty_by_count(mem: webmem.Memory) -> None:
    # element NN gets NN + 1 successes; the five least used must be left out
    for i in range(25):
        for _ in range(i + 1):
            mem.selectors.record(DOMAIN, f'button "Item {i:02d}"', f"#item-{i:02d}")
    run = mem.start_run(goal="buy things", start_url=SHOP)
    pack = run.context(budget_tokens=100_000)
    assert pack.part("known_selectors").status == "included"
    section = str(pack).split("## KNOWN SELECTORS\n", 1)[1]
    entries = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(entries) == 20
    assert entries[0] == '- button "Item 24" -> selector #item-24 (25 successes)'
    assert entries[-1] == '- button "Item 05" -> selector #item-05 (6 successes)'
    shown = [int(line.rsplit("(", 1)[1].split()[0]) for line in entries]
    assert shown == sorted(shown, reverse=True) == list(range(25, 5, -1))
    for left_out in range(5):
        assert f"Item {left_out:02d}" not in str(pack)


def test_record_step_records_the_selector_of_a_successful_step(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch", start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search-btn", url=SHOP, ok=True)
    run.record_step(action="click", target='button "Search"', selector="@e4", url=SHOP)
    run.record_step(action="click", target='link "Broken"', selector="#broken", url=SHOP, ok=False, error="timeout")
    run.record_step(action="click", target='link "No selector"', url=SHOP)
    run.record_step(action="click", selector="#no-target", url=SHOP)
    entries = {e.element: e for e in mem.selectors.list(DOMAIN)}
    assert set(entries) == {'button "Search"'}
    assert (entries['button "Search"'].stable_selector, entries['button "Search"'].last_ref) == ("#search-btn", "@e4")
    assert entries['button "Search"'].success_count == 2


def test_selectors_of_steps_are_kept_when_the_run_fails(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch", start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search-btn", url=SHOP)
    run.finish(success=False, outcome="gave up later")
    (entry,) = mem.selectors.list(DOMAIN)
    assert (entry.element, entry.stable_selector, entry.success_count) == ('button "Search"', "#search-btn", 1)


def test_a_step_on_another_domain_files_its_selector_there(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="pay for the order", start_url=SHOP)
    run.record_step(action="click", target='button "Pay"', selector="#pay", url="https://pay.example.net/checkout")
    run.record_step(action="click", target='button "Back"', selector="#back")  # no URL: the run's domain
    assert [e.element for e in mem.selectors.list("pay.example.net")] == ['button "Pay"']
    assert [e.element for e in mem.selectors.list(DOMAIN)] == ['button "Back"']


def test_selector_recorded_events(mem: webmem.Memory, events: list[dict]) -> None:
    mem.selectors.record(DOMAIN, 'button "Search"', "#search-btn")
    mem.selectors.record(DOMAIN, 'button "Search"', "#search-btn")
    recorded = [e for e in events if e["event"] == "selector_recorded"]
    assert [e["success_count"] for e in recorded] == [1, 2]
    assert recorded[0]["domain"] == DOMAIN


def test_a_long_target_is_recorded_but_not_cached(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="Read the article", start_url="https://news.example/")
    long_target = 'link "' + "A very long headline " * 15 + '"'
    step = run.record_step(action="click", target=long_target, selector="#a1", url="https://news.example/")
    assert step.target == long_target
    assert mem.runs.steps(run.id)[0].target == long_target
    assert mem.selectors.list("news.example") == []


def test_a_step_whose_element_or_ref_cannot_be_a_key_is_recorded_but_not_cached(mem: webmem.Memory,
                                                                                   events: list[dict]) -> None:
    run = mem.start_run(goal="Buy a kettle", start_url=SHOP)
    run.record_step(action="click", target="   ", selector="#go", url=SHOP)  # no element to file it under
    run.record_step(action="click", target='button "Go"', selector="@" + "e1" * 150, url=SHOP)  # a ref too long
    run.record_step(action="click", target=' button "Buy" ', selector=" #buy ", url=SHOP)
    assert len(mem.runs.steps(run.id)) == 3
    (cached,) = mem.selectors.list(DOMAIN)
    assert (cached.element, cached.stable_selector, cached.success_count) == ('button "Buy"', "#buy", 1)
    recorded = [e for e in events if e["event"] == "selector_recorded"]
    assert [(e["element"], e["selector"], e["success_count"], e["run_id"]) for e in recorded] == [
        ('button "Buy"', "#buy", 1, run.id)]
