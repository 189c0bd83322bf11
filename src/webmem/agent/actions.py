"""The actions an agent can take, checked where they enter (a policy, an LLM tool call, a stored step)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..core.errors import InvalidInput
from ..trajectories.evidence import element_identity

#: Every action kind on the page, and the kinds that act on an element of the page.
ACTION_KINDS = ("goto", "click", "fill", "type", "press", "select", "check", "hover", "scroll", "wait", "finish")
#: The call of one of the site's skills (an LLM policy's): the loop replays the skill's plan, not one action.
SKILL = "skill"
KINDS = (*ACTION_KINDS, SKILL)
TARGETED_KINDS = frozenset({"click", "fill", "type", "select", "check", "hover"})
VALUE_KINDS = frozenset({"fill", "type", "select", "press"})
MAX_VALUE_CHARS = 10_000
MAX_WAIT_MS = 30_000


#: The reason of every action a replay hands out (a policy that takes over can tell them from its own).
REPLAYED = "replay"


def text_selector(text: str, *, first: bool = True) -> str:
    """The Playwright selector of the (first) visible element whose whole text is ``text``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'internal:text="{escaped}"s >> visible=true' + (" >> nth=0" if first else "")


@dataclass(frozen=True)
class Target:
    """Where an action points: a snapshot ref, a role and accessible name, a stored selector (any of them)."""

    ref: str | None = None
    role: str | None = None
    name: str | None = None
    selector: str | None = None

    @property
    def identity(self) -> str | None:
        """``role "name"``, the element's identity across page loads (None without a role)."""
        return element_identity(self.role, self.name or "") if self.role else None

    def describe(self) -> str:
        """The target as one line for prompts and logs."""
        return self.identity or self.selector or (f"ref {self.ref}" if self.ref else "(no target)")


@dataclass(frozen=True)
class SkillCall:
    """Which skill an action calls (its id and name) and the values of its parameters, as the model gave them."""

    id: str
    name: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        """``create_ticket(summary='Export fails', owner='carol')``."""
        given = ", ".join(f"{name}={value!r}" for name, value in self.values.items())
        return f"{self.name}({given})"


@dataclass(frozen=True)
class Action:
    """One thing to do on the page. ``value`` is the text for fill/type, the option for select, the key
    for press, the URL for goto, the direction for scroll; ``wait_ms`` is for wait; ``success`` and
    ``answer`` end the run (finish); ``skill`` is the skill a ``skill`` action calls.
    """

    kind: str
    target: Target | None = None
    value: str | None = None
    wait_ms: int | None = None
    success: bool | None = None
    answer: str | None = None
    reason: str | None = None
    secret: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)
    skill: SkillCall | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidInput(f"action: {self.kind!r} is not one of {', '.join(KINDS)}")
        if (self.kind == SKILL) != (self.skill is not None):
            raise InvalidInput("skill: a skill action names the skill it calls, and only a skill action does")
        if self.skill is not None and (not isinstance(self.skill, SkillCall) or not isinstance(self.skill.values,
                                                                                               Mapping)):
            raise InvalidInput("skill: expected a SkillCall whose values are an object of parameter name -> value")
        if self.kind in TARGETED_KINDS and (self.target is None or not (
            self.target.ref or self.target.role or self.target.selector
        )):
            raise InvalidInput(f"{self.kind}: needs a target (a ref, a role and name, or a selector)")
        if self.kind in VALUE_KINDS or self.kind == "goto":
            if not isinstance(self.value, str) or (self.kind != "fill" and not self.value):
                raise InvalidInput(f"{self.kind}: needs a value (a string), got {self.value!r}")
        if self.value is not None and (not isinstance(self.value, str) or len(self.value) > MAX_VALUE_CHARS):
            raise InvalidInput(f"value: expected a string of at most {MAX_VALUE_CHARS} characters")
        if self.kind == "finish" and not isinstance(self.success, bool):
            raise InvalidInput(f"finish: success must be True or False, got {self.success!r}")
        if self.kind == "wait" and self.wait_ms is not None and not (
            isinstance(self.wait_ms, int) and 0 <= self.wait_ms <= MAX_WAIT_MS
        ):
            raise InvalidInput(f"wait: wait_ms must be an integer from 0 to {MAX_WAIT_MS}, got {self.wait_ms!r}")

    @property
    def signature(self) -> tuple[str, str, str]:
        """What makes two actions "the same" for the repeated-action guardrail."""
        if self.skill is not None:
            return (self.kind, self.skill.id, json.dumps(self.skill.values, sort_keys=True, default=str))
        target = self.target
        where = (target.identity or target.selector or target.ref or "") if target else ""
        return (self.kind, where, self.value or "")

    def with_target(self, target: Target) -> Action:
        """The same action aimed at another target."""
        return replace(self, target=target)

    def describe(self) -> str:
        """One line for logs and prompts: ``fill textbox "Email" "a@b.c"``."""
        if self.skill is not None:
            return f"{self.kind} {self.skill.describe()}"
        words = [self.kind]
        if self.target is not None:
            words.append(self.target.describe())
        if self.kind == "finish":
            words.append("success" if self.success else "failure")
            if self.answer:
                words.append(repr(self.answer))
        elif self.value is not None:
            words.append("{secret}" if self.secret else repr(self.value))
        return " ".join(words)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> Action:
        """An action from plain data (an LLM tool call's arguments plus ``kind``); errors name the field."""
        if not isinstance(data, Mapping):
            raise InvalidInput(f"action: expected a mapping, got {type(data).__name__}")
        kind = data.get("kind") or data.get("action")
        target = None
        if any(data.get(key) for key in ("ref", "role", "name", "selector")):
            for key in ("ref", "role", "name", "selector"):
                if data.get(key) is not None and not isinstance(data.get(key), str):
                    raise InvalidInput(f"{key}: expected a string, got {type(data.get(key)).__name__}")
            target = Target(ref=_text(data, "ref"), role=_text(data, "role"), name=data.get("name"),
                            selector=_text(data, "selector"))
        value = data.get("value", data.get("url") if kind == "goto" else data.get("key") if kind == "press" else None)
        if value is not None and not isinstance(value, str):
            value = str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
        wait_ms = data.get("wait_ms", data.get("ms"))
        return cls(kind=str(kind) if kind is not None else "", target=target, value=value, wait_ms=wait_ms,
                   success=data.get("success"), answer=data.get("answer"), reason=data.get("reason"))


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value.strip() or None if isinstance(value, str) else None
