"""How long episode retrieval takes: ``retrieve_memories`` in rep N+1 of a session whose N earlier
reps of M steps are all graded (default 10 reps of 50 steps), on realistic pages of about 40
interactive elements that vary from step to step.

Prints the median over repeated calls, and ratios against baselines measured in the same process:
one ``HashingEmbedder.embed`` call for one internal state, and a retrieval in rep 2 of a session
with no entries. Usage: python benchmarks/bench_episodes.py [--reps 10] [--steps 50] [--repeat 30]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from timing import median_ms

import webmem
from webmem import HashingEmbedder
from webmem.episodes.aria import element_iou

ORIGIN = "https://helpdesk.example.com"
GOAL = "Set the priority of ticket {ticket} to High and assign it to the network team"
NAV = [("link", name) for name in (
    "Home", "Tickets", "Reports", "Knowledge base", "Customers", "Settings", "Help", "Sign out",
)] + [("searchbox", "Search tickets"), ("button", "Search"), ("button", "Notifications"), ("button", "New ticket")]
PAGES: dict[str, list[tuple[str, str]]] = {
    "/tickets": [("link", f"Ticket {n}") for n in range(4000, 4014)] + [
        ("combobox", "Filter by status"), ("combobox", "Filter by team"), ("button", "Apply filters"),
        ("button", "Clear filters"), ("button", "Previous page"), ("button", "Next page"), ("checkbox", "Select all"),
        ("button", "Bulk assign"), ("button", "Export CSV"), ("link", "Saved views"), ("tab", "Open"),
        ("tab", "Pending"), ("tab", "Closed"), ("button", "Refresh"),
    ],
    "/tickets/detail": [
        ("textbox", "Subject"), ("combobox", "Priority"), ("option", "Low"), ("option", "Normal"), ("option", "High"),
        ("option", "Urgent"), ("combobox", "Team"), ("option", "Network"), ("option", "Desktop"),
        ("option", "Accounts"), ("combobox", "Status"), ("textbox", "Comment"), ("checkbox", "Internal note"),
        ("button", "Save"), ("button", "Cancel"), ("button", "Delete ticket"), ("button", "Assign to me"),
        ("button", "Merge"), ("button", "Add watcher"), ("link", "Customer profile"), ("link", "Attachment 1"),
        ("tab", "Conversation"), ("tab", "History"), ("tab", "Related"), ("button", "Previous ticket"),
        ("button", "Next ticket"), ("button", "Print"), ("button", "Close ticket"),
    ],
    "/reports": [("link", f"Report {name}") for name in (
        "SLA", "Backlog", "Agents", "Teams", "Satisfaction", "Volume", "First response", "Resolution time",
    )] + [
        ("combobox", "Period"), ("option", "Last 7 days"), ("option", "Last 30 days"), ("option", "Quarter"),
        ("button", "Run report"), ("button", "Schedule"), ("button", "Download PDF"), ("button", "Share"),
        ("checkbox", "Include closed"), ("checkbox", "Compare to previous"), ("radio", "Chart"), ("radio", "Table"),
        ("textbox", "Recipients"), ("button", "Save view"), ("link", "Report help"), ("button", "Full screen"),
        ("slider", "Zoom"), ("button", "Reset zoom"), ("tab", "Summary"), ("tab", "Details"),
    ],
    "/settings/teams": [("link", f"Team {name}") for name in (
        "Network", "Desktop", "Accounts", "Security", "Facilities", "Onboarding",
    )] + [
        ("button", "Add team"), ("textbox", "Team name"), ("textbox", "Team email"), ("combobox", "Team lead"),
        ("checkbox", "Auto assign"), ("checkbox", "Round robin"), ("spinbutton", "Max open tickets"),
        ("button", "Save team"), ("button", "Delete team"), ("button", "Archive team"), ("switch", "Business hours"),
        ("combobox", "Timezone"), ("button", "Add member"), ("button", "Remove member"), ("link", "Audit log"),
        ("tab", "Members"), ("tab", "Rules"), ("tab", "Escalation"), ("button", "Test rule"),
        ("textbox", "Rule name"), ("button", "Add rule"), ("button", "Move up"),
    ],
}
KINDS = list(PAGES)


def page(rng: random.Random, kind: str, ticket: int) -> dict[str, Any]:
    """A page of ``kind``: the navigation, most of the page's own elements, a few that come and go."""
    own = [element for element in PAGES[kind] if rng.random() > 0.08]  # ~2 elements missing
    extra = [("link", f"Ticket {rng.randint(3900, 4100)}") for _ in range(rng.randint(0, 3))]
    extra += [("button", f"Dismiss alert {rng.randint(1, 5)}") for _ in range(rng.randint(0, 1))]
    elements = [{"role": role, "name": name, "ref": f"e{index}"} for index, (role, name) in
                enumerate(NAV + own + extra, start=1)]
    return {"url": f"{ORIGIN}{kind}?ticket={ticket}", "title": f"{kind.strip('/').title()} - Helpdesk",
            "elements": elements}


def action_for(rng: random.Random, env: dict[str, Any]) -> tuple[str, str]:
    element = rng.choice(env["elements"])
    if element["role"] in ("textbox", "searchbox"):
        return f"fill('{element['ref']}', 'text {rng.randint(1, 99)}')", element["name"]
    if element["role"] == "combobox":
        return f"select_option('{element['ref']}', 'High')", element["name"]
    return f"click('{element['ref']}')", element["name"]


def fill(mem: webmem.Memory, session: str, reps: int, steps: int, rng: random.Random) -> int:
    episodes = mem.episodes
    for rep in range(1, reps + 1):
        ticket = 4000 + rep
        episodes.init_episode(session)
        kind = KINDS[0]
        for number in range(1, steps + 1):
            before = page(rng, kind, ticket)
            action, text = action_for(rng, before)
            kind = rng.choice(KINDS) if rng.random() < 0.3 else kind
            step = episodes.record_step_start(
                before, f"{GOAL.format(ticket=ticket)}. Step {number}, on {before['title']}; "
                        f"I see {len(before['elements'])} elements and will {action} on {text}.",
                action, text, think=f"rep {rep} step {number}",
            )
            episodes.record_step_end(step, page(rng, kind, ticket))
        episodes.persist_memories()
        grades = []
        for number in range(1, steps + 1):
            correct = rng.random() < 0.7
            grades.append({"step_number": number, "is_correct": correct, "confidence": round(rng.uniform(0.5, 1), 2),
                           "explanation": "Moved the task forward" if correct else "Did not help with the priority",
                           "correction": None if correct else "Open the Priority dropdown and choose High"})
        episodes.add_grades_to_memories({"task_completed": rng.random() < 0.5, "step_grades": grades})
    return reps * steps



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=10, help="graded reps before the measured one (default 10)")
    parser.add_argument("--steps", type=int, default=50, help="steps per rep (default 50)")
    parser.add_argument("--repeat", type=int, default=30, help="timed calls per measurement (default 30)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the page and grade generator (default 7)")
    args = parser.parse_args()
    if min(args.reps, args.steps, args.repeat) < 1:
        parser.error("--reps, --steps and --repeat must be at least 1")
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory() as tmp:
        mem = webmem.Memory.open(Path(tmp) / "memory")
        began = time.perf_counter()
        entries = fill(mem, "bench", args.reps, args.steps, rng)
        fill_s = time.perf_counter() - began

        current = mem.episodes.init_episode("bench")
        queries = [page(rng, kind, 5000) for kind in KINDS]
        state = GOAL.format(ticket=5000) + ". Step 3, on the ticket page; I will open the Priority dropdown."
        calls = iter(range(10**9))

        def retrieve() -> list[webmem.RetrievedMemory]:
            return mem.episodes.retrieve_memories(queries[next(calls) % len(queries)], state, episode=current)

        retrieve()  # warm up (first query compiles statements)
        retrieval = median_ms(retrieve, args.repeat)
        stored = mem.episodes.load_all_memories_for_session("bench")
        detail = queries[KINDS.index("/tickets/detail")]
        passing = sum(
            1 for entry in stored
            if element_iou(webmem.EnvironmentState.model_validate(detail), entry.env_pre) >= mem.episodes.env_threshold
        )
        found = mem.episodes.retrieve_memories(detail, state, episode=current)

        embedder = HashingEmbedder()
        embed = median_ms(lambda: embedder.embed([state]), max(args.repeat, 100))
        empty_episode = mem.episodes.init_episode("empty")
        empty_episode = mem.episodes.init_episode("empty")  # rep 2: retrieval runs, finds nothing
        empty = median_ms(
            lambda: mem.episodes.retrieve_memories(detail, state, episode=empty_episode), max(args.repeat, 100)
        )
        size_kb = sum(path.stat().st_size for path in (Path(tmp) / "memory").glob("memory.db*")) / 1024
        mem.close()

    elements = [len(page(random.Random(k), kind, 1)["elements"]) for k, kind in enumerate(KINDS * 5)]
    print(f"session of {args.reps} reps x {args.steps} steps = {entries} graded entries "
          f"(filled in {fill_s:.1f}s, database {size_kb:.0f} KiB); pages of {min(elements)}-{max(elements)} "
          f"elements (median {statistics.median(elements):.0f}); {args.repeat} timed calls")
    print(f"on the ticket detail page {passing} of {entries} entries pass the IoU filter (>= 0.7); "
          f"retrieval returns {len(found)}: " + ", ".join(f"{m.advice} {m.entry.action} ({m.score:.2f})" for m in found))
    print(f"{'operation':<60}{'median ms':>10}{'x baseline':>12}")
    rows = [
        ("baseline: HashingEmbedder.embed of one internal state", embed, embed),
        ("baseline: retrieve_memories, session without entries", empty, embed),
        (f"retrieve_memories, rep {args.reps + 1} of {args.reps}x{args.steps} graded", retrieval, embed),
    ]
    for name, value, base in rows:
        print(f"{name:<60}{value:>10.2f}{value / base:>12.1f}")
    print(f"retrieval / empty-session retrieval: {retrieval / empty:.1f}x; per stored entry: "
          f"{retrieval / entries * 1000:.1f} us")


if __name__ == "__main__":
    main()
