"""How often webmem's replay alone does new, naturally worded instances of tasks in a real app (Django's admin).

A scripted demonstrator (a stand-in for a capable agent) records 3 runs of each task; then a policy
that can do nothing (it gives up at once) runs new instances on that memory with replay on, so every
success is the replay's. Goals are worded naturally and unquoted ("Delete the book The Measure of
Light", "Show only the poetry books"); new instances use values no recording used (titles of 2 to
4 words, genres the filter task never recorded). Each episode starts logged in at the book list,
with the books reset; the task's real outcome (the database, or the URL of an opened page) decides
success. Modes: one memory per task, and one memory shared by all tasks (new instances of the
tasks taking turns).

By default the memory goes on learning during the new instances (a replay that succeeds is saved
like any successful run, and later instances may replay it); ``--isolated`` runs each new instance on
a copy of the memory as the recordings left it.

Prints per mode and task: recorded runs that succeeded, new instances replayed to success ("from rec":
of those, the ones that replayed a recorded run rather than an earlier new instance), replays offered
(a replay started), wrong-task replays (the replayed trajectory's goal is another task's, or could not
be looked up), the median time of a new instance, whether the issue's goal is met (>= 90% replayed,
no wrong-task replay) and the most common reasons a new instance was not replayed.

Usage: python benchmarks/bench_realapp_replay.py [--tasks add,delete] [--instances 10] [--shared | --per-task]
       [--isolated] [--json FILE] [--keep DIR] [--seed 0] [-v]      (needs: pip install django; Chromium)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realapp.server import log_in, require_django, serve_library
from realapp_harness import RealApp, benchmark_main
from realapp_report import (
    GOAL_RATE,
    print_heading,
    print_medians,
    print_notes,
    summarize,
)


def print_table(mode: str, rows: dict, records: list[dict], isolated: bool) -> None:
    """A mode's table: per task its recorded runs, new instances replayed, replays offered, wrong-task replays,
    median time of a new instance and whether the goal is met, with the notes under each row."""
    print_heading(mode, isolated)
    print(f"{'task':<14} {'recorded':>8} {'replayed':>9} {'from rec':>8} {'offered':>8} {'wrong-task':>10} "
          f"{'test ms':>8}  goal")
    for task, row in rows.items():
        met = row["instances"] and row["replayed"] / row["instances"] >= GOAL_RATE and row["wrong_task"] == 0
        print(f"{task:<14} {row['recorded']:>4}/{row['recordings']:<3} {row['replayed']:>5}/{row['instances']:<3} "
              f"{row['replayed_from_recording']:>8} {row['offered']:>8} {row['wrong_task']:>10} "
              f"{row['test_median_ms'] or 0:>8.0f}  "
              f"{'met' if met else 'not met'}")
        print_notes(row, 16)
    total = sum(row["replayed"] for row in rows.values()), sum(row["instances"] for row in rows.values())
    summed = {key: sum(row[key] for row in rows.values())
              for key in ("replayed_from_recording", "offered", "wrong_task")}
    print(f"{'all':<14} {'':>8} {total[0]:>5}/{total[1]:<3} {summed['replayed_from_recording']:>8} "
          f"{summed['offered']:>8} {summed['wrong_task']:>10}")
    print_medians(records)


def django_admin() -> RealApp:
    """What Django's admin over the book library brings to the benchmark."""
    from realapp.catalog import (
        RECORDINGS,
        build_catalog,
        build_instances,
        reused_values,
    )
    from realapp.policies import Demonstrator, NullPolicy
    from realapp.tasks import BookTaskEnvironment, check_possible

    return RealApp(serve=serve_library, log_in=log_in, start_url=lambda app: app.books_url,
                   scratch_prefix="webmem-realapp-", build_catalog=build_catalog, build_instances=build_instances,
                   recordings=RECORDINGS, check_possible=check_possible, reused_values=reused_values,
                   environment=BookTaskEnvironment, demonstrator=Demonstrator, null_policy=NullPolicy,
                   summarize=summarize, print_table=print_table)


def main(argv: list[str] | None = None) -> int:
    from realapp.catalog import TASKS

    return benchmark_main(argv, description=__doc__.splitlines()[0], tasks=TASKS, require_app=require_django,
                          benchmark="real-app", real_app=django_admin)


if __name__ == "__main__":
    sys.exit(main())
