"""browser-use with webmem, cold then warm: LLM calls per task.

A real browser-use Agent in headless Chromium on a local newsletter page, driven by the scripted chat
model of the tests (``tests/scripted_chat.py``: it reads the page state as an LLM would; no network, no
model; its numbers are calls, not an LLM's quality). Cold: each task on an empty memory. Warm: the same
tasks again on the memory the cold pass recorded. A last pass renames the page's button: the replay
hands over to the agent, which heals the run; then the tasks run once more.

Usage: python benchmarks/bench_browser_use.py [--tasks 5]   (needs: pip install 'webmem[browser-use]'; Chromium)
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
os.environ.setdefault("BROWSER_USE_CLOUD_SYNC", "false")

import anyio  # noqa: E402
from browser_use import BrowserProfile, BrowserSession  # noqa: E402
from scripted_chat import ScriptedChat  # noqa: E402

import webmem  # noqa: E402
from webmem.agent.browser import find_chromium  # noqa: E402
from webmem.integrations.browser_use import run_with_memory  # noqa: E402

OPTIONS = {"use_judge": False, "enable_planning": False, "use_vision": False, "max_failures": 1}
EMAILS = ("ana@example.org", "ben@example.org", "carla@example.org", "david@example.org", "eva@example.org",
          "farid@example.org", "grace@example.org", "hugo@example.org")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


async def one_task(memory: webmem.Memory, url: str, email: str) -> dict[str, Any]:
    session = BrowserSession(browser_profile=BrowserProfile(
        executable_path=find_chromium(), headless=True, args=["--no-sandbox", "--disable-gpu"],
        enable_default_extensions=False, keep_alive=True))
    llm = ScriptedChat()
    started = time.perf_counter()
    try:
        result = await run_with_memory(memory, f"Subscribe {email} to the newsletter", llm=llm, start_url=url,
                                       browser_session=session, sensitive_data={"news_password": "Pw-123456"},
                                       max_steps=8, **OPTIONS)
        page = await session.get_current_page()
        status = await page.evaluate("() => document.getElementById('result').textContent")
    finally:
        await session.kill()
    return {"email": email, "success": result.success and status == f"Subscribed {email}", "llm_calls": llm.calls,
            "replay": result.replay.outcome if result.replay else "-", "seconds": time.perf_counter() - started}


def run_pass(name: str, memories: list[webmem.Memory], url: str, emails: tuple[str, ...]) -> list[dict[str, Any]]:
    rows = [anyio.run(one_task, memories[index % len(memories)], url, email) for index, email in enumerate(emails)]
    for row in rows:
        print(f"{name:<8} {row['email']:<20} success={str(row['success']):<5} llm_calls={row['llm_calls']}  "
              f"replay={row['replay']:<12} {row['seconds']:.1f} s")
    calls = [row["llm_calls"] for row in rows]
    print(f"{name:<8} total: {sum(row['success'] for row in rows)}/{len(rows)} succeeded, {sum(calls)} LLM calls "
          f"(median {median(calls)} per task)\n")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=5, choices=range(1, len(EMAILS) + 1))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="webmem-bench-browser-use-"))
    site = work / "site"
    shutil.copytree(ROOT / "tests" / "sites" / "newsletter", site)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    emails = EMAILS[: args.tasks]
    cold_memories = [webmem.Memory.open(work / f"cold-{index}") for index in range(len(emails))]
    cold = run_pass("cold", cold_memories, url, emails)
    for memory in cold_memories[1:]:
        memory.close()
    memory = cold_memories[0]  # the warm pass uses what the first cold task recorded
    warm = run_pass("warm", [memory], url, emails)
    page = site / "index.html"
    page.write_text(page.read_text().replace(">Subscribe</button>", ">Join</button>"))
    changed = run_pass("changed", [memory], url, emails)
    memory.close()
    httpd.shutdown()
    print("LLM calls per pass: " + ", ".join(
        f"{name} {sum(row['llm_calls'] for row in rows)}" for name, rows in (("cold", cold), ("warm", warm),
                                                                             ("changed", changed))))


if __name__ == "__main__":
    main()
