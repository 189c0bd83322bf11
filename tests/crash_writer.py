"""A writer for the crash test: records runs into a memory until it is killed.

It notes in a journal (one line each, written once the call returned) every step whose
``record_step`` returned and every run whose ``finish`` returned, so that the test can check that
the memory holds each of them after the kill.

Usage: python crash_writer.py MEMORY_DIR JOURNAL SEED
"""

from __future__ import annotations

import os
import random
import sys

import webmem


def main(memory_dir: str, journal_path: str, seed: int) -> None:
    rng = random.Random(seed)
    with open(journal_path, "a", encoding="utf-8") as journal, webmem.Memory.open(memory_dir) as mem:
        def note(line: str) -> None:
            journal.write(line + "\n")
            journal.flush()  # in the kernel's hands now: a killed process loses nothing written

        note("ready")
        number = 0
        while True:
            number += 1
            site = f"https://shop{rng.randrange(5)}.example/"
            run = mem.start_run(goal=f"Buy {rng.randrange(1, 9)} boxes of tea, order {seed}-{number}", start_url=site)
            note(f"started {run.id}")
            steps = rng.randrange(1, 12)
            for seq in range(1, steps + 1):
                run.record_step(action="click" if seq % 3 else "fill", target=f'button "Step {seq}"',
                                selector=f"#step-{seq}", value=None if seq % 3 else "tea",
                                url=f"{site}page/{seq}", ok=seq % 5 != 0, duration_ms=rng.randrange(50, 500),
                                error=None if seq % 5 else "Timeout 1500ms exceeded")
                note(f"step {run.id} {seq}")
            success = rng.random() < 0.7
            run.finish(success=success, outcome=f"order {number}",
                       facts=[{"type": "quirk", "key": "cookie-banner", "value": f"shown {number % 3}"}])
            note(f"finished {run.id} {steps} {int(success)}")
            if os.environ.get("CRASH_WRITER_ONCE"):
                return


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
