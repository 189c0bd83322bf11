"""Keeping secrets out of storage: typed passwords and registered values become placeholders.

A registered value is found in the forms a browser or a server writes it in, not only as typed:
percent-encoded (``%20`` or ``+`` for a space, hex in either case), as HTML entities, escaped in a
JSON string, and in base64 (alone, or inside a decoded token such as basic auth's ``user:pass``).
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus, unquote_plus

from .errors import InvalidInput

MIN_SECRET_LENGTH = 3
_NAME = r"[A-Za-z_][A-Za-z0-9_]{0,40}"
_PLACEHOLDER_NAME = re.compile(rf"^{_NAME}$")
#: A secret's placeholder as stored in place of its value (``{password}``).
PLACEHOLDER = re.compile(rf"\{{{_NAME}\}}")
#: A stretch of a URL or of text that may hold a value percent-encoded in part ("p%40ss+w0rd").
_ENCODED_SEGMENT = re.compile(r"[^\s&=?#/;,\"'<>()\[\]{}|]*(?:%[0-9A-Fa-f]{2}|\+)[^\s&=?#/;,\"'<>()\[\]{}|]*")


def _base64_tokens(shortest: int) -> re.Pattern[str]:
    """Tokens that may be base64 (basic auth, a token in a URL) long enough to hold a value of ``shortest`` bytes."""
    return re.compile(rf"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{{{max(4, shortest * 4 // 3)},}}={{0,2}}(?![A-Za-z0-9+/_=-])")


_PASSWORD_FIELD = re.compile(r"pass(word|wd|code|phrase)?\b|\bpwd\b|\bpin\b|secret|type=['\"]?password", re.IGNORECASE)


def redact_tree(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` with ``redact`` applied to every string in it, the keys of mappings included (mappings
    and lists walked through)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(key) if isinstance(key, str) else key: redact_tree(item, redact) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_tree(item, redact) for item in value]
    return value


def written_forms(value: str) -> set[str]:
    """The forms ``value`` takes when a browser or a server writes it down: as it is, percent-encoded
    (both ways of writing a space, hex in upper and lower case), as HTML, in a JSON string, in base64."""
    encoded = {quote(value, safe=""), quote_plus(value, safe=""), quote(value)}
    encoded |= {re.sub(r"%[0-9A-F]{2}", lambda hexed: hexed.group().lower(), form) for form in encoded}
    escaped = {html.escape(value), html.escape(value, quote=False), value.replace("&", "&amp;"),
               json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    raw = value.encode("utf-8")
    based = {base64.b64encode(raw).decode().rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("=")}
    return {value, *encoded, *escaped, *based} - {""}


def names_password_field(*descriptions: str | None) -> bool:
    """Whether a target or selector describes a password-like field (``textbox "Password"``)."""
    return any(text and _PASSWORD_FIELD.search(text) for text in descriptions)


class SecretRegistry:
    """Values that must never be written down, each with the placeholder that replaces it."""

    def __init__(self, secrets: Mapping[str, str] | Iterable[str] | None = None) -> None:
        self._by_value: dict[str, str] = {}
        self._forms: list[tuple[str, str]] = []  # every written form of every value, longest first
        self._base64_token = _base64_tokens(MIN_SECRET_LENGTH)
        self._lock = threading.Lock()
        if isinstance(secrets, Mapping):
            for name, value in secrets.items():
                self.add(value, name=name)
        elif secrets is not None:
            if isinstance(secrets, str):
                raise InvalidInput("secrets: expected a mapping of name to value or a list of values, got a string")
            for value in secrets:
                self.add(value)

    def add(self, value: str, *, name: str = "secret") -> str:
        """Register a secret value; returns its placeholder, such as ``{password}``."""
        if not isinstance(value, str):
            raise InvalidInput(f"secret value: expected a string, got {type(value).__name__}")
        if len(value) < MIN_SECRET_LENGTH:
            raise InvalidInput(f"secret value: must be at least {MIN_SECRET_LENGTH} characters long to be recognised")
        if not isinstance(name, str) or not _PLACEHOLDER_NAME.match(name):
            raise InvalidInput(f"secret name: {name!r} must be a short identifier such as 'password'")
        placeholder = "{" + name + "}"
        with self._lock:
            if self._by_value.get(value) == placeholder:
                return placeholder
            self._by_value[value] = placeholder
            forms = {(form, replacement) for known, replacement in self._by_value.items()
                     for form in written_forms(known)}
            self._forms = sorted(forms, key=lambda pair: (-len(pair[0]), pair))
            self._base64_token = _base64_tokens(min(len(known.encode("utf-8")) for known in self._by_value))
        return placeholder

    def __len__(self) -> int:
        return len(self._by_value)

    def __contains__(self, value: object) -> bool:
        return value in self._by_value

    def value_for(self, placeholder: str) -> str | None:
        """The one registered value that ``placeholder`` (``{password}``) stands for; None when it stands
        for none, or for several (which one a step typed cannot be told)."""
        with self._lock:
            values = [value for value, known in self._by_value.items() if known == placeholder]
        return values[0] if len(values) == 1 else None

    def stands_for_one(self, text: str) -> bool:
        """Whether ``text`` is the placeholder of exactly one registered value (``{shop_password}``)."""
        return bool(PLACEHOLDER.fullmatch(text)) and self.value_for(text) is not None

    def redact(self, text: str | None) -> str | None:
        """Replace every registered secret that occurs in ``text``, in any form it is written in, by its
        placeholder. A stretch percent-encoded in part, or a base64 token, that holds one once decoded
        is replaced whole (decoded, with the placeholder in it)."""
        if not text or not self._forms:
            return text
        text = self._replace_forms(self._base64_token.sub(self._decoded_token, text))
        if "%" in text or "+" in text:
            text = _ENCODED_SEGMENT.sub(self._decoded_segment, text)
        return text

    def _replace_forms(self, text: str) -> str:
        for form, placeholder in self._forms:
            if form in text:
                text = text.replace(form, placeholder)
        return text

    def _holds_secret(self, text: str) -> bool:
        return any(value in text for value in self._by_value)

    def _decoded_segment(self, found: re.Match[str]) -> str:
        decoded = unquote_plus(found.group())
        return self._replace_forms(decoded) if self._holds_secret(decoded) else found.group()

    def _decoded_token(self, found: re.Match[str]) -> str:
        token = found.group()
        try:
            raw = base64.b64decode(token + "=" * (-len(token) % 4), altchars=b"-_" if "-" in token or "_" in token else None,
                                   validate=True)
            decoded = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            return token
        return self._replace_forms(decoded) if self._holds_secret(decoded) else token

    def redact_typed_value(
        self, value: str | None, *, target: str | None, selector: str | None, secret: bool
    ) -> str | None:
        """The value of a typing step as it may be stored: a placeholder for anything secret."""
        if value is None:
            return None
        if value in self._by_value:
            return self._by_value[value]
        if self.stands_for_one(value):
            return value  # already the placeholder of a registered secret: it keeps its name
        if secret or names_password_field(target, selector):
            return "{password}"
        return self.redact(value)
