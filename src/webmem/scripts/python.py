"""A script plan as a sync Playwright script in Python: a ``run(page, ...)`` function whose keyword
arguments are the goal's parameters, and a command line (``--<param>``, ``--browser-path``,
``--headed``, ``--no-sandbox``) that runs it in Chromium."""

from __future__ import annotations

import json
import re

from .plan import SAME_NAMES, Locate, Part, ScriptPlan, ScriptStep, around_gap, header_lines

PLACE_HELPER = '''

def place(text: str, count: int) -> int:
    """The 0-based place an ordinal ("2nd", "third", "last") names among ``count`` elements."""
    words = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]
    said = text.strip().lower()
    number = count if said == "last" else words.index(said) + 1 if said in words else (
        int(said[:-2]) if said[:-2].isdigit() and said[-2:] in ("st", "nd", "rd", "th") else 0)
    if not 1 <= number <= count:
        raise SystemExit(f"{text!r} names no place among the {count} elements this step chooses from")
    return number - 1
'''

READING_HELPER = '''

MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


def read_date(text: str) -> datetime.date:
    """A date as goals write it: "11/20/2016" (month first), "2016-11-20", "Nov 20, 2016", "20 November 2016"."""
    said = text.strip()
    named = r"([A-Za-z]{3,9})\\.?"
    day = r"(\\d{1,2})(?:st|nd|rd|th)?"
    if found := re.fullmatch(r"(\\d{1,2})/(\\d{1,2})/(\\d{4})", said):
        month, day_, year = found.groups()
    elif found := re.fullmatch(r"(\\d{4})-(\\d{1,2})-(\\d{1,2})", said):
        year, month, day_ = found.groups()
    elif found := re.fullmatch(rf"{named}\\s{day},?\\s(\\d{{4}})", said):
        month, day_, year = str(MONTHS.index(found.group(1).lower()[:3]) + 1), found.group(2), found.group(3)
    elif found := re.fullmatch(rf"{day}\\s(?:of\\s)?{named},?\\s(\\d{{4}})", said):
        day_, month, year = found.group(1), str(MONTHS.index(found.group(2).lower()[:3]) + 1), found.group(3)
    else:
        raise SystemExit(f"{text!r} is no date this script reads")
    return datetime.date(int(year), int(month), int(day_))


def time24(text: str) -> str:
    """A 12-hour time ("11:20 AM", "3 p.m.") as 24-hour "HH:MM"."""
    found = re.fullmatch(r"(\\d{1,2})(?::([0-5]\\d))?\\s?([AaPp])\\.?\\s?[Mm]\\.?", text.strip())
    if found is None or not 1 <= int(found.group(1)) <= 12:
        raise SystemExit(f"{text!r} is no 12-hour time this script reads")
    return f"{int(found.group(1)) % 12 + (12 if found.group(3) in 'Pp' else 0):02d}:{found.group(2) or '00'}"
'''

LABEL_HELPER = '''

LABEL_TEST = """(field, label) => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  let last = "";
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node === field) return last === label;
    if (node.nodeType === Node.TEXT_NODE) { const text = node.textContent.trim(); if (text) last = text; }
    else if (node.matches("input, textarea, select, button, a[href], [role]")) last = "";
  }
  return false;
}"""


def labelled(page: Page, role: str, label: str) -> Locator:
    """The unnamed field of ``role`` that the text ``label`` stands just before, wherever the page puts it."""
    fields = page.get_by_role(role, name="", exact=True)
    fields.first.wait_for()
    for index in range(fields.count()):
        if fields.nth(index).evaluate(LABEL_TEST, label):
            return fields.nth(index)
    raise AssertionError(f"no {role} labelled {label!r} is on the page (the page changed)")
'''

NAMES_HELPER = '''

SAME_NAMES = {same_names}


def named(text: str) -> re.Pattern[str]:
    """A name the goal gives, as the page may write it: in any letter case, or spelt otherwise ("x" is "×")."""
    said = text.strip()
    spellings = next((group for group in SAME_NAMES if said.lower() in group), [])
    names = dict.fromkeys([said, *spellings])
    return re.compile("^(?:" + "|".join(re.escape(name) for name in names) + ")$", re.IGNORECASE)
'''

COMPLETING_HELPER = r'''


def completing(start: str, end: str) -> re.Pattern[str]:
    """A name that begins with ``start`` and ends with ``end`` (they may overlap), in any letter case."""
    shortest = max(len(start), len(end)) + 1
    return re.compile(rf"^(?={re.escape(start)})(?=[\s\S]*{re.escape(end)}$)[\s\S]{{{shortest},}}$", re.IGNORECASE)
'''

CLICK_HELPER = '''

SHOWN_POINT = """(element) => {
  const box = element.getBoundingClientRect();
  for (const down of [0.5, 0.25, 0.75, 0.1, 0.9]) for (const across of [0.5, 0.25, 0.75, 0.1, 0.9]) {
    const x = box.left + box.width * across, y = box.top + box.height * down;
    const hit = document.elementFromPoint(x, y);
    if (hit && (hit === element || element.contains(hit))) return {x: x - box.left, y: y - box.top};
  }
  return null;
}"""


def click(element: Locator) -> None:
    """Click the element; where another one covers its centre, at a point of it that shows, as a person would."""
    element.scroll_into_view_if_needed()
    point = element.evaluate(SHOWN_POINT)
    element.click(position=point) if point else element.click()
'''

LIST_HELPER = '''

def listed(text: str) -> list[str]:
    """The values of a list as a goal writes it ("A, B, C" or "A; B"), in order."""
    return [value.strip() for value in re.split(r"[,;]", text.strip().rstrip(".!?")) if value.strip()]
'''

SECRET_HELPER = '''

def secret(variable: str) -> str:
    """A secret the run typed, read from the environment (never written in the script)."""
    value = os.environ.get(variable)
    if not value:
        raise SystemExit(f"set {variable} to the secret this script types")
    return value
'''


def render_python(plan: ScriptPlan) -> str:
    signature = "".join(f", {param.name}: str = {_literal(param.default)}" for param in plan.params)
    lines = [*("# " + " ".join(line.split()) for line in header_lines(plan)), "",
             "from __future__ import annotations", "", "import argparse", "import datetime", "import os", "import re", "",
             "from playwright.sync_api import Locator, Page, expect, sync_playwright", "",
             f"START_URL = {_literal(plan.start_url)}"]
    if plan.readings:
        lines.append(READING_HELPER.rstrip("\n"))
    if plan.uses_places:
        lines.append(PLACE_HELPER.rstrip("\n"))
    if plan.uses_labels:
        lines.append(LABEL_HELPER.rstrip("\n"))
    if plan.uses_names:
        lines.append(NAMES_HELPER.replace("{same_names}", _literal_list(SAME_NAMES)).rstrip("\n"))
    if plan.completes:
        lines.append(COMPLETING_HELPER.rstrip("\n"))
    if plan.loop is not None:
        lines.append(LIST_HELPER.rstrip("\n"))
    if plan.clicks:
        lines.append(CLICK_HELPER.rstrip("\n"))
    if plan.secrets:
        lines.append(SECRET_HELPER.rstrip("\n"))
    lines += ["", "", f"def run(page: Page{signature}) -> None:",
              f"    {_literal(plan.goal)}", "    if page.url != START_URL:  # a page already there is used as it is",
              "        page.goto(START_URL)"]
    for index, step in enumerate(plan.steps):
        indent = "    "
        if plan.loop is not None and plan.loop.start <= index < plan.loop.end:
            if index == plan.loop.start:
                lines.append(f"    for item in listed({plan.loop.param}):  # the same steps for each value of the list")
            indent += "    "
        lines += [indent + line for line in _step(step)]
    options = "".join(f'    parser.add_argument("--{param.name.replace("_", "-")}", default={_literal(param.default)})\n'
                      for param in plan.params)
    arguments = ", ".join(f"{param.name}=options.{param.name}" for param in plan.params)
    lines += ["", "", "def main() -> None:",
              f"    parser = argparse.ArgumentParser(description={_literal(plan.goal)})",
              options.rstrip("\n") if options else "    pass  # the goal has no parameters",
              '    parser.add_argument("--browser-path", default=os.environ.get("PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH"))',
              '    parser.add_argument("--headed", action="store_true")',
              '    parser.add_argument("--no-sandbox", action="store_true")',
              "    options = parser.parse_args()",
              "    with sync_playwright() as playwright:",
              "        browser = playwright.chromium.launch(",
              "            headless=not options.headed, executable_path=options.browser_path or None,",
              '            args=["--no-sandbox"] if options.no_sandbox else [],',
              "        )",
              "        try:",
              f"            run(browser.new_page(){', ' + arguments if arguments else ''})",
              "        finally:",
              "            browser.close()",
              "", "", 'if __name__ == "__main__":', "    main()", ""]
    return "\n".join(lines)


def _step(step: ScriptStep) -> list[str]:
    lines = [f"# step {step.number}: {_comment(step.describe)}"]
    value = _expression(step.value) if step.value is not None else '""'
    if step.action == "goto":
        lines.append(f"page.goto({value})")
    elif step.action == "scroll":
        lines.append(f"page.mouse.wheel(0, {-600 if _literal_text(step.value).lower() == 'up' else 600})")
    elif step.action == "wait":
        lines.append("page.wait_for_timeout(500)")
    elif step.action == "press" and step.locate is None:
        lines.append(f"page.keyboard.press({value})")
    else:
        assert step.locate is not None
        lines += [*_locator(step.locate), "expect(element).to_be_visible()  # fails here where the page changed"]
        act = {"click": "click(element)", "fill": f"element.fill({value})", "type": f"element.press_sequentially({value})",
               "press": f"element.press({value})", "select": f"element.select_option(label={value})",
               "check": "element.check()", "hover": "element.hover()"}[step.action]
        lines.append(act)
        if step.check == "value":
            lines.append(f"expect(element).to_have_value({value})" if step.action == "fill"
                         else f"expect(element).to_have_value(re.compile(re.escape({value})))")
        elif step.check == "checked":
            lines.append("expect(element).to_be_checked()")
    if step.check == "url" and step.url:
        lines.append(f"expect(page).to_have_url(re.compile({_literal('^' + re.escape(step.url))}))")
    return lines


def _locator(locate: Locate) -> list[str]:
    if locate.label is not None:
        return [f"element = labelled(page, {_literal(locate.role or '')}, {_literal(locate.label)})"]
    if locate.completes:  # the one element that completes the values (two such fail the step: not certain)
        start, end = (_expression(part) if part else '""' for part in around_gap(locate.text or locate.name or []))
        found = f"page.get_by_text(completing({start}, {end})).filter(visible=True)" if locate.text is not None \
            else f"page.get_by_role({_literal(locate.role or '')}, name=completing({start}, {end}))"
        return [f"element = {found}"]
    if locate.text is not None:  # the first visible element with the text, as the agent found it
        found = f"page.get_by_text({_expression(locate.text)}, exact=True).filter(visible=True).first"
    elif locate.role is not None and any(kind != "text" for kind, _ in locate.name or []):
        # a name the goal gives, as replay finds it ("tea" names the link "Tea", "x" the button "×"); the goal
        # names the element by it, so where several have it the first is the one
        found = f"page.get_by_role({_literal(locate.role)}, name=named({_expression(locate.name or [])}))"
        if locate.nth is None and locate.place_param is None:
            found += ".first"
    elif locate.role is not None:
        found = f"page.get_by_role({_literal(locate.role)}, name={_expression(locate.name or [])}, exact=True)"
    else:
        found = f"page.locator({_literal(locate.selector or '')})"
    lines = []
    if locate.place_param is not None:
        found += f".nth(place({locate.place_param}, {locate.count}))"
        lines.append(f"# which of the {locate.count} the goal's ordinal says (recorded: the {_ordinal(locate.nth)})")
    elif locate.nth is not None:
        found += f".nth({locate.nth})"
        lines.append(f"# the {_ordinal(locate.nth)} of {locate.count} elements alike, as recorded")
    return [*lines, f"element = {found}"]


CONVERTED = {"lower": "{}.lower()", "upper": "{}.upper()", "number": '{}.replace(",", "")',
             "title": '" ".join(word[:1].upper() + word[1:].lower() for word in {}.split(" "))',
             "time24": "time24({})", "iso_date": "read_date({}).isoformat()",
             "us_date": 'read_date({0}).strftime("%m/%d/%Y")',
             "us_date_short": 'f"{{read_date({0}).month}}/{{read_date({0}).day}}/{{read_date({0}).year:04d}}"'}


def _expression(parts: list[Part]) -> str:
    pieces = [_literal(text) if kind == "text" else f'secret("{text}")' if kind == "secret"
              else _param(f"item|{text}" if text else "item") if kind == "item" else _param(text)
              for kind, text in parts]
    return " + ".join(pieces) if pieces else '""'


def _param(text: str) -> str:
    name, _, conversion = text.partition("|")
    return CONVERTED[conversion].format(name) if conversion else name  # {} and {0} both name the value


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _literal_list(groups: list[list[str]]) -> str:
    return "[" + ", ".join("[" + ", ".join(_literal(name) for name in group) + "]" for group in groups) + "]"


def _literal_text(parts: list[Part] | None) -> str:
    return "".join(text for kind, text in parts or [] if kind == "text")


def _comment(text: str) -> str:
    return " ".join(text.split())[:200]


def _ordinal(index: int | None) -> str:
    number = (index or 0) + 1
    return f"{number}{'th' if 10 <= number % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th')}"
