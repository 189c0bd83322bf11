"""Keeping secrets out of storage: typed passwords and registered values become placeholders."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping

from .errors import InvalidInput

MIN_SECRET_LENGTH = 3
_PLACEHOLDER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,40}$")
_PASSWORD_FIELD = re.compile(r"pass(word|wd|code|phrase)?\b|\bpwd\b|\bpin\b|secret|type=['\"]?password", re.IGNORECASE)


def names_password_field(*descriptions: str | None) -> bool:
    """Whether a target or selector describes a password-like field (``textbox "Password"``)."""
    return any(text and _PASSWORD_FIELD.search(text) for text in descriptions)


class SecretRegistry:
    """Values that must never be written down, each with the placeholder that replaces it."""

    def __init__(self, secrets: Mapping[str, str] | Iterable[str] | None = None) -> None:
        self._by_value: dict[str, str] = {}
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
            self._by_value[value] = placeholder
        return placeholder

    def __len__(self) -> int:
        return len(self._by_value)

    def __contains__(self, value: object) -> bool:
        return value in self._by_value

    def redact(self, text: str | None) -> str | None:
        """Replace every registered secret that occurs in ``text`` by its placeholder."""
        if not text or not self._by_value:
            return text
        for value in sorted(self._by_value, key=len, reverse=True):
            if value in text:
                text = text.replace(value, self._by_value[value])
        return text

    def redact_typed_value(
        self, value: str | None, *, target: str | None, selector: str | None, secret: bool
    ) -> str | None:
        """The value of a typing step as it may be stored: a placeholder for anything secret."""
        if value is None:
            return None
        if value in self._by_value:
            return self._by_value[value]
        if secret or names_password_field(target, selector):
            return "{password}"
        return self.redact(value)
