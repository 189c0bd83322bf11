"""What a replay says about each step (hit, healed, stale, missed), and what it does with it, in real
headless Chromium on local pages: fields found by their label when the page reorders them, a layout
whose labels differ handed over, a target whose name changes on every load healed by its role, a
detour through tabs skipped once the goal's word is on the page, and a renamed button recorded as
a site change that stops replays of what was remembered there until a run succeeds again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from click.testing import CliRunner
from test_agent_loop import ScriptedPolicy

import webmem
from webmem import InvalidInput, ReplayedStep, ReplayReport, Step
from webmem.agent import Action, Agent, Target, Turn
from webmem.cli import cli
from webmem.context import SITE_CHANGED_NOTE
from webmem.core.urls import domain_of
from webmem.demo.server import serve_site
from webmem.trajectories.binding import bind
from webmem.trajectories.slots import parameterise

PAGES = Path(__file__).parent / "sites" / "replay"


def _page_verdict() -> Any:
    from test_replay_handover import PageVerdict

    return PageVerdict()


def run(page: Any, mem: Any, url: str, goal: str, policy: ScriptedPolicy) -> Any:
    return Agent(page, memory=mem, policy=policy, environment=_page_verdict(), max_turns=12).run(goal, url=url)


MOVIE_GOAL = "Search for {genre} movies directed by {director} from year {year}"


def movie(genre: str, director: str, year: str) -> tuple[str, dict[str, str]]:
    return MOVIE_GOAL.format(genre=genre, director=director, year=year), {
        "genre": genre, "director": director, "year": year}


def fill_movie_form(values: dict[str, str], button: str = "Search") -> Any:
    """Fills each field by the label beside it (``Year:`` or ``Released in`` for the year...), then searches."""
    wanted = {"year": values["year"], "director": values["director"], "genre": values["genre"]}
    words = {"year": ("year", "released"), "director": ("director", "directed"), "genre": ("genre",)}

    def decide(turn: Turn) -> Action:
        for box in turn.observation.find("textbox", ""):
            key = next(key for key, said in words.items() if any(w in box.label.lower() for w in said))
            if box.value != wanted[key]:
                return Action("fill", Target(ref=box.ref), value=wanted[key])
        return Action("click", Target(role="button", name=button))

    return decide


def movies_url(base: str, values: dict[str, str], **page: str) -> str:
    return f"{base}movies.html?{urlencode({**values, **page})}"


def search_once(page: Any, mem: Any, base: str) -> None:
    goal, values = movie("comedy", "Ford", "1999")
    assert run(page, mem, movies_url(base, values), goal, ScriptedPolicy(fill_movie_form(values))).success


def test_a_lowercase_word_the_run_typed_from_its_goal_becomes_a_slot() -> None:
    goal, _ = movie("comedy", "Ford", "1999")
    steps = [{"action": "fill", "target": 'textbox ""', "value": value} for value in ("1999", "Ford", "comedy")]
    template, slotted = parameterise(goal, [Step(**step) for step in steps])
    assert template == "Search for {1} movies directed by {2} from year {3}"
    assert [step.value for step in slotted] == ["{3}", "{2}", "{1}"]
    assert bind(template, movie("western", "Leone", "1966")[0]) == {1: "western", 2: "Leone", 3: "1966"}
    # a word the run did not type stays part of the template
    assert parameterise("Search for comedy movies", [Step(action="click", target='button "Search"')]) is None


def test_fields_the_page_put_in_another_order_are_found_by_their_label(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        goal, values = movie("comedy", "Ford", "1999")
        assert run(page, mem, movies_url(base, values, order="ydg"), goal, ScriptedPolicy(fill_movie_form(values))).success
        assert [step.label for step in mem.runs.steps(mem.runs.list()[0].run_id)][:3] == ["Year:", "Director:", "Genre:"]
        goal, values = movie("western", "Leone", "1966")
        untouched = ScriptedPolicy(fill_movie_form(values))
        result = run(page, mem, movies_url(base, values, order="gdy"), goal, untouched)
    assert result.success and result.replay_outcome == "replayed" and untouched.stats.decisions == 0
    statuses = [(step.step, step.status, step.reason) for step in result.replay_steps]
    assert statuses[0] == (1, "healed", "found by its row 'Year:': the page put it elsewhere")
    assert statuses[1] == (2, "hit", None)  # the director stayed in the middle
    assert statuses[2][1] == "healed" and statuses[3] == (4, "hit", None)
    assert mem.get_run(result.run_id).manifest.replay.steps == result.replay_steps


def test_fields_of_another_layout_are_not_filled_by_their_place(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        search_once(page, mem, base)
        goal, values = movie("drama", "Kurosawa", "1954")
        fallback = ScriptedPolicy(fill_movie_form(values))
        result = run(page, mem, movies_url(base, values, order="gyd", labels="long"), goal, fallback)
    assert result.success and result.replay_outcome == "handed_over" and result.replay_step == 1
    (step,) = result.replay_steps
    assert step.status == "missed" and "labelled 'Year:'" in step.reason and "'Released in'" in step.reason
    assert fallback.stats.decisions == 4  # nothing was typed into a field by its place alone


def test_a_target_whose_name_changes_on_every_load_is_healed_by_its_role(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    goal = "Expand the section below and click submit."

    def expand(turn: Turn) -> Action:
        shown = turn.observation.find("button", "Submit")
        return Action("click", Target(role="button", name="Submit")) if shown else \
            Action("click", Target(ref=turn.observation.find("tab", None)[0].ref))

    with serve_site(PAGES) as base:
        assert run(page, mem, f"{base}section.html?name=Section+17", goal, ScriptedPolicy(expand)).success
        once = ScriptedPolicy(expand)
        second = run(page, mem, f"{base}section.html?name=Section+4", goal, once)
        # one earlier run does not tell a name that changes from a site that changed: hand over
        assert second.success and second.replay_outcome == "handed_over" and once.stats.decisions == 2
        assert [(s.status, s.reason) for s in second.replay_steps] == [("missed", 'tab "Section 17" is not on the page')]
        untouched = ScriptedPolicy(expand)
        third = run(page, mem, f"{base}section.html?name=Section+9", goal, untouched)
    assert third.success and third.replay_outcome == "replayed" and untouched.stats.decisions == 0, third.replay_steps
    healed = third.replay_steps[0]
    assert healed.status == "healed" and 'the page has one: tab "Section 9"' in healed.reason
    assert "2 different names" in healed.reason
    assert [s.status for s in third.replay_steps[1:]] == ["hit"]


def click_word_searching_tabs(turn: Turn) -> Action:
    word = turn.goal.split('"')[1]
    if word in turn.observation.snapshot:
        return Action("click", Target(role="text", name=word))
    clicked = sum(1 for outcome in turn.history if outcome.action.target and outcome.action.target.role == "link")
    return Action("click", Target(role="link", name=f"Tab {clicked + 1}"))


def test_a_detour_through_tabs_is_skipped_once_the_page_shows_what_the_goal_names(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        first = run(page, mem, f"{base}tabs.html?word=lorem&at=3", 'Find and click the word "lorem"',
                    ScriptedPolicy(click_word_searching_tabs))
        assert first.success
        assert [s.target for s in mem.runs.steps(first.run_id)] == [
            'link "Tab 1"', 'link "Tab 2"', 'link "Tab 3"', 'text "lorem"']
        results = {}
        for at in (2, 1):
            untouched = ScriptedPolicy(click_word_searching_tabs)
            results[at] = run(page, mem, f"{base}tabs.html?word=ipsum&at={at}", 'Find and click the word "ipsum"',
                              untouched)
            assert results[at].success and results[at].replay_outcome == "replayed", results[at].reason
            assert untouched.stats.decisions == 0
    # with the word in tab 2, the replay looks in tab 1 and tab 2 as the earlier run did, then skips tab 3
    assert [(s.step, s.status) for s in results[2].replay_steps] == [
        (1, "hit"), (2, "hit"), (3, "missed"), (4, "hit")]
    # with the word in the open tab, it goes straight to the word (replaying the run just above)
    assert [(s.step, s.status) for s in results[1].replay_steps] == [(1, "missed"), (2, "missed"), (3, "hit")]
    assert results[1].replay_steps[0].reason == 'skipped: the page already shows text "ipsum", which step 3 acts on'



def click_link_opening_tabs(turn: Turn) -> Action:
    """Clicks the link the goal names once it shows, else opens the first closed tab not opened yet."""
    word = turn.goal.split('"')[1]
    if turn.observation.find("link", word):
        return Action("click", Target(role="link", name=word))
    opened = {outcome.action.target.name for outcome in turn.history if outcome.action.target}
    closed = [tab for tab in turn.observation.find("tab", None) if not tab.open and tab.name not in opened]
    if not closed:
        return Action("finish", success=False, reason="no tab left")
    return Action("click", Target(role="tab", name=closed[0].name))


def tabbed(base: str, word: str, at: int, **page: Any) -> str:
    return f"{base}tabbed.html?{urlencode({'word': word, 'at': at, **page})}"


def test_replay_opens_the_pages_tabs_to_find_a_link_the_goal_names(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        first = run(page, mem, tabbed(base, "lorem", 2), 'Click the link "lorem"', ScriptedPolicy(click_link_opening_tabs))
        assert first.success
        assert [s.target for s in mem.runs.steps(first.run_id)] == ['tab "Tab #2"', 'link "lorem"']
        untouched = ScriptedPolicy(click_link_opening_tabs)
        behind = run(page, mem, tabbed(base, "ipsum", 3), 'Click the link "ipsum"', untouched)
        assert behind.success and behind.replay_outcome == "replayed", behind.reason
        assert untouched.stats.decisions == 0
        # the earlier run's tab first, then the closed tabs in the page's order, never a link
        assert [s.target for s in mem.runs.steps(behind.run_id)] == [
            'tab "Tab #2"', 'tab "Tab #1"', 'tab "Tab #3"', 'link "ipsum"']
        assert [(s.step, s.status) for s in behind.replay_steps] == [(1, "hit"), (2, "healed")]
        assert behind.replay_steps[1].reason == "found behind tab 'Tab #3', the second tab opened looking for it"
        # a link behind no tab: every closed tab opened once, then the policy takes over
        fallback = ScriptedPolicy(click_link_opening_tabs)
        nowhere = run(page, mem, tabbed(base, "dolor", 9), 'Click the link "dolor"', fallback)
    # (replaying the run just above, whose steps open the three tabs)
    assert not nowhere.success and nowhere.replay_outcome == "handed_over" and nowhere.replay_step == 4
    assert nowhere.replay_steps[-1].status == "missed"
    assert nowhere.replay_steps[-1].reason == 'link "dolor" is not on the page, nor behind any of the 3 tabs this replay opened'
    assert [s.target for s in mem.runs.steps(nowhere.run_id)][:3] == ['tab "Tab #2"', 'tab "Tab #1"', 'tab "Tab #3"']


def test_replay_opens_tabs_drawn_as_anchors_inside_unnamed_tabs(open_memory: Any, page: Any) -> None:
    mem = open_memory()

    def open_tab_links(turn: Turn) -> Action:
        word = turn.goal.split('"')[1]
        if turn.observation.find("link", word):
            return Action("click", Target(role="link", name=word))
        clicked = sum(1 for outcome in turn.history if outcome.action.target)
        return Action("click", Target(role="link", name=f"Tab #{clicked + 1}"))

    with serve_site(PAGES) as base:
        goal = 'Switch between the tabs to find and click on the link "{}".'
        first = run(page, mem, tabbed(base, "lorem", 2, kind="anchors"), goal.format("lorem"),
                    ScriptedPolicy(open_tab_links))
        assert [s.target for s in mem.runs.steps(first.run_id)] == ['link "Tab #1"', 'link "Tab #2"', 'link "lorem"']
        untouched = ScriptedPolicy(open_tab_links)
        third = run(page, mem, tabbed(base, "ipsum", 3, kind="anchors"), goal.format("ipsum"), untouched)
    assert third.success and third.replay_outcome == "replayed" and untouched.stats.decisions == 0, third.reason
    assert [s.target for s in mem.runs.steps(third.run_id)] == [
        'link "Tab #1"', 'link "Tab #2"', 'link "Tab #3"', 'link "ipsum"']
    assert third.replay_steps[-1].reason == "found behind tab 'Tab #3', the first tab opened looking for it"


def test_replay_skips_a_section_the_page_no_longer_has_and_opens_the_others(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    goal = 'Expand the sections to find and click the link "{}"'

    def straight_to_section_3(turn: Turn) -> Action:
        word = turn.goal.split('"')[1]
        if turn.observation.find("link", word):
            return Action("click", Target(role="link", name=word))
        return Action("click", Target(role="tab", name="Section #3"))

    with serve_site(PAGES) as base:
        first = run(page, mem, tabbed(base, "lorem", 3, kind="accordion"), goal.format("lorem"),
                    ScriptedPolicy(straight_to_section_3))
        assert first.success
        assert [s.target for s in mem.runs.steps(first.run_id)] == ['tab "Section #3"', 'link "lorem"']
        untouched = ScriptedPolicy(click_link_opening_tabs)
        fewer = run(page, mem, tabbed(base, "ipsum", 2, kind="accordion", count=2), goal.format("ipsum"), untouched)
    assert fewer.success and fewer.replay_outcome == "replayed", fewer.reason
    assert untouched.stats.decisions == 0
    assert [s.target for s in mem.runs.steps(fewer.run_id)] == ['tab "Section #1"', 'tab "Section #2"', 'link "ipsum"']
    assert [(s.step, s.status) for s in fewer.replay_steps] == [(1, "missed"), (2, "healed")], fewer.replay_steps
    assert fewer.replay_steps[0].reason == ('skipped: tab "Section #3" is not on the page; looking behind the '
                                            "page's tabs for what step 2 acts on")
    assert fewer.replay_steps[1].reason == "found behind tab 'Section #2', the second tab opened looking for it"


def test_a_button_every_earlier_run_found_gone_is_a_site_change(
    open_memory: Any, page: Any, events: list[dict[str, Any]]
) -> None:
    mem = open_memory(on_event=events.append)
    with serve_site(PAGES) as base:
        for genre, director, year in (("comedy", "Ford", "1999"), ("horror", "Craven", "1984")):
            goal, values = movie(genre, director, year)
            assert run(page, mem, movies_url(base, values), goal, ScriptedPolicy(fill_movie_form(values))).success
        assert 'button "Search"' in [entry.element for entry in mem.selectors.list(domain_of(base))]
        goal, values = movie("drama", "Kurosawa", "1954")
        fallback = ScriptedPolicy(fill_movie_form(values, button="Find"))
        changed = run(page, mem, movies_url(base, values, button="Find"), goal, fallback)
        assert changed.success and changed.replay_outcome == "handed_over" and changed.replay_step == 4
        assert [s.status for s in changed.replay_steps] == ["hit", "hit", "hit", "stale"]
        domain = domain_of(base)
        (fact,) = mem.knowledge.facts(domain, type="site_changed")
        assert fact.key == "/movies.html" and 'button "Search"' in fact.value and "not on the page" in fact.value
        (event,) = [e for e in events if e["event"] == "site_changed"]
        assert event["page"] == "/movies.html" and event["stale_selectors"] == 1
        assert 'button "Search"' not in [entry.element for entry in mem.selectors.list(domain)]
        # what was remembered before the change is not replayed, and is given only with a warning ...
        goal, values = movie("western", "Leone", "1966")
        old = [t for t in mem.trajectories.list() if t.created_at < fact.last_seen]
        with mem.store.read() as conn:
            assert all(mem.site_changes.stale_since(conn, t) == fact.last_seen for t in old) and len(old) == 2
        # ... while the run that found its way after the change is replayed from now on
        plan = mem.trajectories.find_replay(goal, base)
        assert plan is not None and plan.trajectory.run_id == changed.run_id
        untouched = ScriptedPolicy(fill_movie_form(values, button="Find"))
        after = run(page, mem, movies_url(base, values, button="Find"), goal, untouched)
    assert after.success and after.replay_outcome == "replayed" and untouched.stats.decisions == 0
    outcome = [e for e in events if e["event"] == "replay_outcome" and e["run_id"] == changed.run_id]
    assert [step["status"] for step in outcome[0]["steps"]] == ["hit", "hit", "hit", "stale"]


def test_runs_show_lists_what_became_of_each_replayed_step_with_no_secret_in_it(tmp_path: Path) -> None:
    with webmem.Memory.open(tmp_path, secrets={"token": "Sesame-8841"}) as mem:
        saved = mem.trajectories.save(goal="Press Submit", start_url="http://127.0.0.1:9/",
                                      steps=[Step(action="click", target='button "Submit"')])
        run_ = mem.start_run(goal="Press Submit", start_url="http://127.0.0.1:9/")
        steps = [ReplayedStep(step=1, action="fill", target='textbox "Code"', status="healed",
                              reason="found by its label 'Code': the page put it elsewhere"),
                 ReplayedStep(step=2, action="click", target='button "Submit"', status="stale",
                              reason='button "Submit" is not on the page (typed Sesame-8841)')]
        run_.finish(success=False, replay=ReplayReport(outcome="handed_over", trajectory_id=saved.id, step=2,
                                                       reason="step 2: gone", steps=steps))
    shown = CliRunner().invoke(cli, ["--memory-dir", str(tmp_path), "runs", "show", run_.id], catch_exceptions=False)
    assert shown.exit_code == 0 and "Replay" in shown.stdout
    flat = " ".join(shown.stdout.split())
    assert "healed" in flat and "stale" in flat and "the page put it elsewhere" in flat
    data = json.loads(CliRunner().invoke(cli, ["--memory-dir", str(tmp_path), "runs", "show", run_.id, "--json"]).stdout)
    assert [step["status"] for step in data["replay"]["steps"]] == ["healed", "stale"]
    assert "Sesame-8841" not in (tmp_path / "memory.db").read_bytes().decode("utf-8", "replace")
    assert "{token}" in data["replay"]["steps"][1]["reason"]


def test_a_reference_recorded_before_the_site_changed_says_so(open_memory: Any) -> None:
    mem = open_memory()
    url = "https://shop.example/search"
    for goal in ('Search the shop for "blue shoes"', 'Search the shop for "red shoes"'):
        run_ = mem.start_run(goal=goal, start_url=url)
        run_.record_step(action="click", target='button "Search"', url=url)
        run_.finish(success=True)
    mem.site_changes.record(url, 'button "Search" is not on the page', elements=['button "Search"'])
    later = mem.start_run(goal='Search the shop for "green shoes"', start_url=url)
    pack = later.context(url=url)
    assert "reference_trajectory" in pack.included, pack.text
    reference = pack.text.split("REFERENCE TRAJECTORY")[1]
    assert SITE_CHANGED_NOTE.split("{when}")[0] in reference.splitlines()[1]  # on the goal's line
    assert mem.trajectories.find_replay('Search the shop for "blue shoes"', url) is None


def test_one_earlier_run_is_not_enough_to_call_a_missing_button_a_site_change(open_memory: Any, page: Any) -> None:
    mem = open_memory()
    with serve_site(PAGES) as base:
        search_once(page, mem, base)
        goal, values = movie("drama", "Kurosawa", "1954")
        result = run(page, mem, movies_url(base, values, button="Find"), goal,
                     ScriptedPolicy(fill_movie_form(values, button="Find")))
    assert result.success and [s.status for s in result.replay_steps] == ["hit", "hit", "hit", "missed"]
    assert mem.knowledge.facts(domain_of(base), type="site_changed") == []


def test_a_stale_selector_is_withheld_until_it_works_again(open_memory: Any) -> None:
    mem = open_memory()
    mem.selectors.record("shop.example", 'button "Search"', "#search")
    mem.selectors.record("shop.example", 'link "Home"', "#home")
    fact = mem.site_changes.record("https://shop.example/search", 'button "Search" is not on the page',
                                   elements=['button "Search"', 'button "Never recorded"'])
    assert [entry.element for entry in mem.selectors.list("shop.example")] == ['link "Home"']
    assert "#search" not in mem.selectors.format_for_prompt("shop.example")
    assert fact.type == "site_changed" and fact.key == "/search"
    again = mem.selectors.record("shop.example", 'button "Search"', "#search-v2")
    assert again.success_count == 2 and again.stale_since is not None and again.last_used > again.stale_since
    assert 'button "Search"' in [entry.element for entry in mem.selectors.list("shop.example")]


def test_recording_a_site_change_checks_what_it_is_given(open_memory: Any) -> None:
    mem = open_memory()
    for url, evidence, elements, problem in (
        ("not a url", "gone", (), "url"),
        ("https://shop.example/", "  ", (), "evidence"),
        ("https://shop.example/", None, (), "evidence"),
        ("https://shop.example/", "gone", 'button "Search"', "elements"),
    ):
        with pytest.raises(InvalidInput, match=problem):
            mem.site_changes.record(url, evidence, elements=elements)
    assert mem.knowledge.facts("shop.example", type="site_changed") == []


PLACE_GOAL = 'Enter "{word}" into the {place} textbox and press Submit.'


def fill_the_named_box(turn: Turn) -> Action:
    """Fills the box whose place the goal names (as a person would read "2nd"), then submits."""
    boxes = turn.observation.find("textbox", "")
    place = int(turn.goal.split(" textbox")[0].rsplit(" ", 1)[1][:-2])
    word = turn.goal.split('"')[1]
    if boxes[place - 1].value != word:
        return Action("fill", Target(ref=boxes[place - 1].ref), value=word)
    return Action("click", Target(role="button", name="Submit"))


def places_url(base: str, word: str, place: int) -> str:
    return f"{base}places.html?{urlencode({'word': word, 'place': place})}"


def test_the_place_a_goal_names_chooses_which_of_the_same_named_fields_replay_fills(
    open_memory: Any, page: Any
) -> None:
    """'the 2nd textbox' recorded, 'the 3rd textbox' replayed with no decision: the goal's ordinal is a slot
    that picks the element among the same-named ones; a place the page does not have is not guessed."""
    mem = open_memory()
    with serve_site(PAGES) as base:
        recorded = run(page, mem, places_url(base, "apple", 2), PLACE_GOAL.format(word="apple", place="2nd"),
                       ScriptedPolicy(fill_the_named_box))
        assert recorded.success
        [trajectory] = mem.trajectories.list()
        assert trajectory.goal_template == 'Enter "{1}" into the {2} textbox and press {3}.'
        untouched = ScriptedPolicy(fill_the_named_box)
        replayed = run(page, mem, places_url(base, "pear", 3), PLACE_GOAL.format(word="pear", place="3rd"), untouched)
        assert replayed.success and replayed.replay_outcome == "replayed" and untouched.stats.decisions == 0
        assert page.evaluate("() => Array.from(document.querySelectorAll('input')).map(box => box.value)") == [
            "", "", "pear"]
        assert {stored.goal_template for stored in mem.trajectories.list()} == {trajectory.goal_template}  # one task
        lookup = mem.trajectories.search_replay(PLACE_GOAL.format(word="fig", place="5th"), origin=base)
    assert lookup.plan is None and 'the goal\'s "5th" names no place among the 3' in lookup.reason


def test_a_link_the_goal_names_is_looked_for_behind_tabs_never_skipped() -> None:
    """Two steps the goal names, the first a link behind a closed tab: replay opens the tab and clicks the
    link, and does not jump to the second step as if the link were a detour."""
    from datetime import UTC, datetime

    from webmem import Trajectory
    from webmem.agent.observation import Observation, parse_snapshot
    from webmem.agent.policy import StepOutcome
    from webmem.agent.replay import ReplayPolicy
    from webmem.trajectories.plans import ReplayPlan

    steps = [Step(action="click", target='link "ipsum"'), Step(action="click", target='button "Go"')]
    trajectory = Trajectory(id="traj_1", goal='Click "ipsum" then "Go"', origin="http://127.0.0.1:9",
                            domain="127.0.0.1:9", steps=steps, success=True, duration_ms=1, created_at=datetime.now(UTC))
    plan = ReplayPlan(trajectory, steps, {}, None, goal_targets=frozenset({0, 1}))
    replay = ReplayPolicy(plan, ScriptedPolicy(lambda turn: Action("finish")))
    closed = '- tablist:\n  - tab "One" [selected] [ref=e1]\n  - tab "Two" [ref=e2]\n- button "Go" [ref=e3]'
    opened = closed.replace(" [selected]", "").replace('"Two" [ref=e2]', '"Two" [selected] [ref=e2]') + \
        '\n- link "ipsum" [ref=e4]'
    history: list[StepOutcome] = []
    done = []
    for number, snapshot in enumerate([closed, opened, opened, opened], start=1):
        page = Observation("http://127.0.0.1:9/", "Tabs", snapshot, *parse_snapshot(snapshot))
        action = replay.decide(Turn(goal=trajectory.goal, observation=page, number=number, history=tuple(history)))
        done.append(action.describe())
        history.append(StepOutcome(action=action, ok=True, verified=None))
    assert done[:3] == ['click tab "Two"', 'click link "ipsum"', 'click button "Go"']
    assert [(s.step, s.status) for s in replay.steps] == [(1, "healed"), (2, "hit")]
