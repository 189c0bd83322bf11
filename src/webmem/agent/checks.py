"""Success checks: an environment signal for ordinary pages (text that appears, a URL reached)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..core.errors import InvalidInput
from .results import EnvironmentOutcome


@dataclass(frozen=True)
class SuccessCheck:
    """The task is done when the page shows ``text`` and/or its URL contains ``url_contains``."""

    text: str | None = None
    url_contains: str | None = None

    def __post_init__(self) -> None:
        for name in ("text", "url_contains"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, str) or not value.strip() or len(value) > 1000):
                raise InvalidInput(f"success check {name}: expected a non-empty string of at most 1000 characters")
        if self.text is None and self.url_contains is None:
            raise InvalidInput("success check: give text and/or url_contains")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> SuccessCheck | None:
        """A check from its JSON form (as in a cases file)."""
        if data is None:
            return None
        if not isinstance(data, Mapping):
            raise InvalidInput(f"success check: expected a mapping with text and/or url_contains, got {data!r}")
        unknown = set(data) - {"text", "url_contains"}
        if unknown:
            raise InvalidInput(f"success check: unknown keys {', '.join(sorted(map(str, unknown)))}")
        return cls(text=data.get("text"), url_contains=data.get("url_contains"))

    def outcome(self, page: Any) -> EnvironmentOutcome | None:
        """Success once the page passes the check; None until then."""
        if self.url_contains is not None and self.url_contains not in page.url:
            return None
        if self.text is not None and self.text not in page.inner_text("body"):
            return None
        return EnvironmentOutcome(success=True, reward=1.0, detail=f"success check passed ({self.describe()})")

    def describe(self) -> str:
        """The check as one line for people."""
        parts = [f"text {self.text!r}"] if self.text else []
        if self.url_contains:
            parts.append(f"url contains {self.url_contains!r}")
        return " and ".join(parts)
