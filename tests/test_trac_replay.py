"""Replay on a real app nobody here wrote: Trac (from PyPI), whose query filters are bare selects in table
rows named only by their row header, and whose ticket titles may hold the word that joins a goal's values.
The benchmark's demonstrator (``benchmarks/tracapp``) records one instance; a policy that can do nothing
then runs a new one, so every success is replay's, and Trac's own database says what changed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from trac_app import Ticket, serve_trac

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from tracapp.catalog import Instance  # noqa: E402
from tracapp.policies import Demonstrator, NullPolicy  # noqa: E402
from tracapp.tasks import TicketTaskEnvironment  # noqa: E402

from webmem.agent import Agent  # noqa: E402

TICKETS = [
    Ticket("Login page times out", owner="alice", priority="major", type="defect"),
    Ticket("Export to CSV drops accents", owner="bruno", priority="minor", type="task"),
    Ticket("Calendar sync broken", owner="chen", priority="critical", type="enhancement"),
    Ticket("Upgrade jQuery to the latest", owner="dana", priority="trivial", type="task"),
]


def episode(page: Any, app: Any, memory: Any, instance: Instance, policy: Any) -> tuple[Any, TicketTaskEnvironment]:
    app.reset(TICKETS)
    environment = TicketTaskEnvironment(app, instance, TICKETS)
    if isinstance(policy, Demonstrator):
        policy.begin(instance)
    result = Agent(page, policy=policy, memory=memory, environment=environment).run(instance.goal, url=app.query_url)
    return result, environment


def test_trac_filters_set_by_their_row_header_and_a_title_with_to_in_it_are_replayed(
    open_memory: Any, page: Any
) -> None:
    memory = open_memory()
    recorded = [Instance("filter_type_priority", "record", 1, {"type": "defect", "priority": "major"}),
                Instance("reassign", "record", 1, {"title": "Login page times out", "user": "kofi"})]
    new = [Instance("filter_type_priority", "test", 1, {"type": "task", "priority": "trivial"}),
           Instance("reassign", "test", 1, {"title": "Upgrade jQuery to the latest", "user": "lena"})]
    with serve_trac(TICKETS) as app:
        for instance in recorded:
            result, _ = episode(page, app, memory, instance, Demonstrator())
            assert result.success, (instance.goal, result.reason)
        for instance in new:
            result, environment = episode(page, app, memory, instance, NullPolicy())
            assert result.success and result.replayed, (instance.goal, result.replay_reason)
            assert environment.effect() == ("none" if instance.task.startswith("filter") else "as asked")
        # the reassign's steps: found, not guessed (a wait for a page still building its links is no guess: under
        # load the replay may have needed one)
        filters = [step for step in memory.runs.steps(result.run_id) if step.action != "wait"]
    assert [step.action for step in filters] == ["click", "click", "click", "fill", "click"]
    box = filters[3]
    assert box.target == 'textbox ""' and box.element is not None and box.element.field_name.startswith("action_")
