"""Acts learned from a site's own recordings: the words that name one act there.

Two goals one word (or a short phrase) apart whose runs did the same steps say one thing in two ways. "Archive the
note {1}" and "Hide the note {1}", each recorded by a run that opened the note and clicked "Archive", teach that on
this site "hide" is "archive"; "Look up the order {1}" and "Track the order {1}" that "track" is "look up". A new
goal that fits no stored goal exactly is read again with such a word put for its partner ("Hide the project Apollo"
as "Archive the project Apollo"), and takes the stored goal that reading reaches when it comes closer than any does
to the goal as worded: a reference, never a replay, since the words may have been learned on another task of the
site.

What is compared: a new recording's goal template (or its goal, without one) against the site's tasks that begin or
end as it does, when it is new there, and only runs that act on a page (a path that only goes to pages or finishes
says nothing of what was done) where a step names one of the two words (the button "Archive"). Words that carry no
task meaning, and two forms of one word, teach nothing. An import is compared with the site and with itself;
``relearn`` compares all of a site's recordings at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, delete, or_, select

from ..core.models import LearnedAct, Step, Trajectory
from ..core.records import stored_record
from ..core.terms import STOP_WORDS, stem, words
from ..core.urls import page_path
from ..store.prepared import Prepared
from ..store.schema import act_words, trajectories
from ..store.statements import insert_ignoring_duplicates, plain_select
from .field_options import options_named, task_of
from .held import OriginGoals, StoredGoal
from .plans import replayable
from .ranking import Scored, rank
from .reading import read_goal
from .recall import signature

#: The actions that do something on a page.
ACTING = frozenset({"click", "fill", "type", "select", "check", "uncheck", "press", "hover", "upload", "drag"})
#: Why a goal read with a learned word put for its partner may be the stored task.
ACT_REASON = "goals in both words did the same steps on this site"
#: The readings of a new goal tried at most (each a ranking).
MAX_READINGS = 3
#: The most words a learned phrase has, and the fewest words alike around it in the two goals that teach it.
MAX_PHRASE = 3
MIN_SHARED = 2
_NUMBERS = re.compile(r"\d+")
_LEARNED_FIELDS = ("words", "trajectory_id", "other_id", "learned_at")
_LEARNED = Prepared(plain_select([act_words.c.word, act_words.c.act, act_words.c.trajectory_id, act_words.c.other_id,
                                  act_words.c.created_at], "namespace = :ns AND origin = :origin",
                                 order_by="created_at, word"))
_SUCCESSFUL = Prepared(plain_select([trajectories.c.trajectory_id, trajectories.c.goal_template, trajectories.c.goal],
                                    "namespace = :ns AND origin = :origin AND success",
                                    order_by="created_at DESC, trajectory_id DESC"))


def differing_phrases(one: str, other: str) -> tuple[str, str] | None:
    """The two words (or short phrases: "look up" and "track") in which two goals or templates differ, in order,
    when they differ at one place only, by at most ``MAX_PHRASE`` words on each side, and say something there
    (not "the" against "this", not "note" against "notes"), with ``MIN_SHARED`` words around alike; politeness
    ("Please ...") is set aside first."""
    first, second = _words_of(one), _words_of(other)  # politeness set aside
    if first == second or abs(len(first) - len(second)) >= MAX_PHRASE:
        return None
    before = 0
    while before < min(len(first), len(second)) and first[before] == second[before]:
        before += 1
    after = 0
    while after < min(len(first), len(second)) - before and first[-1 - after] == second[-1 - after]:
        after += 1
    mine, theirs = first[before:len(first) - after], second[before:len(second) - after]
    if before + after < MIN_SHARED or not 0 < len(mine) <= MAX_PHRASE or not 0 < len(theirs) <= MAX_PHRASE:
        return None
    if not all(word.isalpha() for word in (*mine, *theirs)) or not (_says(mine) or _says(theirs)) or \
            [stem(word) for word in mine] == [stem(word) for word in theirs]:
        return None
    pair = " ".join(mine), " ".join(theirs)
    return pair if pair[0] < pair[1] else (pair[1], pair[0])


def _says(phrase: tuple[str, ...]) -> bool:
    return any(word not in STOP_WORDS for word in phrase)


def same_steps(one: Sequence[Step], other: Sequence[Step]) -> bool:
    """Whether two runs (slotted) did the same: each step the same action on the same target with the same value,
    on the same kind of page when both say (its path, numbers aside: "/notes/17" is "/notes/23")."""
    return len(one) == len(other) and all(
        (mine.action, mine.target, mine.value) == (theirs.action, theirs.target, theirs.value)
        and (mine.url is None or theirs.url is None or _page_kind(mine.url) == _page_kind(theirs.url))
        for mine, theirs in zip(one, other))


def learn(held: OriginGoals, text: str, steps: Sequence[Step],
          load: Callable[[str], Trajectory | None]) -> list[tuple[str, str, str]]:
    """What a new recording teaches (``text``: its goal template, or its goal when it has none; ``steps``: its path,
    slotted): ``(word, act, trajectory id)`` for each task of the site a phrase apart from it whose newest run did the
    same steps. A template or goal the site holds already teaches nothing new."""
    if not any(step.action in ACTING for step in steps):
        return []
    with held.lock:
        index = _ends_of(held)
        if text in index.known:
            return []
        apart = []
        for entry in sorted({entry for end in _ends(_words_of(text)) for entry in index.entries.get(end, ())}):
            other = held.templates[entry] if entry >= 0 else held.goal(-1 - entry).goal
            if pair := differing_phrases(other, text):
                apart.append((pair, next(held.template_newest_first(entry), None) if entry >= 0 else -1 - entry))
    learned = []
    for pair, position in apart:
        if position is None:
            continue
        stored: StoredGoal = held.goal(position)
        earlier = load(stored.id)
        if earlier is not None and same_steps(steps, replayable(earlier.replay_steps or earlier.steps)) \
                and names_the_act(steps, pair):
            learned.append((*pair, stored.id))
    return learned


def names_the_act(steps: Sequence[Step], pair: tuple[str, str]) -> bool:
    """Whether a step names what was done in one of the two words (the button "Archive" a run clicked for "Hide the
    note"): two goals that did the same steps and differ in a word no step names may differ in what the page was
    read for ("the pending orders", "the completed orders"), not in what was done."""
    named = {stem(word) for step in steps for text in (step.target, step.value) if text
             for word in words(text)}
    return any(stem(word) in named for phrase in pair for word in phrase.split() if word not in STOP_WORDS)


@dataclass
class _Ends:
    """A site's tasks by how they begin and end (``_ends``): its templates by number, its goals without one as
    ``-1 - position``, for the templates and goals read so far."""

    templates: int = 0
    goals: int = 0
    entries: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    known: set[str] = field(default_factory=set)


def _ends_of(held: OriginGoals) -> _Ends:
    """The origin's tasks by their ends, brought up to date (templates and goals are only ever added, by number)."""
    index = held.act_templates if isinstance(held.act_templates, _Ends) else _Ends()
    held.act_templates = index
    template_of = held.template_of
    news = [(number, held.templates[number]) for number in range(index.templates, len(held.templates))]
    news += [(-1 - position, held.goal(position).goal) for position in range(index.goals, len(held.goals))
             if template_of[position] < 0]
    for entry, text in news:
        if text not in index.known:
            index.known.add(text)
            for end in _ends(_words_of(text)):
                index.entries.setdefault(end, []).append(entry)
    index.templates, index.goals = len(held.templates), len(held.goals)
    return index


def _ends(found: tuple[str, ...]) -> set[tuple[str, ...]]:
    """Two goals one phrase apart with ``MIN_SHARED`` (two) words alike around it begin with the same two words,
    end with the same two, or begin and end with the same one: every template that may be is under one of these."""
    if len(found) < MIN_SHARED:
        return set()
    return {("^", *found[:2]), ("$", *found[-2:]), ("^$", found[0], found[-1])}


@lru_cache(maxsize=16_384)  # a site's tasks are compared with each new one: the same texts, save after save
def _words_of(text: str) -> tuple[str, ...]:
    return tuple(words(read_goal(text).text))


def relearn(conn: Connection, namespace: str, origin: str, load: Callable[[str], Trajectory | None],
            now: datetime) -> None:
    """Learn from every recording of ``origin`` at once (those saved before webmem learned acts): the newest run
    of each task (its template, or its goal without one)."""
    newest: dict[str, str] = {}
    for trajectory_id, template, goal in _SUCCESSFUL.rows(conn, {"ns": namespace, "origin": origin}):
        newest.setdefault(template or goal, trajectory_id)
    runs = [(text, trajectory_id, found.replay_steps or found.steps) for text, trajectory_id in newest.items()
            if (found := load(trajectory_id)) is not None]
    for trajectory_id, learned in _among(runs):
        record(conn, namespace, origin, trajectory_id, learned, now)


def taught_by(stored: Sequence[Trajectory], held_of: Callable[[str], OriginGoals],
              load: Callable[[str], Trajectory | None]) -> list[tuple[str, str, list[tuple[str, str, str]]]]:
    """What trajectories stored at once (an import) teach, before they are stored: each against its site's templates
    (``held_of``: the site's goals), and against each other. ``(origin, trajectory id, learned)``."""
    paths = {trajectory.id: _path(trajectory) for trajectory in stored if trajectory.success}
    acting = sorted((trajectory for trajectory in stored if any(step.action in ACTING
                                                                for step in paths.get(trajectory.id, ()))),
                    key=lambda trajectory: trajectory.created_at, reverse=True)
    found = []
    for origin in sorted({trajectory.origin for trajectory in acting}):
        held = held_of(origin)
        runs = [(trajectory.goal_template or trajectory.goal, trajectory.id, paths[trajectory.id])
                for trajectory in acting if trajectory.origin == origin]
        found += [(origin, trajectory_id, learn(held, text, steps, load)) for text, trajectory_id, steps in runs]
        if len(runs) > 1:
            found += [(origin, trajectory_id, learned) for trajectory_id, learned in _among(runs)]
    return found


def _path(trajectory: Trajectory) -> list[Step]:
    """What a trajectory did, as its template's steps (slotted) or as its own."""
    return replayable(trajectory.replay_steps if trajectory.replay_steps is not None else trajectory.steps)


def _among(runs: Sequence[tuple[str, str, Sequence[Step]]]) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """What runs of several tasks (``(template or goal, trajectory id, slotted steps)``, newest first) teach each other:
    for each, the pairs it makes with the older runs that did the same."""
    groups: dict[tuple[Any, ...], tuple[list[Step], list[tuple[str, str]]]] = {}
    for template, trajectory_id, steps in runs:
        path = replayable(steps)
        if any(step.action in ACTING for step in path):
            groups.setdefault(_path_key(path), (path, []))[1].append((template, trajectory_id))
    return [(trajectory_id, [(*pair, other_id) for other, other_id in members[index + 1:]
                             if (pair := differing_phrases(other, template)) and names_the_act(path, pair)])
            for path, members in groups.values() for index, (template, trajectory_id) in enumerate(members)]


def _path_key(steps: Sequence[Step]) -> tuple[Any, ...]:
    return tuple((step.action, step.target, step.value, step.url and _page_kind(step.url)) for step in steps)


def record(conn: Connection, namespace: str, origin: str, trajectory_id: str, learned: list[tuple[str, str, str]],
           now: datetime) -> None:
    """Keep what a saved trajectory taught (a pair already known keeps its first evidence), in the transaction that
    saves it: a pair whose other trajectory was deleted since it was read is not kept."""
    if not learned:
        return
    column = trajectories.c
    present = set(conn.execute(select(column.trajectory_id).where(
        column.namespace == namespace, column.trajectory_id.in_({other_id for *_, other_id in learned}))).scalars())
    insert_ignoring_duplicates(conn, act_words, [
        {"namespace": namespace, "origin": origin, "word": word, "act": act, "trajectory_id": trajectory_id,
         "other_id": other_id, "created_at": now} for word, act, other_id in learned if other_id in present])


def forget(conn: Connection, namespace: str, trajectory_ids: Sequence[str]) -> None:
    """Drop what deleted trajectories taught."""
    ids = list(trajectory_ids)
    if ids:
        column = act_words.c
        conn.execute(delete(act_words).where(column.namespace == namespace,
                                             or_(column.trajectory_id.in_(ids), column.other_id.in_(ids))))


def learned(conn: Connection, namespace: str, origin: str) -> list[LearnedAct]:
    """Everything learned on ``origin``, in the order it was learned."""
    return [stored_record(LearnedAct, _LEARNED_FIELDS, ((word, act), *rest))
            for word, act, *rest in _LEARNED.rows(conn, {"ns": namespace, "origin": origin})]


def known(conn: Connection, namespace: str, origin: str) -> list[tuple[str, str]]:
    """The pairs of words learned on ``origin``."""
    return [act.words for act in learned(conn, namespace, origin)]


def readings(goal: str, pairs: Sequence[tuple[str, str]],
             options: dict[str, list[tuple[str, str, str, str]]] | None = None) -> list[
        tuple[str, str, str, str, str | None]]:
    """The goal read with one learned word or phrase put for its partner, or with the value a run of a task chose
    in a field put for another of the field's options (``field_options``): ``(reading, said, meant, why, task)``,
    ``task`` the one task the reading may reach (None: any)."""
    said_words = words(goal)
    said = f" {' '.join(said_words)} "
    found: list[tuple[str, str, str, str, str | None]] = []
    for one, other in pairs:
        for word, meant in ((one, other), (other, one)):
            if f" {word} " in said and f" {meant} " not in said:
                found.append((_put(goal, word, meant), word, meant, ACT_REASON, None))
    for word, (_, value, label, task) in options_named(said_words, options) if options else ():
        where = f'the field "{label}"' if label else "one field"
        found.append((_put(goal, word, value), word, value, f"both options of {where} on this site", task))
    return found[:MAX_READINGS]


def read_by_acts(held: OriginGoals, goal: str, ranked: list[Scored],
                 learned: Callable[[], tuple[list[tuple[str, str]], dict[str, list[tuple[str, str, str, str]]]]], *,
                 threshold: float, competing: Callable[[StoredGoal], bool]) -> list[Scored]:
    """``ranked``, with the stored goal a reading of ``goal`` by learned words (or by a field's options) reaches
    first, when it reaches the threshold and comes closer than any stored goal does to the goal as it is worded
    (which fits none exactly); ``Scored.read_as`` names the words. ``learned`` reads the words learned on the origin
    and its fields' options (``field_options.known``), once per version of it."""
    closest = max((item.similarity for item in ranked if competing(item.goal)), default=0.0)
    if closest >= 1.0:
        return ranked
    with held.lock:
        if held.act_words is None or held.act_words[0] != (held.version, held.removals):
            held.act_words = ((held.version, held.removals), learned())
        pairs, options = held.act_words[1]
    best: tuple[Scored, tuple[str, str, str, str, str | None]] | None = None
    for text, word, meant, why, task in readings(goal, pairs, options) if pairs or options else ():
        def may_reach(stored: StoredGoal, task: str | None = task) -> bool:
            return competing(stored) and (task is None or task_of(stored.signature.template, stored.goal) == task)

        with held.lock:
            found = rank(held, signature(text), text, limit=1, competing=may_reach)
        for item in found:
            if may_reach(item.goal) and item.similarity >= max(threshold, closest) and (
                    best is None or item.similarity > best[0].similarity):
                best = (item, (word, meant, text, why, task))
    if best is None or best[0].similarity <= closest:
        return ranked
    item, read_as = best
    return [replace(item, read_as=read_as), *(other for other in ranked if other.goal is not item.goal)]


def _page_kind(url: str) -> str:
    return _NUMBERS.sub("#", page_path(url))


def _put(goal: str, word: str, meant: str) -> str:
    """``goal`` with ``meant`` where it says ``word`` (whole words, in any case and spacing; a capital kept)."""
    def swap(found: re.Match[str]) -> str:
        return meant[0].upper() + meant[1:] if found.group()[0].isupper() else meant

    pattern = r"\W+".join(map(re.escape, word.split()))
    return re.sub(rf"(?<![^\W_]){pattern}(?![^\W_])", swap, goal, flags=re.IGNORECASE)
