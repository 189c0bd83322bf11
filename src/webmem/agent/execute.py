"""execute and verify: act on the page through Playwright, then check that the action had its effect."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..core.models import ElementSignals
from ..core.text import clean_for_prompt
from ..episodes.aria import parse_aria_snapshot
from ..trajectories.evidence import TEXT_ROLE, key
from .actions import Action, Target, text_selector
from .element_signals import read_signals
from .observation import Element, Observation, observe

SCROLL_PIXELS = 600
SETTLE_MS = 60
_CSS_PATH = """el => {
  const esc = s => CSS.escape(s);
  const unique = sel => { try { return document.querySelectorAll(sel).length === 1; } catch (e) { return false; } };
  if (el.id && unique('#' + esc(el.id))) return '#' + esc(el.id);
  const tag = el.tagName.toLowerCase();
  const name = el.getAttribute('name');
  if (name && unique(tag + '[name="' + name.replace(/"/g, '\\\\"') + '"]')) return tag + '[name="' + name.replace(/"/g, '\\\\"') + '"]';
  const parts = [];
  for (let node = el; node && node.nodeType === 1 && node !== document.body; node = node.parentElement) {
    if (node.id && unique('#' + esc(node.id))) { parts.unshift('#' + esc(node.id)); break; }
    let index = 1;
    for (let sibling = node.previousElementSibling; sibling; sibling = sibling.previousElementSibling)
      if (sibling.tagName === node.tagName) index++;
    parts.unshift(node.tagName.toLowerCase() + ':nth-of-type(' + index + ')');
  }
  return parts.join(' > ');
}"""


class TargetNotFound(Exception):
    """No element of the page fits the action's target."""


class RoleMismatch(TargetNotFound):
    """The only element that fits has another role than the one asked for."""


@dataclass(frozen=True)
class Execution:
    """What executing one action did."""

    ok: bool
    verified: bool | None
    expected_effect: str | None
    error: str | None
    element: Element | None
    selector: str | None
    observation: Observation | None
    duration_ms: float
    #: The identity signals of the element acted on, read before the action (None without one).
    signals: ElementSignals | None = None


def resolve(page: Any, target: Target, observation: Observation) -> tuple[Any, Element | None]:
    """The locator of the target: by its ref in this snapshot, else by role and name, else by the stored
    selector (whose element must have the asked role). A text target is found by its exact visible text."""
    if target.role == TEXT_ROLE and target.name:
        locator = page.locator(text_selector(target.name))
        if locator.count() == 0:
            raise TargetNotFound(f"the page shows no text {target.name!r}")
        return locator, None
    if target.ref:
        element = observation.by_ref(target.ref)
        if element is not None and (target.role is None or element.role == target.role):
            return page.locator(f"aria-ref={element.ref}"), element
        if element is None and target.role is None and f"[ref={target.ref}]" in observation.snapshot:
            return page.locator(f"aria-ref={target.ref}"), None  # a clickable non-interactive node (a row, a cell)
    if target.role:
        matches = observation.find(target.role, target.name if target.name is not None else None)
        if len(matches) > 1 and target.selector:
            by_selector = _by_selector(page, target, observation)
            if by_selector is not None:
                return by_selector
        if matches and matches[0].ref:
            return page.locator(f"aria-ref={matches[0].ref}"), matches[0]
        others = [element for element in observation.find(None, target.name) if target.name]
        if others and not target.selector:
            raise RoleMismatch(
                f"no {target.role} named {target.name!r} on the page; there is a {others[0].role} with that name"
            )
    if target.selector:
        found = _by_selector(page, target, observation)
        if found is not None:
            return found
    raise TargetNotFound(f"no element on the page matches {target.describe()}")


def _by_selector(page: Any, target: Target, observation: Observation) -> tuple[Any, Element | None] | None:
    from playwright.sync_api import Error as PlaywrightError

    try:
        locator = page.locator(target.selector)
        if locator.count() != 1:
            return None
        snapshot = locator.aria_snapshot(mode="ai", timeout=1000)  # the default mode would reset the page's refs
    except PlaywrightError:
        return None
    role = snapshot.lstrip("- ").split(" ", 1)[0].rstrip(":") if snapshot else ""
    if target.role and role != target.role:
        raise RoleMismatch(f"the element at {target.selector} is a {role or 'non-interactive element'}, not a {target.role}")
    same = [element for element in observation.elements if element.role == role]
    return locator, same[0] if len(same) == 1 else None


def element_ref(page: Any, selector: str, role: str, name: str) -> str | None:
    """The snapshot ref of the one element ``selector`` matches, when it has this role and name; else None."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        locator = page.locator(selector)
        if locator.count() != 1:
            return None
        snapshot = locator.aria_snapshot(mode="ai", timeout=1000)
    except PlaywrightError:
        return None
    found = parse_aria_snapshot(snapshot)[:1] if snapshot else []
    if not found or found[0].role != role or found[0].name != name:
        return None
    return found[0].ref


def reaches(page: Any, selector: str, ref: str) -> bool:
    """Whether ``selector`` matches exactly one element and it is the one with snapshot ref ``ref`` (read
    without taking a new snapshot, which would renumber the page's refs)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        locator = page.locator(selector)
        if locator.count() != 1:
            return False
        other = page.locator(f"aria-ref={ref}").element_handle(timeout=500)
        return bool(other is not None and locator.evaluate("(el, other) => el === other", other, timeout=500))
    except PlaywrightError:
        return False


def signals_of(page: Any, ref: str) -> ElementSignals | None:
    """The identity signals of the element with snapshot ref ``ref`` (read without a new snapshot)."""
    return read_signals(page.locator(f"aria-ref={ref}"), timeout_ms=500)


def shown_count(page: Any, text: str) -> int:
    """How many visible elements of the page have exactly ``text`` as their text."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        return page.locator(text_selector(text, first=False)).count()
    except PlaywrightError:
        return 0


def perform(page: Any, action: Action, observation: Observation, *, timeout_ms: int) -> Execution:
    """Execute the action, then verify its expected effect on a fresh observation."""
    from playwright.sync_api import Error as PlaywrightError

    started = time.perf_counter()
    locator = element = selector = signals = None
    try:
        if action.target is not None:
            locator, element = resolve(page, action.target, observation)
            selector = _stable_selector(locator)
            signals = read_signals(locator) if element is not None else None
        before = _state(locator, action)
        _act(page, action, locator, timeout_ms)
        if action.kind in ("click", "press", "goto", "check", "select"):
            page.wait_for_timeout(SETTLE_MS)
        after = observe(page)
        verified, effect = _verify(page, action, locator, observation, after, before)
        return Execution(True, verified, effect, None, element, selector, after, _ms(started), signals)
    except TargetNotFound as exc:
        return Execution(False, None, None, str(exc), element, selector, None, _ms(started), signals)
    except PlaywrightError as exc:
        message = _error_text(str(exc))
        return Execution(False, None, None, message or type(exc).__name__, element, selector, None, _ms(started),
                         signals)


def _act(page: Any, action: Action, locator: Any, timeout_ms: int) -> None:
    kind, value = action.kind, action.value
    if kind == "goto":
        page.goto(value, timeout=max(timeout_ms, 10_000))
    elif kind == "click":
        locator.click(timeout=timeout_ms)
    elif kind == "fill":
        locator.fill(value or "", timeout=timeout_ms)
    elif kind == "type":
        locator.press_sequentially(value, timeout=timeout_ms)
    elif kind == "press":
        (locator or page.keyboard).press(value, **({"timeout": timeout_ms} if locator else {}))
    elif kind == "select":  # by the option's label, in any letter case, else by the option's value
        labels = [label.strip() for label in locator.evaluate(
            "element => Array.from(element.options || [], option => option.label || option.textContent || '')",
            timeout=timeout_ms)]
        same = [label for label in labels if label == value] or [
            label for label in labels if key(label) == key(value or "")]
        if same:
            locator.select_option(label=same[0], timeout=timeout_ms)
        else:
            locator.select_option(value=value, timeout=timeout_ms)
    elif kind == "check":
        locator.check(timeout=timeout_ms)
    elif kind == "hover":
        locator.hover(timeout=timeout_ms)
    elif kind == "scroll":
        page.mouse.wheel(0, -SCROLL_PIXELS if (value or "down").lower() == "up" else SCROLL_PIXELS)
    elif kind == "wait":
        page.wait_for_timeout(action.wait_ms if action.wait_ms is not None else 500)


def _state(locator: Any, action: Action) -> Any:
    from playwright.sync_api import Error as PlaywrightError

    if locator is None or action.kind not in ("click", "check"):
        return None
    try:
        return locator.is_checked(timeout=200)
    except PlaywrightError:
        return None


def _verify(
    page: Any, action: Action, locator: Any, before: Observation, after: Observation, state_before: Any
) -> tuple[bool | None, str | None]:
    from playwright.sync_api import Error as PlaywrightError

    kind = action.kind
    changed = after.url != before.url or after.fingerprint != before.fingerprint or after.texts != before.texts or [
        (element.value, element.checked) for element in after.elements
    ] != [(element.value, element.checked) for element in before.elements]
    try:
        if kind == "goto":
            return after.url.rstrip("/") == (action.value or "").rstrip("/") or after.url != before.url, "url changed"
        if kind == "fill":
            return locator.input_value(timeout=500) == (action.value or ""), "field value set"
        if kind == "type":
            return (action.value or "") in locator.input_value(timeout=500), "field value set"
        if kind == "select":
            chosen = locator.evaluate("el => Array.from(el.selectedOptions || []).map(o => [o.label, o.value])")
            wanted = key(action.value or "")
            return any(action.value in pair or key(pair[0]) == wanted for pair in chosen), "option selected"
        if kind == "check":
            return bool(locator.is_checked(timeout=500)), "element checked"
        if kind == "click":
            if state_before is not None:
                now = _state(locator, action)
                if now is not None and now != state_before:
                    return True, "element toggled"
            return changed, "page changed"
        if kind == "press":
            return changed, "page changed"
    except PlaywrightError:
        # the element left the page: the page changed under it
        return True if kind in ("click", "press") else False, "element disappeared"
    return None, None


def _stable_selector(locator: Any) -> str | None:
    from playwright.sync_api import Error as PlaywrightError

    try:
        selector = locator.evaluate(_CSS_PATH, timeout=1000)
    except PlaywrightError:
        return None
    return selector if isinstance(selector, str) and 0 < len(selector) <= 500 else None


def _error_text(message: str) -> str:
    """Playwright's message, with the call log cut to its most telling lines (the cause is often there)."""
    head, _, log = message.partition("Call log:")
    lines = [line.strip(" -") for line in log.splitlines() if line.strip(" -")]
    telling = list(dict.fromkeys(line for line in lines if "intercepts" in line or "not " in line or "waiting for" in line))
    text = "\n".join([head.strip(), *telling[-4:]]) if telling else head.strip()
    return clean_for_prompt(text, 2000)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
