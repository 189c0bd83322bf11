"""Recall by a clear lead: a reworded goal below the threshold is taken for the one stored task it is far closer
to than to any other, and for nothing when it is as close to two tasks, when the site holds one task only, or when
what it shares is a value or the way a goal is put; with GloVe, a weaker lead when the nearest goal by the vectors is
of the same task."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

import webmem
from webmem.trajectories.held import OriginGoals, StoredGoal
from webmem.trajectories.leads import ACT_FLOOR, LEAD_COVER, LEAD_FLOOR, LEAD_RATIO, NEAREST_FLOOR, clear_lead
from webmem.trajectories.ranking import rank
from webmem.trajectories.recall import signature

MAIL = "http://mail.example.test"
CLICK = [webmem.Step(action="click", target='button "Go"')]
FORWARD = "Find the email by Audrey and forward that email to Orel."
REPLY = 'Find the email by Coletta and reply to them with the text "Thanks".'
DELETE = "Find the email by Bram and click the trash icon to delete it."
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
STAR = "Find the email by Kira and click the star icon to mark it as important."


def inbox(mem: webmem.Memory, *goals: str) -> None:
    for goal in goals:
        mem.trajectories.save(goal=goal, start_url=MAIL, steps=CLICK)


def test_a_goal_far_closer_to_one_task_than_to_any_other_is_that_task(mem: webmem.Memory) -> None:
    inbox(mem, FORWARD, REPLY, DELETE)
    report = mem.trajectories.match("Delete all messages from Natala.", origin=MAIL)
    assert report.best is not None and report.best.goal == DELETE
    winner = report.candidates[0]
    assert winner.eligible and winner.similarity == report.threshold
    lead = re.search(r"a clear lead \((\d\.\d\d) against (\d\.\d\d) for any other task\)", winner.why)
    assert lead and float(lead[1]) >= LEAD_FLOOR and float(lead[2]) <= LEAD_RATIO * float(lead[1])
    assert "clear lead" in report.reason


def test_a_goal_as_close_to_two_tasks_leads_neither(mem: webmem.Memory) -> None:
    """Spam and archive are both "move it to the ... folder": a goal that names only the move and the folder is as
    close to both, and its own word ("other") names neither."""
    inbox(mem, FORWARD, "Find the email by Bram and move it to the spam folder.",
          "Find the email by Kira and move it to the archive folder.")
    query = "Move the message from Natala to the other folder."
    report = mem.trajectories.match(query, origin=MAIL, limit=3)
    first, second = report.candidates[:2]
    assert first.similarity >= LEAD_FLOOR and second.similarity > LEAD_RATIO * first.similarity
    assert report.best is None and "clear lead" not in first.why


def test_a_lead_over_no_other_task_is_no_evidence(mem: webmem.Memory) -> None:
    inbox(mem, DELETE, DELETE.replace("Bram", "Ines"))  # one task, done twice
    report = mem.trajectories.match("Delete all messages from Natala.", origin=MAIL)
    assert report.best is None and report.candidates[0].similarity >= LEAD_FLOOR
    inbox(mem, FORWARD)
    assert mem.trajectories.match("Delete all messages from Natala.", origin=MAIL).best is not None


def test_a_goal_below_the_lead_floor_leads_nothing(mem: webmem.Memory) -> None:
    inbox(mem, FORWARD, REPLY, DELETE)
    report = mem.trajectories.match("Archive every message from Sue.", origin=MAIL)
    assert report.best is None and report.candidates[0].similarity < LEAD_FLOOR


def test_a_lead_on_an_act_both_goals_name_needs_less(mem: webmem.Memory) -> None:
    """"Delete" names the act as the stored goal's "delete" does: a lead below ``LEAD_FLOOR`` counts. "Trash" is a word
    of the stored goal, not its act: as close a lead does not."""
    for name in ("Bram", "Ines"):
        inbox(mem, *(goal.replace(name_in, name) for goal, name_in in ((REPLY, "Coletta"), (STAR, "Kira"),
                                                                        (DELETE, "Bram"))))
    named = mem.trajectories.match("Delete message Rochell from the email inbox folder.", origin=MAIL, limit=2)
    unnamed = mem.trajectories.match("Trash message Rochell from the email inbox folder.", origin=MAIL, limit=2)
    for report in (named, unnamed):
        assert report.candidates[1].trajectory.goal.endswith("to delete it.")
        assert ACT_FLOOR <= report.candidates[1].similarity < LEAD_FLOOR
    assert named.best is not None and named.best.goal.endswith("to delete it.") and "clear lead" in named.reason
    assert unnamed.best is None


def test_a_text_in_quotes_only_one_task_takes_names_that_task(mem: webmem.Memory) -> None:
    """Of the inbox's tasks only replies are given a text: a goal that gives one names the reply as "reply" would. Once
    another task is given a text too (a title to save a copy under), it names neither, however far that task is."""
    for name in ("Bram", "Ines"):
        inbox(mem, *(goal.replace(name_in, name) for goal, name_in in ((REPLY, "Coletta"), (STAR, "Kira"),
                                                                        (DELETE, "Bram"))))
    report = mem.trajectories.match('Say to Thekla in a message "Vulputate."', origin=MAIL, limit=2)
    assert report.best is not None and "reply to them" in report.best.goal and "clear lead" in report.reason
    assert ACT_FLOOR <= report.candidates[1].similarity < LEAD_FLOOR
    inbox(mem, 'Find the email by Bram and open the attached quarterly budget spreadsheet, then save a copy under the '
               'title "Q3" in the shared finance drive folder.')
    report = mem.trajectories.match('Say to Thekla "Vulputate."', origin=MAIL, limit=1)
    assert report.best is None and ACT_FLOOR <= report.candidates[0].similarity < LEAD_FLOOR


def test_words_every_task_of_the_site_says_are_no_evidence_against_a_lead(mem: webmem.Memory) -> None:
    """"email" and a name are in every task of the inbox: the next task sharing only those does not stop the lead.
    A next task that shares a word of its own with the new goal ("trash") still does."""
    for name in ("Bram", "Ines"):
        inbox(mem, *(goal.replace(name_in, name) for goal, name_in in ((REPLY, "Coletta"), (STAR, "Kira"),
                                                                        (DELETE, "Bram"))))
    report = mem.trajectories.match("Save Dixie's email as important.", origin=MAIL)
    assert report.best is not None and report.best.goal.endswith("mark it as important.")
    lead = re.search(r"a clear lead \((\d\.\d\d) against (\d\.\d\d) for any other task, by the words that tell "
                     r"this site's tasks apart\)", report.candidates[0].why)
    assert lead and float(lead[2]) <= LEAD_RATIO * float(lead[1])
    starred = max(c.similarity for c in report.candidates[1:] if c.trajectory.goal.endswith("important."))
    other = max(c.similarity for c in report.candidates if not c.trajectory.goal.endswith("important."))
    assert other > LEAD_RATIO * starred  # by all its words, the next task is too close
    report = mem.trajectories.match("Save Dixie's email from the trash as important.", origin=MAIL, limit=3)
    assert report.best is None


def test_a_goal_that_shares_only_words_every_task_says_leads_nothing(tmp_path) -> None:
    """A forward, asked where no forward is stored, shares only "email" and a name with the star task (the acts of
    the others differ from it): with GloVe a lead that weak could count, yet it rests on nothing that tells the
    site's tasks apart."""
    mem = webmem.Memory.open(tmp_path / "glove", goal_embedder=webmem.GloveEmbedder())
    inbox(mem, REPLY, STAR, DELETE)
    report = mem.trajectories.match("Forward Beth's email.", origin=MAIL, limit=1)
    assert report.best is None and report.candidates[0].trajectory.goal.endswith("mark it as important.")
    assert report.candidates[0].similarity >= NEAREST_FLOOR
    mem.close()


def test_a_goal_that_says_mostly_other_things_leads_nothing(mem: webmem.Memory) -> None:
    """It shares the act, the email and the name with the trash task, and no word with any other, yet most of what it
    says (the invites, the spreadsheet, the report) is not in the trash task: a lead by chance, not a rewording."""
    inbox(mem, FORWARD, REPLY, DELETE,
          "Forward the calendar invites, budget spreadsheet and quarterly report by Audrey to Orel.",
          'Reply to the calendar invites, budget spreadsheet and quarterly report by Ines with the text "Yes".')
    query = "Delete the email with the calendar invites, budget spreadsheet and quarterly report by Natala."
    report = mem.trajectories.match(query, origin=MAIL, limit=3)
    first, second = report.candidates[:2]
    assert first.trajectory.goal == DELETE and LEAD_FLOOR <= first.similarity < report.threshold
    assert second.similarity <= LEAD_RATIO * first.similarity
    mine, theirs = signature(query).content, signature(DELETE).content
    assert len(mine & theirs) < LEAD_COVER * len(mine)
    assert report.best is None and "clear lead" not in first.why
    assert mem.trajectories.match("Delete the email by Natala.", origin=MAIL).best.goal == DELETE


def test_every_path_that_answers_one_trajectory_takes_the_lead(mem: webmem.Memory) -> None:
    inbox(mem, FORWARD, REPLY, DELETE)
    found = mem.trajectories.find_best_match("Please delete Sam's message.", origin=MAIL)
    assert found is not None and found.goal == DELETE
    everyone = mem.trajectories.match("Please delete Sam's message.", origin=MAIL, limit=None)
    assert everyone.best is not None and everyone.best.goal == DELETE
    traced = mem.trajectories.match("Please delete Sam's message.", origin=MAIL, trace_scoring=True)
    assert traced.best is not None and traced.best.goal == DELETE


# --- with a goal embedder read by its nearest goal (GloVe) ----------------------------------------


def test_with_glove_a_weaker_lead_counts_when_the_nearest_goal_by_vectors_is_of_its_task(tmp_path) -> None:
    """Both goals lead the delete task as weakly (0.31 against 0.10): below the floor of a lead by words alone.
    GloVe's nearest stored goal to the first is the delete task's, and to the second the reply task's (it speaks of
    moving a message): the first is taken for the delete task, the second for nothing."""
    agreeing, disagreeing = "Trash the note Sue sent", "Move the message from Sue to the trash"
    plain = webmem.Memory.open(tmp_path / "plain")
    inbox(plain, FORWARD, REPLY, DELETE)
    for goal in (agreeing, disagreeing):
        lead = plain.trajectories.match(goal, origin=MAIL)
        assert lead.best is None and NEAREST_FLOOR <= lead.candidates[0].similarity < LEAD_FLOOR
    plain.close()
    mem = webmem.Memory.open(tmp_path / "glove", goal_embedder=webmem.GloveEmbedder())
    inbox(mem, FORWARD, REPLY, DELETE)
    report = mem.trajectories.match(agreeing, origin=MAIL)
    assert report.best is not None and report.best.goal == DELETE and "a clear lead" in report.candidates[0].why
    assert mem.trajectories.match(disagreeing, origin=MAIL).best is None
    mem.close()


def test_glove_embeds_from_its_package_into_unit_vectors() -> None:
    glove = webmem.GloveEmbedder()
    assert glove.name == "glove-6b-50d-sif" and glove.dimension == 50 and glove.recall == "nearest"
    delete, trash, unknown = glove.embed(["delete the email", "trash the message", "qzxv wqpt"])
    assert all(len(vector) == 50 for vector in (delete, trash, unknown))
    assert abs(sum(value * value for value in delete) - 1.0) < 1e-5 and not any(unknown)
    assert glove.embed([]) == []


def test_the_cli_matches_with_glove_when_asked(tmp_path) -> None:
    from click.testing import CliRunner

    from webmem.cli import cli

    mem = webmem.Memory.open(tmp_path)
    inbox(mem, FORWARD, REPLY, DELETE)
    mem.close()

    def match(*options: str) -> dict:
        result = CliRunner().invoke(cli, ["--memory-dir", str(tmp_path), "trajectories", "match", "Trash the note Sue sent",
                                          "--url", MAIL, "--json", *options])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    assert match()["best"] is None
    assert match("--semantic", "glove")["best"]["goal"] == DELETE
    wrong = CliRunner().invoke(cli, ["--memory-dir", str(tmp_path), "trajectories", "match", "x", "--url", MAIL,
                                     "--semantic", "bert"])
    assert wrong.exit_code == 2 and "'bert' is not one of 'wordllama', 'glove'" in wrong.output


def test_a_task_done_many_times_is_found_by_a_rewording_as_when_it_was_done_twice(mem: webmem.Memory) -> None:
    """Deleted for forty people, the delete task has forty shapes of one form: were they all counted, its own words
    ("delete", "trash") would weigh as little as "email", which every task says, and the rewording that finds it
    when it was done twice would find nothing."""
    for name in ("Bram", "Ines"):
        inbox(mem, *(goal.replace(name_in, name) for goal, name_in in ((REPLY, "Coletta"), (STAR, "Kira"),
                                                                        (DELETE, "Bram"))))
    query = "Delete message Rochell from the email inbox folder."
    twice = mem.trajectories.match(query, origin=MAIL, limit=1)
    assert twice.best is not None and twice.best.goal.endswith("to delete it.")
    names = ["Ada", "Bea", "Cal", "Dov", "Eli", "Fay", "Gus", "Hal", "Ivo", "Jem"]
    inbox(mem, *(DELETE.replace("Bram", f"{first}{second.lower()}") for first in names for second in names[:4]))
    often = mem.trajectories.match(query, origin=MAIL, limit=1)
    assert often.best is not None and often.best.goal.endswith("to delete it.")
    assert often.candidates[0].similarity == pytest.approx(twice.candidates[0].similarity)


def test_a_lead_weighs_words_holding_the_origins_lock() -> None:
    """Weighing a word remembers its weight; a goal another thread adds meanwhile clears what is remembered, so a
    weight worked out outside the origin's lock could be remembered stale after it. Every word the lead weighs is
    weighed under the lock."""
    held = OriginGoals()
    for number, goal in enumerate((FORWARD, REPLY, DELETE)):
        held.add(StoredGoal(f"traj_{number}", goal, None, NOW, 0, 1, 1, signature(goal)))
    owned: list[bool] = []
    weight = held.weight

    def weighed_under_lock(token: str) -> float:
        owned.append(held.lock._is_owned())  # type: ignore[attr-defined]
        return weight(token)

    held.weight = weighed_under_lock  # type: ignore[method-assign]
    goal = "Delete all messages from Natala."
    query = signature(goal)
    ranked = rank(held, query, goal, limit=1, competing=lambda stored: True)
    owned.clear()
    lifted = clear_lead(held, query, goal, ranked, threshold=0.5, competing=lambda stored: True)
    assert lifted[0].lead is not None and lifted[0].goal.goal == DELETE
    assert owned and all(owned)
