"""A site's remembered tasks as skills: named and described from their recordings, with typed parameters, admitted by
the evidence of replays, and called as replay plans from Python, the command line, HTTP and MCP."""

from __future__ import annotations

import json
from pathlib import Path

import asyncrun
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from mcp import Client

import webmem
from webmem import ElementSignals, ReplayReport
from webmem.cli import cli
from webmem.mcp import build_server
from webmem.outcomes import DEMOTE_AFTER_FAILURES
from webmem.mcp.skill_tools import MAX_SKILL_TOOLS, find, offered, skill_tool
from webmem.skills.tools import tool_name
from webmem.core.skill_records import Skill
from webmem.server.app import create_app
from webmem.service import MemoryService

SITE = "http://127.0.0.1:8000"
NEW_TICKET = f"{SITE}/newticket"
SEARCH = f"{SITE}/search"
OWNERS = ("alice", "bob", "carol")
PRIORITIES = ("blocker", "critical", "major", "minor", "trivial")


def create_ticket(mem: webmem.Memory, title: str, owner: str, priority: str, *,
                  replay: str | None = None, success: bool = True) -> str:
    """A run that creates a ticket through the form, as an agent records it; with ``replay``, the outcome of the
    replay of the newest recording it started with (``replayed``, ``handed_over``, ``replay_failed``)."""
    run = mem.start_run(goal=f'Create a ticket titled "{title}" assigned to {owner} with priority {priority}',
                        start_url=NEW_TICKET)
    run.record_step(action="goto", url=NEW_TICKET)
    run.record_step(action="fill", target='textbox "Summary"', value=title, url=NEW_TICKET)
    run.record_step(action="select", target='combobox ""', value=owner, url=NEW_TICKET,
                    element=ElementSignals(label="Owner", options=OWNERS))
    run.record_step(action="select", target='combobox "Priority"', value=priority, url=NEW_TICKET,
                    element=ElementSignals(label="Priority", options=PRIORITIES))
    run.record_step(action="click", target='button "Create ticket"', url=NEW_TICKET)
    report = None
    if replay is not None:
        newest = next(t for t in mem.trajectories.list(domain="127.0.0.1:8000") if t.goal.startswith("Create"))
        report = ReplayReport(outcome=replay, trajectory_id=newest.id, step=5 if replay == "replayed" else 3,
                              reason=None if replay == "replayed" else 'button "Create ticket" is gone')
    run.finish(success=success, outcome="ticket created" if success else "no ticket", replay=report)
    return run.id


def search_tickets(mem: webmem.Memory, words: str, since: str) -> None:
    goal = f'Search tickets for "{words}" changed since {since}'
    run = mem.start_run(goal=goal, start_url=SEARCH)
    run.record_step(action="fill", target='searchbox "Search"', value=words, url=SEARCH)
    run.record_step(action="fill", target='textbox "Changed since"', value=since, url=SEARCH)
    run.record_step(action="click", target='button "Search"', url=SEARCH)
    run.finish(success=True, outcome="found")


@pytest.fixture
def recorded(mem: webmem.Memory) -> webmem.Memory:
    create_ticket(mem, "Crash on save", "alice", "major")
    create_ticket(mem, "Login page slow", "bob", "minor")
    search_tickets(mem, "crash", "2026-11-01")
    return mem


def skill_named(mem: webmem.Memory, name: str) -> Skill:
    return mem.skills.get(name, SITE)


def test_a_template_becomes_a_skill_named_and_typed_as_people_know_its_fields(recorded: webmem.Memory) -> None:
    skills = recorded.skills.list(SITE)
    assert sorted(skill.name for skill in skills) == ["create_ticket", "search_tickets"]
    create = skill_named(recorded, "create_ticket")
    assert create.template == 'Create a ticket titled "{summary}" assigned to {owner} with priority {priority}'
    assert [(p.name, p.kind, p.slot, p.example) for p in create.parameters] == [
        ("summary", "text", 1, "Login page slow"), ("owner", "choice", 2, "bob"), ("priority", "choice", 3, "minor")]
    assert create.parameters[1].options == list(OWNERS)  # a field with no accessible name, known by its label
    assert create.parameters[1].description == 'chosen in the combobox labelled "Owner"'
    assert create.parameters[0].description == 'typed into textbox "Summary"'
    assert create.parameters[2].options == list(PRIORITIES)
    assert create.description.splitlines() == [
        'Does: Create a ticket titled "{summary}" assigned to {owner} with priority {priority}',
        'Example: Create a ticket titled "Login page slow" assigned to bob with priority minor',
        "Parameters: summary (text); owner (choice: one of alice, bob, carol); priority (choice: one of blocker, "
        "critical, major, minor, trivial)",
    ]
    assert create.record.recorded == 2 and create.record.replays == 0 and create.status == "unverified"
    search = skill_named(recorded, "search_tickets")
    assert [(p.name, p.kind) for p in search.parameters] == [("search", "text"), ("changed_since", "date")]
    assert create.origin == SITE and create.domain == "127.0.0.1:8000"
    assert recorded.skills.get(create.id) == create  # by id, without naming the site
    assert [skill.id for skill in recorded.skills.list("127.0.0.1:8000")] == [skill.id for skill in skills]
    assert recorded.skills.list("http://127.0.0.1:9000/") == []  # another origin of the host has none



def test_a_select_whose_options_change_between_recordings_is_a_text_not_a_choice(mem: webmem.Memory) -> None:
    """A list drawn anew on every visit (other names each time) has no fixed options: a value the recordings never saw
    is still a value of the task, and replay checks the page's own options when it selects it."""
    for name, options in (("Dianne", ("Dianne", "Natty", "Uruguay")), ("Rozele", ("Rozele", "Azerbaijan", "Kim"))):
        run = mem.start_run(goal=f"Select {name} from the list and click Submit.", start_url=f"{SITE}/choose")
        run.record_step(action="select", target='combobox ""', value=name, url=f"{SITE}/choose",
                        element=ElementSignals(label="Names", options=options))
        run.record_step(action="click", target='button "Submit"', url=f"{SITE}/choose")
        run.finish(success=True, outcome="submitted")
    skill = next(found for found in mem.skills.list(SITE) if found.template.startswith("Select"))
    chosen = next(parameter for parameter in skill.parameters if parameter.example == "Dianne" or
                  parameter.example == "Rozele")
    assert chosen.kind == "text" and chosen.options == []
    assert mem.skills.plan(skill, {chosen.name: "Catharine", **{p.name: "Submit" for p in skill.parameters
                                                                 if p is not chosen}}).steps[0].value == "Catharine"

def test_a_skill_is_verified_only_by_a_replay_that_did_a_new_instance(recorded: webmem.Memory) -> None:
    create_ticket(recorded, "Login page slow", "bob", "minor", replay="replayed")  # the values of a recording
    again = skill_named(recorded, "create_ticket")
    assert again.status == "unverified" and again.record.replays == 1 and again.record.successes == 1
    create_ticket(recorded, "Export fails", "carol", "critical", replay="handed_over")
    create_ticket(recorded, "Export fails", "carol", "critical", replay="replayed")
    verified = skill_named(recorded, "create_ticket")
    assert verified.status == "verified" and verified.record.last_verified is not None
    assert (verified.record.recorded, verified.record.replays, verified.record.successes,
            verified.record.handovers, verified.record.failures) == (2, 3, 2, 1, 0)
    assert skill_named(recorded, "search_tickets").status == "unverified"
    create_ticket(recorded, "Typo in help", "bob", "trivial", replay="replayed", success=False)
    after = skill_named(recorded, "create_ticket").record  # it did all its steps: the run failed on the rest
    assert (after.replays, after.successes, after.failures) == (4, 2, 0)


def test_a_skill_is_withdrawn_when_its_replays_fail_or_its_site_changed(recorded: webmem.Memory) -> None:
    create_ticket(recorded, "Export fails", "carol", "critical", replay="replayed")
    assert skill_named(recorded, "create_ticket").status == "verified"
    recorded.site_changes.record(NEW_TICKET, 'button "Create ticket" is gone')
    changed = skill_named(recorded, "create_ticket")
    assert changed.status == "withdrawn" and "changed" in changed.status_reason
    with pytest.raises(webmem.NotFound, match="withdrawn"):
        recorded.skills.plan("create_ticket", {"summary": "x", "owner": "bob", "priority": "major"}, site=SITE)
    assert skill_named(recorded, "search_tickets").status == "unverified"  # another page: still offered
    for _ in range(2):
        search_run = recorded.start_run(goal='Search tickets for "pie" changed since 2026-11-02', start_url=SEARCH)
        newest = next(t for t in recorded.trajectories.list(domain="127.0.0.1:8000") if t.goal.startswith("Search"))
        search_run.finish(success=False, replay=ReplayReport(outcome="replay_failed", trajectory_id=newest.id, step=2))
    failing = skill_named(recorded, "search_tickets")
    assert failing.status == "withdrawn" and "failed 2 times" in failing.status_reason
    assert failing.record.failures == 2


def test_a_skill_whose_followers_keep_failing_is_withdrawn_by_the_outcome_gate(mem: webmem.Memory) -> None:
    """The gate that keeps memory from making an agent worse demotes a recording that runs given it as advice
    keep failing after: once every recording of a skill is demoted, the skill is withdrawn."""
    create_ticket(mem, "Crash on save", "alice", "major")
    assert skill_named(mem, "create_ticket").status == "unverified"
    for _ in range(DEMOTE_AFTER_FAILURES):
        run = mem.start_run(goal='Create a ticket titled "Slow export" assigned to bob with priority minor',
                            start_url=NEW_TICKET)
        assert "REFERENCE TRAJECTORY" in str(run.context(url=NEW_TICKET))  # given the recording as advice
        run.finish(success=False, outcome="the ticket was not created")
    demoted = skill_named(mem, "create_ticket")
    assert demoted.status == "withdrawn" and "kept failing" in demoted.status_reason
    create_ticket(mem, "Typo in help", "carol", "trivial")  # a new recording that succeeded: offered again
    assert skill_named(mem, "create_ticket").status == "unverified"


def test_calling_a_skill_is_a_replay_plan_with_the_parameters_checked(recorded: webmem.Memory) -> None:
    plan = recorded.skills.plan("create_ticket", {"summary": "Export fails", "owner": "Carol", "priority": "critical"},
                                site=SITE)
    assert [(step.action, step.value) for step in plan.steps] == [
        ("goto", None), ("fill", "Export fails"), ("select", "carol"), ("select", "critical"), ("click", None)]
    search = recorded.skills.plan("search_tickets", {"search": "slow login", "changed_since": "2026-10-05"}, site=SITE)
    assert [step.value for step in search.steps if step.action == "fill"] == ["slow login", "2026-10-05"]
    refused = {
        "owner: required, but not given": {"summary": "x", "priority": "major"},
        "owner: 'dave' is not one of the options: alice, bob, carol": {"summary": "x", "owner": "dave",
                                                                         "priority": "major"},
        "colour not among create_ticket's: summary, owner, priority": {"summary": "x", "owner": "bob",
                                                                        "priority": "major", "colour": "red"},
        "summary: a value may not hold double quotes": {"summary": 'say "hi"', "owner": "bob", "priority": "major"},
        "summary: expected a text, got list": {"summary": ["x"], "owner": "bob", "priority": "major"},
    }
    for message, values in refused.items():
        with pytest.raises(webmem.InvalidInput, match=message.replace("(", r"\(").replace(")", r"\)")):
            recorded.skills.plan("create_ticket", values, site=SITE)
    with pytest.raises(webmem.InvalidInput, match="changed_since: expected a date"):
        recorded.skills.plan("search_tickets", {"search": "x", "changed_since": "soon"}, site=SITE)
    with pytest.raises(webmem.NotFound, match="its skills: create_ticket, search_tickets"):
        recorded.skills.get("close_ticket", SITE)
    with pytest.raises(webmem.InvalidInput, match="site"):
        recorded.skills.get("create_ticket")
    with pytest.raises(webmem.NotFound, match="skill_nope"):
        recorded.skills.get("skill_nope")


def reassign(mem: webmem.Memory, ticket: str, owner: str) -> None:
    run = mem.start_run(goal=f"Assign the ticket {ticket} to {owner}", start_url=f"{SITE}/report")
    run.record_step(action="click", target=f'link "{ticket}"', url=f"{SITE}/report")
    run.record_step(action="select", target='combobox ""', value=owner, url=f"{SITE}/ticket",
                    element=ElementSignals(label="Owner", options=OWNERS))
    run.record_step(action="click", target='button "Submit changes"', url=f"{SITE}/ticket")
    run.finish(success=True, outcome="reassigned")


def test_a_call_replays_its_own_skill_with_the_values_given(mem: webmem.Memory) -> None:
    """The goal a call stands for is read only when it is this skill's with these values: a value that holds the
    template's own words ("Export to CSV" in "Assign the ticket {ticket} to {owner}"), or a goal that another
    task's template fits as well, still replays the called skill's recording with the values given."""
    reassign(mem, "Crash on save", "alice")
    values = {"ticket": "Export to CSV", "owner": "carol"}
    plan = mem.skills.plan("assign_ticket", values, site=SITE)
    assert plan.slots == {1: "Export to CSV", 2: "carol"}
    assert [(step.target, step.value) for step in plan.steps] == [
        ('link "Export to CSV"', None), ('combobox ""', "carol"), ('button "Submit changes"', None)]
    assert mem.skills.goal(mem.skills.get("assign_ticket", SITE), values) == "Assign the ticket Export to CSV to carol"
    pick = mem.start_run(goal="Select Ferne from the list and click Submit.", start_url=f"{SITE}/pick")
    pick.record_step(action="select", target='listbox "Names"', value="Ferne", url=f"{SITE}/pick")
    pick.record_step(action="click", target='button "Submit"', url=f"{SITE}/pick")
    pick.finish(success=True, outcome="picked")
    for option, button in (("Lyon", "Go"), ("Oslo", "Next")):  # a newer task whose template fits that wording too
        click = mem.start_run(goal=f"Select {option} and click {button}.", start_url=f"{SITE}/pick")
        click.record_step(action="click", target=f'radio "{option}"', url=f"{SITE}/pick")
        click.record_step(action="click", target=f'button "{button}"', url=f"{SITE}/pick")
        click.finish(success=True, outcome="clicked")
    from_list = mem.skills.get("select_list", SITE)
    assert from_list.template == "Select {names} from the list and click {click}."
    assert mem.trajectories.find_replay("Select Anna from the list and click Submit.", SITE).trajectory.goal.startswith(
        "Select Oslo")  # the goal alone is the newer task's
    chosen = mem.skills.plan(from_list.id, {"names": "Anna", "click": "Submit"})
    assert chosen.trajectory.id == from_list.trajectory_id
    assert [(step.action, step.target, step.value) for step in chosen.steps] == [
        ("select", 'listbox "Names"', "Anna"), ("click", 'button "Submit"', None)]


def test_skills_over_http_and_the_command_line(memory_dir: Path) -> None:
    with webmem.Memory.open(memory_dir) as mem:
        create_ticket(mem, "Crash on save", "alice", "major")
        create_ticket(mem, "Export fails", "carol", "critical", replay="replayed")
    client = TestClient(create_app(str(memory_dir)))
    listed = client.get("/v1/sites/127.0.0.1:8000/skills").json()
    assert [skill["name"] for skill in listed["skills"]] == ["create_ticket"]
    skill = listed["skills"][0]
    assert skill["status"] == "verified" and [p["name"] for p in skill["parameters"]] == ["summary", "owner", "priority"]
    called = client.post(f"/v1/skills/{skill['id']}/plan",
                         json={"parameters": {"summary": "Slow", "owner": "bob", "priority": "minor"}})
    assert called.status_code == 200, called.text
    body = called.json()
    assert body["goal"] == 'Create a ticket titled "Slow" assigned to bob with priority minor'
    assert [step["tool"] for step in body["replay"]["steps"]][:3] == ["browser_navigate", "browser_type",
                                                                       "browser_select_option"]
    by_name = client.post("/v1/skills/create_ticket/plan", json={"site": "127.0.0.1:8000", "parameters": {
        "summary": "Slow", "owner": "eve", "priority": "minor"}})
    assert by_name.status_code == 422 and "not one of the options" in by_name.json()["detail"]
    assert client.post("/v1/skills/skill_nope/plan", json={"parameters": {}}).status_code == 404

    runner = CliRunner()
    table = runner.invoke(cli, ["--memory-dir", str(memory_dir), "skills"], catch_exceptions=False, env={"COLUMNS": "200"})
    assert table.exit_code == 0 and "create_ticket" in table.output and "verified" in table.output
    data = json.loads(runner.invoke(cli, ["--memory-dir", str(memory_dir), "skills", "--site", SITE, "--json"],
                                    catch_exceptions=False).output)
    assert [item["id"] for item in data] == [skill["id"] for skill in listed["skills"]]
    script = runner.invoke(cli, ["--memory-dir", str(memory_dir), "script", skill["id"]], catch_exceptions=False)
    assert script.exit_code == 0 and "summary = 'Export fails'" in script.output
    none = runner.invoke(cli, ["--memory-dir", str(memory_dir), "skills", "--site", "example.org"])
    assert none.exit_code == 0 and "No skills on example.org" in none.output


def test_the_mcp_server_lists_and_plans_skills(recorded: webmem.Memory) -> None:
    async def scenario(client: Client) -> None:
        listed = (await client.call_tool("webmem_list_skills", {"site": SITE})).structured_content
        assert [skill["name"] for skill in listed["skills"]] == ["create_ticket", "search_tickets"]
        call = await client.call_tool("webmem_plan_skill", {"skill_id": "search_tickets", "site": SITE, "parameters": {
            "search": "pie", "changed_since": "2026-11-20"}})
        assert not call.is_error, call.content
        assert call.structured_content["goal"] == 'Search tickets for "pie" changed since 2026-11-20'
        typed = [step["arguments"]["text"] for step in call.structured_content["replay"]["steps"]
                 if step["action"] == "fill"]
        assert typed == ["pie", "2026-11-20"]
        refused = await client.call_tool("webmem_plan_skill", {"skill_id": "search_tickets", "site": SITE,
                                                               "parameters": {"search": "pie"}})
        assert refused.is_error and "InvalidInput: changed_since: required" in refused.content[0].text

    async def main() -> None:
        async with Client(build_server(MemoryService(recorded))) as client:
            await scenario(client)

    asyncrun.run(main)


def test_the_proxy_offers_a_sites_most_trusted_skills_as_tools_with_their_parameters_typed(
    recorded: webmem.Memory,
) -> None:
    create_ticket(recorded, "Export fails", "carol", "critical", replay="replayed")
    skills = recorded.skills.list(SITE)
    create = skills[0]
    assert create.name == "create_ticket" and create.status == "verified"
    tool = skill_tool(create)
    assert tool.name == "skill_create_ticket" and tool.title == create.template
    assert (tool.description or "").startswith(create.description + "\nStatus: verified (a replay did a new instance")
    assert "Record: recorded 2 times; 1 replays: 1 done, 0 handed over, 0 failed." in (tool.description or "")
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "summary": {"type": "string", "description": 'text: typed into textbox "Summary" (for example Export '
                                                         'fails)'},
            "owner": {"type": "string", "enum": list(OWNERS),
                      "description": 'choice: chosen in the combobox labelled "Owner" (for example carol)'},
            "priority": {"type": "string", "enum": list(PRIORITIES),
                         "description": 'choice: chosen in combobox "Priority" (for example critical)'},
        },
        "required": ["summary", "owner", "priority"],
        "additionalProperties": False,
    }
    counted = create.model_copy(update={"parameters": [create.parameters[0].model_copy(update={"kind": "number"})]})
    assert skill_tool(counted).input_schema["properties"]["summary"]["type"] == "number"
    secret = create.model_copy(update={"parameters": [create.parameters[0].model_copy(update={"kind": "secret"})]})
    assert skill_tool(secret).input_schema["properties"] == {}  # webmem types a secret: never asked

    many = [create.model_copy(update={"name": f"task {number}", "status": "withdrawn" if number % 3 == 0 else
                                      "unverified"}) for number in range(12)]
    chosen = offered(many)
    assert len(chosen) == MAX_SKILL_TOOLS == 8
    assert [skill.name for skill in chosen] == [f"task {n}" for n in range(12) if n % 3][:8]  # in the order given
    assert tool_name(chosen[0]) == "skill_task_1"

    assert [skill.name for skill in find(skills, "search for tickets")] == ["search_tickets", "create_ticket"]
    assert [skill.name for skill in find(skills, "created ticket")] == ["create_ticket", "search_tickets"]
    assert find(skills, "delete a wiki page") == [] and find(skills, "the") == skills
