"""Suites of agent cases: run them, summarise each suite run, and derive hints for the next ones."""

from __future__ import annotations

import json
import os
import re
import statistics
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..core.clock import utcnow
from ..core.errors import InvalidInput
from ..core.text import clean_for_prompt
from ..core.urls import check_url
from .checks import SuccessCheck
from .results import AgentResult

MAX_CASES = 10_000
MAX_HINTS = 12
HINTS_HEADING = "SUITE HINTS (from earlier runs of this suite)"
_SUITE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Case:
    """One task of a suite: a goal on a start page, and optionally how to tell it succeeded."""

    name: str
    goal: str
    url: str
    success: SuccessCheck | None = None
    max_turns: int | None = None


@dataclass
class CaseResult:
    name: str
    goal: str
    url: str
    success: bool
    reason: str
    turns: int
    steps: int
    duration_ms: int
    memory_hits: int
    run_id: str | None
    failed_actions: list[tuple[str, str]] = field(default_factory=list)
    max_turns: int | None = None

    @classmethod
    def of(cls, case: Case, result: AgentResult) -> CaseResult:
        failed = [(o.action.describe(), clean_for_prompt(o.error or "", 300)) for o in result.history if not o.ok]
        return cls(case.name, case.goal, case.url, result.success, result.reason, result.turns, result.steps,
                   result.duration_ms, result.memory_hits, result.run_id, failed, case.max_turns)


@dataclass
class SuiteSummary:
    """One run of a suite: pass rate, turns, duration, memory hits, and the hints derived from it."""

    suite: str
    started_at: str
    isolation: str
    results: list[CaseResult]
    hints: list[str]

    @property
    def pass_rate(self) -> float:
        return sum(r.success for r in self.results) / len(self.results) if self.results else 0.0

    def to_dict(self) -> dict[str, Any]:
        turns = [r.turns for r in self.results]
        return {
            "suite": self.suite, "started_at": self.started_at, "isolation": self.isolation,
            "cases": len(self.results), "passed": sum(r.success for r in self.results),
            "pass_rate": round(self.pass_rate, 4),
            "mean_turns": round(statistics.fmean(turns), 2) if turns else 0.0,
            "duration_ms": sum(r.duration_ms for r in self.results),
            "memory_hits": sum(r.memory_hits for r in self.results),
            "hints": self.hints, "results": [asdict(r) for r in self.results],
        }


def load_cases(path: str | os.PathLike[str]) -> list[Case]:
    """The cases of a JSON file: a list (or ``{"cases": [...]}``) of objects with goal, url, and
    optionally name, success ({text, url_contains}) and max_turns. Errors name the file and the case."""
    file = Path(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{file}: cannot read the cases ({exc})") from exc
    items = data.get("cases") if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not items:
        raise InvalidInput(f"{file}: expected a non-empty list of cases (or {{\"cases\": [...]}})")
    if len(items) > MAX_CASES:
        raise InvalidInput(f"{file}: {len(items)} cases; at most {MAX_CASES}")
    cases = []
    for index, item in enumerate(items, start=1):
        try:
            cases.append(_case(item, index))
        except InvalidInput as exc:
            raise InvalidInput(f"{file}: case {index}: {exc}") from None
    names = Counter(case.name for case in cases)
    duplicated = [name for name, count in names.items() if count > 1]
    if duplicated:
        raise InvalidInput(f"{file}: case names must be unique; repeated: {', '.join(duplicated[:5])}")
    return cases


def _case(item: object, index: int) -> Case:
    if not isinstance(item, Mapping):
        raise InvalidInput(f"expected an object with goal and url, got {type(item).__name__}")
    unknown = set(item) - {"name", "goal", "url", "success", "max_turns"}
    if unknown:
        raise InvalidInput(f"unknown keys {', '.join(sorted(map(str, unknown)))}")
    goal = item.get("goal")
    if not isinstance(goal, str) or not goal.strip() or len(goal) > 2000:
        raise InvalidInput("goal: expected a non-empty string of at most 2000 characters")
    url = check_url(item.get("url"), field="url")
    name = item.get("name", f"case-{index}")
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        raise InvalidInput("name: expected a non-empty string of at most 200 characters")
    max_turns = item.get("max_turns")
    if max_turns is not None and (not isinstance(max_turns, int) or isinstance(max_turns, bool) or max_turns < 1):
        raise InvalidInput(f"max_turns: expected a positive integer, got {max_turns!r}")
    return Case(name.strip(), goal.strip(), url, SuccessCheck.from_mapping(item.get("success")), max_turns)


def derive_hints(results: list[CaseResult], *, max_turns: int) -> list[str]:
    """What the next runs of the suite should know: actions that often fail, stuck loops, goals that need
    many turns, and stale element refs."""
    hints: list[str] = []
    failing = Counter(action for result in results for action, _ in dict.fromkeys(result.failed_actions))
    errors = {action: error for result in results for action, error in result.failed_actions}
    for action, count in failing.most_common():
        if count >= 2:
            hints.append(f"'{clean_for_prompt(action, 160)}' failed in {count} runs: {clean_for_prompt(errors[action], 160)}")
    for result in results:
        if "same action" in result.reason:
            hints.append(f"'{clean_for_prompt(result.goal, 120)}' got stuck: {clean_for_prompt(result.reason, 200)}; "
                         "try a different element or approach")
    slow = [r for r in results if r.turns >= max(3, round(0.75 * (r.max_turns or max_turns)))]
    for result in slow:
        hints.append(f"'{clean_for_prompt(result.goal, 120)}' needed {result.turns} turns"
                     f"{'' if result.success else ' and failed'}; plan the steps before acting")
    hinted = {r.name for r in slow} | {r.name for r in results if "same action" in r.reason}
    for result in results:
        if not result.success and result.name not in hinted:
            hints.append(f"'{clean_for_prompt(result.goal, 120)}' failed last time: {clean_for_prompt(result.reason, 200)}")
    stale = sum(1 for r in results for _, error in r.failed_actions if "ref " in error and "no element" in error)
    if stale:
        hints.append(f"element refs went stale {stale} times: re-read the page's refs after it changes")
    return list(dict.fromkeys(hints))[:MAX_HINTS]


def hints_text(hints: list[str]) -> str:
    return "\n".join([HINTS_HEADING, *(f"- {hint}" for hint in hints)]) if hints else ""


def suite_name(path: str | os.PathLike[str]) -> str:
    """The suite's name from its file name, safe as a directory name."""
    return _SUITE_NAME.sub("-", Path(path).stem).strip("-.")[:80] or "suite"


class SuiteLog:
    """Where a suite's summaries and hints live: ``<dir>/suites/<name>/`` (one JSON file per suite run)."""

    def __init__(self, directory: str | os.PathLike[str], name: str) -> None:
        self.directory = Path(directory) / "suites" / suite_name(name)

    def hints(self) -> list[str]:
        file = self.directory / "hints.json"
        if not file.is_file():
            return []
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return []  # a damaged hints file only loses hints; the next suite run rewrites it
        return [clean_for_prompt(h, 400) for h in data if isinstance(h, str)][:MAX_HINTS] if isinstance(data, list) else []

    def write(self, summary: SuiteSummary) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        stamp = summary.started_at.replace(":", "").replace("-", "").replace("+0000", "Z")
        target = self.directory / f"summary-{stamp}.json"
        _write_atomically(target, json.dumps(summary.to_dict(), indent=2, ensure_ascii=False))
        _write_atomically(self.directory / "hints.json", json.dumps(summary.hints, indent=2, ensure_ascii=False))
        return target


def _write_atomically(target: Path, text: str) -> None:
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, target)


def run_suite(
    cases: list[Case],
    run_case: Callable[[Case, str], AgentResult],
    *,
    suite: str,
    isolation: str,
    max_turns: int,
    log: SuiteLog | None,
    on_case: Callable[[int, int, CaseResult], None] | None = None,
) -> SuiteSummary:
    """Run every case with ``run_case(case, hints)`` (hints of earlier suite runs as context text), then
    write the summary and the new hints to ``log``."""
    if isolation not in ("per-run", "shared"):
        raise InvalidInput(f"memory isolation: expected per-run or shared, got {isolation!r}")
    started = utcnow().strftime("%Y-%m-%dT%H:%M:%S.%f+0000")
    earlier = hints_text(log.hints()) if log is not None else ""
    results = []
    for number, case in enumerate(cases, start=1):
        result = CaseResult.of(case, run_case(case, earlier))
        results.append(result)
        if on_case is not None:
            on_case(number, len(cases), result)
    summary = SuiteSummary(suite, started, isolation, results, derive_hints(results, max_turns=max_turns))
    if log is not None:
        log.write(summary)
    return summary
