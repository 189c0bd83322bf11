"""Extractive compression of large extractions: shorter text that keeps every URL, selector and field.

A browser agent extracts pages that are far larger than the room it has in a prompt. What
it cannot afford to lose are the things it acts on: the links it may follow, the selectors
it may click and the form fields it may fill. :func:`compress_extraction` shrinks a text
(or an HTML page, first turned into a compact outline) by keeping its most informative
lines, then lists whatever URL, selector or field those lines did not carry, and checks
the result to report what it kept. :func:`compress_with` lets the caller plug in a
compressor of its own (an LLM, typically) and falls back on the extractive one when that
compressor loses URLs or overshoots. This module never calls a network itself.

What counts as an item to keep:

* URLs: every ``http(s)://`` URL of the text. For HTML: every ``href`` (absolute or
  relative, ``mailto:`` included; ``javascript:`` and a bare ``#`` are not links), every
  form ``action``, and the ``http(s)://`` URLs written in its visible text. The sources
  of images and scripts are resources, not links, and are not kept.
* Selectors: in text, the tokens that look like CSS selectors (``#login-btn``, ``.price``,
  ``[data-testid="x"]``, ``input[name=email]``). For HTML, every element id (as ``#id``),
  every test id (``[data-testid="..."]`` and the like), and the selector-like tokens of
  its visible text. Class names of HTML elements are layout, not selectors to keep.
* Fields: ``input``, ``select`` and ``textarea`` elements with a name (or else an id),
  with the text of their label when the input is HTML. Values are never copied: a
  password or token typed into a page does not belong in a prompt.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from html.parser import HTMLParser
from typing import Protocol

from .errors import InvalidInput
from .text import clean_for_prompt

DEFAULT_MARKER = "\n[... {cut} characters cut ...]\n"
HEAD_SHARE = 0.6  # head_tail keeps this share of the room for the head, the rest for the tail

METHOD_UNCHANGED = "unchanged"  # the text already fit
METHOD_OUTLINE = "outline"  # an HTML page whose whole outline fit
METHOD_EXTRACTIVE = "extractive"  # the best lines, in their original order, plus the inventory
METHOD_HOOK = "hook"  # the caller's compressor, accepted
METHOD_HOOK_FALLBACK = "hook_fallback"  # the caller's compressor was rejected; extractive instead

URLS_HEADING = "URLs:"
SELECTORS_HEADING = "Selectors:"
FIELDS_HEADING = "Fields:"

LONG_UNIT_CHARS = 300  # lines longer than this are split into sentences, then pieces
LABEL_CHARS = 100  # bound on a link text, label or button text in the outline
MAX_OPTIONS = 12  # options of a select listed in the outline

# Line scores: lines carrying what the agent acts on or numbers it reports go first.
SCORE_URL = 3
SCORE_FIELD = 3
SCORE_SELECTOR = 2
SCORE_HEADING = 2
SCORE_PRICE = 2
SCORE_NUMBER = 1
SCORE_KEYWORD = 1
MAX_KEYWORD_SCORE = 3
KEYWORDS = (
    "price", "total", "error", "required", "invalid", "warning", "login", "log in", "sign in",
    "sign up", "register", "password", "checkout", "cart", "search", "submit", "stock",
    "sold out", "available", "shipping", "discount", "sale", "next", "previous", "page",
)

_ABSOLUTE_URL = re.compile(r"https?://[^\s<>\"'`{}|\\^\[\]]+", re.I)
_URL_TRAILING = ".,;:!?'\""
_SELECTOR_TAGS = (
    "a|abbr|article|aside|button|div|footer|form|h[1-6]|header|img|input|label|li|main|nav|ol|option|"
    "p|section|select|span|table|tbody|td|textarea|th|thead|tr|ul"
)
_SIMPLE = r"[#.][A-Za-z_][\w-]+"  # two characters at least: "a.m." is not a selector
_ATTRIBUTE = r"\[[A-Za-z_:][\w:.-]*(?:[~|^$*]?=(?:\"[^\"\n]*\"|'[^'\n]*'|[^\]\s\"']+))?\]"
_ATTRIBUTE_WITH_VALUE = r"\[[A-Za-z_:][\w:.-]*[~|^$*]?=(?:\"[^\"\n]*\"|'[^'\n]*'|[^\]\s\"']+)\]"
_SELECTOR = re.compile(
    rf"(?<![\w.#/@:\-\]])"
    rf"(?:(?:{_SELECTOR_TAGS})(?:{_SIMPLE}|{_ATTRIBUTE})+"  # a tag with an id, class or attribute
    rf"|(?:{_SIMPLE}|{_ATTRIBUTE_WITH_VALUE})(?:{_SIMPLE}|{_ATTRIBUTE})*)"  # or an id, class or [attr=value] first
    rf"(?![\w(-])"
)
_FORM_CONTROL_TAG = re.compile(r"<(?:input|select|textarea)\b[^>]*>", re.I)
_NAME_ATTRIBUTE = re.compile(r"\bname\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>\"']+))", re.I)
_HTML_TAG = re.compile(r"<!doctype\b|</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_NUMBER = re.compile(r"\d")
_PRICE = re.compile(r"[$€£¥]\s?\d|\d[\d,]*\.\d\d\b|\b\d+(?:[.,]\d+)?\s?(?:USD|EUR|GBP|%)")
_HEADING_LINE = re.compile(r"#{1,6}\s|title:|description:")
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


class Compressor(Protocol):
    """A compressor supplied by the caller: returns ``text`` shortened to at most ``max_chars``."""

    def __call__(self, text: str, max_chars: int) -> str: ...


@dataclass(frozen=True)
class CompressionResult:
    """A compressed text and what it kept, checked on the text itself.

    ``within_budget`` is False only when the inventory of URLs, selectors and fields alone
    is longer than ``max_chars``: keeping them wins over the size.
    """

    text: str
    original_chars: int
    compressed_chars: int
    preserved_urls: bool
    preserved_selectors: bool
    preserved_fields: bool
    method: str
    within_budget: bool
    notes: tuple[str, ...] = ()


# --- head and tail -----------------------------------------------------------------------------


def _check_max_chars(max_chars: object) -> int:
    if isinstance(max_chars, bool) or not isinstance(max_chars, int):
        raise InvalidInput(f"max_chars: expected a whole number of characters, got {type(max_chars).__name__}")
    if max_chars < 0:
        raise InvalidInput(f"max_chars: must be 0 or more, got {max_chars}")
    return max_chars


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"text: expected a string, got {type(text).__name__}")
    return text


def head_tail(text: str, max_chars: int, *, marker: str = DEFAULT_MARKER) -> str:
    """Keep the head and the tail of ``text`` with ``marker`` between them; at most ``max_chars`` long.

    ``{cut}`` in the marker becomes the number of characters left out. Text that fits is
    returned as is; when even the marker does not fit, the text is simply cut to
    ``max_chars``.
    """
    _check_text(text)
    _check_max_chars(max_chars)
    if not isinstance(marker, str):
        raise InvalidInput(f"marker: expected a string, got {type(marker).__name__}")
    if len(text) <= max_chars:
        return text
    cut = len(text)  # start from the longest count; each pass can only shorten it, so the result fits
    for _ in range(3):
        room = max_chars - len(marker.replace("{cut}", str(cut)))
        if room <= 0:
            return text[:max_chars]
        if len(text) - room == cut:
            break
        cut = len(text) - room
    head = round(room * HEAD_SHARE)
    tail = room - head
    shown = marker.replace("{cut}", str(len(text) - room))
    return text[:head] + shown + (text[len(text) - tail :] if tail else "")


# --- what to keep ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Field:
    attribute: str  # "name" or "id": what identifies the field
    key: str
    kind: str  # input type, "select" or "textarea"
    label: str = ""
    placeholder: str = ""
    required: bool = False
    options: tuple[str, ...] = ()

    def render(self) -> str:
        parts = [f'{self.attribute}="{self.key}"', f'type="{self.kind}"']
        if self.label:
            parts.append(f'label="{self.label}"')
        if self.placeholder and self.placeholder != self.label:
            parts.append(f'placeholder="{self.placeholder}"')
        if self.required:
            parts.append("required")
        if self.options:
            parts.append('options="' + ", ".join(self.options) + '"')
        return " ".join(parts)


@dataclass
class _Inventory:
    urls: list[str] = field(default_factory=list)
    selectors: list[str] = field(default_factory=list)
    fields: list[_Field] = field(default_factory=list)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(item for item in items if item))


def _absolute_urls(text: str) -> list[str]:
    found = []
    for match in _ABSOLUTE_URL.finditer(text):
        url = match.group().rstrip(_URL_TRAILING)
        while url.endswith(")") and url.count(")") > url.count("("):
            url = url[:-1].rstrip(_URL_TRAILING)
        if len(url) > len("https://"):
            found.append(url)
    return found


def _selectors_in(text: str) -> list[str]:
    return [match.group() for match in _SELECTOR.finditer(text)]


def _url_pattern(url: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w/.#?&=%~+@:-]){re.escape(url)}(?=$|[\s)\]>\"',;]|[.:!?](?:\s|$))")


def _selector_pattern(selector: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(selector)}(?![\w-])")


def _field_pattern(item: _Field) -> re.Pattern[str]:
    return re.compile(rf"\b{item.attribute}\s*=\s*[\"']?{re.escape(item.key)}(?=[\"'\s>/]|$)", re.I)


class _Checker:
    """Tells whether an item of the inventory appears, as a whole token, in a text."""

    def __init__(self, inventory: _Inventory) -> None:
        self.inventory = inventory
        self._urls = [_url_pattern(url) for url in inventory.urls]
        self._selectors = [_selector_pattern(selector) for selector in inventory.selectors]
        self._fields = [_field_pattern(item) for item in inventory.fields]

    def urls_in(self, text: str) -> set[int]:
        return {
            index for index, url in enumerate(self.inventory.urls)
            if url in text and self._urls[index].search(text)
        }

    def selectors_in(self, text: str) -> set[int]:
        return {
            index for index, selector in enumerate(self.inventory.selectors)
            if selector in text and self._selectors[index].search(text)
        }

    def fields_in(self, text: str) -> set[int]:
        return {
            index for index, item in enumerate(self.inventory.fields)
            if item.key in text and self._fields[index].search(text) and (not item.label or item.label in text)
        }


def _text_inventory(text: str) -> _Inventory:
    fields = []
    for tag in _FORM_CONTROL_TAG.findall(text):
        match = _NAME_ATTRIBUTE.search(tag)
        if match:
            name = next(group for group in match.groups() if group is not None)
            kind = tag[1:].split(None, 1)[0].rstrip(">/").lower()
            if name:
                fields.append(_Field(attribute="name", key=name, kind=kind))
    return _Inventory(
        urls=_unique(_absolute_urls(text)),
        selectors=_unique(_selectors_in(text)),
        fields=list(dict.fromkeys(fields)),
    )


# --- HTML to an outline ------------------------------------------------------------------------


def _flat(text: str, limit: int | None = None) -> str:
    return clean_for_prompt(text, len(text) if limit is None else limit)


def _attribute(attributes: dict[str, str], name: str) -> str:
    """An attribute value fit for a prompt: tabs and newlines removed (as browsers do in URLs), spaces collapsed."""
    return _flat(_URL_NOISE.sub("", attributes.get(name, "")))


def _looks_like_html(text: str) -> bool:
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


def _html_outline(text: str) -> tuple[str, _Inventory]:
    parser = _OutlineParser()
    parser.feed(text)
    parser.close()
    labels_by_id: dict[str, str] = {}
    for line in parser.lines:
        if isinstance(line, _PendingLabel) and line.for_id and line.text:
            labels_by_id.setdefault(line.for_id, line.text)
    field_ids = {line.element_id for line in parser.lines if isinstance(line, _PendingField) and line.element_id}
    fields: list[_Field] = []
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
            item = _Field(
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
    inventory = _Inventory(
        urls=_unique([*parser.hrefs, *_absolute_urls(" ".join(parser.visible))]),
        selectors=_unique([*parser.ids, *parser.test_ids, *_selectors_in(" ".join(parser.visible))]),
        fields=list(dict.fromkeys(fields)),
    )
    return "\n".join(rendered), inventory


def _inventory_of(text: str) -> tuple[str, _Inventory, bool]:
    """The body to select lines from, the items to keep, and whether the text was HTML."""
    if _looks_like_html(text):
        body, inventory = _html_outline(text)
        return body, inventory, True
    cleaned = "\n".join(_clean_line(line) for line in text.splitlines())
    return cleaned, _text_inventory(cleaned), False


# --- selecting lines ---------------------------------------------------------------------------


def _clean_line(line: str) -> str:
    stripped = line.lstrip(" \t")
    indent = line[: len(line) - len(stripped)].replace("\t", "    ")
    return indent + _flat(stripped) if stripped.strip() else ""


def _pieces(line: str) -> list[str]:
    """A long line as sentences, and sentences still too long as pieces cut at spaces or commas."""
    if len(line) <= LONG_UNIT_CHARS:
        return [line]
    pieces = []
    for sentence in _SENTENCE_END.split(line):
        while len(sentence) > LONG_UNIT_CHARS:
            cut = max(sentence.rfind(" ", 0, LONG_UNIT_CHARS), sentence.rfind(",", 0, LONG_UNIT_CHARS) + 1)
            cut = cut if cut > LONG_UNIT_CHARS // 2 else LONG_UNIT_CHARS
            pieces.append(sentence[:cut].rstrip())
            sentence = sentence[cut:].lstrip()
        if sentence:
            pieces.append(sentence)
    return pieces


def _units(body: str) -> list[str]:
    units = []
    for line in body.splitlines():
        cleaned = _clean_line(line)
        if cleaned:
            units.extend(piece for piece in _pieces(cleaned) if piece.strip())
    return units


def _score(unit: str, *, urls: int, selectors: int, fields: int) -> int:
    lowered = unit.lower()
    score = SCORE_URL * bool(urls) + SCORE_SELECTOR * bool(selectors) + SCORE_FIELD * bool(fields)
    score += SCORE_HEADING * bool(_HEADING_LINE.match(unit.lstrip()))
    score += SCORE_PRICE * bool(_PRICE.search(unit)) + SCORE_NUMBER * bool(_NUMBER.search(unit))
    score += min(MAX_KEYWORD_SCORE, SCORE_KEYWORD * sum(1 for word in KEYWORDS if word in lowered))
    return score


@dataclass
class _Kind:
    """One list of the inventory: its heading, the line of each item, and the items no kept line carries yet."""

    heading: str
    lines: list[str]
    uncovered: set[int] = field(default_factory=set)
    uncovered_chars: int = 0

    def __post_init__(self) -> None:
        self.uncovered = set(range(len(self.lines)))
        self.uncovered_chars = sum(len(line) for line in self.lines)

    def cost_without(self, covered: set[int]) -> tuple[int, int]:
        """Characters and lines of this list once the items in ``covered`` are carried by kept lines."""
        newly = covered & self.uncovered
        left = len(self.uncovered) - len(newly)
        if not left:
            return 0, 0
        return len(self.heading) + self.uncovered_chars - sum(len(self.lines[i]) for i in newly), 1 + left

    def cover(self, covered: set[int]) -> None:
        newly = covered & self.uncovered
        self.uncovered_chars -= sum(len(self.lines[i]) for i in newly)
        self.uncovered -= newly

    def render(self) -> list[str]:
        if not self.uncovered:
            return []
        return [self.heading, *(self.lines[i] for i in sorted(self.uncovered))]


def _select(units: list[str], checker: _Checker, max_chars: int) -> tuple[list[str], list[_Kind]]:
    """Greedily keep the best-scored units that fit beside the inventory of what they do not carry.

    The output is the kept units and the inventory lists, one item per line, joined by newlines.
    """
    inventory = checker.inventory
    kinds = [
        _Kind(URLS_HEADING, list(inventory.urls)),
        _Kind(SELECTORS_HEADING, list(inventory.selectors)),
        _Kind(FIELDS_HEADING, [item.render() for item in inventory.fields]),
    ]
    carried = [(checker.urls_in(unit), checker.selectors_in(unit), checker.fields_in(unit)) for unit in units]
    scores = [
        _score(unit, urls=len(urls), selectors=len(selectors), fields=len(fields))
        for unit, (urls, selectors, fields) in zip(units, carried)
    ]
    body_chars = body_lines = 0
    kept: set[int] = set()
    for index in sorted(range(len(units)), key=lambda i: (-scores[i], i)):
        chars, lines = body_chars + len(units[index]), body_lines + 1
        for kind, items in zip(kinds, carried[index]):
            kind_chars, kind_lines = kind.cost_without(items)
            chars, lines = chars + kind_chars, lines + kind_lines
        if chars + lines - 1 <= max_chars:  # the characters plus the newlines between the lines
            kept.add(index)
            body_chars, body_lines = body_chars + len(units[index]), body_lines + 1
            for kind, items in zip(kinds, carried[index]):
                kind.cover(items)
    return [units[i] for i in sorted(kept)], kinds


def _check(checker: _Checker, output: str) -> tuple[bool, bool, bool]:
    inventory = checker.inventory
    return (
        len(checker.urls_in(output)) == len(inventory.urls),
        len(checker.selectors_in(output)) == len(inventory.selectors),
        len(checker.fields_in(output)) == len(inventory.fields),
    )


def compress_extraction(text: str, *, max_chars: int) -> CompressionResult:
    """Shrink ``text`` towards ``max_chars`` characters, keeping every URL, selector and form field.

    An HTML page is first turned into an outline (title, headings, text, ``[link](href)``,
    forms, fields with their labels, buttons; scripts and styles dropped). Its lines are
    scored (URLs, fields, selectors, headings, prices, numbers and keywords first) and the
    best ones that fit are kept, in their original order, followed by ``URLs:``,
    ``Selectors:`` and ``Fields:`` lists of the items those lines do not carry.

    The preservation guarantee wins over the size: when the lists alone are longer than
    ``max_chars``, the result keeps them all and is longer (``within_budget`` False). The
    ``preserved_*`` flags are computed by looking for each item in the result.
    """
    _check_text(text)
    _check_max_chars(max_chars)
    if len(text) <= max_chars:
        return CompressionResult(
            text=text, original_chars=len(text), compressed_chars=len(text), preserved_urls=True,
            preserved_selectors=True, preserved_fields=True, method=METHOD_UNCHANGED, within_budget=True,
        )
    body, inventory, is_html = _inventory_of(text)
    checker = _Checker(inventory)
    units = _units(body)
    kept, kinds = _select(units, checker, max_chars)
    inventory_lines = [line for kind in kinds for line in kind.render()]
    output = "\n".join([*kept, *inventory_lines])
    urls_ok, selectors_ok, fields_ok = _check(checker, output)
    notes = []
    method = METHOD_OUTLINE if is_html and len(kept) == len(units) else METHOD_EXTRACTIVE
    if len(output) > max_chars:
        notes.append(
            f"the URLs, selectors and fields alone take {len(output)} characters, over max_chars={max_chars}; "
            "all were kept"
        )
    return CompressionResult(
        text=output,
        original_chars=len(text),
        compressed_chars=len(output),
        preserved_urls=urls_ok,
        preserved_selectors=selectors_ok,
        preserved_fields=fields_ok,
        method=method,
        within_budget=len(output) <= max_chars,
        notes=tuple(notes),
    )


def compress_with(
    compressor: Compressor | Callable[[str, int], str] | None, text: str, *, max_chars: int
) -> CompressionResult:
    """Compress with the caller's ``compressor`` (an LLM, say), checked, or extractively.

    The compressor's output is accepted (``method="hook"``) when it keeps every URL of
    the input and is at most ``max_chars`` long; otherwise :func:`compress_extraction`
    is used (``method="hook_fallback"``, with the reasons in ``notes``). It is not called
    when the text already fits or when it is None. Exceptions it raises reach the caller.
    """
    _check_text(text)
    _check_max_chars(max_chars)
    if compressor is None or len(text) <= max_chars:
        return compress_extraction(text, max_chars=max_chars)
    if not callable(compressor):
        raise InvalidInput(f"compressor: expected a callable (text, max_chars) -> str, got {type(compressor).__name__}")
    output = compressor(text, max_chars)
    if not isinstance(output, str):
        raise InvalidInput(f"compressor: returned {type(output).__name__}, expected a string")
    _, inventory, _ = _inventory_of(text)
    checker = _Checker(inventory)
    urls_ok, selectors_ok, fields_ok = _check(checker, output)
    problems = []
    if not urls_ok:
        missing = [url for i, url in enumerate(inventory.urls) if i not in checker.urls_in(output)]
        problems.append(f"the compressor dropped {len(missing)} of {len(inventory.urls)} URLs (first: {missing[0]})")
    if len(output) > max_chars:
        problems.append(f"the compressor returned {len(output)} characters, over max_chars={max_chars}")
    if problems:
        fallback = compress_extraction(text, max_chars=max_chars)
        notes = (*problems, f"fell back on the {fallback.method} compression", *fallback.notes)
        return replace(fallback, method=METHOD_HOOK_FALLBACK, notes=notes)
    return CompressionResult(
        text=output,
        original_chars=len(text),
        compressed_chars=len(output),
        preserved_urls=urls_ok,
        preserved_selectors=selectors_ok,
        preserved_fields=fields_ok,
        method=METHOD_HOOK,
        within_budget=True,
    )
