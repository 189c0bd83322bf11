"""End to end in real headless Chromium: page states are real aria snapshots. Two similar local pages
pass the IoU filter and bring back memories; a dissimilar page does not; a filled password field,
which the snapshot shows in clear, is stored as a placeholder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import rows

import webmem
from webmem import EnvironmentState
from webmem.demo.server import serve_site
from webmem.episodes.aria import element_iou, environment_from_snapshot, parse_aria_snapshot

SITE = Path(__file__).parent / "sites" / "episodes"
GOAL = "Set the priority of the ticket to High"
PASSWORD = "Sw0rdfish: not-registered"
EMAIL = "agent.smith@example.com"


@pytest.fixture(scope="module")
def episode_site() -> Iterator[str]:
    with serve_site(SITE) as url:
        yield url


def snapshot_env(page: Any) -> EnvironmentState:
    return environment_from_snapshot(page.url, page.title(), page.aria_snapshot(mode="ai"))


def test_similar_pages_pass_the_iou_filter_and_bring_back_memories(
    mem: webmem.Memory, page: Any, episode_site: str
) -> None:
    episodes = mem.episodes
    page.goto(episode_site + "ticket.html")
    ticket = snapshot_env(page)
    assert {("combobox", "Priority"), ("button", "Delete ticket"), ("option", "High"), ("link", "Tickets")} <= (
        ticket.element_keys())
    assert len(ticket.elements) == 13

    # rep 1 on ticket 4021: a wrong click, then the right one
    assert episodes.init_episode("triage").rep == 1
    assert episodes.retrieve_memories(ticket, GOAL) == []
    page.get_by_role("button", name="Delete ticket").click()
    wrong = episodes.record_step_start(ticket, GOAL, "click('e18')", "Delete ticket")
    episodes.record_step_end(wrong, snapshot_env(page))
    page.get_by_role("combobox", name="Priority").select_option("High")
    right = episodes.record_step_start(ticket, GOAL, "select_option('e11', 'High')", "Priority")
    episodes.record_step_end(right, snapshot_env(page))
    stored = episodes.persist_memories()
    assert [e.env_pre.url for e in stored] == [episode_site + "ticket.html"] * 2
    episodes.add_grades_to_memories({"task_completed": True, "step_grades": [
        {"step_number": 1, "is_correct": False, "explanation": "Deleting is not changing the priority",
         "correction": "Choose High in the Priority dropdown"},
        {"step_number": 2, "is_correct": True, "explanation": "Priority set to High"},
    ]})

    # rep 2 on ticket 4022: the same form with one more button
    page.goto(episode_site + "ticket_assign.html")
    similar = snapshot_env(page)
    iou = element_iou(ticket, similar)
    assert iou == 13 / 14 and iou >= 0.7
    assert episodes.init_episode("triage").rep == 2
    found = episodes.retrieve_memories(similar, GOAL)
    assert sorted((m.advice, m.entry.action) for m in found) == [
        ("AVOID", "click('e18')"), ("REPEAT", "select_option('e11', 'High')")]
    assert {m.environment_similarity for m in found} == {13 / 14}
    text = webmem.export_memories(found, "prompt")
    assert "AVOID: [/ticket.html " in text and "Do this instead: Choose High in the Priority dropdown" in text


def test_a_dissimilar_page_fails_the_iou_filter(open_memory: Any, page: Any, site_url: str) -> None:
    with open_memory() as mem:
        episodes = mem.episodes
        page.goto(site_url + "login.html")
        login = snapshot_env(page)
        page.goto(site_url + "product.html")
        product = snapshot_env(page)
        assert ("button", "Add to cart") in product.element_keys() and ("textbox", "Password") in login.element_keys()
        iou = element_iou(login, product)
        assert iou < 0.7
        assert iou == 2 / 7  # only the two header links are shared

        episodes.init_episode("shop")
        step = episodes.record_step_start(login, "sign in first", "click('f1e14')", "Sign in")
        episodes.record_step_end(step, login)
        episodes.persist_memories()
        episodes.add_grades_to_memories({"task_completed": False, "step_grades": [
            {"step_number": 1, "is_correct": False, "explanation": "Fields were empty", "correction": "Fill them first"}]})

        episodes.init_episode("shop")
        assert episodes.retrieve_memories(product, "sign in first") == []
        # the same page again does bring the memory back: the filter, not an empty store, said no
        assert [m.entry.action for m in episodes.retrieve_memories(login, "sign in first")] == ["click('f1e14')"]
        lenient = webmem.EpisodeStore(mem.scope, env_threshold=0.25)
        assert len(lenient.retrieve_memories(product, "sign in first", episode=episodes.current)) == 1


def test_a_filled_password_field_is_stored_as_a_placeholder(open_memory: Any, page: Any, site_url: str) -> None:
    with open_memory(secrets={"email": EMAIL}) as mem:
        page.goto(site_url + "login.html")
        before = snapshot_env(page)
        page.get_by_role("textbox", name="Email").fill(EMAIL)
        page.get_by_role("textbox", name="Password").fill(PASSWORD)
        snapshot = page.aria_snapshot(mode="ai")
        assert PASSWORD in snapshot  # Chromium shows the value in clear
        filled = environment_from_snapshot(page.url, page.title(), snapshot)
        values = {e.name: e.value for e in filled.elements if e.role == "textbox"}
        assert values == {"Email": EMAIL, "Password": PASSWORD}

        episodes = mem.episodes
        episodes.init_episode("login")
        typed = episodes.record_step_start(before, "log in", "fill('f1e12', '{password}')", "Password")
        episodes.record_step_end(typed, filled)
        submit = episodes.record_step_start(filled, "log in", "click('f1e14')", "Sign in")
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/account.html")
        episodes.record_step_end(submit, snapshot_env(page))
        episodes.persist_memories()

        run = mem.start_run(goal="log in", start_url=site_url + "login.html", episode="login")
        run.record_step(action="fill", target='textbox "Password"', value=PASSWORD, url=site_url + "login.html",
                        env_pre=filled, env_post=filled, internal_state="log in")

        entries = episodes.load_all_memories_for_session("login")
        assert len(entries) == 3
        first, second, third = entries
        assert first.env_post is not None
        stored_values = {e.name: e.value for e in first.env_post.elements if e.role == "textbox"}
        assert stored_values == {"Email": "{email}", "Password": "{password}"}
        assert {e.name: e.value for e in second.env_pre.elements if e.role == "textbox"} == stored_values
        assert third.action == "fill('textbox \"Password\"', '{password}')"
        assert third.env_pre.model_dump() == second.env_pre.model_dump()
        data = rows.stored_bytes(mem)
    assert b"{password}" in data and b"{email}" in data
    assert PASSWORD.encode() not in data and b"Sw0rdfish" not in data
    assert EMAIL.encode() not in data


def test_names_that_need_yaml_quoting_are_parsed_from_a_real_snapshot(page: Any) -> None:
    page.set_content(
        '<button>Step 2: confirm</button><button>It\'s #1 - ok</button><a href="#x">Say "hi"</a>'
        '<input aria-label="Note: here" value="a: b"><select aria-label="Size"><option>Size: M</option></select>'
    )
    elements = parse_aria_snapshot(page.aria_snapshot(mode="ai"))
    assert [(e.role, e.name, e.value) for e in elements] == [
        ("button", "Step 2: confirm", None), ("button", "It's #1 - ok", None), ("link", 'Say "hi"', None),
        ("textbox", "Note: here", "a: b"), ("combobox", "Size", None), ("option", "Size: M", None),
    ]
