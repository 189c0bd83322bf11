"""Replay of a flow that logs in with a registered secret, on a real app (Django's admin).

A scripted demonstrator (a stand-in for a capable agent) logs in as 3 users, typing the password
registered with ``Memory.open(secrets={"password": ...})``; then a policy that can do nothing (it gives up
at once) logs in as 10 other users on that memory, so every success is the replay's. Each episode starts
logged out, in a fresh browser context, at the admin's login page; success is the book list shown to the
user named in the goal. Afterwards the memory directory (database, WAL, event log) is searched for the
password. A last run opens the same memory without registering the password: replay must hand over
instead of typing a value it does not have.

Usage: python benchmarks/bench_realapp_login.py [--instances 10] [--recordings 3]   (needs: pip install django; Chromium)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realapp.policies import NullPolicy  # noqa: E402
from realapp.server import PASSWORD, _manage, require_django, serve_library  # noqa: E402

from webmem import Memory  # noqa: E402
from webmem.agent import Action, Agent, EnvironmentOutcome, PolicyStats, Target, Turn  # noqa: E402

USERS = ("ana", "ben", "carla", "david", "eva", "farid", "grace", "hugo", "irene", "jakob", "kim", "lena", "milo",
         "nora", "omar", "pia")


class Demonstrator:
    """Logs in as the user the goal names, with the password it was given."""

    name = "demonstrator"

    def __init__(self) -> None:
        self.stats = PolicyStats()

    def start(self, goal: str) -> None:
        pass

    def decide(self, turn: Turn) -> Action:
        self.stats.decisions += 1
        user = turn.goal.rsplit(" ", 1)[-1]
        boxes = {name: turn.observation.find("textbox", name) for name in ("Username:", "Username", "Password:",
                                                                            "Password")}
        username = boxes["Username:"] or boxes["Username"]
        password = boxes["Password:"] or boxes["Password"]
        if username and username[0].value != user:
            return Action("fill", Target(ref=username[0].ref), value=user)
        if password and not password[0].value:
            return Action("fill", Target(ref=password[0].ref), value=PASSWORD)
        if username:
            return Action("click", Target(role="button", name="Log in"))
        return Action("finish", success=True)


class LoggedInAs:
    """Success once the book list is shown to ``user``."""

    def __init__(self, user: str) -> None:
        self.user = user

    def outcome(self, page: Any) -> EnvironmentOutcome | None:
        if urlsplit(page.url).path.rstrip("/") != "/admin/library/book":
            return None
        shown = page.evaluate("() => (document.querySelector('#user-tools') || {}).textContent || ''")
        success = self.user.upper() in shown.upper()
        return EnvironmentOutcome(success=success, reward=1.0 if success else 0.0, detail=shown.strip()[:80])


def episode(browser: Any, base: str, memory: Memory, user: str, policy: Any) -> Any:
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(10_000)
        agent = Agent(page, policy=policy, memory=memory, environment=LoggedInAs(user), max_turns=8)
        return agent.run(f"Log in to the library admin as {user}",
                         url=f"{base}/admin/login/?next=/admin/library/book/")
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recordings", type=int, default=3)
    parser.add_argument("--instances", type=int, default=10)
    args = parser.parse_args()
    if args.recordings + args.instances > len(USERS):
        sys.exit(f"at most {len(USERS)} users in all")
    require_django()
    from playwright.sync_api import sync_playwright

    from webmem.agent.browser import launch_chromium

    started = time.perf_counter()
    users = USERS[:args.recordings + args.instances]
    with serve_library([]) as app, sync_playwright() as playwright, \
            tempfile.TemporaryDirectory(prefix="webmem-login-") as scratch:
        for user in users:
            _manage(app.database, "createsuperuser", "--noinput", "--username", user, "--email", f"{user}@example.com",
                    env={"DJANGO_SUPERUSER_PASSWORD": PASSWORD})
        browser = launch_chromium(playwright)
        directory = Path(scratch) / "memory"
        try:
            with Memory.open(directory, secrets={"password": PASSWORD}) as memory:
                recorded = [episode(browser, app.base_url, memory, user, Demonstrator())
                            for user in users[:args.recordings]]
                tested = [episode(browser, app.base_url, memory, user, NullPolicy())
                          for user in users[args.recordings:]]
            with Memory.open(directory) as stranger:  # the same memory, the password not registered
                unregistered = episode(browser, app.base_url, stranger, users[-1], NullPolicy())
        finally:
            browser.close()
        on_disk = b"".join(path.read_bytes() for path in directory.iterdir() if path.is_file())
    replayed = sum(result.success and result.replayed for result in tested)
    print(f"recordings that succeeded: {sum(r.success for r in recorded)}/{len(recorded)}")
    print(f"new users logged in by replay alone: {replayed}/{len(tested)} "
          f"(policy decisions: {sum(r.decisions for r in tested)})")
    for result in tested:
        if not (result.success and result.replayed):
            print(f"  {result.goal!r}: {result.replay_outcome or 'no replay'}: "
                  f"{result.replay_reason or result.replay_miss_reason or result.reason}")
    print(f"without the password registered: replay {unregistered.replay_outcome or 'not offered'} "
          f"({unregistered.replay_reason or unregistered.replay_miss_reason}); success {unregistered.success}")
    print(f"password bytes in the memory directory: {on_disk.count(PASSWORD.encode())}")
    print(f"total time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
