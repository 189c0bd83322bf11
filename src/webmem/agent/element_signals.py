"""Reading an element's identity signals from the page (``core.elements`` says what they are and how they
compare): one script run on the element, which reads its label, row and column headers, group, heading,
the text before it, stable attributes, options and place in its form, and never its value."""

from __future__ import annotations

import re
from typing import Any

from ..core.errors import InvalidInput
from ..core.models import ElementSignals, validated

MAX_OPTIONS = 100
_TEXT_CHARS = 200
#: An id or name a framework made up for this page load: long digit runs, hex runs, React's ":r1:", known prefixes.
_GENERATED = re.compile(r"\d{4,}|[0-9a-f]{12,}|^:r|^(ember|ext-gen|yui_|gwt-uid-|react-select-|headlessui-|radix-)",
                        re.IGNORECASE)
_TOKEN = re.compile(r"[A-Za-z0-9]+")

_SIGNALS_JS = """el => {
  const skip = new Set(['SELECT', 'OPTION', 'TEXTAREA', 'SCRIPT', 'STYLE', 'NOSCRIPT', 'BUTTON']);
  const flat = s => (s || '').replace(/\\s+/g, ' ').trim().slice(0, 200);
  const textOf = node => {
    if (!node) return '';
    const copy = node.cloneNode(true);
    copy.querySelectorAll('select, option, textarea, input, script, style, noscript').forEach(n => n.remove());
    return flat(copy.textContent);
  };
  const labelled = () => {
    const ids = (el.getAttribute('aria-labelledby') || '').split(/\\s+/).filter(Boolean);
    const parts = ids.map(id => textOf(document.getElementById(id))).filter(Boolean);
    if (parts.length) return parts.join(' ');
    if (el.labels && el.labels.length) return Array.from(el.labels, textOf).filter(Boolean).join(' ');
    return flat(el.getAttribute('aria-label'));
  };
  const cell = el.closest('td, th, [role=cell], [role=gridcell]');
  let rowHeader = '', columnHeader = '';
  if (cell) {
    const row = cell.closest('tr, [role=row]');
    if (row) {
      const cells = Array.from(row.children);
      const at = cells.indexOf(cell);
      for (let i = at - 1; i >= 0; i--) {
        const other = cells[i];
        if (other.tagName === 'TH' || other.getAttribute('role') === 'rowheader') {
          rowHeader = textOf(other); if (rowHeader) break;
        }
      }
      const table = row.closest('table');
      if (table && at >= 0) {
        const head = table.querySelector('thead tr') || table.querySelector('tr');
        if (head && head !== row) {
          const headCell = head.children[at];
          if (headCell && headCell.tagName === 'TH') columnHeader = textOf(headCell);
        }
      }
    }
  }
  let group = '';
  const fieldset = el.closest('fieldset');
  if (fieldset) { const legend = fieldset.querySelector('legend'); group = legend ? textOf(legend) : ''; }
  if (!group) { const g = el.closest('[role=group][aria-label], [role=radiogroup][aria-label]'); if (g) group = flat(g.getAttribute('aria-label')); }
  let heading = '';
  const headings = document.querySelectorAll('h1, h2, h3, h4, h5, h6, [role=heading]');
  for (const h of headings) {
    if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) heading = textOf(h) || heading; else break;
  }
  let before = '';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  walker.currentNode = el;
  for (let n = walker.previousNode(), seen = 0; n && seen < 40; n = walker.previousNode(), seen++) {
    let inside = false;
    for (let p = n.parentElement; p; p = p.parentElement) { if (skip.has(p.tagName) || p === el) { inside = true; break; } }
    if (inside) continue;
    const text = flat(n.textContent);
    if (text) { before = text; break; }
  }
  const tag = el.tagName.toLowerCase();
  const kind = el.tagName + '|' + (el.getAttribute('type') || '');
  const scope = el.form || el.closest('form') || document;
  const same = Array.from(scope.querySelectorAll(el.tagName)).filter(o => o.tagName + '|' + (o.getAttribute('type') || '') === kind);
  return {
    label: labelled(), row_header: rowHeader, column_header: columnHeader, group: group, heading: heading,
    text_before: before, tag: tag, input_type: tag === 'input' ? (el.getAttribute('type') || 'text').toLowerCase() : '',
    field_name: flat(el.getAttribute('name')), dom_id: flat(el.id),
    placeholder: flat(el.getAttribute('placeholder')), title: flat(el.getAttribute('title')),
    test_id: flat(el.getAttribute('data-testid') || el.getAttribute('data-test') || el.getAttribute('data-qa') || el.getAttribute('data-cy')),
    options: tag === 'select' ? Array.from(el.options, o => flat(o.label || o.textContent)).slice(0, 100) : [],
    position: same.indexOf(el) + 1, of_kind: same.length,
  };
}"""


def read_signals(locator: Any, *, timeout_ms: int = 1000) -> ElementSignals | None:
    """The identity signals of the one element ``locator`` reaches, or None when the page cannot say."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        raw = locator.evaluate(_SIGNALS_JS, timeout=timeout_ms)
    except PlaywrightError:
        return None
    return signals_from(raw)


def made_up(identifier: str) -> bool:
    """Whether an id or name looks made up for one page load ("b9yh3uhyolj5", "ember1234", ":r1:"): digits inside
    a word of letters, not only at its end ("field2" and "0_priority" are a page's own names)."""
    return bool(_GENERATED.search(identifier)) or any(
        len(token) >= 6 and any(char.isdigit() for char in token.rstrip("0123456789"))
        and any(char.isalpha() for char in token) for token in _TOKEN.findall(identifier))


def signals_from(raw: Any) -> ElementSignals | None:
    """Signals from what the page script returned (a mapping): texts cut to size, made-up ids dropped."""
    if not isinstance(raw, dict):
        return None
    fields: dict[str, Any] = {}
    for name, value in raw.items():
        if name not in ElementSignals.model_fields:
            continue
        if isinstance(value, str):
            value = value[:_TEXT_CHARS]
            if name in ("dom_id", "field_name") and made_up(value):
                continue
            if value:
                fields[name] = value
        elif name == "options" and isinstance(value, list):
            fields[name] = tuple(str(option)[:_TEXT_CHARS] for option in value[:MAX_OPTIONS])
        elif name in ("position", "of_kind") and isinstance(value, int) and 1 <= value <= 10_000:
            fields[name] = value
    if fields.get("position") is None or fields.get("of_kind") is None:
        fields.pop("position", None)
        fields.pop("of_kind", None)
    try:
        return validated(ElementSignals, **fields)
    except InvalidInput:
        return None
