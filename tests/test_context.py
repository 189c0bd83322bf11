"""The per-turn context: part order and headings, the token budget, truncation, dropping, the report."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import webmem
from webmem import ContextPack, ContextPart
from webmem.core.pack import MIN_TRUNCATED_TOKENS, SEPARATOR, TRUNCATION_MARKER
from webmem.core.tokens import estimate

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"
MARKER = "[... truncated to fit the context budget]"
PROPERTY = settings(derandomize=True, deadline=None, max_examples=300)


def tokens(text: str) -> int:
    """webmem's estimate for one section."""
    return estimate(text).tokens


def within(pack: ContextPack, budget: int) -> bool:
    """The pack's own count fits, and so does the plain four-characters-per-token reading of its text."""
    return pack.tokens <= budget and math.ceil(len(str(pack)) / 4) <= budget


def counted(pack: ContextPack) -> int:
    """The pack's tokens recomputed: its sections' counts plus one per separator."""
    kept = [report.tokens for report in pack.report if report.status in ("included", "truncated")]
    return sum(kept) + max(0, len(kept) - 1)


def part(name: str, priority: int, body: str, heading: str | None = None) -> ContextPart:
    return ContextPart(name, heading or name.upper(), priority, body)


def statuses(pack: ContextPack) -> dict[str, str]:
    return {report.name: report.status for report in pack.report}


def test_the_marker_is_the_documented_one() -> None:
    assert TRUNCATION_MARKER == MARKER
    assert MIN_TRUNCATED_TOKENS == 30


# --- pure assembly ----------------------------------------------------------------------------


def test_parts_render_highest_priority_first_each_under_its_heading() -> None:
    pack = ContextPack.assemble(
        [part("low", 25, "l"), part("high", 50, "h"), part("mid", 40, "m")], budget_tokens=1000
    )
    assert str(pack) == "## HIGH\nh\n\n## MID\nm\n\n## LOW\nl"
    assert [r.name for r in pack.report] == ["high", "mid", "low"]
    assert pack.included == ["high", "mid", "low"]
    assert pack.tokens == tokens("## HIGH\nh") + tokens("## MID\nm") + tokens("## LOW\nl") + 2


def test_a_part_that_does_not_fit_is_truncated_with_the_marker_when_30_tokens_remain() -> None:
    first = part("first", 50, "x" * 95)  # "## FIRST\n" + 95 = 104 characters
    body = "\n".join(f"line {i:03d} " + "y" * 20 for i in range(40))
    second = part("second", 40, body)
    # room for the second part: 4 * 57 - 104 - 2 = 122 characters (30 tokens)
    pack = ContextPack.assemble([first, second], budget_tokens=57)
    assert statuses(pack) == {"first": "included", "second": "truncated"}
    text = str(pack)
    assert text.startswith("## FIRST\n" + "x" * 95 + "\n\n## SECOND\nline 000")
    assert text.endswith("\n" + MARKER)
    assert within(pack, 57)
    report = pack.part("second")
    assert report.tokens == tokens(text.split(SEPARATOR, 1)[1])
    assert report.full_tokens == tokens(second.render()) > report.tokens


def test_a_part_is_dropped_when_less_than_30_tokens_of_room_remain() -> None:
    first = part("first", 50, "x" * 95)  # 104 characters
    body = "\n".join(f"line {i:03d} " + "y" * 20 for i in range(40))
    # budget 56: room 4 * 56 - 104 - 2 = 118 characters, 29 whole tokens: dropped, not cut
    pack = ContextPack.assemble([first, part("second", 40, body)], budget_tokens=56)
    assert statuses(pack) == {"first": "included", "second": "dropped"}
    assert str(pack) == "## FIRST\n" + "x" * 95
    assert MARKER not in str(pack)
    assert pack.part("second").tokens == 0
    assert pack.part("second").full_tokens > 0


def test_a_lone_part_is_truncated_at_exactly_30_tokens_and_dropped_at_29() -> None:
    body = "z" * 1000
    cut = ContextPack.assemble([part("only", 1, body)], budget_tokens=30)
    assert statuses(cut) == {"only": "truncated"}
    assert str(cut).startswith("## ONLY\nzzz") and str(cut).endswith("\n" + MARKER)
    assert len(str(cut)) <= 120
    dropped = ContextPack.assemble([part("only", 1, body)], budget_tokens=29)
    assert statuses(dropped) == {"only": "dropped"}
    assert str(dropped) == ""


def test_a_smaller_lower_priority_part_still_fits_after_a_bigger_one_is_dropped() -> None:
    parts = [
        part("first", 50, "a" * 300),   # 308 characters
        part("big", 40, "b" * 5000),    # dropped: only 92 characters of room
        part("small", 30, "c" * 20),    # 29 characters: fits
        part("tiny", 25, "d"),          # 7 characters: fits too
    ]
    pack = ContextPack.assemble(parts, budget_tokens=100)
    assert statuses(pack) == {"first": "included", "big": "dropped", "small": "included", "tiny": "included"}
    assert str(pack) == "## FIRST\n" + "a" * 300 + "\n\n## SMALL\n" + "c" * 20 + "\n\n## TINY\nd"
    assert pack.included == ["first", "small", "tiny"]
    assert within(pack, 100)


def test_the_report_lists_every_part_with_status_and_token_counts() -> None:
    parts = [
        part("whole", 50, "w" * 40),
        part("empty", 45, "   \n "),
        part("cut", 40, "\n".join("k" * 30 for _ in range(30))),
        part("gone", 30, "g" * 2000),
        part("last", 20, "fits"),
    ]
    pack = ContextPack.assemble(parts, budget_tokens=61)  # the cut leaves exactly room for 'last'
    report = {r.name: r for r in pack.report}
    assert [r.name for r in pack.report] == ["whole", "empty", "cut", "gone", "last"]
    assert {n: r.status for n, r in report.items()} == {
        "whole": "included", "empty": "empty", "cut": "truncated", "gone": "dropped", "last": "included",
    }
    assert report["whole"].tokens == report["whole"].full_tokens == tokens("## WHOLE\n" + "w" * 40)
    assert report["empty"].tokens == report["empty"].full_tokens == 0
    assert 0 < report["cut"].tokens < report["cut"].full_tokens
    assert report["gone"].tokens == 0 and report["gone"].full_tokens == tokens(parts[3].render())
    assert report["last"].tokens == tokens("## LAST\nfits")
    assert [r.priority for r in pack.report] == [50, 45, 40, 30, 20]
    as_dict = pack.to_dict()
    assert [p["status"] for p in as_dict["parts"]] == ["included", "empty", "truncated", "dropped", "included"]
    assert as_dict["budget_tokens"] == 61 and as_dict["text"] == str(pack)
    assert within(pack, 61)


@pytest.mark.parametrize("budget", [0, -1, "100", True, False, 2.5, None])
def test_budget_must_be_a_positive_integer(budget: object) -> None:
    with pytest.raises(webmem.InvalidInput):
        ContextPack.assemble([part("a", 1, "x")], budget_tokens=budget)  # type: ignore[arg-type]


@pytest.mark.parametrize("budget", [0, -1, "100", True])
def test_run_context_rejects_a_bad_budget(mem: webmem.Memory, budget: object) -> None:
    run = mem.start_run(goal="search smart watch", start_url=SHOP)
    with pytest.raises(webmem.InvalidInput):
        run.context(budget_tokens=budget)  # type: ignore[arg-type]


BODY = st.text(alphabet="abc xyz\n.,-()\"'é", max_size=600)
PARTS = st.lists(
    st.tuples(st.integers(min_value=-5, max_value=100), BODY, st.text(alphabet="ABCDEF _", min_size=1, max_size=30)),
    max_size=6,
)


@PROPERTY
@given(PARTS, st.integers(min_value=1, max_value=400))
def test_assembly_never_exceeds_the_budget_and_keeps_priority_order(
    specs: list[tuple[int, str, str]], budget: int
) -> None:
    parts = [ContextPart(f"p{i}", heading, priority, body) for i, (priority, body, heading) in enumerate(specs)]
    pack = ContextPack.assemble(parts, budget_tokens=budget)
    text = str(pack)
    assert within(pack, budget)
    assert pack.tokens == counted(pack)
    # every part is reported once, in priority order (ties keep their given order)
    assert [r.name for r in pack.report] == [p.name for p in sorted(parts, key=lambda p: -p.priority)]
    by_name = {p.name: p for p in parts}
    # the text is exactly the kept sections, in report order, joined by blank lines
    position = 0
    for index, name in enumerate(pack.included):
        report = pack.part(name)
        source = by_name[name]
        if index:
            assert text.startswith(SEPARATOR, position)
            position += len(SEPARATOR)
        assert text.startswith(f"## {source.heading}\n", position)
        if report.status == "included":
            section = source.render()
        else:
            end = text.index("\n" + MARKER, position) + len("\n" + MARKER)
            section = text[position:end]
            assert report.full_tokens > report.tokens
        assert text.startswith(section, position)
        assert report.tokens == tokens(section)
        position += len(section)
    assert position == len(text)
    for report in pack.report:
        source = by_name[report.name]
        assert (report.status == "empty") == (not source.body.strip())
        if report.status in ("dropped", "empty"):
            assert report.tokens == 0
        if report.status == "included":
            assert report.full_tokens == report.tokens
    if not any(p.body.strip() for p in parts):
        assert text == ""


@PROPERTY
@given(PARTS)
def test_with_room_for_everything_every_part_is_included_whole(specs: list[tuple[int, str, str]]) -> None:
    parts = [ContextPart(f"p{i}", heading, priority, body) for i, (priority, body, heading) in enumerate(specs)]
    pack = ContextPack.assemble(parts, budget_tokens=100_000)
    kept = [p for p in sorted(parts, key=lambda p: -p.priority) if p.body.strip()]
    assert str(pack) == SEPARATOR.join(p.render() for p in kept)
    assert all(r.status in ("included", "empty") for r in pack.report)


# --- run.context() on a real memory -----------------------------------------------------------


def fill_memory(mem: webmem.Memory, *, steps: int = 3) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    for i in range(steps):
        run.record_step(action="click", target=f'button "Step {i:02d}"', selector=f"#step-{i:02d}", url=SHOP,
                        verified=True)
    run.finish(success=True, outcome="Found 12 reviews", facts=[{"type": "quirk", "key": "modal", "value": "shadow DOM"}])


def test_run_context_has_the_four_parts_in_order_with_their_priorities(mem: webmem.Memory) -> None:
    fill_memory(mem)
    pack = mem.start_run(goal="search smart watch reviews please", start_url=SHOP).context()
    text = str(pack)
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## SESSION HISTORY"
    assert headings[1].startswith("## REFERENCE TRAJECTORY")
    assert "follow" in headings[1] and "adapt" in headings[1]
    assert headings[2:] == ["## APP KNOWLEDGE", "## KNOWN SELECTORS"]
    assert text.startswith("## SESSION HISTORY\n")
    assert [(r.name, r.priority, r.status) for r in pack.report] == [
        ("last_error", 60, "empty"),
        ("replay_handover", 58, "empty"),
        ("session_history", 50, "included"),
        ("site_tips", 45, "empty"),
        ("episode_advice", 42, "empty"),
        ("reference_trajectory", 40, "included"),
        ("app_knowledge", 30, "included"),
        ("known_selectors", 25, "included"),
    ]
    assert "Goal: search smart watch reviews\nSteps (3 that worked):\n" in text
    assert '  1. click button "Step 00" (on https://www.example-shop.com/) [verified]' in text
    assert "Final URL: https://www.example-shop.com/" in text
    assert "shadow DOM" in text
    assert '- button "Step 02" -> selector #step-02 (1 success)' in text


def test_run_context_never_exceeds_the_budget(mem: webmem.Memory) -> None:
    fill_memory(mem, steps=40)
    run = mem.start_run(goal="search smart watch reviews please", start_url=SHOP)
    seen: set[str] = set()
    for budget in (1, 10, 29, 30, 50, 80, 120, 200, 300, 500, 5000):
        pack = run.context(budget_tokens=budget)
        assert within(pack, budget)
        assert pack.budget_tokens == budget
        seen.update(r.status for r in pack.report)
        if MARKER in str(pack):
            assert "truncated" in [r.status for r in pack.report]
    assert {"included", "truncated", "dropped"} <= seen


def test_a_long_reference_is_truncated_and_lower_parts_that_fit_are_kept(mem: webmem.Memory) -> None:
    fill_memory(mem, steps=60)
    run = mem.start_run(goal="search smart watch reviews please", start_url=SHOP)
    full = run.context(budget_tokens=100_000)
    sizes = {r.name: r.tokens for r in full.report}
    # enough for the session history and about half of the reference trajectory
    budget = sizes["session_history"] + sizes["reference_trajectory"] // 2
    pack = run.context(budget_tokens=budget)
    assert statuses(pack)["session_history"] == "included"
    assert statuses(pack)["reference_trajectory"] == "truncated"
    assert re.search(r"\n  … \d+ more steps not shown(\n|$)", str(pack))
    assert within(pack, budget)
    assert '  1. click button "Step 00"' in str(pack)
    assert 'button "Step 59" (on' not in str(pack)


def test_run_context_uses_the_domain_of_the_url_given(mem: webmem.Memory) -> None:
    mem.knowledge.record_fact("pay.example.net", "quirk", "3ds", "asks for a code by SMS")
    mem.knowledge.record_fact(DOMAIN, "quirk", "modal", "shadow DOM")
    mem.selectors.record("pay.example.net", 'button "Pay"', "#pay")
    mem.knowledge.record_session("pay.example.net", goal="pay an order", outcome="paid", success=True)
    run = mem.start_run(goal="buy a smart watch", start_url=SHOP)

    at_start = str(run.context())
    assert "shadow DOM" in at_start and "asks for a code" not in at_start and "#pay" not in at_start

    moved = run.context(url="https://pay.example.net/checkout")
    text = str(moved)
    assert "asks for a code by SMS" in text
    assert '- button "Pay" -> selector #pay' in text
    assert "pay an order" in text
    assert "shadow DOM" not in text


def test_run_context_reference_follows_the_origin_of_the_url(mem: webmem.Memory) -> None:
    mem.trajectories.save(
        goal="buy a smart watch", start_url="https://pay.example.net/",
        steps=[webmem.Step(action="click", target='button "Pay"', url="https://pay.example.net/")],
        created_at=datetime.now(UTC) - timedelta(hours=1),
    )
    run = mem.start_run(goal="buy a smart watch", start_url=SHOP)
    assert run.context().part("reference_trajectory").status == "empty"
    assert run.context(url="https://pay.example.net/checkout").part("reference_trajectory").status == "included"


def test_run_context_rejects_a_bad_url(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch", start_url=SHOP)
    for bad in ("not a url", "ftp://x.example/", ""):
        with pytest.raises(webmem.InvalidInput):
            run.context(url=bad)


def test_an_empty_memory_gives_an_empty_context_with_every_part_reported_empty(mem: webmem.Memory) -> None:
    pack = mem.start_run(goal="search smart watch", start_url=SHOP).context()
    assert str(pack) == ""
    assert not pack
    assert pack.tokens == 0
    assert [(r.name, r.status, r.tokens) for r in pack.report] == [
        ("last_error", "empty", 0),
        ("replay_handover", "empty", 0),
        ("session_history", "empty", 0),
        ("site_tips", "empty", 0),
        ("episode_advice", "empty", 0),
        ("reference_trajectory", "empty", 0),
        ("app_knowledge", "empty", 0),
        ("known_selectors", "empty", 0),
    ]
    assert pack.included == []


def test_the_context_report_goes_to_the_event_log(mem: webmem.Memory, events: list[dict]) -> None:
    fill_memory(mem)
    run = mem.start_run(goal="search smart watch reviews please", start_url=SHOP)
    pack = run.context(budget_tokens=1500)
    (built,) = [e for e in events if e["event"] == "context_built"]
    assert built["run_id"] == run.id
    assert built["budget_tokens"] == 1500 and built["tokens"] == pack.tokens
    assert [p["status"] for p in built["parts"]] == [r.status for r in pack.report]
