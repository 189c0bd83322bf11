"""Recall by a clear lead: a reworded goal below the threshold is taken for the one stored task it is far closer
to than to any other, and for nothing when it is as close to two tasks, when the site holds one task only, or when
what it shares is a value or the way a goal is put."""

from __future__ import annotations

import re

import webmem
from webmem.trajectories.leads import LEAD_FLOOR, LEAD_RATIO

MAIL = "http://mail.example.test"
CLICK = [webmem.Step(action="click", target='button "Go"')]
FORWARD = "Find the email by Audrey and forward that email to Orel."
REPLY = 'Find the email by Coletta and reply to them with the text "Thanks".'
DELETE = "Find the email by Bram and click the trash icon to delete it."
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
    """Trash and star are both "click the ... icon": a goal that names only the click and the icon is as close to
    both, and its own word ("flag") names neither."""
    inbox(mem, FORWARD, DELETE, STAR)
    query = "Flag the message from Natala by clicking its icon."
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


def test_every_path_that_answers_one_trajectory_takes_the_lead(mem: webmem.Memory) -> None:
    inbox(mem, FORWARD, REPLY, DELETE)
    found = mem.trajectories.find_best_match("Please delete Sam's message.", origin=MAIL)
    assert found is not None and found.goal == DELETE
    everyone = mem.trajectories.match("Please delete Sam's message.", origin=MAIL, limit=None)
    assert everyone.best is not None and everyone.best.goal == DELETE
    traced = mem.trajectories.match("Please delete Sam's message.", origin=MAIL, trace_scoring=True)
    assert traced.best is not None and traced.best.goal == DELETE
