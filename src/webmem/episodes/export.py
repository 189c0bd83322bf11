"""Exporting episode entries: JSON (full records), CSV (flat rows) and REPEAT/AVOID prompt text."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Literal
from urllib.parse import urlsplit

from ..core.errors import InvalidInput
from ..core.episode_records import EpisodeEntry, RetrievedMemory
from ..core.spreadsheet import safe_row
from ..core.text import clean_for_prompt
from .store import action_signature

ExportFormat = Literal["json", "csv", "prompt"]
EXPORT_FORMATS = ("json", "csv", "prompt")
CSV_COLUMNS = (
    "id", "session_id", "rep", "step_num", "step_id", "run_id", "action", "action_element_text", "outcome",
    "outcome_reason", "correction", "task_incomplete", "grade_confidence", "think", "internal_state",
    "env_pre_url", "env_pre_title", "env_pre_elements", "env_post_url", "env_post_title", "env_post_elements",
    "embedder", "created_at",
)
PROMPT_HEADER = (
    "# Lessons From Previous Attempt\n"
    "These are results from a PREVIOUS attempt at this task.\n"
    "- REPEAT: actions that worked before \u2014 do them again now\n"  # the seed's own words, em dash included:
    "- AVOID: mistakes from before \u2014 do NOT repeat them"  # agents and graders match this header
)


def export_memories(memories: Sequence[EpisodeEntry | RetrievedMemory], format: ExportFormat,  # noqa: A002
                    *, raw_csv: bool = False) -> str:
    """Entries (or retrieved memories) as ``json``, ``csv`` or ``prompt`` text. CSV cells that would start
    a spreadsheet formula are prefixed with ``'`` (see :mod:`webmem.core.spreadsheet`) unless ``raw_csv``."""
    if format not in EXPORT_FORMATS:
        raise InvalidInput(f"format: {format!r} is not one of {', '.join(EXPORT_FORMATS)}")
    if isinstance(memories, str | bytes) or not all(isinstance(m, EpisodeEntry | RetrievedMemory) for m in memories):
        raise InvalidInput("memories: expected a list of EpisodeEntry or RetrievedMemory records")
    if format == "json":
        return json.dumps([_entry(memory).model_dump(mode="json") for memory in memories], indent=2, ensure_ascii=False)
    if format == "csv":
        return _csv([_entry(memory) for memory in memories], raw=raw_csv)
    return _prompt(memories)


def _entry(memory: EpisodeEntry | RetrievedMemory) -> EpisodeEntry:
    return memory.entry if isinstance(memory, RetrievedMemory) else memory


def _csv(entries: list[EpisodeEntry], *, raw: bool) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for entry in entries:
        writer.writerow(safe_row({
            "id": entry.id, "session_id": entry.session_id, "rep": entry.rep, "step_num": entry.step_num,
            "step_id": entry.step_id or "", "run_id": entry.run_id or "", "action": entry.action,
            "action_element_text": entry.action_element_text, "outcome": entry.outcome,
            "outcome_reason": entry.outcome_reason or "", "correction": entry.correction or "",
            "task_incomplete": entry.task_incomplete or "",
            "grade_confidence": "" if entry.grade_confidence is None else entry.grade_confidence,
            "think": entry.think or "", "internal_state": entry.internal_state,
            "env_pre_url": entry.env_pre.url, "env_pre_title": entry.env_pre.title,
            "env_pre_elements": len(entry.env_pre.elements),
            "env_post_url": entry.env_post.url if entry.env_post else "",
            "env_post_title": entry.env_post.title if entry.env_post else "",
            "env_post_elements": len(entry.env_post.elements) if entry.env_post else "",
            "embedder": entry.embedder, "created_at": entry.created_at.isoformat(),
        }, raw=raw))
    return buffer.getvalue()


def _prompt(memories: Sequence[EpisodeEntry | RetrievedMemory]) -> str:
    lines = [PROMPT_HEADER]
    number = 0
    for memory in memories:
        entry = _entry(memory)
        if entry.outcome == "pending":
            continue
        number += 1
        score = memory.score if isinstance(memory, RetrievedMemory) else (entry.grade_confidence or 0.0)
        path = urlsplit(entry.env_pre.url).path or "/"
        kind = "REPEAT" if entry.outcome == "success" else "AVOID"
        verb = action_signature(entry.action)[0]
        element = clean_for_prompt(entry.action_element_text, 200).replace("'", "")
        lines.append(f"{number}. {kind}: [{clean_for_prompt(path, 100)} {round(score * 100)}%] {verb}: '{element}'")
        reason = clean_for_prompt(entry.outcome_reason or "", 300)
        if kind == "REPEAT":
            lines.append(f"This worked: {reason}")
        else:
            lines.append(f"This failed: {reason}")
            if entry.correction:
                lines.append(f"Do this instead: {clean_for_prompt(entry.correction, 300)}")
    return "\n".join(lines) if number else ""
