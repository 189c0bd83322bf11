"""webmem's own export (JSON, JSONL, CSV, prompt text) and import (auto-detected source).

JSON export: ``{"webmem_export": 1, "namespace": ..., "<kind>": [records...]}`` with one key per
kind. JSONL: one ``{"kind": ..., "record": {...}}`` object per line. CSV: one kind at a time, flat
columns. Prompt: lessons (the tier-1 system-prompt section) or episodes (REPEAT/AVOID).

Import auto-detects an ``.agent-memory/`` directory of browser-agent-driver's layout, a lesson
``memory.json`` file (mycompagent), or a webmem JSON/JSONL export.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ..core import jsonfile
from ..core.errors import InvalidInput
from ..core.episode_records import EpisodeEntry
from ..core.models import (
    Fact,
    Lesson,
    RecordedRun,
    RunManifest,
    SelectorEntry,
    Session,
    Trajectory,
    describe_validation_error,
)
from ..core.spreadsheet import safe_row
from ..core.urls import check_domain
from ..core.vocabulary import TRANSFER_FORMATS, TRANSFER_KINDS
from ..episodes.export import export_memories
from .agent_memory import TransferReport, import_agent_memory, is_agent_memory_dir

if TYPE_CHECKING:
    from ..memory import Memory

KINDS = TRANSFER_KINDS
FORMATS = TRANSFER_FORMATS
EXPORT_MARKER = "webmem_export"
Progress = Callable[[int, int], None]
IMPORT_BATCH = 1_000  # runs or trajectories stored per batch
_RECORD_TYPES: dict[str, type[BaseModel]] = {
    "runs": RecordedRun, "trajectories": Trajectory, "facts": Fact, "sessions": Session,
    "selectors": SelectorEntry, "lessons": Lesson, "episodes": EpisodeEntry,
}


def collect(mem: Memory, kinds: Iterable[str]) -> dict[str, list[BaseModel]]:
    """The namespace's records of each kind."""
    chosen = _check_kinds(kinds)
    records: dict[str, list[BaseModel]] = {}
    domains = sorted(set(mem.knowledge.domains()) | set(mem.selectors.domains()))
    for kind in chosen:
        if kind == "runs":
            steps = mem.runs.steps_by_run()
            records[kind] = [RecordedRun(**run.model_dump(), steps=steps.get(run.run_id, [])) for run in mem.runs.list()]
        elif kind == "trajectories":
            records[kind] = list(mem.trajectories.list())
        elif kind == "facts":
            records[kind] = [fact for domain in domains for fact in mem.knowledge.facts(domain, min_confidence=0.0)]
        elif kind == "sessions":
            records[kind] = [session for domain in domains for session in mem.knowledge.sessions(domain)]
        elif kind == "selectors":
            records[kind] = [entry for domain in domains for entry in mem.selectors.list(domain, limit=100_000)]
        elif kind == "lessons":
            records[kind] = list(mem.lessons.list())
        else:
            records[kind] = [entry for session in mem.episodes.sessions()
                             for entry in mem.episodes.load_all_memories_for_session(session)]
    return records


def render(mem: Memory, records: dict[str, list[BaseModel]], format: str, *,  # noqa: A002
           raw_csv: bool = False) -> str:
    """Records as text in one of the export formats. CSV cells that would start a spreadsheet formula
    are prefixed with ``'`` unless ``raw_csv`` (see :mod:`webmem.core.spreadsheet`)."""
    if format not in FORMATS:
        raise InvalidInput(f"format: {format!r} is not one of {', '.join(FORMATS)}")
    if format == "json":
        body = {EXPORT_MARKER: 1, "namespace": mem.namespace}
        body.update({kind: [r.model_dump(mode="json") for r in items] for kind, items in records.items()})
        return json.dumps(body, indent=2, ensure_ascii=False)
    if format == "jsonl":
        return "".join(
            json.dumps({"kind": kind, "record": r.model_dump(mode="json")}, ensure_ascii=False) + "\n"
            for kind, items in records.items() for r in items
        )
    if len(records) != 1:
        raise InvalidInput(f"format: {format} exports one kind at a time; choose one with --kind")
    (kind, items), = records.items()
    if format == "prompt":
        if kind == "episodes":
            return export_memories([item for item in items if isinstance(item, EpisodeEntry)], "prompt")
        if kind == "lessons":
            return mem.lessons.system_prompt_section()
        raise InvalidInput("format: prompt text exists for lessons and episodes only")
    if kind == "episodes":
        return export_memories([item for item in items if isinstance(item, EpisodeEntry)], "csv", raw_csv=raw_csv)
    return _csv(items, raw=raw_csv)


def _csv(items: list[BaseModel], *, raw: bool) -> str:
    rows = [_flat(item.model_dump(mode="json")) for item in items]
    columns = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(safe_row(row, raw=raw) for row in rows)
    return buffer.getvalue()


def _flat(data: dict[str, Any]) -> dict[str, Any]:
    return {key: json.dumps(value, ensure_ascii=False) if isinstance(value, list | dict) else value
            for key, value in data.items()}


#: The largest export file imported (an export of 100k runs is about 200 MB).
MAX_EXPORT_BYTES = 1024 * 1024 * 1024


def detect(path: Path) -> str:
    """What a path holds: ``agent-memory``, ``lessons`` or ``webmem`` (JSON or JSONL export)."""
    if path.is_dir():
        if is_agent_memory_dir(path):
            return "agent-memory"
        if (path / "memory.db").exists():
            raise InvalidInput(f"path: {path} is a webmem memory (it holds memory.db), not another agent's "
                               ".agent-memory layout; to copy a webmem memory, export it (webmem --memory-dir "
                               f"{path} export -o memory.json) and import that file")
        raise InvalidInput(f"path: {path} is a directory but not an .agent-memory layout (no domains/, agent-runs/ or traj_*.json)")
    if not path.is_file():
        raise InvalidInput(f"path: {path} does not exist")
    head = path.open("rb").read(4096).decode("utf-8", errors="replace").lstrip()
    if head.startswith("{") and f'"{EXPORT_MARKER}"' in head:
        return "webmem"
    if head.startswith('{"kind"'):
        return "webmem"
    if head.startswith("{") and '"lessons"' in head and '"version"' in head:
        return "lessons"
    raise InvalidInput(f"path: {path} is not an .agent-memory directory, a lesson memory.json or a webmem export")


def import_path(mem: Memory, path: str | Path, *, dry_run: bool = False, progress: Progress | None = None) -> TransferReport:
    """Import whatever ``path`` holds (see :func:`detect`) into ``mem``'s namespace."""
    source = Path(path)
    kind = detect(source)
    if kind == "agent-memory":
        return import_agent_memory(mem, source, dry_run=dry_run, progress=progress)
    report = TransferReport(dry_run=dry_run)
    with mem.store.write(dry_run=dry_run):
        if kind == "lessons":
            result = mem.lessons.import_file(source)
            _add(report.added, "lessons", result.added)
            _add(report.merged, "lessons", result.merged)
        else:
            _import_export(mem, _read_export(source), report, progress)
    return report


def _read_export(path: Path) -> dict[str, list[Any]]:
    try:
        text = jsonfile.read_text(path, limit=MAX_EXPORT_BYTES)
        if text.lstrip().startswith('{"kind"'):
            grouped: dict[str, list[Any]] = {}
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    try:
                        item = jsonfile.parse(line)
                    except InvalidInput as exc:
                        raise InvalidInput(f"{exc} at line {number}") from None
                    if not isinstance(item, dict) or item.get("kind") not in KINDS:
                        raise InvalidInput(f"line {number} is not a webmem record")
                    grouped.setdefault(item["kind"], []).append(item.get("record"))
            return grouped
        data = jsonfile.parse(text)
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc}") from None
    if not isinstance(data, dict) or data.get(EXPORT_MARKER) != 1:
        raise InvalidInput(f"{path}: not a webmem export of version 1")
    return {kind: data[kind] for kind in KINDS if isinstance(data.get(kind), list)}


def _import_export(mem: Memory, grouped: dict[str, list[Any]], report: TransferReport, progress: Progress | None) -> None:
    total = sum(len(items) for items in grouped.values())
    done = 0
    for kind in KINDS:
        valid = []
        for number, raw in enumerate(grouped.get(kind, [])):
            try:
                valid.append(_checked_domain(_RECORD_TYPES[kind].model_validate_json(json.dumps(raw))))
            except ValidationError as exc:
                report.problems.append(f"{kind}.{number}: {describe_validation_error(exc)}")
            except InvalidInput as exc:
                report.problems.append(f"{kind}.{number}: {exc}")
        _store(mem, kind, valid, report)
        done += len(grouped.get(kind, []))
        if progress is not None:
            progress(done, total)


def _checked_domain(record: BaseModel) -> BaseModel:
    """A record filed under a domain must name a real one (``www.example.com``, ``localhost:5173``):
    the domain becomes a folder name on export and a key for every lookup.
    """
    if isinstance(record, RunManifest | Trajectory | Fact | Session | SelectorEntry):
        key = check_domain(record.domain)
        if key != record.domain:
            raise InvalidInput(f"domain: {record.domain[:80]!r} is not a domain key (expected {key!r})")
    return record


def _store(mem: Memory, kind: str, records: list[Any], report: TransferReport) -> None:
    if not records:
        return
    if kind == "lessons":
        result = mem.lessons.import_lessons(records)
        _add(report.added, kind, result.added)
        _add(report.merged, kind, result.merged)
        return
    if kind == "episodes":
        added = mem.episodes.import_entries(records)
        _add(report.added, kind, added)
        _add(report.skipped, kind, len(records) - added)
        return
    if kind in ("runs", "trajectories"):  # in batches: few statements for many records
        for start in range(0, len(records), IMPORT_BATCH):
            batch = records[start:start + IMPORT_BATCH]
            added = mem.runs.import_manifests(batch) if kind == "runs" else mem.trajectories.import_trajectories(batch)
            _add(report.added, kind, sum(added))
            _add(report.skipped, kind, len(added) - sum(added))
        return
    for record in records:
        if kind == "facts":
            outcome: Any = mem.knowledge.import_fact(record)
        elif kind == "sessions":
            outcome = mem.knowledge.import_session(record)
        else:
            outcome = mem.selectors.import_entry(record)
        bucket = {"added": report.added, "merged": report.merged, True: report.added}.get(outcome, report.skipped)
        bucket[kind] += 1


def _add(counter: Any, kind: str, amount: int) -> None:
    if amount:
        counter[kind] += amount


def _check_kinds(kinds: Iterable[str]) -> list[str]:
    chosen = list(kinds)
    unknown = [kind for kind in chosen if kind not in KINDS]
    if unknown or not chosen:
        raise InvalidInput(f"kind: {', '.join(unknown) or 'none'} is not one of {', '.join(KINDS)}")
    return chosen
