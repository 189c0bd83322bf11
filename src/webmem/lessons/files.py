"""Reading the lesson file of the agent the lessons come from: ``{"version": 1, "lessons": [...]}``.

The whole file is checked before anything is stored, so a bad entry changes nothing.
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from ..core.clock import new_id, utcnow
from ..core.errors import InvalidInput
from ..core.jsonfile import read_json
from ..core.models import Lesson as StoredLesson
from ..core.models import LessonCategory, LessonSource, describe_validation_error
from ..core.urls import check_domain
from .learning import command_name, plain_text

MAX_FILE_BYTES = 20 * 1024 * 1024


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lesson: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    category: LessonCategory
    failed_command: str | None = None
    error_pattern: str | None = None
    domain: str | None = None
    use_count: Annotated[int, Field(ge=0)] = 0
    created_at: date | None = None
    last_used: date | None = None
    source: LessonSource = "learned"
    triggered_domains: list[str] = Field(default_factory=list)


class _LessonFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1]
    lessons: list[_Entry]


def read_lesson_file(path: str | os.PathLike[str]) -> list[StoredLesson]:
    """The file's lessons as webmem lessons, or InvalidInput naming the file and what is wrong."""
    if not isinstance(path, str | os.PathLike):
        raise InvalidInput(f"path: expected a file path, got {type(path).__name__}")
    source = Path(path)
    if not source.is_file():
        raise InvalidInput(f"path: {source} is not a file")
    try:
        data = read_json(source, limit=MAX_FILE_BYTES)
    except InvalidInput as exc:
        raise InvalidInput(f"{source}: not a JSON lesson file: {exc}") from None
    try:
        parsed = _LessonFile.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(f"{source}: not a lesson file of version 1: {describe_validation_error(exc)}") from None
    return [_as_lesson(entry, number, source) for number, entry in enumerate(parsed.lessons)]


def _as_lesson(entry: _Entry, number: int, source: Path) -> StoredLesson:
    where = f"{source}: lessons.{number}"
    now = utcnow()
    created = _midnight(entry.created_at) or now
    try:
        domains = [check_domain(name, field=f"{where}.triggered_domains") for name in entry.triggered_domains]
        return StoredLesson(
            id=new_id("lesson"),
            lesson=plain_text(entry.lesson, 500),
            category=entry.category,
            failed_command=command_name(entry.failed_command),
            error_pattern=plain_text(entry.error_pattern.lower(), 200) or None if entry.error_pattern else None,
            domain=check_domain(entry.domain, field=f"{where}.domain") if entry.domain else None,
            use_count=entry.use_count,
            created_at=created,
            last_used=_midnight(entry.last_used) or created,
            source=entry.source,
            triggered_domains=list(dict.fromkeys(domains)),
        )
    except ValidationError as exc:
        raise InvalidInput(f"{where}: {describe_validation_error(exc)}") from None


def _midnight(day: date | None) -> datetime | None:
    return datetime.combine(day, time(), tzinfo=UTC) if day else None
