"""What an extraction must keep: its URLs, selectors and form fields, and a checker that finds them in a text.

:mod:`webmem.compression` may cut any line of an extraction except what the agent acts on.
This module says what that is (:class:`Inventory`, built from plain text by
:func:`text_inventory`; :mod:`webmem.html_outline` builds one from an HTML page) and tells
whether a text still carries each item as a whole token (:class:`InventoryChecker`).

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
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

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


@dataclass(frozen=True)
class FormField:
    """A form control to keep: what identifies it, its type, and its label, placeholder and options."""

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
class Inventory:
    """The items an extraction must keep, each list in the order the items first appear."""

    urls: list[str] = field(default_factory=list)
    selectors: list[str] = field(default_factory=list)
    fields: list[FormField] = field(default_factory=list)


def unique(items: Iterable[str]) -> list[str]:
    """The non-empty ``items``, each once, in the order they first appear."""
    return list(dict.fromkeys(item for item in items if item))


def absolute_urls(text: str) -> list[str]:
    """The ``http(s)://`` URLs written in ``text``, without the punctuation that ends a sentence."""
    found = []
    for match in _ABSOLUTE_URL.finditer(text):
        url = match.group().rstrip(_URL_TRAILING)
        while url.endswith(")") and url.count(")") > url.count("("):
            url = url[:-1].rstrip(_URL_TRAILING)
        if len(url) > len("https://"):
            found.append(url)
    return found


def selectors_in(text: str) -> list[str]:
    """The tokens of ``text`` that look like CSS selectors."""
    return [match.group() for match in _SELECTOR.finditer(text)]


@lru_cache(maxsize=4096)
def _url_pattern(url: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w/.#?&=%~+@:-]){re.escape(url)}(?=$|[\s)\]>\"',;]|[.:!?](?:\s|$))")


@lru_cache(maxsize=4096)
def _selector_pattern(selector: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(selector)}(?![\w-])")


def _field_pattern(item: FormField) -> re.Pattern[str]:
    return re.compile(rf"\b{item.attribute}\s*=\s*[\"']?{re.escape(item.key)}(?=[\"'\s>/]|$)", re.I)


class InventoryChecker:
    """Tells whether an item of the inventory appears, as a whole token, in a text."""

    def __init__(self, inventory: Inventory) -> None:
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

    def preserved(self, text: str) -> tuple[bool, bool, bool]:
        """Whether ``text`` carries every URL, every selector and every field of the inventory."""
        return (
            len(self.urls_in(text)) == len(self.inventory.urls),
            len(self.selectors_in(text)) == len(self.inventory.selectors),
            len(self.fields_in(text)) == len(self.inventory.fields),
        )


def text_inventory(text: str) -> Inventory:
    """The URLs, selectors and named form controls written in a plain (non-HTML) text."""
    fields = []
    for tag in _FORM_CONTROL_TAG.findall(text):
        match = _NAME_ATTRIBUTE.search(tag)
        if match:
            name = next(group for group in match.groups() if group is not None)
            kind = tag[1:].split(None, 1)[0].rstrip(">/").lower()
            if name:
                fields.append(FormField(attribute="name", key=name, kind=kind))
    return Inventory(
        urls=unique(absolute_urls(text)),
        selectors=unique(selectors_in(text)),
        fields=list(dict.fromkeys(fields)),
    )
