"""The reference agent calls a site's skills as tools: real headless Chromium on a helpdesk served on 127.0.0.1, a
real SQLite memory, and the LLM a chat-completions server on 127.0.0.1 that answers from a script."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_endpoint import Endpoint, serving, tool_reply

import webmem
from webmem import ElementSignals
from webmem.agent import Agent
from webmem.agent import llm as llm_module
from webmem.agent.llm import LLMPolicy
from webmem.demo.server import serve_site

SITE = Path(__file__).parent / "sites" / "skills"
OWNERS = ("alice", "bob", "carol")
PRIORITIES = ("blocker", "critical", "major", "minor", "trivial")
STATUSES = ("open", "in progress", "closed")


@pytest.fixture(autouse=True)
def _fresh_endpoint_modes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llm_module, "_ENDPOINT_MODES", {})  # what earlier tests' endpoints accepted


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    with serving() as server:
        yield server


@pytest.fixture
def site() -> Iterator[str]:
    with serve_site(SITE) as url:
        yield url


def create_ticket(mem: webmem.Memory, site: str, summary: str, owner: str, priority: str, *,
                  button: str = "Create ticket") -> None:
    """A run that created a ticket through the form, recorded as an agent records it."""
    url = site + "newticket.html"
    run = mem.start_run(goal=f'Create a ticket titled "{summary}" assigned to {owner} with priority {priority}',
                        start_url=url)
    run.record_step(action="goto", url=url)
    run.record_step(action="fill", target='textbox "Summary"', value=summary, url=url)
    run.record_step(action="select", target='combobox "Owner"', value=owner, url=url,
                    element=ElementSignals(options=OWNERS))
    run.record_step(action="select", target='combobox "Priority"', value=priority, url=url,
                    element=ElementSignals(options=PRIORITIES))
    run.record_step(action="click", target=f'button "{button}"', url=url)
    run.finish(success=True, outcome="ticket created")


def set_status(mem: webmem.Memory, site: str, title: str, status: str) -> None:
    url = site + "status.html"
    run = mem.start_run(goal=f'Set the status of ticket "{title}" to {status}', start_url=url)
    run.record_step(action="goto", url=url)
    run.record_step(action="fill", target='textbox "Ticket"', value=title, url=url)
    run.record_step(action="select", target='combobox "Status"', value=status, url=url,
                    element=ElementSignals(options=STATUSES))
    run.record_step(action="click", target='button "Update status"', url=url)
    run.finish(success=True, outcome="status set")


def agent(page: Any, mem: webmem.Memory, endpoint: Endpoint) -> Agent:
    return Agent(page, memory=mem, policy=LLMPolicy(base_url=endpoint.url, api_key="k", model="fake-model",
                                                    max_retries=0))


def offered(endpoint: Endpoint, index: int = 0) -> dict[str, dict[str, Any]]:
    functions = [tool["function"] for tool in endpoint.requests[index]["body"]["tools"]]
    return {function["name"]: function for function in functions if function["name"].startswith("skill_")}


def test_the_model_calls_a_skill_which_replays_with_its_values_and_verifies_it(
    sqlite_mem: webmem.Memory, endpoint: Endpoint, site: str, page: Any
) -> None:
    create_ticket(sqlite_mem, site, "Crash on save", "alice", "major")
    create_ticket(sqlite_mem, site, "Login page slow", "bob", "minor")
    skill = sqlite_mem.skills.get("create_ticket", site)
    assert skill.status == "unverified"
    endpoint.reply(tool_reply("skill_create_ticket", {"summary": "Export fails", "owner": "carol",
                                                      "priority": "critical"}),
                   tool_reply("finish", {"success": True}))
    result = agent(page, sqlite_mem, endpoint).run("Report to carol that exports fail; it is critical",
                                                   url=site + "newticket.html")

    tool = offered(endpoint)["skill_create_ticket"]
    assert tool["parameters"] == {"type": "object", "required": ["summary", "owner", "priority"],
                                  "additionalProperties": False, "properties": {
        "summary": {"type": "string", "description": 'text: typed into textbox "Summary" (for example Login page slow)'},
        "owner": {"type": "string", "enum": list(OWNERS), "description": 'choice: chosen in combobox "Owner" (for '
                                                                        "example bob)"},
        "priority": {"type": "string", "enum": list(PRIORITIES), "description": 'choice: chosen in combobox '
                                                                               '"Priority" (for example minor)'}}}
    assert tool["description"].startswith('Does: Create a ticket titled "{summary}" assigned to {owner} with priority')
    assert "Status: unverified" in tool["description"]
    assert "skill_" in endpoint.messages(0)[0]["content"]  # the system prompt says what skills are
    assert 'Created "Export fails" for carol (critical)' in page.inner_text("body")
    assert len(endpoint.requests) == 2  # the replay asked the model nothing
    history = endpoint.messages(1)[1]["content"]
    assert ("1. skill create_ticket(summary='Export fails', owner='carol', priority='critical') -> ok (replayed all 5 "
            "steps of the skill)") in history
    assert "select combobox \"Priority\" 'critical' -> ok" in history
    assert result.success and not result.replay_offered and result.steps == 5  # the call itself is no step
    assert result.skill_calls == ["done"]
    manifest = sqlite_mem.get_run(result.run_id).manifest
    assert manifest.replay is not None and manifest.replay.outcome == "replayed"
    assert manifest.replay.trajectory_id == skill.trajectory_id and result.replay_trajectory_id == skill.trajectory_id
    assert sqlite_mem.skills.get("create_ticket", site).status == "verified"  # a new instance, replayed


def test_a_refused_value_and_a_replay_that_hands_over_reach_the_model_and_the_run_goes_on(
    sqlite_mem: webmem.Memory, endpoint: Endpoint, site: str, page: Any
) -> None:
    create_ticket(sqlite_mem, site, "Crash on save", "alice", "major", button="Submit ticket")  # an older form
    create_ticket(sqlite_mem, site, "Login page slow", "bob", "minor", button="Submit ticket")
    endpoint.reply(tool_reply("skill_create_ticket", {"summary": "Export fails", "owner": "dave",
                                                      "priority": "critical"}),
                   tool_reply("skill_create_ticket", {"summary": "Export fails", "owner": "carol",
                                                      "priority": "critical"}),
                   tool_reply("click", {"role": "button", "name": "Create ticket"}),
                   tool_reply("finish", {"success": True}))
    result = agent(page, sqlite_mem, endpoint).run("Give carol a critical ticket: exports fail",
                                                   url=site + "newticket.html")
    assert len(endpoint.requests) == 4
    refused = "owner: 'dave' is not one of the options: alice, bob, carol"
    second = endpoint.messages(1)[1]["content"]
    assert f"LAST ERROR\nskill create_ticket: {refused}" in second
    assert f"1. skill create_ticket(summary='Export fails', owner='dave', priority='critical') -> failed: {refused}" \
        in second
    third = endpoint.messages(2)[1]["content"]
    stopped = "skill create_ticket: its replay stopped at step 5 of 5 and handed the page back to you: step 5:"
    assert f"LAST ERROR\n{stopped}" in third and 'button "Submit ticket"' in third
    assert "2. skill create_ticket(summary='Export fails', owner='carol', priority='critical') -> failed: " \
           "its replay stopped at step 5" in third
    assert "handed over to you at its step 5" in third  # the run's context says so too
    assert "Already done on the page (do not repeat):\n  1. goto" in third
    assert 'Created "Export fails" for carol (critical)' in page.inner_text("body")
    assert result.success and result.replay_outcome == "handed_over" and result.replay_step == 5
    assert result.skill_calls == ["refused", "handed_over"]
    manifest = sqlite_mem.get_run(result.run_id).manifest
    assert manifest.replay is not None and manifest.replay.outcome == "handed_over"


def test_one_goal_done_by_calling_two_skills_one_after_the_other(
    sqlite_mem: webmem.Memory, endpoint: Endpoint, site: str, page: Any
) -> None:
    create_ticket(sqlite_mem, site, "Crash on save", "alice", "major")
    create_ticket(sqlite_mem, site, "Login page slow", "bob", "minor")
    set_status(sqlite_mem, site, "Crash on save", "in progress")
    set_status(sqlite_mem, site, "Login page slow", "closed")
    endpoint.reply(tool_reply("skill_create_ticket", {"summary": "Export fails", "owner": "carol",
                                                      "priority": "critical"}),
                   tool_reply("skill_set_status", {"ticket": "Export fails", "status": "closed"}),
                   tool_reply("finish", {"success": True}))
    result = agent(page, sqlite_mem, endpoint).run(
        "File a critical ticket for carol saying exports fail, then close it", url=site + "newticket.html")
    assert set(offered(endpoint)) == {"skill_create_ticket", "skill_set_status"}
    assert offered(endpoint)["skill_set_status"]["parameters"]["properties"]["status"]["enum"] == list(STATUSES)
    assert len(endpoint.requests) == 3
    assert "-> ok (replayed all 5 steps of the skill)" in endpoint.messages(1)[1]["content"]
    body = page.inner_text("body")
    assert '"Export fails" is now closed' in body and "Export fails | carol | critical | closed" in body
    assert result.success
    closing = sqlite_mem.skills.get("set_status", site)
    assert result.replay_outcome == "replayed" and result.replay_trajectory_id == closing.trajectory_id
    assert result.skill_calls == ["done", "done"]


def test_without_the_replay_at_start_the_model_decides_from_the_first_turn_and_may_call_skills(
    sqlite_mem: webmem.Memory, endpoint: Endpoint, site: str, page: Any
) -> None:
    create_ticket(sqlite_mem, site, "Crash on save", "alice", "major")
    create_ticket(sqlite_mem, site, "Login page slow", "bob", "minor")
    goal = 'Create a ticket titled "{}" assigned to carol with priority critical'
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="fake-model", max_retries=0)
    endpoint.reply(tool_reply("skill_create_ticket", {"summary": "Export fails", "owner": "carol",
                                                      "priority": "critical"}),
                   tool_reply("finish", {"success": True}))
    result = Agent(page, memory=sqlite_mem, policy=policy, replay_at_start=False).run(
        goal.format("Export fails"), url=site + "newticket.html")
    assert len(endpoint.requests) == 2 and "skill_create_ticket" in offered(endpoint)
    assert not result.replay_offered and "Agent(replay_at_start=False)" in (result.replay_miss_reason or "")
    assert result.success and result.skill_calls == ["done"] and result.llm_calls == 2
    assert 'Created "Export fails" for carol (critical)' in page.inner_text("body")

    replayed = Agent(page, memory=sqlite_mem, policy=policy).run(goal.format("Import hangs"),
                                                                 url=site + "newticket.html")
    assert replayed.replayed and replayed.llm_calls == 0 and len(endpoint.requests) == 2  # the same goal, replayed

    endpoint.reply(tool_reply("finish", {"success": False}))
    unaided = Agent(page, memory=sqlite_mem, policy=policy, replay=False).run(goal.format("Search is slow"),
                                                                               url=site + "newticket.html")
    assert not offered(endpoint, 2) and unaided.skill_calls == [] and not unaided.replay_offered
