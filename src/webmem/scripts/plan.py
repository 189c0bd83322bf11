"""What a remembered run becomes as a script, whatever its language: its parameters, each step's
locator, value and assertion, and the header facts.

A trajectory's path that worked (failed and retried steps collapsed) is turned into steps that
find their elements the way Playwright's code generator does (role and accessible name, exactly;
visible text; for an element with no name, its ``name`` attribute or ``id`` as recorded with it, else the
label beside it, else the remembered CSS selector), the goal's slots
into parameters defaulting to the recorded values, secrets into environment variables, and each
verified effect into an assertion.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from ..core.elements import css_locator
from ..core.errors import InvalidInput
from ..core.models import Step, Trajectory
from ..core.redaction import PLACEHOLDER
from ..core.terms import NAME_SPELLINGS
from ..trajectories.binding import bind
from ..trajectories.completions import GAP, hover_before_pick
from ..trajectories.conversions import derive
from ..trajectories.evidence import TEXT_ROLE, parse_identity
from ..trajectories.lists import listed_steps
from ..trajectories.plans import replayable
from ..trajectories.slots import SLOT, SLOT_REFERENCE

ACTIONS = ("goto", "click", "fill", "type", "press", "select", "check", "hover", "scroll", "wait")
_SKIPPED = ("finish", "done", "extract", "note")
_NAME = re.compile(r"[^a-z0-9]+")
#: Names a script already uses (its own variables, helpers and modules): never a parameter's name.
_RESERVED = frozenset("""page options parser playwright browser element params p run main place secret labelled read_date
time24 re os datetime argparse expect sync_playwright Page Locator START_URL MONTHS LABEL_TEST item listed named
SAME_NAMES click SHOWN_POINT""".split())
MAX_LABEL_WORDS = 4
MAX_LABEL_CHARS = 40

#: A piece of a value: literal text, a parameter (by name, with a conversion: ``name|upper``), a secret (by
#: environment variable) or the list value a loop is at (``item``, with a conversion after ``|`` if any).
Part = tuple[str, str]
#: The spellings pages use for one name, as groups (a close button reads "×" where the goal says "x").
SAME_NAMES = [sorted({key, *others}) for key, others in NAME_SPELLINGS.items()]
#: The conversions of a goal value a script redoes (the rest keep the value recorded).
SCRIPT_CONVERSIONS = ("identity", "lower", "upper", "title", "number", "time24", "iso_date", "us_date", "us_date_short")
#: Conversions that need a helper in the script (a time or a date read from the goal's spelling).
READING = ("time24", "iso_date", "us_date", "us_date_short")


@dataclass(frozen=True)
class Param:
    name: str
    slot: int
    default: str


@dataclass(frozen=True)
class Locate:
    """How the script finds a step's element."""

    role: str | None = None
    name: list[Part] | None = None  # the accessible name (exact), which a parameter may give
    text: list[Part] | None = None  # found by its visible text (the first visible element with it)
    selector: str | None = None  # the remembered CSS selector (an element without a name)
    label: str | None = None  # the text just before an unnamed field: found by it wherever the page puts it
    nth: int | None = None  # 0-based place among the elements that match, as recorded
    count: int | None = None  # how many matched when recorded
    place_param: str | None = None  # the parameter whose ordinal says the place ("3rd")
    completes: bool = False  # the name is the goal's values around a gap: the one element whose name completes them


@dataclass(frozen=True)
class ScriptStep:
    number: int
    action: str
    describe: str
    locate: Locate | None
    value: list[Part] | None
    check: str | None  # "value", "checked", "url"
    url: str | None  # the URL expected after the step (for a "url" check, or a goto)


@dataclass(frozen=True)
class Loop:
    """The steps ``steps[start:end]`` of the plan, run once per value of the list parameter ``param``."""

    param: str
    start: int
    end: int


@dataclass(frozen=True)
class ScriptPlan:
    goal: str
    template: str | None
    origin: str
    start_url: str
    trajectory_id: str
    run_id: str | None
    recorded_at: datetime
    params: list[Param]
    steps: list[ScriptStep]
    loop: Loop | None = None

    @property
    def secrets(self) -> list[str]:
        return sorted({text for step in self.steps for kind, text in (step.value or []) if kind == "secret"})

    @property
    def readings(self) -> list[str]:
        """The time and date conversions the script's values use (each needs its helper)."""
        parts = [part for step in self.steps for part in [*(step.value or []), *((step.locate.name or []) if step.locate
                                                                                  else [])]]
        return sorted({text.partition("|")[2] for kind, text in parts if kind == "param"} & set(READING))

    @property
    def uses_labels(self) -> bool:
        return any(step.locate is not None and step.locate.label for step in self.steps)

    @property
    def uses_places(self) -> bool:
        return any(step.locate is not None and step.locate.place_param for step in self.steps)

    @property
    def clicks(self) -> bool:
        return any(step.action == "click" and step.locate is not None for step in self.steps)

    @property
    def completes(self) -> bool:
        """Whether an element is found as the completion of the goal's values (a suggestion picked)."""
        return any(step.locate is not None and step.locate.completes for step in self.steps)

    @property
    def uses_names(self) -> bool:
        """Whether an element is found by a name the goal gives (any letter case, other spellings)."""
        return any(step.locate is not None and step.locate.role is not None and step.locate.label is None
                   and any(kind != "text" for kind, _ in step.locate.name or []) for step in self.steps)


def plan_script(trajectory: Trajectory, *, start_url: str | None = None) -> ScriptPlan:
    """The script plan of a successful trajectory; ``InvalidInput`` names what cannot be scripted."""
    if not trajectory.success:
        raise InvalidInput(f"trajectory {trajectory.id} did not succeed: only a path that worked becomes a script")
    template = trajectory.goal_template if trajectory.replay_steps is not None else None
    steps = replayable(trajectory.replay_steps if template else trajectory.steps)
    if not steps:
        raise InvalidInput(f"trajectory {trajectory.id} has no step that worked")
    listing = listed_steps(template, steps) if template else None
    if listing is not None:  # the list's first value's steps, once per value of the list the script is given
        template = listing.template
        looped = steps[listing.first:listing.end]
        steps = [*steps[:listing.first], *looped, *steps[listing.after:]]
    recorded = bind(template, trajectory.goal) or {} if template else {}
    params = _params(template, recorded, steps, listed=listing.slot if listing else None) if template else []
    by_slot = {param.slot: param.name for param in params}
    first_url = next((step.url for step in trajectory.steps if step.url), None)
    start = start_url or first_url or trajectory.origin
    loop = Loop(by_slot[listing.slot], listing.first, listing.end) if listing is not None else None
    script_steps = [_script_step(number, step, steps[number:], by_slot, recorded,
                                 item_slot=listing.slot if loop and loop.start < number <= loop.end else None)
                    for number, step in enumerate(steps, start=1)
                    if step.action not in _SKIPPED
                    and not hover_before_pick(step, steps[number] if number < len(steps) else None)]
    if loop is not None:
        numbers = [step.number for step in script_steps]
        loop = Loop(loop.param, sum(number <= loop.start for number in numbers),
                    sum(number <= loop.end for number in numbers))
    return ScriptPlan(
        goal=trajectory.goal, template=template, origin=trajectory.origin, start_url=start,
        trajectory_id=trajectory.id, run_id=trajectory.run_id, recorded_at=trajectory.created_at,
        params=params, steps=script_steps, loop=loop,
    )


def _params(template: str, recorded: dict[int, str], steps: list[Step], *, listed: int | None = None) -> list[Param]:
    """The goal template's slots as parameters; ``listed``: the slot that takes a list (its name is plural)."""
    params: list[Param] = []
    taken: set[str] = set()
    for slot in dict.fromkeys(int(found.group(1)) for found in SLOT.finditer(template)):
        name = _param_name(slot, steps) or f"value_{slot}"
        if slot == listed and not name.endswith("s"):
            name += "s"
        if not name.isidentifier() or keyword.iskeyword(name) or name in _RESERVED:
            name = f"value_{name}" if f"value_{name}".isidentifier() else f"value_{slot}"
        base, number = name, 2
        while name in taken:
            name, number = f"{base}_{number}", number + 1
        taken.add(name)
        params.append(Param(name, slot, recorded.get(slot, "")))
    return params


def _param_name(slot: int, steps: list[Step]) -> str | None:
    mark = "{%d" % slot
    for step in steps:
        identity = parse_identity(step.target)
        if step.place_slot == slot:
            return f"{identity[0] if identity else 'element'}_place"
        if step.value and mark in step.value:
            named = step.label or (identity[1] if identity and not SLOT_REFERENCE.search(identity[1]) else "") or (
                identity[0] if identity else "")
            return _NAME.sub("_", named.casefold()).strip("_")[:40] or None
        if identity is not None and mark in identity[1]:
            return f"{identity[0]}_name"
    return None


def _script_step(number: int, step: Step, rest: list[Step], params: dict[int, str], recorded: dict[int, str], *,
                 item_slot: int | None = None) -> ScriptStep:
    if step.action not in ACTIONS:
        raise InvalidInput(f"step {number}: the action {step.action!r} has no Playwright equivalent in webmem's "
                           f"scripts (they know {', '.join(ACTIONS)})")
    value = _parts(step.value, params, recorded, item_slot) if step.value is not None else None
    locate = _locate(number, step, params, recorded, item_slot) if step.action not in ("goto", "scroll", "wait") else None
    if step.action not in ("goto", "scroll", "wait", "press") and locate is None:
        raise InvalidInput(f"step {number}: {step.action} names no element (no target and no selector)")
    check, url = None, None
    if step.action == "goto" and value is not None and all(kind == "text" for kind, _ in value):
        check, url = "url", _page(step.value or "")
    elif step.verified and step.action in ("fill", "type") and value is not None:
        check = "value"
    elif step.verified and step.action == "check":
        check = "checked"
    following = next((later.url for later in rest if later.url), None)
    if check is None and step.action == "click" and step.url and following and _page(following) != _page(step.url):
        check, url = "url", _page(following)
    describe = " ".join(filter(None, [step.action, step.target or step.selector]))
    return ScriptStep(number, step.action, describe, locate, value, check, url)


def _locate(number: int, step: Step, params: dict[int, str], recorded: dict[int, str],
            item_slot: int | None = None) -> Locate | None:
    identity = parse_identity(step.target)
    nth = step.target_index - 1 if step.target_index is not None else None
    place = params.get(step.place_slot) if step.place_slot is not None else None
    completes = bool(step.completes)
    if identity is not None and identity[0] == TEXT_ROLE:
        return Locate(text=_parts(identity[1], params, recorded, item_slot), nth=nth, count=step.target_count,
                      completes=completes)
    if identity is not None and identity[1]:
        return Locate(role=identity[0], name=_parts(identity[1], params, recorded, item_slot), nth=nth,
                      count=step.target_count, place_param=place, completes=completes)
    by_attribute = css_locator(step.element) if identity is not None and step.element is not None else None
    if by_attribute is not None and place is None:
        return Locate(selector=by_attribute)
    if identity is not None and _label_like(step.label) and place is None:
        return Locate(role=identity[0], name=[], label=step.label)
    if identity is not None and (nth is not None or not step.selector):
        return Locate(role=identity[0], name=[], nth=nth, count=step.target_count, place_param=place)
    if step.selector:
        return Locate(selector=step.selector)
    return None


def _parts(text: str, params: dict[int, str], recorded: dict[int, str], item_slot: int | None = None) -> list[Part]:
    """A step's text as literal pieces, parameters and secrets (``item_slot``: the list's slot, which is the
    value the loop is at); a value derived from a goal value by a conversion the script cannot redo keeps
    the value recorded."""
    if PLACEHOLDER.fullmatch(text):
        return [("secret", "WEBMEM_SECRET_" + text.strip("{}").upper())]
    parts: list[Part] = []
    position = 0
    for found in SLOT_REFERENCE.finditer(text):
        parts.append(("text", text[position:found.start()]))
        slot = int(found.group(1))
        names = [name for name in (found.group(2) or "").split("|") if name]
        redone = next((name for name in names if name in SCRIPT_CONVERSIONS), None) if names else "identity"
        if slot == item_slot and redone is not None:
            parts.append(("item", "" if redone == "identity" else redone))
        elif slot not in params or redone is None:
            parts.append(("text", _recorded_value(recorded.get(slot), names) or found.group()))
        else:
            parts.append(("param", params[slot] + ("" if redone == "identity" else f"|{redone}")))
        position = found.end()
    parts.append(("text", text[position:]))
    return [part for part in parts if part != ("text", "")]


def around_gap(parts: list[Part]) -> tuple[list[Part], list[Part]]:
    """A completed name's parts before and after its gap ("{1}…{2}")."""
    for index, (kind, text) in enumerate(parts):
        if kind == "text" and GAP in text:
            before, _, after = text.partition(GAP)
            return ([*parts[:index], *([("text", before)] if before else [])],
                    [*([("text", after)] if after else []), *parts[index + 1:]])
    return parts, []


def _label_like(text: str | None) -> bool:
    """Whether the text before a field reads as its label ("Year:", "Director name"), not as a sentence such
    as the page's instruction, which changes with every task it states."""
    return bool(text) and len(text) <= MAX_LABEL_CHARS and len(text.split()) <= MAX_LABEL_WORDS  # type: ignore[union-attr]


def _recorded_value(value: str | None, conversions: list[str]) -> str | None:
    """The value the run typed: the goal's value converted as recorded (a date or time the script keeps)."""
    if value is None or not conversions:
        return value
    return derive(value, tuple(conversions))[0]


def _page(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def header_lines(plan: ScriptPlan) -> list[str]:
    """What the script's header says: the goal, the site, where it came from and when."""
    lines = [f"Goal: {plan.goal}", f"Site: {plan.origin}",
             f"Recorded by webmem: trajectory {plan.trajectory_id}" + (f", run {plan.run_id}" if plan.run_id else "")
             + f", {plan.recorded_at:%Y-%m-%d %H:%M} UTC"]
    if plan.params:
        lines.append("Parameters (default: the recorded value): " + ", ".join(
            f"{param.name} = {param.default!r}" for param in plan.params))
    if plan.loop is not None:
        lines.append(f"{plan.loop.param} is a list (\"A, B, C\"): steps {plan.steps[plan.loop.start].number}-"
                     f"{plan.steps[plan.loop.end - 1].number} run once per value")
    if plan.secrets:
        lines.append("Secrets, read from the environment: " + ", ".join(plan.secrets))
    return lines
