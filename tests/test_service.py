"""The service layer that the MCP server and the HTTP API share, on both backends."""

from __future__ import annotations

import threading

import pytest

import webmem
from webmem.service import DEFAULT_MATCH_LIMIT, MemoryService
from webmem.service import service as service_module

SITE = "https://news.example.org/"


@pytest.fixture
def service(mem: webmem.Memory) -> MemoryService:
    return MemoryService(mem)


def record_subscription(service: MemoryService, email: str) -> str:
    started = service.start_run(f"Subscribe {email} to the newsletter", SITE)
    service.record_step(started.run_id, action="goto", value=SITE)
    service.record_step(started.run_id, action="fill", target='textbox "Email"', value=email, url=SITE)
    service.record_step(started.run_id, action="click", target='button "Subscribe"', url=SITE)
    service.finish_run(started.run_id, success=True, outcome=f"Subscribed {email}")
    return started.run_id


def test_a_run_goes_through_the_service_and_is_learned(service: MemoryService) -> None:
    started = service.start_run("Subscribe a@b.com to the newsletter", SITE)
    assert started.run_id.startswith("run_") and started.domain == "news.example.org"
    assert started.lessons and started.system_prompt  # the built-in lessons of a new namespace
    assert started.replay is None and "no successful run" in (started.replay_unavailable or "")
    service.record_step(started.run_id, action="fill", target='textbox "Email"', value="a@b.com", url=SITE)
    context = service.get_context(started.run_id, budget_tokens=300)
    assert context.url == SITE and context.tokens <= 300
    finished = service.finish_run(started.run_id, success=True)
    assert finished.run.status == "completed" and finished.steps == 1
    assert service.finish_run(started.run_id, success=False).run.success is True  # finishing twice changes nothing
    detail = service.get_run(started.run_id)
    assert [step.action for step in detail.steps] == ["fill"]
    assert [run.run_id for run in service.list_runs(domain="news.example.org").runs] == [started.run_id]


def test_a_replay_offer_is_ready_tool_calls_in_the_new_goal_values(service: MemoryService) -> None:
    record_subscription(service, "a@b.com")
    started = service.start_run("Subscribe c@d.org to the newsletter", SITE)
    offer = started.replay
    assert offer is not None, started.replay_unavailable
    assert [call.tool for call in offer.steps] == ["browser_navigate", "browser_type", "browser_click"]
    assert offer.steps[1].arguments == {
        "element": 'textbox "Email"', "target": 'getByRole("textbox", { name: "Email", exact: true })',
        "text": "c@d.org",
    }
    assert offer.slots == {"{1}": "c@d.org"}
    search = service.search_trajectories("Subscribe e@f.net to the newsletter", SITE)
    assert search.best is not None and search.replay is not None
    assert "e@f.net" in search.reference and "a@b.com" not in search.reference  # in the asked goal's values
    # a goal that says how to answer and gives a date: the part set aside and the value read are in the answer
    worded = service.search_trajectories("Subscribe e@f.net to the newsletter. Answer with yes or no only.", SITE)
    assert worded.best == search.best and worded.set_aside == ["Answer with yes or no only."]
    assert worded.replay is not None and worded.replay.slots == {"{1}": "e@f.net"}
    dated = service.search_trajectories("Subscribe g@h.com to the newsletter on May 1, 2027", SITE)
    assert [(value.written, value.kind, value.value) for value in dated.values_read] == [
        ("May 1, 2027", "date", "2027-05-01")]


def save_newsletters(mem: webmem.Memory, count: int = 12) -> None:
    """``count`` trajectories on SITE whose goals share all their words but the address."""
    step = webmem.Step(action="click", target='button "Subscribe"', url=SITE)
    with mem.store.write():
        for number in range(count):
            mem.trajectories.save(goal=f"Subscribe user{number}@example.org to the newsletter", start_url=SITE,
                                  steps=[step])


def test_a_search_lists_the_closest_few_unless_asked_for_every_candidate(service: MemoryService,
                                                                       mem: webmem.Memory) -> None:
    """By default the closest DEFAULT_MATCH_LIMIT, from the ranking that scores only the goals that can compete;
    ``all`` scores and explains every candidate; ``scored`` says how many there were either way."""
    save_newsletters(mem)
    goal = "Subscribe user3@example.org to the newsletter"
    closest = service.search_trajectories(goal, SITE)
    every = service.search_trajectories(goal, SITE, all=True)
    assert len(closest.candidates) == DEFAULT_MATCH_LIMIT < closest.scored == every.scored == len(every.candidates) == 12
    assert all(candidate.why for candidate in every.candidates)
    assert closest.candidates == every.candidates[:DEFAULT_MATCH_LIMIT] and closest.best == every.best
    assert every.best is not None and every.candidates[0].goal == goal
    assert [c.trajectory_id for c in service.search_trajectories(goal, SITE, limit=2).candidates] == [
        c.trajectory_id for c in every.candidates[:2]]
    assert len(service.search_trajectories(goal, SITE, limit=2, all=True).candidates) == 12  # all: limit not used
    for wrong in ("yes", 1, None):
        with pytest.raises(webmem.InvalidInput, match="all: expected true or false"):
            service.search_trajectories(goal, SITE, all=wrong)  # type: ignore[arg-type]
    with pytest.raises(webmem.InvalidInput, match="limit"):
        service.search_trajectories(goal, SITE, limit=0, all=True)


def test_a_failed_step_returns_the_tips_its_error_recalls(service: MemoryService, mem: webmem.Memory) -> None:
    mem.lessons.record("When the Subscribe button is covered, press Escape first.", "tool_fallback",
                       failed_command="click", error_pattern="element is covered by an overlay",
                       domain="news.example.org", recovery="press Escape")
    started = service.start_run("Subscribe a@b.com to the newsletter", SITE)
    recorded = service.record_step(started.run_id, action="click", target='button "Subscribe"', ok=False,
                                   error="Element is covered by an overlay", url=SITE)
    assert recorded.tips == ["When the Subscribe button is covered, press Escape first."]
    assert "press Escape" in service.get_context(started.run_id).text  # the next turn's context shows it too
    recalled = service.recall_lessons(error="Element is covered by an overlay", command="click",
                                      domain="news.example.org")
    assert [lesson.lesson for lesson in recalled.lessons] == recorded.tips
    with pytest.raises(webmem.InvalidInput, match="error and command go together"):
        service.recall_lessons(error="x")


def test_errors_name_the_problem(service: MemoryService) -> None:
    with pytest.raises(webmem.RunNotFound, match="run_nope"):
        service.record_step("run_nope", action="click")
    with pytest.raises(webmem.InvalidInput, match="start_url"):
        service.start_run("Find a pie", "ftp://example.org/")
    with pytest.raises(webmem.InvalidInput, match="run_id"):
        service.get_context(42)  # type: ignore[arg-type]
    started = service.start_run("Find a pie", SITE)
    with pytest.raises(webmem.InvalidInput, match="ok"):
        service.record_step(started.run_id, action="click", ok="yes")  # type: ignore[arg-type]
    with pytest.raises(webmem.InvalidInput, match="budget_tokens"):
        service.get_context(started.run_id, budget_tokens=0)
    with pytest.raises(webmem.InvalidInput, match="limit"):
        service.list_runs(limit=0)
    with pytest.raises(webmem.InvalidInput, match="session_id"):
        service.start_run("Find a pie", SITE, session_id="s1", resume_run_id=started.run_id)
    service.finish_run(started.run_id, success=False)
    with pytest.raises(webmem.RunClosed):
        service.record_step(started.run_id, action="click")
    assert len(service.get_run(started.run_id).steps) == 0  # nothing refused was stored


def test_a_run_is_found_again_after_its_handle_is_gone(service: MemoryService, mem: webmem.Memory,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_module, "MAX_OPEN_RUNS", 2)
    first = service.start_run("Find a pie", SITE)
    for number in range(3):
        service.start_run(f"Find cake {number}", SITE)
    service.record_step(first.run_id, action="click", target='link "Pies"', url=SITE)
    again = MemoryService(mem)  # as after a restart of the server
    again.record_step(first.run_id, action="click", target='link "Apple pie"', url=SITE)
    again.finish_run(first.run_id, success=True)
    assert [step.target for step in service.get_run(first.run_id).steps] == ['link "Pies"', 'link "Apple pie"']


def test_a_resumed_run_keeps_the_session(service: MemoryService) -> None:
    first = service.start_run("Find a pie", SITE, session_id="session_pies")
    service.finish_run(first.run_id, success=False)
    resumed = service.start_run("Find a pie", SITE, resume_run_id=first.run_id)
    assert resumed.session_id == "session_pies" and resumed.run_id != first.run_id
    assert service.get_run(resumed.run_id).run.parent_run_id == first.run_id


def test_concurrent_steps_on_one_run_are_all_kept(service: MemoryService) -> None:
    started = service.start_run("Find a pie", SITE)
    errors: list[BaseException] = []

    def record(worker: int) -> None:
        try:
            for number in range(10):
                service.record_step(started.run_id, action="click", target=f'link "Pie {worker}-{number}"', url=SITE)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=record, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    targets = [step.target for step in service.get_run(started.run_id).steps]
    assert len(targets) == 80 and len(set(targets)) == 80


def test_a_disabled_memory_is_refused(tmp_path) -> None:
    with webmem.Memory.open(tmp_path / "off", enabled=False) as off:
        with pytest.raises(webmem.InvalidInput, match="enabled"):
            MemoryService(off)
