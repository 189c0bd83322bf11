"""A script plan as a Playwright Test spec in TypeScript (``@playwright/test``): an exported
``run(page, params)`` and one test that runs it; parameters come from ``WEBMEM_PARAM_<NAME>``
environment variables, defaulting to the recorded values."""

from __future__ import annotations

import json
import re

from .plan import SAME_NAMES, Locate, Part, ScriptPlan, ScriptStep, around_gap, header_lines

PLACE_HELPER = """
function place(text: string, count: number): number {
  const words = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];
  const said = text.trim().toLowerCase();
  const digits = /^(\\d+)(st|nd|rd|th)$/.exec(said);
  const number = said === 'last' ? count : words.includes(said) ? words.indexOf(said) + 1 : digits ? Number(digits[1]) : 0;
  if (number < 1 || number > count) throw new Error(`"${text}" names no place among the ${count} elements this step chooses from`);
  return number - 1;
}
"""

COMPLETING_HELPER = r"""
// A name that begins with start and ends with end (they may overlap), in any letter case.
function completing(start: string, end: string): RegExp {
  const shortest = Math.max(start.length, end.length) + 1;
  return new RegExp('^(?=' + literally(start) + ')(?=[\\s\\S]*' + literally(end) + '$)[\\s\\S]{' + shortest + ',}$', 'i');
}
"""

LITERALLY_HELPER = """
function literally(text: string): string {
  return text.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&');
}
"""

READING_HELPER = """
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const pad = (n: number): string => String(n).padStart(2, '0');

function readDate(text: string): { year: number; month: number; day: number } {
  const said = text.trim();
  let m: RegExpExecArray | null;
  if ((m = /^(\\d{1,2})\\/(\\d{1,2})\\/(\\d{4})$/.exec(said))) return { month: +m[1], day: +m[2], year: +m[3] };
  if ((m = /^(\\d{4})-(\\d{1,2})-(\\d{1,2})$/.exec(said))) return { year: +m[1], month: +m[2], day: +m[3] };
  if ((m = /^([A-Za-z]{3,9})\\.?\\s(\\d{1,2})(?:st|nd|rd|th)?,?\\s(\\d{4})$/.exec(said)))
    return { month: MONTHS.indexOf(m[1].toLowerCase().slice(0, 3)) + 1, day: +m[2], year: +m[3] };
  if ((m = /^(\\d{1,2})(?:st|nd|rd|th)?\\s(?:of\\s)?([A-Za-z]{3,9})\\.?,?\\s(\\d{4})$/.exec(said)))
    return { day: +m[1], month: MONTHS.indexOf(m[2].toLowerCase().slice(0, 3)) + 1, year: +m[3] };
  throw new Error(`"${text}" is no date this script reads`);
}

function isoDate(text: string): string {
  const { year, month, day } = readDate(text);
  return `${String(year).padStart(4, '0')}-${pad(month)}-${pad(day)}`;
}

function usDate(text: string): string {
  const { year, month, day } = readDate(text);
  return `${pad(month)}/${pad(day)}/${year}`;
}

function usDateShort(text: string): string {
  const { year, month, day } = readDate(text);
  return `${month}/${day}/${year}`;
}

function time24(text: string): string {
  const m = /^(\\d{1,2})(?::([0-5]\\d))?\\s?([AaPp])\\.?\\s?[Mm]\\.?$/.exec(text.trim());
  if (!m || +m[1] < 1 || +m[1] > 12) throw new Error(`"${text}" is no 12-hour time this script reads`);
  return `${pad((+m[1] % 12) + (/[Pp]/.test(m[3]) ? 12 : 0))}:${m[2] ?? '00'}`;
}
"""

LABEL_HELPER = """
const LABEL_TEST = (field: Element, label: string): boolean => {
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  let last = '';
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node === field) return last === label;
    if (node.nodeType === Node.TEXT_NODE) { const text = (node.textContent ?? '').trim(); if (text) last = text; }
    else if ((node as Element).matches('input, textarea, select, button, a[href], [role]')) last = '';
  }
  return false;
};

async function labelled(page: Page, role: Parameters<Page['getByRole']>[0], label: string): Promise<Locator> {
  const fields = page.getByRole(role, { name: '', exact: true });
  await fields.first().waitFor();
  for (let index = 0; index < await fields.count(); index++) {
    if (await fields.nth(index).evaluate(LABEL_TEST, label)) return fields.nth(index);
  }
  throw new Error(`no ${role} labelled "${label}" is on the page (the page changed)`);
}
"""

NAMES_HELPER = """
const SAME_NAMES: string[][] = {same_names};

// A name the goal gives, as the page may write it: in any letter case, or spelt otherwise ("x" is "×").
function named(text: string): RegExp {
  const said = text.trim();
  const spellings = SAME_NAMES.find((group) => group.includes(said.toLowerCase())) ?? [];
  return new RegExp('^(?:' + [...new Set([said, ...spellings])].map(literally).join('|') + ')$', 'i');
}
"""

CLICK_HELPER = """
const SHOWN_POINT = (element: Element): { x: number; y: number } | null => {
  const box = element.getBoundingClientRect();
  for (const down of [0.5, 0.25, 0.75, 0.1, 0.9]) for (const across of [0.5, 0.25, 0.75, 0.1, 0.9]) {
    const x = box.left + box.width * across, y = box.top + box.height * down;
    const hit = document.elementFromPoint(x, y);
    if (hit && (hit === element || element.contains(hit))) return { x: x - box.left, y: y - box.top };
  }
  return null;
};

// Click the element; where another one covers its centre, at a point of it that shows, as a person would.
async function click(element: Locator): Promise<void> {
  await element.scrollIntoViewIfNeeded();
  const point = await element.evaluate(SHOWN_POINT);
  await (point ? element.click({ position: point }) : element.click());
}
"""

LIST_HELPER = """
// The values of a list as a goal writes it ("A, B, C" or "A; B"), in order.
function listed(text: string): string[] {
  return text.trim().replace(/[.!?]+$/, '').split(/[,;]/).map((value) => value.trim()).filter((value) => value);
}
"""

SECRET_HELPER = """
function secret(variable: string): string {
  const value = process.env[variable];
  if (!value) throw new Error(`set ${variable} to the secret this script types`);
  return value;
}
"""


def render_typescript(plan: ScriptPlan) -> str:
    lines = ["/**", *(" * " + line.replace("*/", "* /") for line in header_lines(plan)), " */",
             "import { test, expect, type Locator, type Page } from '@playwright/test';", "",
             f"const START_URL = {_literal(plan.start_url)};", ""]
    lines.append("export const params = {")
    for param in plan.params:
        variable = "WEBMEM_PARAM_" + param.name.upper()
        lines.append(f"  {_camel(param.name)}: process.env.{variable} ?? {_literal(param.default)},")
    lines += ["};"]
    if plan.readings:
        lines.append(READING_HELPER.rstrip("\n"))
    if plan.uses_places:
        lines.append(PLACE_HELPER.rstrip("\n"))
    if plan.uses_labels:
        lines.append(LABEL_HELPER.rstrip("\n"))
    if plan.uses_names:
        lines.append(NAMES_HELPER.replace("{same_names}", json.dumps(SAME_NAMES, ensure_ascii=False)).rstrip("\n"))
    if plan.completes:
        lines.append(COMPLETING_HELPER.rstrip("\n"))
    if plan.loop is not None:
        lines.append(LIST_HELPER.rstrip("\n"))
    if plan.clicks:
        lines.append(CLICK_HELPER.rstrip("\n"))
    if plan.secrets:
        lines.append(SECRET_HELPER.rstrip("\n"))
    lines.append(LITERALLY_HELPER.rstrip("\n"))
    lines += ["", "export async function run(page: Page, p: typeof params = params): Promise<void> {",
              "  if (page.url() !== START_URL) await page.goto(START_URL);  // a page already there is used as it is"]
    loop = plan.loop
    for index, step in enumerate(plan.steps):
        looped = loop is not None and loop.start <= index < loop.end
        if loop is not None and index == loop.start:
            lines.append(f"  for (const item of listed({_param(loop.param)})) {{  // the same steps for each value of the list")
        lines += [("    " if looped else "  ") + line for line in _step(step)]
        if loop is not None and index == loop.end - 1:
            lines.append("  }")
    lines += ["}", "", f"test({_literal(plan.goal)}, async ({{ page }}) => {{", "  await run(page);", "});", ""]
    return "\n".join(lines)


def _step(step: ScriptStep) -> list[str]:
    lines = [f"// step {step.number}: {' '.join(step.describe.split())[:200]}"]
    value = _expression(step.value) if step.value is not None else "''"
    if step.action == "goto":
        lines.append(f"await page.goto({value});")
    elif step.action == "scroll":
        up = "".join(text for kind, text in step.value or [] if kind == "text").lower() == "up"
        lines.append(f"await page.mouse.wheel(0, {-600 if up else 600});")
    elif step.action == "wait":
        lines.append("await page.waitForTimeout(500);")
    elif step.action == "press" and step.locate is None:
        lines.append(f"await page.keyboard.press({value});")
    else:
        assert step.locate is not None
        name = f"element{step.number}"
        lines += [*_locator(step.locate, name), f"await expect({name}).toBeVisible();  // fails here where the page changed"]
        act = {"click": "click()", "fill": f"fill({value})", "type": f"pressSequentially({value})",
               "press": f"press({value})", "select": f"selectOption({{ label: {value} }})", "check": "check()",
               "hover": "hover()"}[step.action]
        lines.append(f"await click({name});" if step.action == "click" else f"await {name}.{act};")
        if step.check == "value":
            lines.append(f"await expect({name}).toHaveValue({value});" if step.action == "fill" else
                         f"await expect({name}).toHaveValue(new RegExp(literally({value})));")
        elif step.check == "checked":
            lines.append(f"await expect({name}).toBeChecked();")
    if step.check == "url" and step.url:
        lines.append(f"await expect(page).toHaveURL(new RegExp({_literal('^' + re.escape(step.url))}));")
    return lines


def _locator(locate: Locate, name: str) -> list[str]:
    if locate.label is not None:
        return [f"const {name} = await labelled(page, {_literal(locate.role or '')}, {_literal(locate.label)});"]
    if locate.completes:  # the one element that completes the values (two such fail the step: not certain)
        start, end = (_expression(part) if part else "''" for part in around_gap(locate.text or locate.name or []))
        found = f"page.getByText(completing({start}, {end})).filter({{ visible: true }})" if locate.text is not None \
            else f"page.getByRole({_literal(locate.role or '')}, {{ name: completing({start}, {end}) }})"
        return [f"const {name} = {found};"]
    if locate.text is not None:  # the first visible element with the text, as the agent found it
        found = f"page.getByText({_expression(locate.text)}, {{ exact: true }}).filter({{ visible: true }}).first()"
    elif locate.role is not None and any(kind != "text" for kind, _ in locate.name or []):
        # a name the goal gives, as replay finds it ("tea" names the link "Tea", "x" the button "×"); the goal
        # names the element by it, so where several have it the first is the one
        found = f"page.getByRole({_literal(locate.role)}, {{ name: named({_expression(locate.name or [])}) }})"
        if locate.nth is None and locate.place_param is None:
            found += ".first()"
    elif locate.role is not None:
        found = f"page.getByRole({_literal(locate.role)}, {{ name: {_expression(locate.name or [])}, exact: true }})"
    else:
        found = f"page.locator({_literal(locate.selector or '')})"
    comment = []
    if locate.place_param is not None:
        found += f".nth(place({_param(locate.place_param)}, {locate.count}))"
        comment.append(f"// which of the {locate.count} the goal's ordinal says")
    elif locate.nth is not None:
        found += f".nth({locate.nth})"
        comment.append(f"// place {locate.nth + 1} of {locate.count} elements alike, as recorded")
    return [*comment, f"const {name} = {found};"]


CONVERTED = {"lower": "{}.toLowerCase()", "upper": "{}.toUpperCase()", "number": "{}.replace(/,/g, '')",
             "time24": "time24({})", "iso_date": "isoDate({})", "us_date": "usDate({})", "us_date_short": "usDateShort({})",
             "title": "{}.split(' ').map((w) => w.slice(0, 1).toUpperCase() + w.slice(1).toLowerCase()).join(' ')"}


def _param(text: str) -> str:
    name, _, conversion = text.partition("|")
    return CONVERTED[conversion].format(f"p.{_camel(name)}") if conversion else f"p.{_camel(name)}"


def _expression(parts: list[Part]) -> str:
    pieces = [_literal(text) if kind == "text" else f"secret('{text}')" if kind == "secret"
              else (CONVERTED[text].format("item") if text else "item") if kind == "item" else _param(text)
              for kind, text in parts]
    return " + ".join(pieces) if pieces else "''"


def _literal(text: str) -> str:
    return json.dumps(text, ensure_ascii=False).replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)
