"""The MiniWoB++ tasks shipped by the ``miniwob`` package: find them, serve them, drive their episodes.

Each task is an HTML page whose JavaScript (``core.js``) generates a problem from ``Math.random``,
shows the instruction in ``#query``, and sets ``WOB_DONE_GLOBAL`` and ``WOB_RAW_REWARD_GLOBAL`` when
the episode ends. :class:`TaskPage` drives those globals directly, with no Selenium and no gym.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import http.server
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import InvalidInput

__all__ = [
    "DEFAULT_TASKS",
    "EPISODE_MAX_TIME_MS",
    "INSTALL_HINT",
    "EpisodeState",
    "TaskPage",
    "available_tasks",
    "close_matches",
    "episode_seed",
    "html_dir",
    "read_state",
    "serve_miniwob",
]

INSTALL_HINT = "The MiniWoB++ benchmark needs: pip install 'webmem[bench]'"

#: Simple tasks a browser agent should solve from the page's accessibility tree.
DEFAULT_TASKS: tuple[str, ...] = (
    "choose-list",
    "click-button",
    "click-button-sequence",
    "click-checkboxes",
    "click-collapsible",
    "click-dialog",
    "click-dialog-2",
    "click-link",
    "click-menu",
    "click-option",
    "click-tab",
    "click-tab-2",
    "click-test",
    "click-test-2",
    "click-widget",
    "copy-paste",
    "enter-date",
    "enter-password",
    "enter-text",
    "enter-text-2",
    "enter-text-dynamic",
    "focus-text",
    "focus-text-2",
    "form-sequence-2",
    "login-user",
    "login-user-popup",
    "multi-layouts",
    "multi-orderings",
    "navigate-tree",
    "read-table",
    "search-engine",
    "unicode-test",
    "use-autocomplete",
)

#: The default tasks whose instruction alone says what to do (which element, which value): a remembered
#: run can do a new instance of them without reading the page for the answer. The others name the element
#: by page content (which tab holds the link, the text to copy, the nth search result, a layout drawn at
#: random), so no memory of an earlier instance can say it.
INSTRUCTION_DETERMINED: tuple[str, ...] = (
    "choose-list", "click-button", "click-button-sequence", "click-checkboxes", "click-dialog", "click-dialog-2",
    "click-link", "click-menu", "click-option", "click-tab", "click-test", "click-test-2", "enter-date",
    "enter-password", "enter-text", "enter-text-2", "enter-text-dynamic", "focus-text", "focus-text-2",
    "form-sequence-2", "login-user", "multi-orderings", "unicode-test",
)

#: The tasks' own limit is 10 s, written for a model acting in milliseconds; an agent that reads the
#: page and may call an LLM each turn gets a minute.
EPISODE_MAX_TIME_MS = 60_000
READY_TIMEOUT_MS = 5_000


def html_dir() -> Path:
    """The ``html`` directory of the installed ``miniwob`` package (``miniwob/``, ``core/``, ``common/``)."""
    try:
        import miniwob
    except ImportError:
        raise ImportError(INSTALL_HINT) from None
    return Path(os.path.dirname(miniwob.__file__)) / "html"


def available_tasks() -> tuple[str, ...]:
    """Every MiniWoB++ task name, sorted."""
    return tuple(sorted(path.stem for path in (html_dir() / "miniwob").glob("*.html")))


def close_matches(name: str, choices: Sequence[str]) -> list[str]:
    return difflib.get_close_matches(name, choices, n=3, cutoff=0.6)


def episode_seed(base: int, task: str, index: int) -> str:
    """The seed of episode ``index`` of ``task``: the same for cold and warm runs (that is the comparison),
    and different for every other task and episode (no two tasks replay the same random stream)."""
    return f"{base}-{task}-{index}"


@contextlib.contextmanager
def serve_miniwob(*, port: int = 0) -> Iterator[str]:
    """Serve the MiniWoB++ html directory on 127.0.0.1 until the block exits; yields the base URL.

    ``port`` 0 takes any free port. Memory files sites under host and port, so a memory kept across
    benchmark runs only matches its past runs when the port is the same.
    """
    handler = functools.partial(_QuietHandler, directory=str(html_dir()))
    try:
        server = _QuietServer(("127.0.0.1", port), handler)
    except OSError as exc:
        raise InvalidInput(f"port: cannot serve on 127.0.0.1:{port} ({exc.strerror or exc})") from exc
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              name="webmem-miniwob-server", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    # the task pages are UTF-8 without a <meta charset>: say so, or a browser shows "Ã–K" for "ÖK"
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".html": "text/html; charset=utf-8",
                      ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the stdlib's name)
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a browser dropping a connection is not worth a traceback on stderr


@dataclass(frozen=True)
class EpisodeState:
    """The task's globals: whether the episode ended, its raw reward (no time penalty), and why.

    Success is the full reward (raw reward >= 1); an episode that ended with 0 < reward < 1 earned
    partial credit, which is not a success.
    """

    done: bool
    reward: float
    reason: str | None = None

    @property
    def success(self) -> bool:
        """The episode ended with the full reward."""
        return self.done and self.reward >= 1

    @property
    def partial(self) -> bool:
        """The episode ended with partial credit: some reward, less than the full one."""
        return self.done and 0 < self.reward < 1


_READ_STATE = """() => [
  typeof WOB_DONE_GLOBAL === 'undefined' ? null : WOB_DONE_GLOBAL,
  typeof WOB_RAW_REWARD_GLOBAL === 'undefined' ? 0 : WOB_RAW_REWARD_GLOBAL,
  typeof WOB_REWARD_REASON === 'undefined' ? null : WOB_REWARD_REASON,
]"""

_START = """([seed, maxTime]) => {
  Math.seedrandom(seed);
  core.EPISODE_MAX_TIME = maxTime;
  core.startEpisodeReal();
}"""

_UTTERANCE = """() => {
  const said = core.getUtterance();
  return typeof said === 'string' ? said : (said && said.utterance) || '';
}"""


def read_state(page: Any) -> EpisodeState | None:
    """The episode state of ``page``, or None when it is not a MiniWoB++ task page (it navigated away)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        done, reward, reason = page.evaluate(_READ_STATE)
    except PlaywrightError:  # the page is navigating or closed: there is no task to read
        return None
    if done is None:
        return None
    return EpisodeState(done=bool(done), reward=float(reward or 0), reason=reason)


class TaskPage:
    """One task on one Playwright page: loaded once, then any number of seeded episodes."""

    def __init__(self, page: Any, base_url: str, task: str, *, max_time_ms: int = EPISODE_MAX_TIME_MS) -> None:
        self.page = page
        self.task = task
        self.url = f"{base_url.rstrip('/')}/miniwob/{task}.html"
        self.max_time_ms = max_time_ms

    def load(self) -> None:
        self.page.goto(self.url)
        self.page.wait_for_function("() => typeof core !== 'undefined' && typeof genProblem !== 'undefined'")

    def start(self, seed: str | int) -> str:
        """Begin an episode from ``seed`` and return its instruction.

        The page is loaded again when it is not the task page any more (an agent may follow a link).
        """
        if self.page.url != self.url or read_state(self.page) is None:
            self.load()
        self.page.evaluate(_START, [seed, self.max_time_ms])
        self.page.wait_for_function("() => WOB_TASK_READY", timeout=READY_TIMEOUT_MS)
        return str(self.page.evaluate(_UTTERANCE))

    def state(self) -> EpisodeState | None:
        return read_state(self.page)

    def finish(self) -> EpisodeState:
        """The episode's final state; an episode still running is ended as a failure (reward -1)."""
        state = self.state()
        if state is None:
            return EpisodeState(done=True, reward=-1.0, reason="left the task page")
        if not state.done:
            self.page.evaluate("() => core.endEpisode(-1, false, 'agent stopped')")
            return EpisodeState(done=True, reward=-1.0, reason="agent stopped")
        return state
