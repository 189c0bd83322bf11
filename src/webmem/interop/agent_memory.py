"""Import from, and export to, the ``.agent-memory/`` directory layout of browser-agent-driver.

The layout (see the fixtures' FORMATS.md): ``domains/<host>[_<port>]/knowledge.json`` (facts and
sessions), ``selectors.json``, ``trajectories/traj_*.json``, trajectory files directly in the
memory directory (where that agent's CLI writes them), and ``agent-runs/<run id>.json``.

Import reads every file it understands, keeps what is valid, and reports the rest; it runs in
one transaction (a dry run rolls it back). Export writes only inside its target directory,
whatever names the data holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..core.clock import utcnow
from ..core.errors import InvalidInput, WebmemError
from ..core.jsonfile import read_json
from ..core.models import (
    FACT_TYPES,
    Fact,
    RunManifest,
    SelectorEntry,
    Session,
    Step,
    Trajectory,
    describe_validation_error,
)
from ..core.urls import check_domain, domain_of, origin_of

if TYPE_CHECKING:
    from ..memory import Memory

Progress = Callable[[int, int], None]
MAX_FILE_BYTES = 50 * 1024 * 1024
_PORT_SUFFIX = re.compile(r"^(?P<host>.+)_(?P<port>\d{1,5})$")
_UNSAFE_DIR = re.compile(r"[^a-zA-Z0-9.-]")
_UNSAFE_FILE = re.compile(r"[^a-zA-Z0-9_-]")
_VALUE_KEYS = {"type": "text", "fill": "text", "press": "key", "select": "value", "navigate": "url", "goto": "url"}
_KNOWN_STEP_KEYS = {"url", "action", "snapshotHash", "verified", "expectedEffect"}


@dataclass
class TransferReport:
    """What an import or export did, per kind of record, and what it could not use."""

    added: Counter[str] = field(default_factory=Counter)
    merged: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data: what was added, merged, skipped, and notes."""
        return {
            "added": dict(self.added), "merged": dict(self.merged), "skipped": dict(self.skipped),
            "problems": self.problems, "notes": self.notes, "dry_run": self.dry_run,
        }


def is_agent_memory_dir(path: Path) -> bool:
    return path.is_dir() and ((path / "domains").is_dir() or (path / "agent-runs").is_dir()
                              or any(path.glob("traj_*.json")))


def import_agent_memory(
    mem: Memory, directory: str | Path, *, dry_run: bool = False, progress: Progress | None = None
) -> TransferReport:
    """Import an ``.agent-memory/`` directory into ``mem``'s namespace; see the module docstring."""
    root = Path(directory)
    if not root.is_dir():
        raise InvalidInput(f"path: {root} is not a directory")
    report = TransferReport(dry_run=dry_run)
    files = list(_files(root))
    with mem.store.write(dry_run=dry_run):
        refs: dict[str, dict[str, str]] = {}
        for number, (kind, path) in enumerate(files, start=1):
            _import_file(mem, kind, path, root, refs, report)
            if progress is not None:
                progress(number, len(files))
    for ignored in ("hints.json", "runs"):
        if (root / ignored).exists():
            report.notes.append(f"{ignored}: suite summaries and hints are not memory records; not imported")
    return report


def _files(root: Path) -> Iterator[tuple[str, Path]]:
    """Files in import order: selectors first (they name the elements behind refs), then the rest."""
    domains = sorted(path for path in (root / "domains").glob("*") if path.is_dir()) if (root / "domains").is_dir() else []
    for folder in domains:
        if (folder / "selectors.json").is_file():
            yield "selectors", folder / "selectors.json"
    for folder in domains:
        if (folder / "knowledge.json").is_file():
            yield "knowledge", folder / "knowledge.json"
        for path in sorted((folder / "trajectories").glob("traj_*.json")):
            yield "trajectory", path
    for path in sorted(root.glob("traj_*.json")):
        yield "trajectory", path
    for path in sorted((root / "agent-runs").glob("*.json")) if (root / "agent-runs").is_dir() else []:
        yield "manifest", path


def _import_file(
    mem: Memory, kind: str, path: Path, root: Path, refs: dict[str, dict[str, str]], report: TransferReport
) -> None:
    where = str(path.relative_to(root))
    if not path.resolve().is_relative_to(root.resolve()):
        report.problems.append(f"{where}: a link to a file outside the imported folder; skipped")
        return
    try:
        data = read_json(path, limit=MAX_FILE_BYTES)
        if kind == "selectors":
            _import_selectors(mem, data, _folder_domain(path.parent, data), refs, report, where)
        elif kind == "knowledge":
            _import_knowledge(mem, data, _folder_domain(path.parent, data), report, where)
        elif kind == "trajectory":
            _import_trajectory(mem, data, refs, report, where)
        else:
            _import_manifest(mem, data, report, where)
    except (InvalidInput, ValidationError, KeyError, TypeError, ValueError) as exc:
        report.problems.append(f"{where}: {_reason(exc)}")


def _folder_domain(folder: Path, data: Any) -> str:
    """The domain a folder holds: from the URL its knowledge file names, else from the folder name."""
    if isinstance(data, dict) and isinstance(data.get("domain"), str):
        try:
            domain = domain_of(data["domain"])
            if _safe_dir(domain) == folder.name:
                return domain
        except InvalidInput:
            pass
    name = folder.name
    match = _PORT_SUFFIX.match(name)
    candidate = f"{match['host']}:{match['port']}" if match else name
    if candidate.strip(".") == "" or ".." in candidate or _UNSAFE_DIR.sub("", candidate.replace(":", "")) != candidate.replace(":", ""):
        raise InvalidInput(f"the folder name {name!r} is not a host")
    return check_domain(candidate)


def _import_selectors(
    mem: Memory, data: Any, domain: str, refs: dict[str, dict[str, str]], report: TransferReport, where: str
) -> None:
    entries = _mapping(data, "entries")
    known = refs.setdefault(domain, {})
    for element, item in entries.items():
        try:
            entry = SelectorEntry(
                domain=domain, element=str(item.get("element", element)), stable_selector=item.get("stableSelector"),
                last_ref=item.get("lastRef"), success_count=int(item.get("successCount", 0)),
                last_used=_time(item.get("lastUsed")),
            )
        except (ValidationError, AttributeError, TypeError, ValueError) as exc:
            report.problems.append(f"{where}: entry {element!r}: {_reason(exc)}")
            continue
        if entry.last_ref:
            known[entry.last_ref] = entry.element
        _count(report, "selectors", mem.selectors.import_entry(entry))


def _import_knowledge(mem: Memory, data: Any, domain: str, report: TransferReport, where: str) -> None:
    for number, item in enumerate(_list(data, "facts")):
        try:
            if item.get("type") not in FACT_TYPES:
                raise InvalidInput(f"type {item.get('type')!r} is not one of {', '.join(FACT_TYPES)}")
            seen = _time(item.get("lastSeen"))
            fact = Fact(domain=domain, type=item["type"], key=str(item["key"]), value=str(item["value"]),
                        confidence=float(item["confidence"]), sources=int(item.get("sources", 1)),
                        first_seen=seen, last_seen=seen)
        except (InvalidInput, ValidationError, AttributeError, KeyError, TypeError, ValueError) as exc:
            report.problems.append(f"{where}: facts.{number}: {_reason(exc)}")
            continue
        _count(report, "facts", mem.knowledge.import_fact(fact))
    for number, item in enumerate(_list(data, "sessions", required=False)):
        try:
            session = Session(
                id=str(item["id"]), domain=domain, goal=str(item["goal"]), outcome=str(item.get("outcome", "")),
                success=bool(item["success"]), final_url=item.get("finalUrl") or None,
                timestamp=_time(item["timestamp"]), turns_used=int(item.get("turnsUsed", 0)),
                duration_ms=int(item.get("durationMs", 0)),
            )
        except (ValidationError, AttributeError, KeyError, TypeError, ValueError) as exc:
            report.problems.append(f"{where}: sessions.{number}: {_reason(exc)}")
            continue
        _count(report, "sessions", "added" if mem.knowledge.import_session(session) else "skipped")


def _import_trajectory(mem: Memory, data: Any, refs: dict[str, dict[str, str]], report: TransferReport, where: str) -> None:
    if not isinstance(data, dict) or "success" not in data or "steps" not in data:
        raise InvalidInput("not a trajectory (no steps or success)")
    if not data.get("origin"):
        raise InvalidInput("the trajectory has no origin: it cannot be matched to a site")
    origin = origin_of(data["origin"], field="origin")
    elements = refs.get(domain_of(origin), {})
    steps: list[Step] = []
    for number, raw in enumerate(_list(data, "steps")):
        unknown = set(raw) - _KNOWN_STEP_KEYS
        if unknown:
            report.notes.append(f"{where}: steps.{number}: unknown fields ignored: {', '.join(sorted(unknown))}")
        steps += _steps(raw, elements, mem)
    trajectory = Trajectory(
        id=str(data.get("id") or Path(where).stem), goal=str(data["goal"]), origin=origin,
        domain=domain_of(origin), steps=steps, success=bool(data["success"]),
        duration_ms=int(data.get("durationMs", 0)), model=data.get("model") or None,
        created_at=_time(data.get("timestamp")),
    )
    _count(report, "trajectories", "added" if mem.trajectories.import_trajectory(trajectory) else "skipped")


def _steps(raw: dict[str, Any], elements: dict[str, str], mem: Memory) -> list[Step]:
    """One step of the layout as webmem steps.

    A fill becomes one ``fill`` per field, one ``select`` per dropdown and one ``check`` per box
    (in that order), so that no part of it is lost.
    """
    action = raw["action"]
    name = str(action["action"])
    common = {"url": raw.get("url") or None, "verified": raw.get("verified"), "expected_effect": raw.get("expectedEffect"),
              "snapshot_hash": str(raw["snapshotHash"]) if raw.get("snapshotHash") is not None else None}
    if name == "fill" and isinstance(action.get("fields"), dict):
        steps = [_step(mem, name, selector, str(text), elements, common) for selector, text in action["fields"].items()]
        selects = action.get("selects")
        if isinstance(selects, dict):
            steps += [_step(mem, "select", selector, str(choice), elements, common) for selector, choice in selects.items()]
        checks = action.get("checks")
        if isinstance(checks, list):
            steps += [_step(mem, "check", str(selector), None, elements, common) for selector in checks]
        return steps or [_step(mem, name, None, None, elements, common)]
    value = action.get(_VALUE_KEYS.get(name, ""))
    if name == "scroll":
        value = " ".join(str(action[key]) for key in ("direction", "amount") if key in action) or action.get("value")
    elif name == "wait":
        value = action.get("ms", action.get("value"))
    return [_step(mem, name, action.get("selector"), None if value is None else str(value), elements, common)]


def _step(mem: Memory, name: str, selector: str | None, value: str | None, elements: dict[str, str],
          common: dict[str, Any]) -> Step:
    target = elements.get(selector or "")
    value = mem.secrets.redact_typed_value(value, target=target, selector=selector, secret=False)
    return Step(action=name, selector=selector, target=target, value=value, ok=True, **common)


def _import_manifest(mem: Memory, data: Any, report: TransferReport, where: str) -> None:
    if not isinstance(data, dict) or "runId" not in data:
        raise InvalidInput("not a run manifest (no runId)")
    start = data.get("startUrl")
    if not start:
        raise InvalidInput("the manifest has no startUrl: webmem files runs under their start URL's domain")
    manifest = RunManifest(
        run_id=str(data["runId"]), session_id=data.get("sessionId"), parent_run_id=data.get("parentRunId"),
        status=data["status"], goal=str(data["goal"]), domain=domain_of(start, field="startUrl"), start_url=start,
        final_url=data.get("finalUrl"), current_url=data.get("currentUrl"), started_at=_time(data["startedAt"]),
        updated_at=_time(data.get("updatedAt") or data["startedAt"]),
        completed_at=_time(data["completedAt"]) if data.get("completedAt") else None, success=data.get("success"),
        summary=data.get("summary"), artifact_paths=list(data.get("artifactPaths", [])),
        turn_count=int(data.get("turnCount", 0)), result=data.get("result"), reason=data.get("reason"),
    )
    _count(report, "runs", "added" if mem.runs.import_manifest(manifest) else "skipped")


# -- export ----------------------------------------------------------------------------------


def export_agent_memory(mem: Memory, directory: str | Path, *, progress: Progress | None = None) -> TransferReport:
    """Write the namespace's runs, trajectories, facts, sessions and selectors in the layout."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    report = TransferReport()
    trajectories = mem.trajectories.list()
    manifests = mem.runs.list()
    domains = sorted({t.domain for t in trajectories} | {m.domain for m in manifests} | set(_knowledge_domains(mem)))
    total = len(trajectories) + len(manifests) + len(domains)
    done = 0
    taken: set[Path] = set()
    folders: dict[str, str] = {}
    for domain in domains:
        name = _safe_dir(domain)
        if folders.setdefault(name, domain) != domain:  # e.g. 'a:1' and 'a_1': the layout cannot tell them apart
            report.problems.append(f"domain {domain}: its folder domains/{name} holds {folders[name]} already; "
                                   "its facts, sessions and selectors are not exported")
            continue
        folder = _inside(root, "domains", name)
        facts = mem.knowledge.facts(domain, min_confidence=0.0)
        sessions = sorted(mem.knowledge.sessions(domain), key=lambda s: s.timestamp)
        entries = mem.selectors.list(domain, limit=10_000)
        if facts or sessions:
            scheme = next((t.origin.split("://")[0] for t in trajectories if t.domain == domain), "https")
            _write(folder / "knowledge.json", {
                "domain": f"{scheme}://{domain}/",
                "facts": [{"type": f.type, "key": f.key, "value": f.value, "confidence": f.confidence,
                           "sources": f.sources, "lastSeen": _stamp(f.last_seen)} for f in facts],
                "sessions": [{"id": s.id, "goal": s.goal, "outcome": s.outcome, "success": s.success,
                              "finalUrl": s.final_url, "timestamp": _stamp(s.timestamp), "turnsUsed": s.turns_used,
                              "durationMs": s.duration_ms} for s in sessions],
                "updatedAt": _stamp(utcnow()),
            })
            report.added["facts"] += len(facts)
            report.added["sessions"] += len(sessions)
        if entries:
            _write(folder / "selectors.json", {"entries": {e.element: _selector_json(e) for e in entries},
                                              "updatedAt": _stamp(utcnow())})
            report.added["selectors"] += len(entries)
        done += 1
        if progress is not None:
            progress(done, total)
    for trajectory in trajectories:
        folder = _inside(root, "domains", _safe_dir(trajectory.domain), "trajectories")
        _write(_unique(folder, _trajectory_file(trajectory.id), taken), _trajectory_json(trajectory))
        report.added["trajectories"] += 1
        done += 1
        if progress is not None:
            progress(done, total)
    for manifest in manifests:
        _write(_unique(_inside(root, "agent-runs"), _safe_file(manifest.run_id), taken), _manifest_json(manifest))
        report.added["runs"] += 1
        done += 1
        if progress is not None:
            progress(done, total)
    for kind, what, count in (("lessons", "lessons", len(mem.lessons.list())),
                              ("episodes", "episode sessions", len(mem.episodes.sessions()))):
        if count:
            report.notes.append(f"{count} {what} not written: the .agent-memory layout has no place for them "
                                f"(webmem export --format json --kind {kind} keeps them)")
    return report


def _knowledge_domains(mem: Memory) -> list[str]:
    return mem.knowledge.domains() + mem.selectors.domains()


def _trajectory_json(t: Trajectory) -> dict[str, Any]:
    steps = []
    for step in t.steps:
        action: dict[str, Any] = {"action": step.action}
        if step.selector:
            action["selector"] = step.selector
        if step.action in ("fill", "check"):
            action = _fill_json(step)
        elif step.value is not None and step.action == "scroll":
            direction, _, amount = step.value.partition(" ")
            action["direction"] = direction
            if amount:
                action["amount"] = _number(amount)
        elif step.value is not None and step.action == "wait":
            action["ms"] = _number(step.value)
        elif step.value is not None:
            action[_VALUE_KEYS.get(step.action, "value")] = step.value
        item: dict[str, Any] = {"url": step.url, "action": action}
        if step.snapshot_hash is not None:
            item["snapshotHash"] = step.snapshot_hash
        if step.verified is not None:
            item["verified"] = step.verified
        if step.expected_effect:
            item["expectedEffect"] = step.expected_effect
        steps.append(item)
    return {"id": t.id, "goal": t.goal, "origin": t.origin, "steps": steps, "success": t.success,
            "durationMs": t.duration_ms, "model": t.model or "unknown", "timestamp": _stamp(t.created_at)}


def _fill_json(step: Step) -> dict[str, Any]:
    """A fill or check step in the layout's shape: ``fill {fields: {selector: text}, checks: [selector]}``."""
    if step.action == "check":
        return {"action": "fill", "fields": {}, "checks": [step.selector] if step.selector else []}
    return {"action": "fill", "fields": {step.selector: step.value or ""} if step.selector else {}}


def _number(text: str) -> int | str:
    """An integer written back as a number (``600``), anything else as it was."""
    return int(text) if text.isdigit() and str(int(text)) == text else text


def _manifest_json(m: RunManifest) -> dict[str, Any]:
    data = {"runId": m.run_id, "sessionId": m.session_id, "parentRunId": m.parent_run_id, "status": m.status,
            "goal": m.goal, "domain": m.domain.rsplit(":", 1)[0], "startUrl": m.start_url,
            "startedAt": _stamp(m.started_at), "updatedAt": _stamp(m.updated_at), "artifactPaths": m.artifact_paths,
            "turnCount": m.turn_count, "currentUrl": m.current_url, "success": m.success, "finalUrl": m.final_url,
            "summary": m.summary, "result": m.result, "reason": m.reason,
            "completedAt": _stamp(m.completed_at) if m.completed_at else None}
    return {key: value for key, value in data.items() if value is not None}


def _selector_json(entry: SelectorEntry) -> dict[str, Any]:
    data: dict[str, Any] = {"element": entry.element, "successCount": entry.success_count,
                            "lastUsed": _stamp(entry.last_used)}
    if entry.last_ref:
        data["lastRef"] = entry.last_ref
    if entry.stable_selector:
        data["stableSelector"] = entry.stable_selector
    return data


def _safe_dir(domain: str) -> str:
    """The layout's folder name of a host: characters outside [a-zA-Z0-9.-] become '_'."""
    name = _UNSAFE_DIR.sub("_", domain)
    return name if name.strip(".") else "_"


def _safe_file(name: str) -> str:
    return _UNSAFE_FILE.sub("_", name) or "_"


def _trajectory_file(trajectory_id: str) -> str:
    """The file name of a trajectory: ``traj_*``, the only trajectory files the layout reads back."""
    name = _safe_file(trajectory_id)
    return name if name.startswith("traj_") else f"traj_{name}"


def _unique(folder: Path, stem: str, taken: set[Path]) -> Path:
    """``folder/stem.json``, or ``stem_2.json`` ... when another record of this export got that name
    (ids that differ only in characters the layout replaces, such as ``a.b`` and ``a_b``).
    """
    path = folder / f"{stem}.json"
    number = 2
    while path in taken:
        path = folder / f"{stem}_{number}.json"
        number += 1
    taken.add(path)
    return path


def _inside(root: Path, *parts: str) -> Path:
    """``root/parts...``, refusing any path that would leave ``root``."""
    target = root.joinpath(*parts).resolve()
    if not target.is_relative_to(root.resolve()) or any(part in ("", ".", "..") for part in parts):
        raise InvalidInput(f"refusing to write outside {root}: {'/'.join(parts)!r}")
    target.mkdir(parents=True, exist_ok=True)
    return target


def _write(path: Path, data: Any) -> None:
    """Write ``path`` whole or not at all, through a temporary file of its own (created exclusively:
    never one planted under a predictable name, nor a link to elsewhere)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(json.dumps(data, indent=2, ensure_ascii=False))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _mapping(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, dict):
        raise InvalidInput(f"expected an object with {key!r}")
    return value


def _list(data: Any, key: str, *, required: bool = True) -> list[Any]:
    value = data.get(key) if isinstance(data, dict) else None
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise InvalidInput(f"expected {key!r} to be a list")
    return value


def _time(value: Any) -> datetime:
    if not isinstance(value, str):
        raise InvalidInput(f"expected an ISO timestamp, got {value!r}")
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"{value!r} is not an ISO timestamp") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=utcnow().tzinfo)


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _count(report: TransferReport, kind: str, outcome: str | bool) -> None:
    {"added": report.added, "merged": report.merged}.get(str(outcome), report.skipped)[kind] += 1


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return describe_validation_error(exc)
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    if isinstance(exc, WebmemError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
