"""The records of skills: a site's remembered task as a tool an agent may call, with its parameters and its record."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from .models import Count, Goal, Id, LongText, Name, Record, ShortText

#: What a parameter holds: free text, a number, a date, a time, one of the options a page offered, or a registered
#: secret that webmem fills itself (never asked of the agent).
ParameterKind = Literal["text", "number", "date", "time", "choice", "secret"]
#: ``verified``: a replay of it did a new instance (other values than its recordings') and the run succeeded;
#: ``unverified``: only its recordings vouch for it; ``withdrawn``: its replays failed too often, or the site
#: changed since it last worked, until a replay verifies it again.
SkillStatus = Literal["verified", "unverified", "withdrawn"]


class SkillParameter(Record):
    """One value a skill is called with: a slot of its goal template, named after the field it is typed into."""

    name: Name
    kind: ParameterKind
    slot: Count
    description: LongText = ""
    options: list[ShortText] = Field(default_factory=list)
    example: LongText | None = None


class SkillRecord(Record):
    """How a skill has done: the runs that recorded it, and the replays of it and what became of them."""

    recorded: Count = 0
    replays: Count = 0
    successes: Count = 0
    handovers: Count = 0
    failures: Count = 0
    last_verified: datetime | None = None


class Skill(Record):
    """A replayable task template of one site, as a tool: ``name`` and ``description`` for the agent to choose it by,
    ``parameters`` from the template's slots, and ``record`` and ``status`` to trust it by. ``template`` names each
    slot by its parameter (``Create a ticket titled "{summary}"``); ``trajectory_id`` is the newest recording,
    the one a call replays."""

    id: Id
    name: Name
    origin: Name
    domain: Name
    description: LongText
    template: Goal
    parameters: list[SkillParameter] = Field(default_factory=list)
    record: SkillRecord = Field(default_factory=SkillRecord)
    status: SkillStatus = "unverified"
    status_reason: LongText = ""
    trajectory_id: Id
