"""Blind verification of the model rewrites in ``third_party_rewordings.json``: is each still its task?

The small models that wrote the rewrites (135M-270M parameters) often ask for something else ("Marta is the bottom
center." for "Drag Marta to the bottom center."). The generator's rule (``make_third_party_rewordings.verdict``) keeps
only rewrites that hold their task's values, but cannot tell whether a rewrite still asks for the same task. As for
the human-verified rewrites of public benchmarks, each kept rewrite is judged by independent judges:

1. ``pairs`` writes ``pairs.json``: every model rewrite next to the intent it rewrites, with an id, in a seeded
   shuffle, and nothing else: a judge sees neither the set, the task, the half (tune or held-out) it belongs to nor
   what webmem finds for it.
2. Each judge reads ``BRIEF`` (below, written to ``BRIEF.md`` next to the pairs) and labels every pair ``same`` or
   ``other``, writing ``{id: label}`` to a file of its own. The judges of the file in this repository are two
   language-model agents working apart from each other and from the matcher's development (they were told not to
   read the project), each labelling all pairs.
3. ``ties`` writes, for a third judge, the pairs the first two disagree on (their ids kept, shuffled again).
4. ``merge`` adds the judges' labels to the items (``judged``: judge -> label) and writes the agreement of each two
   judges over the pairs both labelled (raw, and Cohen's kappa) into ``verification``.

Rewrites a later run of the generator adds are judged the same way by new judges: ``pairs OUT_DIR --new`` writes
those not judged yet (an id is a rewrite's place among the file's items as it is when the pairs are written).

A rewrite is ``verified`` when most of the judges who labelled it say ``same``: both first judges when they agree,
and the third one's word when they do not. ``bench_recall.py`` reports the verified rewrites as "reworded (third
party, verified)" beside all kept rewrites ("reworded (third party)", unchanged).

Usage: python benchmarks/data/verify_rewrites.py pairs OUT_DIR [--new]
       python benchmarks/data/verify_rewrites.py ties OUT_DIR FIRST.json SECOND.json
       python benchmarks/data/verify_rewrites.py merge NAME=LABELS.json [NAME=LABELS.json ...]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "third_party_rewordings.json"
SEED = 2026
TIES_SEED = 7
AGREEMENT_PAIRS = 50  # the fewest pairs two judges both labelled for their agreement to be reported
LABELS = ("same", "other")
TURK_SOURCES = ("miniwob-turk-train", "miniwob-turk-test")

BRIEF = """\
# Verifying rewritten web-task requests

`pairs.json` holds {count} pairs. Each pair is an ORIGINAL request that a person gave a web agent (a task on a web page
or web site: a MiniWoB++ widget page, a wiki, a web shop, a news site, a classifieds site, a forum, a shopping site,
Google Docs) and a REWRITE of it produced by a very small language model (135M-270M parameters). Small models often
change what is asked. Your job is to judge, for each pair, whether the rewrite is still a request for the same task.

Label each pair with exactly one of:
- `same`: a person who knows the site, handed only the REWRITE, would carry out the same task as the ORIGINAL: the
  same act (buy, delete, reply, click, drag, search-then-report, ...) on the same kind of thing, for the same purpose.
  Wording, word order, politeness, an added "please", a different format of a value (05/01/2021 vs May 1, 2021),
  a missing or different value (another name, another number, another quoted text), an extra instruction about how
  to give the answer, or a small extra step that is part of doing the task, do NOT make it another task.
- `other`: the rewrite asks for something else (another act, another thing, another question about the thing, a
  different comparison such as "cheapest" instead of "longest"), adds a second different task, drops the act so
  that it is no longer a request anyone could act on (e.g. a bare statement), or is too garbled to tell what to do.

Judge only from the two texts. Do not look for or use any other file, code or tool output in this machine; do not
run any program that matches or scores texts; do not try to guess why this labelling is wanted. Be consistent:
apply the same standard to every pair. When in doubt between the two, decide which task a competent person would
most likely perform given only the rewrite: if it is the original's task, `same`.

Write your labels to the output file named in your instructions as one JSON object mapping each pair's `id` (as a
string) to its label, e.g. `{{"12": "same", "407": "other", ...}}`, covering all {count} ids. Work through the pairs in
batches (e.g. 40 at a time: print them with a short python one-liner, decide, append your labels to the file), so
that nothing is lost if you are interrupted. When done, check that the file parses and has {count} ids with only the
two labels, and reply with the counts of each label (nothing else is needed).
"""


def model_items(data: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """The model rewrites of the file, with their index among its items (their id)."""
    return [(index, item) for index, item in enumerate(data["items"]) if item["source"] not in TURK_SOURCES]


def write_pairs(out: Path, only: set[str] | None = None, *, new: bool = False) -> None:
    """The pairs (those of the ids ``only``, shuffled again, when given; those not judged yet when ``new``) and the
    brief, for judges, in ``out``."""
    data = json.loads(DATA.read_text())
    rows = [{"id": index, "original": item["original"], "rewrite": item["query"]} for index, item in model_items(data)
            if not (new and "judged" in item)]
    random.Random(SEED).shuffle(rows)
    if only is not None:
        rows = [row for row in rows if str(row["id"]) in only]
        random.Random(TIES_SEED).shuffle(rows)
    out.mkdir(parents=True, exist_ok=True)
    (out / "pairs.json").write_text(json.dumps(rows, indent=1, ensure_ascii=False))
    (out / "BRIEF.md").write_text(BRIEF.format(count=len(rows)))
    print(f"{len(rows)} pairs in {out / 'pairs.json'}")


def write_ties(out: Path, first: Path, second: Path) -> None:
    """The pairs two judges labelled otherwise, for a third."""
    one, two = json.loads(first.read_text()), json.loads(second.read_text())
    write_pairs(out, {key for key, label in one.items() if two.get(key) != label})


def kappa(first: list[str], second: list[str]) -> float:
    """Cohen's kappa of two judges' labels of the same pairs."""
    count = len(first)
    observed = sum(a == b for a, b in zip(first, second)) / count
    expected = sum((first.count(label) / count) * (second.count(label) / count) for label in LABELS)
    return (observed - expected) / (1 - expected) if expected < 1 else 1.0


def merge(judges: dict[str, Path]) -> None:
    data = json.loads(DATA.read_text())
    items = model_items(data)
    labels = {name: json.loads(path.read_text()) for name, path in judges.items()}
    for name, given in labels.items():
        wrong = sorted(key for key, label in given.items() if label not in LABELS)
        if wrong:
            raise SystemExit(f"judge {name} labels {len(wrong)} pairs neither same nor other, e.g. {wrong[:5]}")
    undecided = []
    for index, item in items:
        item["judged"] = item.get("judged", {}) | {
            name: given[str(index)] for name, given in labels.items() if str(index) in given}
        same = sum(label == "same" for label in item["judged"].values())
        if len(item["judged"]) < 2 or 2 * same == len(item["judged"]):
            undecided.append(str(index))
        item["verified"] = 2 * same > len(item["judged"])
    if undecided:
        raise SystemExit(f"{len(undecided)} pairs have fewer than two labels or a tie, e.g. {undecided[:5]}: another "
                         "judge must label them (see ``ties``)")
    names = sorted({name for _, item in items for name in item["judged"]})
    agreement = {}
    for position, first in enumerate(names):
        for second in names[position + 1:]:
            both = [item["judged"] for _, item in items if first in item["judged"] and second in item["judged"]]
            if len(both) >= AGREEMENT_PAIRS:
                one, two = [judged[first] for judged in both], [judged[second] for judged in both]
                agreement[f"{first}-{second}"] = {"pairs": len(both), "kappa": round(kappa(one, two), 3),
                                                  "agree": round(sum(a == b for a, b in zip(one, two)) / len(one), 3)}
    data["verification"] = {
        "about": "each model rewrite judged blind (without its set, task, half or match): is it still a request "
                 "for its task? Two judges label every pair, a third the pairs they disagree on; verified = most "
                 "of its judges say same (see verify_rewrites.py)",
        "judges": names, "pairs": len(items), "agreement": agreement,
        "verified": sum(item["verified"] for _, item in items),
        "verified_by_all_judges": sum(all(label == "same" for label in item["judged"].values()) for _, item in items),
    }
    DATA.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps(data["verification"], indent=1))


def main() -> None:
    if len(sys.argv) in (3, 4) and sys.argv[1] == "pairs" and sys.argv[3:] in ([], ["--new"]):
        write_pairs(Path(sys.argv[2]), new=sys.argv[3:] == ["--new"])
    elif len(sys.argv) == 5 and sys.argv[1] == "ties":
        write_ties(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "merge":
        merge({name: Path(path) for name, path in (arg.split("=", 1) for arg in sys.argv[2:])})
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
