"""How often webmem's replay alone does new, naturally worded instances of tasks in Trac, a real issue tracker.

The Django-admin benchmark's method (``bench_realapp_replay.py``) on another real app: Trac 1.6, installed
from PyPI, server-rendered with classic table layouts, where several fields have no accessible name (the
"resolve as" select and the "reassign to" box of a ticket, a query filter's mode and value next to a row
header). A scripted demonstrator (a stand-in for a capable agent) records 3 runs of each task; then a
policy that can do nothing (it gives up at once) runs new instances on that memory with replay on, so
every success is the replay's. Goals are worded naturally and unquoted ("Resolve the ticket Export to
CSV as wontfix", "Show the tickets of type enhancement with priority major"); new instances use values no
recording used (summaries of 2 to 5 words, priorities, resolutions and users no recording used). Each
episode starts at the custom query page listing every ticket, with the tickets reset; the task's real
outcome (the database, or the query page's URL and the tickets it lists) decides success. Modes: one
memory per task, and one memory shared by all tasks (new instances of the tasks taking turns).

By default the memory goes on learning during the new instances (a replay that succeeds is saved
like any successful run, and later instances may replay it); ``--isolated`` runs each new instance on
a copy of the memory as the recordings left it.

Prints per mode and task: recorded runs that succeeded, new instances replayed to success ("from rec":
of those, the ones that replayed a recorded run rather than an earlier new instance), replays offered
(a replay started), wrong-task replays (the replayed trajectory's goal is another task's, or could not
be looked up), wrong effects (new instances that changed the data, not as asked: a replay is safe only
with none), hand-overs (replays that gave the run back to the null policy), the median time of a new
instance, whether the goal is met (>= 90% replayed, no wrong-task replay, no wrong effect) and the most
common reasons a new instance was not replayed.

Usage: python benchmarks/bench_trac_replay.py [--tasks resolve,reassign] [--instances 10] [--shared | --per-task]
       [--isolated] [--json FILE] [--keep DIR] [--seed 0] [-v]      (needs: pip install trac; Chromium)
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from realapp_harness import RealApp, benchmark_main
from realapp_report import (
    GOAL_RATE,
    print_heading,
    print_medians,
    print_notes,
    summarize,
)
from trac_app import require_trac, serve_trac


def summarize_trac(records: list[dict], tasks: list[str]) -> dict:
    """The Django benchmark's summary of each task, with its wrong effects and hand-overs among new instances."""
    rows = summarize(records, tasks)
    for task, row in rows.items():
        tested = [item for item in records if item["task"] == task and item["phase"] == "test"]
        row["wrong_effects"] = sum(item["effect"] == "wrong" for item in tested)
        row["handed_over"] = sum(item["replay_outcome"] == "handed_over" for item in tested)
        row["goal_met"] = bool(row["instances"] and row["replayed"] / row["instances"] >= GOAL_RATE
                               and row["wrong_task"] == 0 and row["wrong_effects"] == 0)
    return rows


def print_table(mode: str, rows: dict, records: list[dict], isolated: bool) -> None:
    """The Django benchmark's table, with wrong effects and hand-overs."""
    print_heading(mode, isolated)
    print(f"{'task':<21} {'recorded':>8} {'replayed':>9} {'from rec':>8} {'offered':>8} {'wrong-task':>10} "
          f"{'wrong-eff':>9} {'handover':>8} {'test ms':>8}  goal")
    for task, row in rows.items():
        print(f"{task:<21} {row['recorded']:>4}/{row['recordings']:<3} {row['replayed']:>5}/{row['instances']:<3} "
              f"{row['replayed_from_recording']:>8} {row['offered']:>8} {row['wrong_task']:>10} "
              f"{row['wrong_effects']:>9} {row['handed_over']:>8} {row['test_median_ms'] or 0:>8.0f}  "
              f"{'met' if row['goal_met'] else 'not met'}")
        print_notes(row, 23)
    total = sum(row["replayed"] for row in rows.values()), sum(row["instances"] for row in rows.values())
    summed = {key: sum(row[key] for row in rows.values())
              for key in ("replayed_from_recording", "offered", "wrong_task", "wrong_effects", "handed_over")}
    print(f"{'all':<21} {'':>8} {total[0]:>5}/{total[1]:<3} {summed['replayed_from_recording']:>8} "
          f"{summed['offered']:>8} {summed['wrong_task']:>10} {summed['wrong_effects']:>9} {summed['handed_over']:>8}")
    print_medians(records)


def trac() -> RealApp:
    """What Trac brings to the benchmark: its summary and table count wrong effects and hand-overs."""
    from tracapp.catalog import (
        RECORDINGS,
        build_catalog,
        build_instances,
        reused_values,
    )
    from tracapp.policies import Demonstrator, NullPolicy
    from tracapp.tasks import TicketTaskEnvironment, check_possible

    return RealApp(serve=serve_trac, start_url=lambda app: app.query_url, scratch_prefix="webmem-trac-",
                   build_catalog=build_catalog, build_instances=build_instances, recordings=RECORDINGS,
                   check_possible=check_possible, reused_values=reused_values, environment=TicketTaskEnvironment,
                   demonstrator=Demonstrator, null_policy=NullPolicy, summarize=summarize_trac,
                   print_table=print_table)


def main(argv: list[str] | None = None) -> int:
    from tracapp.catalog import TASKS

    return benchmark_main(argv, description=__doc__.splitlines()[0], tasks=TASKS, require_app=require_trac,
                          benchmark="Trac", real_app=trac)


if __name__ == "__main__":
    sys.exit(main())
