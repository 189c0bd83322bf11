"""Query sets of ``bench_recall.py`` worded by others than this project: ``data/third_party_rewordings.json``.

Two sources, made by ``data/make_third_party_rewordings.py`` (see its docstring):

- ``miniwob-email``: the instruction phrasings that Mechanical Turk workers wrote for MiniWoB++'s email inbox
  (``miniwob/html/common/special/email-inbox-nl/templates.js``), filled with MiniWoB's names and lorem text. Their
  stored goals are MiniWoB's own generator wording of the same four acts (``email-inbox-forward``, ``-reply``,
  ``-important``, ``-delete`` in ``data/miniwob_intents.json``). Layout (:func:`email_layout`): four inboxes
  (origins) per half, each storing two generator instances of three acts and none of the fourth, a different act
  missing in each. Each Turk phrasing is asked twice: at a seeded one of the three inboxes that store its act (it
  must find that act's run; any other act, such as reply for forward, is a false positive) and at the inbox that
  lacks its act (a negative: it must find nothing there, although the other three acts are stored). Phrasings from
  the templates' ``train`` lists form the tune half, those from ``test`` lists the held-out half.
- ``miniwob-email-often``: the same phrasings asked at inboxes laid out alike, except that one stored act of each
  inbox was done ``OFTEN`` times (MiniWoB's generator wording with other people's names, drawn from the names its
  email instances use): a memory must find a task done often as well as one done twice.
- Rewrites of the other sets' intents by a small local instruct model: attached to their task
  (:func:`model_rewrites`), so a rewrite is in the half its task is in, and a positive when its task is stored.
  An intent may have several (``draw``: 1 for the first kept, 2 for the second). Each says which run of the
  generator added it (``batch``): the benchmark may be read on the rewrites of the first runs only. Each was judged
  blind (``data/verify_rewrites.py``): ``verified`` when most of its judges found it still a request for its task.
"""

from __future__ import annotations

import json
import random
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
THIRD_PARTY = DATA / "third_party_rewordings.json"
EMAIL_SET = "miniwob-email"
EMAIL_OFTEN_SET = "miniwob-email-often"
OFTEN = 30  # how many times one act of each inbox of ``miniwob-email-often`` was done
EMAIL_ACTS = ("delete", "forward", "important", "reply")
TURK_HALF = {"miniwob-turk-train": "tune", "miniwob-turk-test": "held-out"}


@lru_cache(maxsize=1)
def _items() -> tuple[dict[str, Any], ...]:
    """The file's items, read once per process (the rewrites, verified or not, and both email layouts read them)."""
    if not THIRD_PARTY.exists():
        return ()
    return tuple(json.loads(THIRD_PARTY.read_text())["items"])


def model_rewrites(batches: int | None = None, *, verified: bool = False) -> dict[tuple[str, str], list[str]]:
    """(set, task key) -> the model rewrites of that task that passed the generator's filter (those the first
    ``batches`` runs of the generator added only, when given); those most of their judges found still a request
    for their task only, when ``verified`` (``data/verify_rewrites.py``)."""
    found: dict[tuple[str, str], list[str]] = {}
    for item in _items():
        if item["source"] not in TURK_HALF and (batches is None or item.get("batch", 1) <= batches) \
                and (not verified or item.get("verified", False)):
            found.setdefault((item["set"], item["task"]), []).append(item["query"])
    return found


def email_layout(seed: int, often: bool = False) -> list[dict[str, Any]]:
    """The ``miniwob-email`` tasks (``miniwob-email-often`` when ``often``): one per (half, inbox, act), as keyword
    arguments of ``bench_recall.Task`` plus ``half`` (the half it belongs to) and ``stored`` (whether its act is
    stored in that inbox)."""
    miniwob = json.loads((DATA / "miniwob_intents.json").read_text())["tasks"]
    phrasings: dict[tuple[str, str], list[str]] = {}
    for item in _items():
        if item["source"] in TURK_HALF:
            phrasings.setdefault((TURK_HALF[item["source"]], item["task"]), []).append(item["query"])
    rng = random.Random(seed)
    tasks = []
    for half in ("tune", "held-out"):
        for act_number, act in enumerate(EMAIL_ACTS):
            key = f"email-inbox-{act}"
            generated = list(dict.fromkeys(miniwob[key]))
            queries: dict[int, list[str]] = {inbox: [] for inbox in range(len(EMAIL_ACTS))}
            for text in phrasings.get((half, key), []):
                queries[act_number].append(text)  # the inbox without this act: a negative
                queries[rng.choice([n for n in queries if n != act_number])].append(text)
            for inbox in range(len(EMAIL_ACTS)):
                instances = generated[2 * inbox:2 * inbox + 2]
                if often and act_number == (inbox + 1) % len(EMAIL_ACTS):  # the act after the one it lacks
                    instances = _done_often(instances, generated, _email_names(miniwob))
                tasks.append({"set_name": EMAIL_OFTEN_SET if often else EMAIL_SET, "key": key, "family": key,
                              "origin": f"http://{half}-{'often-' if often else ''}inbox-{inbox + 1}.miniwob.test",
                              "instances": instances, "third_party": queries[inbox],
                              "half": half, "stored": inbox != act_number})
    return tasks


def _email_names(miniwob: dict[str, list[str]]) -> list[str]:
    """The people MiniWoB's email instances name (none of them is in a Turk phrasing)."""
    found = {name for key, goals in miniwob.items() if key.startswith("email") for goal in goals
             for name in re.findall(r"\bby (\w+)|\bto (\w+)\.$", goal) for name in name if name}
    return sorted(found)


def _done_often(instances: list[str], generated: list[str], names: list[str]) -> list[str]:
    """``instances`` and more of their act, to ``OFTEN`` in all: the act's generated goals with other senders
    (and other recipients)."""
    done = list(instances)
    for number in range(OFTEN * len(names)):
        if len(done) == OFTEN:
            break
        base = generated[number % len(generated)]
        sender, recipient = names[number % len(names)], names[(number * 7 + 3) % len(names)]
        goal = re.sub(r"\bby \w+", f"by {sender}", base, count=1)
        goal = re.sub(r"\bto \w+\.$", f"to {recipient}.", goal) if recipient != sender else goal
        if goal not in done:
            done.append(goal)
    return done
