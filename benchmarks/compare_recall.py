"""Two versions of webmem on the same recall queries: the paired difference of F1, with its 95% interval.

Each file is what ``bench_recall.py --outcomes FILE`` wrote, with the same options (split, layouts, batches), from
two versions of webmem (another checkout on ``PYTHONPATH``, say). For each half, query kind and set, this prints
both F1 and the difference (second minus first) with its bootstrap interval: the tasks asked for are drawn again
with replacement, the same draw for both versions, each with all its queries in every layout. An interval that
holds 0 means the two versions differ by no more than the tasks drawn would make them differ.

Usage: python benchmarks/compare_recall.py FIRST.json SECOND.json [--kind KIND] [--set SET]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_recall import bootstrap_interval, f1_of


def paired(first: list[list], second: list[list]) -> tuple[float, float, tuple[float, float]]:
    """Both F1 and the interval of their difference, from two lists of ``[task, positive, TP, FP]`` rows."""
    if [row[0] for row in first] != [row[0] for row in second]:
        raise SystemExit("the two files hold other queries: run both with the same options")
    groups: list[dict[str, list[tuple[bool, bool, bool]]]] = [{}, {}]
    for rows, grouped in ((first, groups[0]), (second, groups[1])):
        for task, *outcome in rows:
            grouped.setdefault(task, []).append(tuple(outcome))
    outcomes = [[tuple(row[1:]) for row in rows] for rows in (first, second)]
    interval = bootstrap_interval(lambda drawn: f1_of(drawn[1]) - f1_of(drawn[0]), groups)
    return f1_of(outcomes[0]), f1_of(outcomes[1]), interval


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--kind", action="append", default=[], help="only this query kind (repeatable)")
    parser.add_argument("--set", action="append", default=[], dest="sets", help="only this set (repeatable)")
    args = parser.parse_args()
    first, second = (json.loads(path.read_text()) for path in (args.first, args.second))
    if first["layouts"] != second["layouts"]:
        raise SystemExit(f"the files sum other layouts: {first['layouts']} and {second['layouts']}")
    print(f"{'half':<10}{'queries':<42}{'set':<20}{'first':>7}{'second':>8}{'diff':>8}{'95% interval':>18}")
    for half, kinds in sorted(first["halves"].items()):
        for kind, sets in sorted(kinds.items()):
            if kind.endswith("(before)") or (args.kind and kind not in args.kind):
                continue
            for set_name, rows in sorted(sets.items()):
                if args.sets and set_name not in args.sets:
                    continue
                one, other, (low, high) = paired(rows, second["halves"][half][kind][set_name])
                print(f"{half:<10}{kind:<42}{set_name:<20}{one:>7.3f}{other:>8.3f}{other - one:>+8.3f}"
                      f"{f'{low:+.3f} to {high:+.3f}':>18}")


if __name__ == "__main__":
    main()
