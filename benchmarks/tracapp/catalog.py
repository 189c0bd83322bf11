"""The tickets Trac starts with, and every task instance, drawn from one seed.

Summaries have 2 to 5 words, some with lowercase connectors ("Export to CSV", "Upgrade jQuery to the
latest"). Recorded instances and new (test) instances never share a value: each ticket task records on
one summary of three of the four lengths (a different length left out per task) and new instances use
the other summaries; the priorities, resolutions, users and comments are split the same way (new
instances set and filter by priorities no recording used, resolve as resolutions no recording used,
reassign to and filter by users no recording used). Only the type of the two-filter task repeats
(Trac has three). Tickets to resolve or reassign are open: the closed tickets are drawn among the
summaries left to the other tasks' new instances.

The filter goals name the field they filter by ("of type", "with owner"): worded "Show the defect tickets
with priority major" or "Show the tickets owned by alice", webmem 0.2.0 offers no replay at all (the
option "Type" or "Owner" the runs chose in Trac's "And" select does not come from the goal), so the
unnamed filter fields these tasks are about would never be reached.
"""

from __future__ import annotations

import random

from realapp_instances import TaskInstance, cycle
from realapp_instances import reused_values as shared_reused_values
from trac_app import Ticket

PRIORITIES = ("blocker", "critical", "major", "minor", "trivial")
TYPES = ("defect", "enhancement", "task")
RESOLUTIONS = ("fixed", "invalid", "wontfix", "duplicate", "worksforme")
OPEN_STATUSES = ("new", "assigned", "accepted")
COMPONENTS = ("component1", "component2")
CLOSED_TICKETS = 6
RECORDINGS = 3

#: The tickets' summaries, nine of each length (2 to 5 words).
SUMMARIES = (
    "Login timeout", "Export to CSV", "Crash on empty upload", "Upgrade jQuery to the latest",
    "Broken pagination", "Dark mode toggle", "Move settings to sidebar", "Attachments lost after ticket move",
    "Slow search", "Sort by date", "Keyboard shortcuts for search", "Allow comments on closed tickets",
    "Missing favicon", "Password reset fails", "Wiki links and anchors", "Timeline shows the wrong author",
    "Stale cache", "Calendar sync broken", "Translate the help pages", "Notify owners of stale tickets",
    "Email bounces", "Improve error messages", "Retry failed email delivery", "Show milestones and their progress",
    "Upload limit", "Rename the dashboard", "Check spelling of labels", "Link commits to their tickets",
    "Memory leak", "Add audit log", "Cache headers for assets", "Mobile layout of the roadmap",
    "Flaky tests", "Lost and found", "Report of weekly usage", "Preview of wiki pages breaks",
)
#: The tickets' owners (each owns three or four tickets); no name contains another.
OWNERS = ("alice", "bruno", "chen", "dana", "emeka", "farah", "goran", "hana", "ivan", "julia")
#: Users to reassign tickets to: they own none.
NEW_USERS = ("kofi", "lena", "mateo", "nadia", "oskar", "priya", "quentin", "rosa", "sven", "tomoko", "umar",
             "vera")
COMMENTS = (
    "Works on my machine", "Cannot reproduce on staging", "Patch attached for review", "Confirmed on the nightly build",
    "Needs a failing test first", "Waiting for the reporter", "Seen again after the upgrade",
    "Blocked by the database migration", "Fixed in the next release", "Please add steps to reproduce",
    "Same problem in Firefox and Chrome", "Looks like a regression of last week", "Happens only with large files",
    "Duplicate of an older report", "Good catch, thanks", "Discussed in the weekly meeting",
)

GOALS = {
    "set_priority": "Set the priority of the ticket {title} to {priority}",
    "resolve": "Resolve the ticket {title} as {resolution}",
    "reassign": "Reassign the ticket {title} to {user}",
    "comment": "Add the comment {text} to the ticket {title}",
    "filter_priority": "Show the tickets with priority {priority}",
    "filter_type_priority": "Show the tickets of type {type} with priority {priority}",
    "filter_owner": "Show the tickets with owner {user}",
}
TASKS = tuple(GOALS)
TICKET_TASKS = ("set_priority", "resolve", "reassign", "comment")  # tasks on one ticket, named by its summary
OPEN_TASKS = frozenset({"resolve", "reassign"})  # tasks only an open ticket offers


class Instance(TaskInstance):
    """One task instance in Trac: ``phase`` "record" (the demonstrator's runs) or "test" (new instances)."""

    goals = GOALS


def _stream(seed: int, *names: str) -> random.Random:
    return random.Random(":".join([str(seed), *names]))


def _split(seed: int) -> tuple[dict[str, list[str]], list[str], set[str]]:
    """The summaries each ticket task records on (one of each length but the one it leaves out), the
    summaries left for new instances, and the closed tickets' summaries (among those left)."""
    chooser = _stream(seed, "split")
    by_length: dict[int, list[str]] = {}
    for summary in SUMMARIES:
        by_length.setdefault(len(summary.split()), []).append(summary)
    lengths = sorted(by_length)
    chooser.shuffle(lengths)
    recorded: dict[str, list[str]] = {task: [] for task in TICKET_TASKS}
    rest: list[str] = []
    for length, group in sorted(by_length.items()):
        group = list(group)
        chooser.shuffle(group)
        for task, left_out in zip(TICKET_TASKS, lengths):
            if length != left_out:
                recorded[task].append(group.pop())
        rest += group
    for task in TICKET_TASKS:
        chooser.shuffle(recorded[task])
    closed = set(chooser.sample(sorted(rest), CLOSED_TICKETS))
    return recorded, rest, closed


def _halves(pool: tuple[str, ...], recorded: int, chooser: random.Random) -> tuple[list[str], list[str]]:
    """``pool`` shuffled and cut in two: ``recorded`` values for the recordings, the rest for new instances."""
    values = list(pool)
    chooser.shuffle(values)
    return values[:recorded], values[recorded:]


def build_catalog(seed: int) -> list[Ticket]:
    """The tickets (ids 1, 2, ... in the order of ``SUMMARIES``): owners and priorities dealt round, types,
    components and open statuses drawn, the closed ones resolved."""
    chooser = _stream(seed, "catalog")
    _, _, closed = _split(seed)
    owners = cycle(list(OWNERS), len(SUMMARIES), chooser)
    priorities = cycle(list(PRIORITIES), len(SUMMARIES), chooser)
    tickets = []
    for summary, owner, priority in zip(SUMMARIES, owners, priorities):
        status, resolution = ("closed", chooser.choice(RESOLUTIONS)) if summary in closed else (
            chooser.choice(OPEN_STATUSES), "")
        tickets.append(Ticket(summary, owner=owner, status=status, resolution=resolution, priority=priority,
                              type=chooser.choice(TYPES), component=chooser.choice(COMPONENTS),
                              reporter=chooser.choice(OWNERS)))
    return tickets


def build_instances(seed: int, catalog: list[Ticket], tests: int) -> dict[str, list[Instance]]:
    """Per task, its recorded instances then its ``tests`` new ones (values repeat only when a pool runs out).

    Every draw has a random stream of its own, so the recordings do not depend on ``tests`` and the
    first new instances are the same whatever ``tests`` is."""
    def stream(*names: str) -> random.Random:
        return _stream(seed, *names)

    recorded_titles, test_titles, closed = _split(seed)
    open_test_titles = [title for title in test_titles if title not in closed]
    by_title = {ticket.summary: ticket for ticket in catalog}
    values = {
        "priority": _halves(PRIORITIES, RECORDINGS, stream("priorities")),
        "resolution": _halves(RESOLUTIONS, RECORDINGS, stream("resolutions")),
        "user": _halves(NEW_USERS, RECORDINGS, stream("new users")),
        "text": _halves(COMMENTS, RECORDINGS, stream("comments")),
        "owner": _halves(OWNERS, RECORDINGS, stream("owners")),
    }
    side = {"record": 0, "test": 1}
    rows: dict[tuple[str, str], list[dict[str, str]]] = {}
    for task in TICKET_TASKS:
        pools = {"record": recorded_titles[task],
                 "test": cycle(open_test_titles if task in OPEN_TASKS else test_titles, tests, stream(task, "titles"))}
        for phase, titles in pools.items():
            chooser = stream(task, phase, "values")
            rows[task, phase] = []
            for number, title in enumerate(titles):
                row = {"title": title}
                if task == "set_priority":  # never the ticket's own priority
                    pool = [value for value in values["priority"][side[phase]] if value != by_title[title].priority]
                    row["priority"] = chooser.choice(pool)
                elif task == "resolve":
                    pool = values["resolution"][side[phase]]
                    row["resolution"] = pool[number % len(pool)]
                elif task == "reassign":
                    pool = values["user"][side[phase]]
                    row["user"] = pool[number % len(pool)]
                else:
                    pool = values["text"][side[phase]]
                    row = {"text": pool[number % len(pool)], "title": title}
                rows[task, phase].append(row)
    recorded_types = list(TYPES)
    stream("types").shuffle(recorded_types)
    for phase, count in (("record", RECORDINGS), ("test", tests)):
        priorities = values["priority"][side[phase]]
        types = recorded_types[:2] if phase == "record" else list(TYPES)
        rows["filter_priority", phase] = [
            {"priority": priority} for priority in cycle(priorities, count, stream("filter_priority", phase))]
        rows["filter_type_priority", phase] = [
            {"type": kind, "priority": priority}
            for kind, priority in zip(cycle(types, count, stream("filter_type_priority", phase, "types")),
                                      cycle(priorities, count, stream("filter_type_priority", phase, "priorities")))]
        rows["filter_owner", phase] = [
            {"user": owner} for owner in cycle(values["owner"][side[phase]], count, stream("filter_owner", phase))]
    return {task: [Instance(task, phase, number, values) for phase in ("record", "test")
                   for number, values in enumerate(rows[task, phase], 1)] for task in TASKS}


def reused_values(instances: list[Instance]) -> dict[str, set[str]]:
    """The values (by name) that a new instance shares with a recorded one of the same task; the type of the
    two-filter task may repeat (Trac has three), any other repeat is reported."""
    return shared_reused_values(instances, repeatable=("filter_type_priority", "type"))
