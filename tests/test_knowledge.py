"""App knowledge: fact confidence (new, boosted, contradicted, pruned), the prompt text, and sessions."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import rows

import webmem

SHOP = "https://www.example-shop.com/"
DOMAIN = "www.example-shop.com"
T0 = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def all_facts(mem: webmem.Memory, domain: str = DOMAIN, **kwargs: object) -> dict[str, webmem.Fact]:
    return {f.value: f for f in mem.knowledge.facts(domain, min_confidence=0.0, **kwargs)}


# --- fact confidence ------------------------------------------------------------------------


def test_a_new_fact_starts_at_0_6_with_one_source(mem: webmem.Memory) -> None:
    fact = mem.knowledge.record_fact(DOMAIN, "timing", "search-results", "appear after ~2s")
    assert (fact.confidence, fact.sources) == (0.6, 1)
    assert (fact.domain, fact.type, fact.key, fact.value) == (DOMAIN, "timing", "search-results", "appear after ~2s")
    assert fact.last_seen.tzinfo is not None
    (stored,) = mem.knowledge.facts(DOMAIN)
    assert stored == fact


def test_confirming_a_fact_closes_a_fifth_of_the_gap_to_one(mem: webmem.Memory) -> None:
    expected = [0.6]
    for _ in range(3):
        expected.append(min(1.0, expected[-1] + 0.2 * (1 - expected[-1])))
    assert expected[1:] == pytest.approx([0.68, 0.744, 0.7952], abs=1e-12)
    for boosts in range(4):
        fact = mem.knowledge.record_fact(DOMAIN, "quirk", "shadow-dom", "modals use shadow DOM")
        assert fact.confidence == pytest.approx(expected[boosts], abs=1e-12)
        assert fact.sources == boosts + 1
    (stored,) = mem.knowledge.facts(DOMAIN)
    assert stored.confidence == pytest.approx(0.7952, abs=1e-12)
    assert stored.sources == 4


def test_confidence_never_exceeds_one(mem: webmem.Memory) -> None:
    for _ in range(200):
        fact = mem.knowledge.record_fact(DOMAIN, "quirk", "shadow-dom", "yes")
    assert 0.99 < fact.confidence <= 1.0
    assert fact.sources == 200


def test_a_contradiction_halves_every_conflicting_value_and_the_new_one_enters_at_0_6(mem: webmem.Memory) -> None:
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "2s")
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "2s")  # 0.68
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "3s")  # 2s -> 0.34, 3s 0.6
    facts = all_facts(mem)
    assert facts["2s"].confidence == pytest.approx(0.34, abs=1e-12)
    assert facts["3s"].confidence == pytest.approx(0.6, abs=1e-12)

    other_key = mem.knowledge.record_fact(DOMAIN, "timing", "search", "1s")
    other_type = mem.knowledge.record_fact(DOMAIN, "pattern", "page-load", "lazy")

    new = mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "5s")
    assert (new.confidence, new.sources) == (0.6, 1)
    facts = all_facts(mem)
    assert facts["2s"].confidence == pytest.approx(0.17, abs=1e-12)
    assert facts["3s"].confidence == pytest.approx(0.3, abs=1e-12)
    assert facts["5s"].confidence == pytest.approx(0.6, abs=1e-12)
    # other keys and other types of the same key are not contradicted
    assert facts["1s"].confidence == other_key.confidence == 0.6
    assert facts["lazy"].confidence == other_type.confidence == 0.6
    # the sources of the contradicted facts stay as they were
    assert facts["2s"].sources == 2 and facts["3s"].sources == 1


def test_confirming_one_value_does_not_decay_the_others(mem: webmem.Memory) -> None:
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "2s")
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "3s")  # 2s -> 0.3
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "3s")  # boost only
    facts = all_facts(mem)
    assert facts["2s"].confidence == pytest.approx(0.3, abs=1e-12)
    assert facts["3s"].confidence == pytest.approx(0.68, abs=1e-12)


def test_facts_recorded_together_end_as_if_recorded_one_by_one(mem: webmem.Memory, events: list[dict]) -> None:
    """Several facts of a finish are confirmed in one statement on PostgreSQL: the confidences, sources and events
    are those of recording them one after the other."""
    given = [("timing", "page-load", "3s"), ("quirk", "modal", "cookie banner"), ("timing", "search", "1s"),
             ("pattern", "menu", "hover")]
    for domain in ("together.example", "one-by-one.example"):
        for fact_type, key, value in [("timing", "page-load", "2s"), ("timing", "page-load", "3s"),
                                      ("quirk", "modal", "cookie banner"), ("timing", "search", "2s")]:
            mem.knowledge.record_fact(domain, fact_type, key, value)
    events.clear()
    together = mem.knowledge.record_facts("together.example", [
        {"type": fact_type, "key": key, "value": value} for fact_type, key, value in given])
    seen_together = [(event["event"], event["key"], event.get("value")) for event in events]
    events.clear()
    one_by_one = [mem.knowledge.record_fact("one-by-one.example", *fact) for fact in given]
    assert seen_together == [(event["event"], event["key"], event.get("value")) for event in events]
    assert [("fact_boosted", "page-load", "3s"), ("fact_boosted", "modal", "cookie banner"),
            ("fact_recorded", "search", "1s"), ("fact_recorded", "menu", "hover")] == \
        [kind for kind in seen_together if kind[0] != "fact_decayed"]

    def stored(domain: str) -> list[tuple[str, str, str, float, int]]:
        return sorted((fact.type, fact.key, fact.value, round(fact.confidence, 12), fact.sources)
                      for fact in mem.knowledge.facts(domain, min_confidence=0))

    assert [(f.type, f.key, f.value, f.confidence, f.sources) for f in together] == \
        [(f.type, f.key, f.value, f.confidence, f.sources) for f in one_by_one]
    assert stored("together.example") == stored("one-by-one.example")
    assert ("timing", "page-load", "2s", 0.3, 1) in stored("together.example")  # confirming 3s left 2s as it was


def test_facts_below_0_1_are_pruned(mem: webmem.Memory, events: list[dict]) -> None:
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "1s")  # 0.6
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "2s")  # 1s 0.3
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "3s")  # 1s 0.15
    assert "1s" in all_facts(mem)
    mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "4s")  # 1s 0.075: pruned
    facts = all_facts(mem)
    assert "1s" not in facts
    assert set(facts) == {"2s", "3s", "4s"}
    assert rows.count(mem, "facts", "value = :value", value="1s") == 0
    assert any(e["event"] == "facts_pruned" for e in events)
    # a pruned fact seen again starts over as new
    again = mem.knowledge.record_fact(DOMAIN, "timing", "page-load", "1s")
    assert (again.confidence, again.sources) == (0.6, 1)


def test_facts_are_ordered_filtered_by_type_and_min_confidence(mem: webmem.Memory) -> None:
    mem.knowledge.record_fact(DOMAIN, "timing", "load", "2s")
    mem.knowledge.record_fact(DOMAIN, "timing", "load", "3s")  # 2s 0.3, 3s 0.6
    mem.knowledge.record_fact(DOMAIN, "timing", "load", "4s")  # 2s 0.15, 3s 0.3, 4s 0.6
    for _ in range(2):
        mem.knowledge.record_fact(DOMAIN, "quirk", "modal", "shadow DOM")  # 0.6, 0.68
    mem.knowledge.record_fact(DOMAIN, "pattern", "login", "needed for cart")  # 0.6
    mem.knowledge.record_fact("elsewhere.example", "quirk", "other", "not this domain")

    default = mem.knowledge.facts(DOMAIN)
    # min_confidence 0.3 by default and inclusive: the 0.15 fact is left out, the 0.3 one is in
    assert [f.value for f in default][0] == "shadow DOM"
    assert {f.value for f in default} == {"shadow DOM", "4s", "needed for cart", "3s"}
    assert [f.confidence for f in default] == sorted((f.confidence for f in default), reverse=True)
    assert default[-1].value == "3s" and default[-1].confidence == 0.3

    timing = mem.knowledge.facts(DOMAIN, type="timing", min_confidence=0.0)
    assert [f.value for f in timing] == ["4s", "3s", "2s"]
    assert [f.value for f in mem.knowledge.facts(DOMAIN, min_confidence=0.65)] == ["shadow DOM"]
    assert mem.knowledge.facts(DOMAIN, type="selector") == []
    assert [f.value for f in mem.knowledge.facts(SHOP, type="pattern")] == ["needed for cart"]


def test_format_for_prompt_shows_confident_facts_grouped_by_type(mem: webmem.Memory) -> None:
    assert mem.knowledge.format_for_prompt(DOMAIN) == ""
    mem.knowledge.record_fact(DOMAIN, "timing", "load", "2s")
    mem.knowledge.record_fact(DOMAIN, "timing", "load", "3s")  # 2s 0.3 (hidden), 3s 0.6
    mem.knowledge.record_fact(DOMAIN, "timing", "search", "1s")
    mem.knowledge.record_fact(DOMAIN, "timing", "search", "1s")  # 0.68
    mem.knowledge.record_fact(DOMAIN, "pattern", "login", "needed for cart")
    mem.knowledge.record_fact(DOMAIN, "quirk", "modal", "shadow DOM")
    mem.knowledge.record_fact(DOMAIN, "selector", "search box", "[data-testid='search']")

    text = mem.knowledge.format_for_prompt(DOMAIN)
    assert "2s" not in text
    lines = text.splitlines()
    headings = [line for line in lines if not line.startswith(" ")]
    assert sorted(headings) == ["Pattern:", "Quirk:", "Selector:", "Timing:"]

    def block(heading: str) -> list[str]:
        start = lines.index(heading) + 1
        end = next((i for i in range(start, len(lines)) if not lines[i].startswith(" ")), len(lines))
        return lines[start:end]

    assert block("Timing:") == ["  - search: 1s (confidence 0.68)", "  - load: 3s (confidence 0.60)"]
    assert block("Pattern:") == ["  - login: needed for cart (confidence 0.60)"]
    assert block("Quirk:") == ["  - modal: shadow DOM (confidence 0.60)"]
    assert block("Selector:") == ["  - search box: [data-testid='search'] (confidence 0.60)"]


@pytest.mark.parametrize(
    ("fact_type", "key", "value"),
    [
        ("bogus", "load", "2s"),
        ("", "load", "2s"),
        (None, "load", "2s"),
        ("timing", "", "2s"),
        ("timing", "   ", "2s"),
        ("timing", "load", ""),
        ("timing", "load", "x" * 100_000),
        ("timing", "k" * 1000, "2s"),
        ("timing", 5, "2s"),
        ("timing", "load", 2),
    ],
)
def test_invalid_facts_raise_invalid_input_and_store_nothing(
    mem: webmem.Memory, fact_type: object, key: object, value: object
) -> None:
    with pytest.raises(webmem.InvalidInput):
        mem.knowledge.record_fact(DOMAIN, fact_type, key, value)  # type: ignore[arg-type]
    assert rows.count(mem, "facts") == 0


def test_invalid_domain_and_min_confidence(mem: webmem.Memory) -> None:
    with pytest.raises(webmem.InvalidInput):
        mem.knowledge.record_fact("", "timing", "load", "2s")
    with pytest.raises(webmem.InvalidInput):
        mem.knowledge.record_fact("not a domain/x", "timing", "load", "2s")
    with pytest.raises(webmem.InvalidInput):
        mem.knowledge.facts(DOMAIN, type="bogus")
    with pytest.raises(webmem.InvalidInput):
        mem.knowledge.facts(DOMAIN, min_confidence="0.5")  # type: ignore[arg-type]


# --- sessions ---------------------------------------------------------------------------------


def record_sessions(mem: webmem.Memory, count: int, *, outcome: str = "done") -> list[webmem.Session]:
    return [
        mem.knowledge.record_session(
            DOMAIN, goal=f"goal number {i}", outcome=f"{outcome} {i}", success=i % 2 == 0,
            final_url=f"https://www.example-shop.com/page/{i}", turns_used=i, duration_ms=1000 * i,
            session_id=f"s{i}", timestamp=T0 + timedelta(minutes=i),
        )
        for i in range(count)
    ]


def test_only_the_newest_five_sessions_per_domain_are_kept(mem: webmem.Memory) -> None:
    mem.knowledge.record_session("other.example", goal="elsewhere", outcome="ok", success=True, session_id="x1")
    record_sessions(mem, 7)
    kept = mem.knowledge.sessions(DOMAIN)
    assert [s.id for s in kept] == ["s6", "s5", "s4", "s3", "s2"]
    assert rows.count(mem, "sessions", "domain = :domain", domain=DOMAIN) == 5
    # another domain's history is untouched
    assert [s.id for s in mem.knowledge.sessions("other.example")] == ["x1"]


def test_the_newest_five_are_chosen_by_time_not_by_insertion_order(mem: webmem.Memory) -> None:
    order = [3, 0, 6, 1, 5, 2, 4]
    for i in order:
        mem.knowledge.record_session(DOMAIN, goal=f"goal {i}", outcome="ok", success=True,
                                     session_id=f"s{i}", timestamp=T0 + timedelta(minutes=i))
    assert [s.id for s in mem.knowledge.sessions(DOMAIN)] == ["s6", "s5", "s4", "s3", "s2"]
    assert rows.count(mem, "sessions", "domain = :domain", domain=DOMAIN) == 5


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_session_waits_for_another_writer_of_the_domain_on_postgres(mem: webmem.Memory) -> None:
    """Writers of one domain's sessions take turns (each keeps the newest five of what it sees): the session's
    insert waits while another transaction holds the domain's lock."""
    from sqlalchemy import text

    holder = mem.store.engine.connect()
    holder.execute(text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"webmem.sessions.default.{DOMAIN}"})
    done = threading.Event()
    worker = threading.Thread(target=lambda: (mem.knowledge.record_session(
        DOMAIN, goal="waits", outcome="ok", success=True, session_id="waiting"), done.set()))
    worker.start()
    try:
        assert not done.wait(0.5)  # held back by the lock
        assert [s.id for s in mem.knowledge.sessions(DOMAIN)] == []
    finally:
        holder.rollback()
        holder.close()
    worker.join(10)
    assert done.is_set() and [s.id for s in mem.knowledge.sessions(DOMAIN)] == ["waiting"]


def test_session_fields_round_trip(mem: webmem.Memory) -> None:
    recorded = mem.knowledge.record_session(
        SHOP, goal="Search for smart watch reviews", outcome="Found 12 reviews", success=True,
        final_url="https://www.example-shop.com/results?q=watch", turns_used=7, duration_ms=8123,
        session_id="proj_123", run_id="run_1_abc", timestamp=T0,
    )
    (stored,) = mem.knowledge.sessions(DOMAIN)
    assert stored == recorded
    assert (stored.id, stored.domain, stored.goal, stored.outcome, stored.success) == (
        "proj_123", DOMAIN, "Search for smart watch reviews", "Found 12 reviews", True)
    assert (stored.final_url, stored.turns_used, stored.duration_ms, stored.timestamp) == (
        "https://www.example-shop.com/results?q=watch", 7, 8123, T0)


def test_a_session_id_is_generated_when_none_is_given(mem: webmem.Memory) -> None:
    session = mem.knowledge.record_session(DOMAIN, goal="g", outcome="o", success=True)
    assert re.fullmatch(r"session_\d{13}_[0-9a-z]+", session.id)
    other = mem.knowledge.record_session(DOMAIN, goal="g", outcome="o", success=True)
    assert other.id != session.id


def test_sessions_render_two_in_full_and_older_ones_on_one_line(mem: webmem.Memory) -> None:
    long_outcome = "a" * 80 + "MARKER" + "b" * 40
    for i in range(5):
        mem.knowledge.record_session(
            DOMAIN, goal=f"goal number {i}", outcome=long_outcome if i < 3 else f"outcome {i}", success=i != 2,
            final_url=f"https://www.example-shop.com/page/{i}", turns_used=i + 1, duration_ms=1500,
            session_id=f"s{i}", timestamp=T0 + timedelta(minutes=i),
        )
    text = mem.knowledge.format_sessions(DOMAIN)
    lines = text.splitlines()
    # the newest two: a header line, Goal, Outcome and Final URL each
    assert lines[0].startswith("1. [succeeded] 2025-06-01 12:04 UTC, 5 turns, 1.5s (session s4)")
    assert lines[1:4] == ["   Goal: goal number 4", "   Outcome: outcome 4",
                          "   Final URL: https://www.example-shop.com/page/4"]
    assert lines[4].startswith("2. [succeeded]") and "(session s3)" in lines[4]
    assert lines[5:8] == ["   Goal: goal number 3", "   Outcome: outcome 3",
                          "   Final URL: https://www.example-shop.com/page/3"]
    # the three older ones: one line each, no final URL, the outcome cut to 80 characters
    older = lines[8:]
    assert len(older) == 3
    assert older[0].startswith("3. [failed]") and "goal number 2" in older[0]
    assert older[1].startswith("4. [succeeded]") and "goal number 1" in older[1]
    assert older[2].startswith("5. [succeeded]") and "goal number 0" in older[2]
    for line in older:
        assert "Final URL" not in line and "/page/" not in line
        assert "MARKER" not in line  # the 81st character onwards is gone
        shown = line.split(" -> ", 1)[1]
        assert len(shown) <= 80
        assert shown.startswith("a" * 79)
    assert text.count("Final URL:") == 2


def test_a_short_outcome_is_shown_whole_on_the_one_line_form(mem: webmem.Memory) -> None:
    outcome = "x" * 80  # exactly 80 characters fit
    for i in range(3):
        mem.knowledge.record_session(DOMAIN, goal=f"goal {i}", outcome=outcome, success=True,
                                     session_id=f"s{i}", timestamp=T0 + timedelta(minutes=i))
    last = mem.knowledge.format_sessions(DOMAIN).splitlines()[-1]
    assert last.startswith("3. ") and last.endswith(" -> " + outcome)


def test_a_finished_run_records_a_session(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP, session_id="proj_123")
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP)
    run.update(turn_count=7)
    manifest = run.finish(success=True, outcome="Found 12 reviews",
                          final_url="https://www.example-shop.com/results")
    (session,) = mem.knowledge.sessions(DOMAIN)
    assert session.id == "proj_123"
    assert session.run_id == run.id
    assert (session.goal, session.outcome, session.success) == ("search smart watch reviews", "Found 12 reviews", True)
    assert session.final_url == "https://www.example-shop.com/results"
    assert session.turns_used == 7 == manifest.turn_count
    assert isinstance(session.duration_ms, int) and session.duration_ms >= 0
    elapsed = manifest.completed_at - manifest.started_at
    assert session.duration_ms <= elapsed.total_seconds() * 1000 + 1

    failed = mem.start_run(goal="search other things", start_url=SHOP)
    failed.record_step(action="click", target="x", url=SHOP)
    failed.record_step(action="click", target="y", url=SHOP)
    failed.finish(success=False, outcome="blocked by captcha")
    newest = mem.knowledge.sessions(DOMAIN)[0]
    assert newest.id.startswith("session_")
    assert (newest.success, newest.outcome, newest.turns_used) == (False, "blocked by captcha", 2)


def test_the_session_duration_is_the_time_since_the_run_started(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    # move the stored start one hour back, so the duration is known without measuring time
    started = rows.value(mem, "runs", "started_at", run_id=run.id)
    assert rows.change(mem, "runs", {"run_id": run.id}, started_at=started - timedelta(hours=1)) == 1
    manifest = run.finish(success=False, outcome="stopped")
    (session,) = mem.knowledge.sessions(DOMAIN)
    elapsed_ms = (manifest.completed_at - manifest.started_at).total_seconds() * 1000
    assert 3_600_000 <= session.duration_ms <= elapsed_ms + 1


# --- facts learned when a run finishes --------------------------------------------------------


def test_a_successful_finish_derives_facts_and_records_given_ones(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    run.record_step(action="goto", url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP)
    run.finish(success=True, outcome="ok", facts=[
        {"type": "timing", "key": "results", "value": "appear after 2s"},
        {"type": "quirk", "key": "cookie-banner", "value": "must be dismissed first"},
    ])
    facts = {(f.type, f.key): f.value for f in mem.knowledge.facts(DOMAIN)}
    assert facts == {
        ("pattern", "typical-steps"): "2 steps",
        ("pattern", "first-meaningful-action"): 'click button "Search"',
        ("timing", "results"): "appear after 2s",
        ("quirk", "cookie-banner"): "must be dismissed first",
    }


def test_a_failed_finish_records_given_facts_but_derives_none(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP)
    run.finish(success=False, outcome="blocked", facts=[{"type": "quirk", "key": "captcha", "value": "after 3 searches"}])
    assert [(f.type, f.key) for f in mem.knowledge.facts(DOMAIN)] == [("quirk", "captcha")]


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "bogus", "key": "k", "value": "v"},
        {"type": "timing", "key": "", "value": "v"},
        {"type": "timing", "key": "k", "value": "v", "extra": "no"},
        "not a mapping",
    ],
)
def test_a_finish_with_an_invalid_fact_writes_nothing(
    mem: webmem.Memory, events: list[dict], bad: object
) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP, verified=True)
    events.clear()
    with pytest.raises(webmem.InvalidInput):
        run.finish(success=True, outcome="ok", facts=[{"type": "timing", "key": "good", "value": "1s"}, bad])
    assert not run.finished
    assert mem.runs.get(run.id).status == "running"
    assert mem.knowledge.sessions(DOMAIN) == []
    assert mem.trajectories.list() == []
    assert mem.knowledge.facts(DOMAIN, min_confidence=0.0) == []
    assert rows.count(mem, "facts") == 0
    assert rows.count(mem, "sessions") == 0
    assert rows.count(mem, "trajectories") == 0
    assert not [e for e in events if e["event"] in ("session_recorded", "trajectory_saved", "fact_recorded")]

    # the run can still be finished properly afterwards
    manifest = run.finish(success=True, outcome="ok", facts=[{"type": "timing", "key": "good", "value": "1s"}])
    assert manifest.status == "completed"
    assert len(mem.knowledge.sessions(DOMAIN)) == 1
    assert len(mem.trajectories.list()) == 1
    assert ("timing", "good") in {(f.type, f.key) for f in mem.knowledge.facts(DOMAIN)}


def test_finishing_twice_records_one_session(mem: webmem.Memory) -> None:
    run = mem.start_run(goal="search smart watch reviews", start_url=SHOP)
    run.record_step(action="click", target='button "Search"', selector="#search", url=SHOP)
    run.finish(success=True, outcome="ok")
    run.finish(success=True, outcome="ok")
    assert len(mem.knowledge.sessions(DOMAIN)) == 1
    assert len(mem.trajectories.list()) == 1
    learned = mem.knowledge.facts(DOMAIN, min_confidence=0.0)
    assert learned and all(f.sources == 1 and f.confidence == 0.6 for f in learned)


BOOSTER = """
import sys, webmem
with webmem.Memory.open(sys.argv[1], local_dir=sys.argv[3]) as mem:
    for _ in range(int(sys.argv[2])):
        mem.knowledge.record_fact("www.example-shop.com", "quirk", "modal", "shadow DOM")
"""


def test_two_processes_confirming_the_same_fact_both_count(
    open_memory: Any, memory_location: str, memory_dir: Path
) -> None:
    with open_memory() as mem:
        mem.knowledge.record_fact(DOMAIN, "quirk", "modal", "shadow DOM")
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", BOOSTER, memory_location, "25", str(memory_dir)], stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err.decode()
    with open_memory() as mem:
        (fact,) = mem.knowledge.facts(DOMAIN)
    assert fact.sources == 51
    assert fact.confidence == pytest.approx(1 - 0.4 * 0.8**50, abs=1e-9)
