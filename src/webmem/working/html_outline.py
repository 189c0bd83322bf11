"""An HTML page as a compact text outline, with the inventory of what it links to, names and asks for.

:func:`outline_html` turns a page into lines an agent can read in a prompt: the title and
description, headings (``#``), list items (``-``), text, table cells (``|``), links as
``[text](href)``, forms with their action, fields with their labels and options, and
buttons, each with its id and test id as selectors. Scripts, styles, templates and SVG
are dropped, and field values are never copied. Alongside the outline it returns the
page's :class:`~webmem.extraction_inventory.Inventory`. :func:`looks_like_html` decides
whether a text is a page at all. :mod:`webmem.compression` selects lines from this outline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from ..core.text import clean_for_prompt
from .inventory import FormField, Inventory, absolute_urls, selectors_in, unique

LABEL_CHARS = 100  # bound on a link text, label or button text in the outline
MAX_OPTIONS = 12  # options of a select listed in the outline

_HTML_TAG = re.compile(r"<!doctype\b|</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>", re.I)
_ID_SELECTOR = re.compile(r"[A-Za-z_-][\w-]*")
_URL_NOISE = re.compile(r"[\t\n\r]")

_SKIPPED_ELEMENTS = frozenset({"script", "style", "noscript", "template", "svg"})
_BLOCK_ELEMENTS = frozenset({
    "address", "article", "aside", "blockquote", "body", "br", "dd", "details", "dialog", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "html", "legend", "li", "main",
    "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul",
})
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_TEST_ID_ATTRIBUTES = ("data-testid", "data-test-id", "data-test", "data-qa", "data-cy")
_HTML_MIN_TAGS = 4  # the same rule as webmem.token_budget's HTML detection
_HTML_MIN_TAG_SHARE = 0.15


def _flat(text: str, limit: int | None = None) -> str:
    return clean_for_prompt(text, len(text) if limit is None else limit)


def _attribute(attributes: dict[str, str], name: str) -> str:
    """An attribute value fit for a prompt: tabs and newlines removed (as browsers do in URLs), spaces collapsed."""
    return _flat(_URL_NOISE.sub("", attributes.get(name, "")))


def looks_like_html(text: str) -> bool:
    """Whether ``text`` is an HTML page (or fragment) rather than text that mentions a tag or two."""
    tags = _HTML_TAG.findall(text)
    if len(tags) < _HTML_MIN_TAGS:
        return False
    stripped = text.lstrip().lower()
    if stripped.startswith(("<!doctype html", "<html")):
        return True
    return sum(len(tag) for tag in tags) / max(1, len(text.strip())) >= _HTML_MIN_TAG_SHARE


def _is_link(href: str) -> bool:
    lowered = href.lower()
    return bool(href) and href != "#" and not lowered.startswith(("javascript:", "data:"))


@dataclass
class _PendingField:
    attribute: str
    key: str
    kind: str
    element_id: str
    aria_label: str
    placeholder: str
    required: bool
    wrapping_label: str = ""
    options: list[str] = field(default_factory=list)


@dataclass
class _PendingLabel:
    text: str
    for_id: str
    wraps_field: bool


class _OutlineParser(HTMLParser):
    """Turns an HTML page into outline lines (headings, text, links, forms, fields, buttons) and an inventory."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[str | _PendingField | _PendingLabel] = []
        self.hrefs: list[str] = []
        self.ids: list[str] = []
        self.test_ids: list[str] = []
        self.visible: list[str] = []
        self._buffer: list[str] = []
        self._prefix = ""
        self._skipped = 0
        self._link: tuple[int, str, str, str] | None = None  # start, href, notes, fallback text
        self._button: tuple[int, str] | None = None  # start, notes
        self._label: tuple[int, str, list[_PendingField]] | None = None  # start, for id, wrapped fields
        self._title: int | None = None
        self._select: _PendingField | None = None
        self._option: int | None = None
        self._textarea = False

    # capture helpers
    def _capturing(self) -> bool:
        return any(open_ is not None for open_ in (self._link, self._button, self._label, self._title, self._select))

    def _take(self, start: int) -> str:
        text = _flat("".join(self._buffer[start:]))
        del self._buffer[start:]
        return text

    def _flush(self) -> None:
        text = _flat("".join(self._buffer))
        self._buffer.clear()
        if text:
            self.lines.append(self._prefix + text)
            self._prefix = ""

    def _boundary(self) -> None:
        if self._capturing():
            self._buffer.append(" ")
        else:
            self._flush()

    def _emit(self, line: str | _PendingField | _PendingLabel) -> None:
        if not self._capturing():
            self._flush()
        self.lines.append(line)

    def _notes(self, attributes: dict[str, str]) -> str:
        notes = []
        element_id = _attribute(attributes, "id")
        if element_id:
            notes.append(_id_selector(element_id))
        notes.extend(
            f'[{name}="{_attribute(attributes, name)}"]' for name in _TEST_ID_ATTRIBUTES if _attribute(attributes, name)
        )
        return (" " + " ".join(notes)) if notes else ""

    # parser callbacks
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name.lower(): (value or "") for name, value in attrs}
        self._record(tag, attributes)
        if tag in _SKIPPED_ELEMENTS:
            self._skipped += 1
            return
        if self._skipped:
            return
        if tag in _HEADINGS:
            self._boundary()
            self._prefix = "#" * _HEADINGS[tag] + " "
        elif tag == "li":
            self._boundary()
            self._prefix = "- "
        elif tag == "title":
            self._title = len(self._buffer)
        elif tag == "meta" and attributes.get("name", "").lower() == "description" and attributes.get("content"):
            self._emit("description: " + _flat(attributes["content"], 300))
        elif tag == "a":
            self._open_link(attributes)
        elif tag == "img" and self._link is not None and attributes.get("alt") and self._link[3] == "link":
            self._link = (*self._link[:3], attributes["alt"])  # the text of a link that has only an image
        elif tag == "button":
            self._boundary()
            self._button = (len(self._buffer), self._notes(attributes))
        elif tag == "label":
            self._label = (len(self._buffer), _attribute(attributes, "for"), [])
        elif tag == "form":
            action = _attribute(attributes, "action")
            parts = ["form:"]
            if action:
                parts.append(f'action="{action}"')
            if _attribute(attributes, "method"):
                parts.append(f'method="{_attribute(attributes, "method").lower()}"')
            self._emit(" ".join(parts) + self._notes(attributes))
        elif tag in ("input", "select", "textarea"):
            self._open_field(tag, attributes)
        elif tag == "option" and self._select is not None:
            self._close_option()
            self._option = len(self._buffer)
        elif tag in ("td", "th"):
            self._buffer.append(" | ")
        elif tag in _BLOCK_ELEMENTS:
            self._boundary()

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_ELEMENTS:
            self._skipped = max(0, self._skipped - 1)
            return
        if self._skipped:
            return
        if tag in _HEADINGS or tag == "li":
            self._boundary()
            if not self._capturing():
                self._prefix = ""
        elif tag == "title" and self._title is not None:
            text = self._take(self._title)
            self._title = None
            if text:
                self._emit("title: " + _flat(text, 300))
        elif tag == "a":
            self._close_link()
        elif tag == "button" and self._button is not None:
            start, notes = self._button
            text = self._take(start) or "(no text)"
            self._button = None
            self._emit(f"button: {_flat(text, LABEL_CHARS)}{notes}")
        elif tag == "label" and self._label is not None:
            start, for_id, wrapped = self._label
            text = _flat(self._take(start), LABEL_CHARS)
            self._label = None
            for pending in wrapped:
                pending.wrapping_label = pending.wrapping_label or text
            self._emit(_PendingLabel(text=text, for_id=for_id, wraps_field=bool(wrapped)))
        elif tag == "option":
            self._close_option()
        elif tag == "select" and self._select is not None:
            self._close_option()
            self._select = None
        elif tag == "textarea":
            self._textarea = False
        elif tag in _BLOCK_ELEMENTS:
            self._boundary()

    def handle_data(self, data: str) -> None:
        if self._skipped or self._textarea:
            return
        if self._select is not None and self._option is None:
            return
        self._buffer.append(data)
        self.visible.append(data)

    def close(self) -> None:
        super().close()
        self._close_link()
        self._button = self._label = self._title = self._select = None
        self._option = None
        self._flush()

    # elements
    def _record(self, tag: str, attributes: dict[str, str]) -> None:
        href = _attribute(attributes, "href")
        if _is_link(href):
            self.hrefs.append(href)
        action = _attribute(attributes, "action") if tag == "form" else ""
        if _is_link(action):
            self.hrefs.append(action)
        element_id = _attribute(attributes, "id")
        if element_id:
            self.ids.append(_id_selector(element_id))
        self.test_ids.extend(
            f'[{name}="{_attribute(attributes, name)}"]' for name in _TEST_ID_ATTRIBUTES if _attribute(attributes, name)
        )

    def _open_link(self, attributes: dict[str, str]) -> None:
        self._close_link()
        href = _attribute(attributes, "href")
        fallback = _attribute(attributes, "aria-label") or _attribute(attributes, "title") or "link"
        self._link = (len(self._buffer), href if _is_link(href) else "", self._notes(attributes), fallback)

    def _close_link(self) -> None:
        if self._link is None:
            return
        start, href, notes, fallback = self._link
        self._link = None
        text = _flat(self._take(start) or fallback, LABEL_CHARS)
        self._buffer.append(f" [{text}]({href}){notes}" if href else f" {text}{notes}")

    def _open_field(self, tag: str, attributes: dict[str, str]) -> None:
        name = _attribute(attributes, "name")
        element_id = _attribute(attributes, "id")
        kind = tag if tag != "input" else (_attribute(attributes, "type").lower() or "text")
        if kind in ("submit", "button", "reset", "image") and not name:
            label = attributes.get("value") or attributes.get("alt") or kind
            self._emit(f"button: {_flat(label, LABEL_CHARS)}{self._notes(attributes)}")
            return
        pending = _PendingField(
            attribute="name" if name else "id",
            key=name or element_id,
            kind=kind,
            element_id=element_id,
            aria_label=_flat(attributes.get("aria-label") or attributes.get("title") or "", LABEL_CHARS),
            placeholder=_flat(attributes.get("placeholder", ""), LABEL_CHARS),
            required="required" in attributes,
        )
        if kind in ("submit", "button", "reset", "image"):
            pending.aria_label = pending.aria_label or _flat(attributes.get("value", ""), LABEL_CHARS)
        if self._label is not None:
            self._label[2].append(pending)
        self._emit(pending)
        if tag == "select":
            self._select = pending
        elif tag == "textarea":
            self._textarea = True

    def _close_option(self) -> None:
        if self._select is not None and self._option is not None:
            text = self._take(self._option)
            if text:
                self._select.options.append(_flat(text, LABEL_CHARS))
        self._option = None


def _id_selector(element_id: str) -> str:
    if _ID_SELECTOR.fullmatch(element_id):
        return "#" + element_id
    return '[id="' + element_id.replace('"', '\\"') + '"]'


def outline_html(text: str) -> tuple[str, Inventory]:
    """The outline of an HTML page, one line per element worth reading, and the inventory of the page."""
    parser = _OutlineParser()
    parser.feed(text)
    parser.close()
    labels_by_id: dict[str, str] = {}
    for line in parser.lines:
        if isinstance(line, _PendingLabel) and line.for_id and line.text:
            labels_by_id.setdefault(line.for_id, line.text)
    field_ids = {line.element_id for line in parser.lines if isinstance(line, _PendingField) and line.element_id}
    fields: list[FormField] = []
    rendered: list[str] = []
    for line in parser.lines:
        if isinstance(line, str):
            rendered.append(line)
        elif isinstance(line, _PendingLabel):
            if line.text and not line.wraps_field and line.for_id not in field_ids:
                rendered.append(line.text)
        else:
            label = labels_by_id.get(line.element_id, "") or line.wrapping_label or line.aria_label
            label = label or line.placeholder
            item = FormField(
                attribute=line.attribute,
                key=line.key,
                kind=line.kind,
                label=label,
                placeholder=line.placeholder,
                required=line.required,
                options=tuple(line.options[:MAX_OPTIONS]) + (("…",) if len(line.options) > MAX_OPTIONS else ()),
            )
            rendered.append("field: " + item.render())
            if item.key:
                fields.append(item)
    inventory = Inventory(
        urls=unique([*parser.hrefs, *absolute_urls(" ".join(parser.visible))]),
        selectors=unique([*parser.ids, *parser.test_ids, *selectors_in(" ".join(parser.visible))]),
        fields=list(dict.fromkeys(fields)),
    )
    return "\n".join(rendered), inventory
