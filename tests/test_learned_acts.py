"""Acts learned from a site's own recordings: two goals one word apart whose runs did the same steps teach that the
two words name one act there, and a later goal in one word reaches a task recorded in the other; nothing is
learned from runs that did other steps, on other kinds of page, or nothing at all, and what a deleted trajectory
taught goes with it."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import rows
import webmem
from webmem.cli import cli
from webmem.trajectories import acts
from webmem.trajectories.acts import differing_phrases

SITE = "http://notes.example.test"


def archived(name: str, page: str = "notes", button: str = "Archive") -> list[webmem.Step]:
    return [webmem.Step(action="click", target=f'link "{name}"', url=f"{SITE}/{page}/"),
            webmem.Step(action="click", target=f'button "{button}"', url=f"{SITE}/{page}/17")]


def site(mem: webmem.Memory) -> None:
    """Two tasks on projects, one on notes: "hide" is said nowhere yet."""
    mem.trajectories.save(goal="Archive the project Apollo", start_url=SITE, steps=archived("Apollo", "projects"))
    mem.trajectories.save(goal="Share the project Zeus with Ann", start_url=SITE, steps=[
        webmem.Step(action="click", target='link "Zeus"', url=f"{SITE}/projects/"),
        webmem.Step(action="fill", target='textbox "Email"', value="Ann", url=f"{SITE}/projects/4")])
    mem.trajectories.save(goal="Archive the note Groceries", start_url=SITE, steps=archived("Groceries"))


def test_two_words_that_did_the_same_steps_name_one_act_on_that_site(mem: webmem.Memory) -> None:
    site(mem)
    query = "Hide the project Hermes"
    assert mem.trajectories.match(query, origin=SITE).best is None
    mem.trajectories.save(goal="Hide the note Recipes", start_url=SITE, steps=archived("Recipes"))

    report = mem.trajectories.match(query, origin=SITE, limit=3)
    assert report.best is not None and report.best.goal == "Archive the project Apollo"
    winner = report.candidates[0]
    assert winner.similarity == 1.0
    assert winner.why.startswith('"hide" read as "archive" (goals in both words did the same steps on this site)')
    assert mem.trajectories.find_best_match(query, origin=SITE).goal == "Archive the project Apollo"
    # a goal that fits a stored goal as it is worded keeps it
    assert mem.trajectories.match("Hide the note Zebra", origin=SITE).best.goal == "Hide the note Recipes"
    # what was learned gives a reference, never a replay: the word was learned on another task
    assert mem.trajectories.search_replay(query, SITE).plan is None


def test_a_phrase_is_learned_as_a_word_is(mem: webmem.Memory) -> None:
    def looked_up(number: str, page: str) -> list[webmem.Step]:
        return [webmem.Step(action="fill", target='searchbox "Number"', value=number, url=f"{SITE}/{page}/"),
                webmem.Step(action="click", target='button "Track"', url=f"{SITE}/{page}/")]

    mem.trajectories.save(goal="Look up the parcel 77", start_url=SITE, steps=looked_up("77", "parcels"))
    mem.trajectories.save(goal="Cancel the order 12", start_url=SITE, steps=[
        webmem.Step(action="click", target='button "Cancel 12"', url=f"{SITE}/orders/")])
    mem.trajectories.save(goal="Look up the order 12", start_url=SITE, steps=looked_up("12", "orders"))
    before = mem.trajectories.match("Track the parcel 91", origin=SITE, limit=1).candidates[0]
    assert before.similarity < 1.0 and "read as" not in before.why  # "look up" are words of no meaning alone
    mem.trajectories.save(goal="Track the order 40", start_url=SITE, steps=looked_up("40", "orders"))
    report = mem.trajectories.match("Track the parcel 91", origin=SITE, limit=1)
    assert report.best is not None and report.best.goal == "Look up the parcel 77"
    assert report.candidates[0].similarity == 1.0
    assert report.candidates[0].why == '"track" read as "look up" (goals in both words did the same steps on this ' \
                                       'site): fits the goal template'


def test_goals_without_values_teach_too(mem: webmem.Memory, open_memory) -> None:
    def all_of(kind: str, page: str) -> list[webmem.Step]:
        return [webmem.Step(action="click", target=f'button "Select {kind}"', url=f"{SITE}/{page}/"),
                webmem.Step(action="click", target='button "Archive"', url=f"{SITE}/{page}/")]

    mem.trajectories.save(goal="Archive all old projects", start_url=SITE, steps=all_of("old", "projects"))
    mem.trajectories.save(goal="Archive all read notes", start_url=SITE, steps=all_of("read", "notes"))
    before = mem.trajectories.match("Hide all old projects", origin=SITE, limit=1).candidates[0]
    assert before.similarity < 1.0
    mem.trajectories.save(goal="Hide all read notes", start_url=SITE, steps=all_of("read", "notes"))
    assert [act.words for act in mem.trajectories.learned_acts(SITE)] == [("archive", "hide")]
    after = mem.trajectories.match("Hide all old projects", origin=SITE, limit=1).candidates[0]
    assert after.trajectory.goal == "Archive all old projects" and after.similarity == 1.0
    assert after.why.startswith('"hide" read as "archive"')
    rows.execute(mem, "DELETE FROM act_words")
    assert [act.words for act in mem.trajectories.learned_acts(SITE, relearn=True)] == [("archive", "hide")]
    other = open_memory(namespace="imported")
    other.trajectories.import_trajectories(mem.trajectories.list(limit=10))
    assert [act.words for act in other.trajectories.learned_acts(SITE)] == [("archive", "hide")]


def test_words_another_process_learned_are_read_after_its_save(open_memory) -> None:
    mine, theirs = open_memory(), open_memory()
    site(mine)
    assert mine.trajectories.match("Hide the project Hermes", origin=SITE).best is None  # nothing learned yet
    theirs.trajectories.save(goal="Hide the note Recipes", start_url=SITE, steps=archived("Recipes"))
    mine.trajectories.save(goal="Rename the note Todo", start_url=SITE, steps=[
        webmem.Step(action="click", target='button "Rename"', url=f"{SITE}/notes/")])  # teaches nothing itself
    assert mine.trajectories.match("Hide the project Hermes", origin=SITE).best.goal == "Archive the project Apollo"


def test_what_a_site_taught_is_kept_across_processes(open_memory) -> None:
    first = open_memory()
    site(first)
    first.trajectories.save(goal="Hide the note Recipes", start_url=SITE, steps=archived("Recipes"))
    first.close()
    again = open_memory()
    assert again.trajectories.match("Hide the project Hermes", origin=SITE).best.goal == "Archive the project Apollo"


def only_looked(name: str) -> list[webmem.Step]:
    """A run that went to the notes and scrolled to one: it did nothing to it."""
    return [webmem.Step(action="goto", url=f"{SITE}/notes/"), webmem.Step(action="scroll", target=f'link "{name}"')]


@pytest.mark.parametrize(("archive", "hide"), [
    (archived("Groceries"), archived("Recipes", button="Delete")),  # it deleted the note: another act
    (archived("Groceries"), archived("Recipes", page="trash")),  # the same clicks on another kind of page
    (only_looked("Groceries"), only_looked("Recipes")),  # the same path, which did nothing on a page
])
def test_runs_that_did_other_steps_or_nothing_teach_nothing(mem: webmem.Memory, archive: list[webmem.Step],
                                                             hide: list[webmem.Step]) -> None:
    mem.trajectories.save(goal="Archive the project Apollo", start_url=SITE, steps=archived("Apollo", "projects"))
    mem.trajectories.save(goal="Share the project Zeus with Ann", start_url=SITE, steps=[
        webmem.Step(action="click", target='link "Zeus"', url=f"{SITE}/projects/")])
    mem.trajectories.save(goal="Archive the note Groceries", start_url=SITE, steps=archive)
    mem.trajectories.save(goal="Hide the note Recipes", start_url=SITE, steps=hide)
    report = mem.trajectories.match("Hide the project Hermes", origin=SITE, limit=3)
    assert not any("read as" in candidate.why for candidate in report.candidates)
    assert report.best is None or report.best.goal != "Archive the project Apollo"


def test_words_no_step_names_teach_nothing(mem: webmem.Memory) -> None:
    """Both runs opened the orders and read them: the goals differ in what was read, not in what was done."""
    opened = [webmem.Step(action="click", target='link "Orders"', url=f"{SITE}/")]
    mem.trajectories.save(goal="Show the pending orders of this week", start_url=SITE, steps=opened)
    mem.trajectories.save(goal="Show the completed orders of this week", start_url=SITE, steps=opened)
    assert mem.trajectories.learned_acts(SITE) == []
    assert mem.trajectories.learned_acts(SITE, relearn=True) == []


def test_a_pair_whose_other_trajectory_is_gone_is_not_kept(mem: webmem.Memory) -> None:
    """A save learns against a trajectory read before its write; another process may delete it in between."""
    site(mem)
    earlier = mem.trajectories.list(limit=1)[0]  # "Archive the note Groceries"
    taught = mem.trajectories.save(goal="Rename the note Todo", start_url=SITE, steps=archived("Todo"))
    with mem.store.write() as conn:
        acts.record(conn, mem.namespace, SITE, taught.id, [("hide", "rename", "traj_gone"),
                                                           ("archive", "rename", earlier.id)], taught.created_at)
    assert [act.other_id for act in mem.trajectories.learned_acts(SITE)] == [earlier.id]


def test_what_a_deleted_trajectory_taught_goes_with_it(mem: webmem.Memory) -> None:
    site(mem)
    taught = mem.trajectories.save(goal="Hide the note Recipes", start_url=SITE, steps=archived("Recipes"))
    assert mem.trajectories.match("Hide the project Hermes", origin=SITE).best.goal == "Archive the project Apollo"
    mem.forget.trajectory(taught.id)
    report = mem.trajectories.match("Hide the project Hermes", origin=SITE, limit=3)
    assert not any("read as" in candidate.why for candidate in report.candidates)


@pytest.mark.parametrize(("one", "other", "apart"), [
    ("Archive the note {1}", "Hide the note {1}", ("archive", "hide")),
    ("Star the email from {1}", "Flag the email from {1}", ("flag", "star")),
    ("Archive the note {1}", "Archive this note {1}", None),  # words that say nothing of the task
    ("Archive the note {1}", "Archive the notes {1}", None),  # two forms of one word
    ("Archive the note {1}", "Hide the memo {1}", None),  # two words apart
    ("Archive the note {1}", "Archive the note {2}", None),  # slots, not words
    ("Archive the note {1}", "Please hide the note {1}", ("archive", "hide")),  # politeness set aside
    ("Look up the order {1}", "Track the order {1}", ("look up", "track")),  # a phrase of up to three words
    ("Sign up with {1}", "Register with {1}", ("register", "sign up")),
    ("Delete {1}", "Remove {1}", None),  # too little alike around them
    ("Star the email from {1}", "Mark the email from {1} as important", None),  # apart at two places
])
def test_two_goals_apart_by_one_phrase(one: str, other: str, apart: tuple[str, str] | None) -> None:
    assert differing_phrases(one, other) == apart


def test_imported_recordings_teach_as_saved_ones_do(mem: webmem.Memory, open_memory) -> None:
    site(mem)
    mem.trajectories.save(goal="Hide the note Recipes", start_url=SITE, steps=archived("Recipes"))
    recorded = mem.trajectories.list(limit=10)[::-1]  # oldest first
    at_once, one_by_one = open_memory(namespace="imported"), open_memory(namespace="imported-one-by-one")
    assert at_once.trajectories.import_trajectories(recorded) == [True] * 4
    assert all(one_by_one.trajectories.import_trajectory(trajectory) for trajectory in recorded)
    for other in (at_once, one_by_one):
        assert [act.words for act in other.trajectories.learned_acts(SITE)] == [("archive", "hide")]
        assert other.trajectories.match("Hide the project Hermes", origin=SITE).best.goal == \
            "Archive the project Apollo"


def test_recordings_saved_before_webmem_learned_acts_teach_when_asked(mem: webmem.Memory) -> None:
    site(mem)
    mem.trajectories.save(goal="Hide the note Recipes", start_url=SITE, steps=archived("Recipes"))
    rows.execute(mem, "DELETE FROM act_words")  # as a memory of an earlier version holds them
    assert mem.trajectories.learned_acts(SITE) == []
    assert [act.words for act in mem.trajectories.learned_acts(SITE, relearn=True)] == [("archive", "hide")]
    assert [act.words for act in mem.trajectories.learned_acts(SITE, relearn=True)] == [("archive", "hide")]
    assert mem.trajectories.match("Hide the project Hermes", origin=SITE).best.goal == "Archive the project Apollo"


def test_the_learned_words_are_shown_with_what_taught_them(mem: webmem.Memory) -> None:
    site(mem)
    earlier = mem.trajectories.list(domain="notes.example.test", limit=1)[0]  # "Archive the note Groceries"
    taught = mem.trajectories.save(goal="Hide the note Recipes", start_url=SITE, steps=archived("Recipes"))
    found = mem.trajectories.learned_acts(f"{SITE}/notes/")
    assert [(act.words, act.trajectory_id, act.other_id) for act in found] == [
        (("archive", "hide"), taught.id, earlier.id)]
    assert mem.trajectories.learned_acts("http://elsewhere.example.test") == []
    with pytest.raises(webmem.InvalidInput):
        mem.trajectories.learned_acts("not a url")


def test_the_cli_shows_the_learned_words(sqlite_mem: webmem.Memory, memory_dir) -> None:
    site(sqlite_mem)
    taught = sqlite_mem.trajectories.save(goal="Hide the note Recipes", start_url=SITE, steps=archived("Recipes"))
    found = sqlite_mem.trajectories.learned_acts(SITE)
    shown = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "acts", "--url", SITE, "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == [found[0].model_dump(mode="json")]
    plain = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "acts", "--url", SITE])
    assert '"archive" = "hide"' in plain.output and taught.id in plain.output
    rows.execute(sqlite_mem, "DELETE FROM act_words")
    again = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "acts", "--url", SITE,
                                     "--relearn", "--json"])
    assert again.exit_code == 0 and [act["words"] for act in json.loads(again.output)] == [["archive", "hide"]]
    empty = CliRunner().invoke(cli, ["--memory-dir", str(memory_dir), "trajectories", "acts", "--url",
                                     "http://elsewhere.example.test"])
    assert empty.exit_code == 0 and "No learned acts." in empty.output
