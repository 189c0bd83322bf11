"""The outcome gate: what a run was given and how it ended; advice whose followers keep failing is
demoted, then withheld; a part of the context that lowers success on a site is turned off there."""

from __future__ import annotations

from typing import Any

import pytest

import webmem
from webmem.outcomes import DEMOTE_AFTER_FAILURES, WITHHOLD_AFTER_FAILURES, part_verdict, status_for

SHOP = "https://shop.example.com/"
GOAL = "Add the blue lamp to the cart"
BLOCKED = "Error: element is outside of the viewport"


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event for event in events if event["event"] == kind]


def teach(mem: webmem.Memory, goal: str = GOAL) -> webmem.RunManifest:
    run = mem.start_run(goal=goal, start_url=SHOP)
    run.record_step(action="click", target='link "Lamps"', selector="#lamps", url=SHOP)
    run.record_step(action="click", target='button "Add blue lamp"', selector="#add-blue", url=SHOP + "lamps")
    return run.finish(success=True)


def follow(mem: webmem.Memory, *, success: bool, goal: str = GOAL, url: str = SHOP) -> str:
    run = mem.start_run(goal=goal, start_url=url)
    text = str(run.context(url=url))
    run.finish(success=success)
    return text


@pytest.mark.parametrize(("given", "successes", "status"), [
    (1, 0, "given"), (2, 0, "demoted"), (3, 1, "demoted"), (4, 2, "given"), (4, 0, "withheld"),
    (5, 1, "withheld"), (6, 2, "demoted"), (7, 2, "withheld"), (10, 5, "given"),
])
def test_status_follows_the_failures_of_the_followers(given: int, successes: int, status: str) -> None:
    assert status_for(given, successes) == status
    assert DEMOTE_AFTER_FAILURES == 2 and WITHHOLD_AFTER_FAILURES == 4


@pytest.mark.parametrize(("counts", "off"), [
    ((5, 0, 5, 5), True),
    ((5, 2, 5, 5), True),    # 40% against 100%
    ((5, 4, 5, 5), False),   # 80% against 100%: within the margin
    ((4, 0, 5, 5), False),   # too few runs given it
    ((5, 0, 4, 4), False),   # too few runs without it
    ((5, 5, 5, 0), False),   # it helps
])
def test_a_part_is_judged_on_enough_runs_with_and_without_it(counts: tuple[int, int, int, int], off: bool) -> None:
    assert (part_verdict(*counts) is not None) is off


def test_a_reference_whose_followers_keep_failing_is_demoted_then_withheld(
    mem: webmem.Memory, events: list[dict[str, Any]]
) -> None:
    taught = teach(mem)
    trajectory = mem.trajectories.match(GOAL, origin=SHOP).best
    assert trajectory is not None and trajectory.run_id == taught.run_id
    assert mem.trajectories.find_replay(GOAL, SHOP) is not None
    for number in range(1, WITHHOLD_AFTER_FAILURES + 1):
        text = follow(mem, success=False)
        assert "REFERENCE TRAJECTORY" in text, number  # given every time until withheld
        if number == DEMOTE_AFTER_FAILURES:
            [demoted] = of(events, "advice_demoted")
            assert (demoted["kind"], demoted["item"], demoted["given"], demoted["successes"]) == (
                "reference", trajectory.id, 2, 0)
            assert mem.trajectories.find_replay(GOAL, SHOP) is None  # no longer replayed
    [withheld] = of(events, "advice_withheld")
    assert (withheld["item"], withheld["given"]) == (trajectory.id, 4)
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    pack = run.context(url=SHOP)
    assert "REFERENCE TRAJECTORY" not in str(pack)
    assert "withheld" in pack.part("reference_trajectory").detail["reason"]
    [record] = [item for item in mem.outcomes.items() if item.item == trajectory.id]
    assert (record.kind, record.given, record.successes, record.status) == ("reference", 4, 0, "withheld")


def test_a_reference_that_helps_stays(mem: webmem.Memory, events: list[dict[str, Any]]) -> None:
    teach(mem)
    for success in (True, False, True, False, True, False):
        assert "REFERENCE TRAJECTORY" in follow(mem, success=success)
    assert of(events, "advice_withheld") == [] and of(events, "advice_demoted") == []
    assert mem.trajectories.find_replay(GOAL, SHOP) is not None


def test_a_lesson_whose_followers_keep_failing_is_withheld(mem: webmem.Memory) -> None:
    tip = mem.lessons.record("Scroll the element into view first.", "error_recovery", "click",
                             "outside of the viewport", domain="shop.example.com")
    for _ in range(WITHHOLD_AFTER_FAILURES):
        run = mem.start_run(goal=GOAL, start_url=SHOP)
        assert tip.id in [item.id for item in run.on_error("click", BLOCKED)]
        run.context(url=SHOP)  # the tip is shown
        run.finish(success=False)
    run = mem.start_run(goal=GOAL, start_url=SHOP)
    assert tip.id not in [item.id for item in run.on_error("click", BLOCKED)]
    assert tip.lesson not in str(run.context(url=SHOP))
    assert tip.id not in [item.id for item in mem.lessons.recall_on_domain("shop.example.com")]


def test_a_part_that_lowers_success_on_a_site_is_turned_off_there(
    mem: webmem.Memory, events: list[dict[str, Any]]
) -> None:
    for _ in range(5):  # nothing known yet: the runs succeed
        follow(mem, success=True, goal="Open the lamps")
    mem.selectors.record("shop.example.com", 'link "Lamps"', "#lamps")
    mem.selectors.record("other.example.org", 'link "Lamps"', "#lamps")
    for number in range(5):  # given the known selectors, they fail
        assert "KNOWN SELECTORS" in follow(mem, success=False, goal="Open the lamps"), number
    [off] = of(events, "advice_part_off")
    assert (off["site"], off["part"]) == ("example.com", "known_selectors")
    assert "0 of 5" in off["reason"] and "5 of 5" in off["reason"]
    run = mem.start_run(goal="Open the lamps", start_url=SHOP)
    pack = run.context(url="https://www.example.com/")  # the same site, another host
    assert "KNOWN SELECTORS" not in str(pack)
    assert "turned off" in pack.part("known_selectors").detail["reason"]
    assert "KNOWN SELECTORS" in follow(mem, success=True, goal="Open the lamps", url="https://other.example.org/")


def test_outcomes_stay_in_their_namespace(open_memory: Any) -> None:
    with open_memory(namespace="a") as mem:
        teach(mem)
        for _ in range(WITHHOLD_AFTER_FAILURES):
            follow(mem, success=False)
    with open_memory(namespace="b") as other:
        teach(other)
        assert "REFERENCE TRAJECTORY" in follow(other, success=True)
        assert all(item.status != "withheld" for item in other.outcomes.items())


@pytest.mark.parametrize(("steps", "counted"), [
    ([], False),  # handed over at its first step: the recording did not apply
    ([("click", 'link "Lamps"', "hit")], False),  # it only looked around
    ([("click", 'link "Lamps"', "hit"), ("click", 'button "Add blue lamp"', "missed")], False),
    ([("click", 'link "Lamps"', "hit"), ("click", 'button "Add blue lamp"', "hit")], True),  # it acted
    ([("fill", 'textbox ""', "healed")], True),
])
def test_a_replay_that_hands_over_before_acting_is_no_failure_of_its_recording(
    mem: webmem.Memory, events: list[dict[str, Any]], steps: list[tuple[str, str, str]], counted: bool
) -> None:
    teach(mem)
    trajectory = mem.trajectories.match(GOAL, origin=SHOP).best
    assert trajectory is not None
    report = webmem.ReplayReport(outcome="handed_over", trajectory_id=trajectory.id, step=len(steps) + 1, steps=[
        webmem.ReplayedStep(step=number, action=action, target=target, status=status)
        for number, (action, target, status) in enumerate(steps, 1)])
    for _ in range(DEMOTE_AFTER_FAILURES):
        run = mem.start_run(goal=GOAL, start_url=SHOP)
        run.context(url=SHOP)  # the reference is shown as well
        run.finish(success=False, replay=report)
    records = [item for item in mem.outcomes.items() if item.item == trajectory.id]
    if counted:
        assert [(item.given, item.status) for item in records] == [(DEMOTE_AFTER_FAILURES, "demoted")]
        assert mem.trajectories.find_replay(GOAL, SHOP) is None
    else:
        assert records == [] and of(events, "advice_demoted") == []
        assert mem.trajectories.find_replay(GOAL, SHOP) is not None  # still offered to the next instance
