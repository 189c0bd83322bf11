"""Content-aware token estimates, and an exact tokenizer hook that replaces them when given.

Tokenizers cut different kinds of text into tokens of different average length: prose
runs about four characters per token, code a little less, JSON and HTML much less
(punctuation, quotes and tags are tokens of their own). :func:`estimate` detects what a
text is and divides its length by the ratio of that kind; :class:`TokenCounter` uses an
exact tokenizer instead when the caller has one (a callable), and falls back on the
estimate otherwise. Nothing here imports a tokenizer or touches the network.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from numbers import Integral
from typing import Any

from .errors import InvalidInput


class ContentType(str, Enum):
    """What a text is, as far as its token density goes."""

    TEXT = "text"
    CODE = "code"
    JSON = "json"
    HTML = "html"


CHARS_PER_TOKEN: Mapping[ContentType, float] = {
    ContentType.TEXT: 4.0,
    ContentType.CODE: 3.5,
    ContentType.JSON: 3.0,
    ContentType.HTML: 2.5,
}

# Chat messages cost more than their content: each carries role and delimiter tokens,
# and the model's reply is primed with a few tokens of its own (OpenAI's published
# accounting: about 3-4 per message, 3 for the reply).
MESSAGE_OVERHEAD_TOKENS = 4
REPLY_PRIMING_TOKENS = 3

# --- Detection thresholds. Detection is conservative: anything unsure is TEXT. ---
# JSON: the text parses as a JSON object or array; or, when it does not parse (a
# truncated extraction, say), it starts with "{" or "[" and has at least this many
# '":' key markers.
JSON_MIN_KEY_MARKERS = 5
# Texts longer than this are not handed to json.loads; the key-marker rule decides.
JSON_MAX_PARSE_CHARS = 2_000_000
# HTML: at least this many tags, making up at least this share of the characters.
# A text that opens with a doctype or <html> needs only HTML_MIN_TAGS_WITH_DOCTYPE tags.
HTML_MIN_TAGS = 4
HTML_MIN_TAG_SHARE = 0.15
HTML_MIN_TAGS_WITH_DOCTYPE = 2
# Code: at least this many non-empty lines carry a code marker (a keyword that opens a
# definition or import, a line ending in ";" "{" "}" or "):", an operator such as "=>",
# or indentation that is not a nested list item), and they are at least this share of
# the non-empty lines.
CODE_MIN_MARKER_LINES = 3
CODE_MIN_MARKER_SHARE = 0.4
# A single long line (minified code) counts as code when its code punctuation reaches
# this share of its characters and it has at least one code keyword.
CODE_MIN_SYMBOL_SHARE = 0.08
CODE_MIN_MINIFIED_CHARS = 80

_TAG = re.compile(r"<!doctype\b[^<>]*>|<!--.*?-->|</?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?/?>", re.I | re.S)
_HTML_OPENING = re.compile(r"\s*(?:<!doctype\s+html|<html\b)", re.I)
_CODE_LINE_START = re.compile(
    r"""^\s*(?:
        (?:async\s+)?def\s+\w+\s*\(
      | class\s+\w+\s*[(:{]
      | (?:export\s+)?(?:async\s+)?function\b
      | import\s+[\w{*]
      | from\s+[\w.]+\s+import\b
      | (?:export\s+)?(?:const|let|var)\s+[\w{\[]+\s*=
      | return\b
      | (?:if|for|while|switch)\s*\(.*\)\s*\{?\s*$
      | (?:elif|else|try|except|finally)\b.*:\s*$
      | \#include\b
      | (?:public|private|protected|static)\s+\w
      | @\w+(?:\(.*\))?\s*$
    )""",
    re.X,
)
_CODE_LINE_END = re.compile(r"(?:;|\{|\}|\):|=>)\s*$")
_CODE_OPERATOR = re.compile(r"=>|===|!==|&&|\|\||\+=|::")
_LIST_ITEM = re.compile(r"(?:[-*+]|\d+[.)])\s")
_CODE_KEYWORD = re.compile(r"\b(?:function|return|var|const|let|def|import)\b|=>")
_CODE_SYMBOLS = frozenset("{}();=[]<>")


@dataclass(frozen=True)
class TokenEstimate:
    """An estimated token count, the content type it assumed, and how sure that type is (0..1)."""

    tokens: int
    content_type: ContentType
    confidence: float


def _check_text(text: object, field: str = "text") -> str:
    if not isinstance(text, str):
        raise InvalidInput(f"{field}: expected a string, got {type(text).__name__}")
    return text


def _looks_like_json(stripped: str) -> float | None:
    """Confidence that the text is JSON, or None when it is not."""
    if not stripped.startswith(("{", "[")):
        return None
    if len(stripped) <= JSON_MAX_PARSE_CHARS:
        try:
            value = json.loads(stripped)
        except ValueError:
            pass
        else:
            return 0.95 if isinstance(value, (dict, list)) else None
    if stripped.count('":') >= JSON_MIN_KEY_MARKERS:
        return 0.75
    return None


def _looks_like_html(text: str) -> float | None:
    tags = _TAG.findall(text)
    if _HTML_OPENING.match(text) and len(tags) >= HTML_MIN_TAGS_WITH_DOCTYPE:
        return 0.95
    if len(tags) < HTML_MIN_TAGS:
        return None
    share = sum(len(tag) for tag in tags) / len(text)
    if share < HTML_MIN_TAG_SHARE:
        return None
    return min(0.9, 0.6 + share)


def _is_code_line(line: str) -> bool:
    if _CODE_LINE_START.match(line) or _CODE_LINE_END.search(line) or _CODE_OPERATOR.search(line):
        return True
    body = line.lstrip(" \t")
    indented = line.startswith("\t") or len(line) - len(line.lstrip(" ")) >= 4
    return indented and not _LIST_ITEM.match(body)


def _looks_like_code(text: str) -> float | None:
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    marked = sum(1 for line in lines if _is_code_line(line))
    share = marked / len(lines)
    if marked >= CODE_MIN_MARKER_LINES and share >= CODE_MIN_MARKER_SHARE:
        return min(0.9, 0.5 + share * 0.4)
    if len(lines) <= 2 and len(text) >= CODE_MIN_MINIFIED_CHARS and _CODE_KEYWORD.search(text):
        symbols = sum(1 for ch in text if ch in _CODE_SYMBOLS)
        if symbols / len(text) >= CODE_MIN_SYMBOL_SHARE:
            return 0.6
    return None


def _detect(text: str) -> tuple[ContentType, float]:
    """``_detected``, remembered for texts up to a context part's size: a context counts the same parts of a site
    turn after turn."""
    return _remembered_detection(text) if len(text) <= REMEMBERED_DETECTION_CHARS else _detected(text)


REMEMBERED_DETECTION_CHARS = 8192


@lru_cache(maxsize=512)
def _remembered_detection(text: str) -> tuple[ContentType, float]:
    return _detected(text)


def _detected(text: str) -> tuple[ContentType, float]:
    stripped = text.strip()
    if not stripped:
        return ContentType.TEXT, 1.0
    confidence = _looks_like_json(stripped)
    if confidence is not None:
        return ContentType.JSON, confidence
    confidence = _looks_like_html(stripped)
    if confidence is not None:
        return ContentType.HTML, confidence
    confidence = _looks_like_code(text)
    if confidence is not None:
        return ContentType.CODE, confidence
    return ContentType.TEXT, 0.8


def detect_content_type(text: str) -> ContentType:
    """JSON, HTML or code when the text clearly is one (see the thresholds above), else TEXT."""
    return _detect(_check_text(text))[0]


def _check_content_type(content_type: object) -> ContentType:
    if isinstance(content_type, ContentType):
        return content_type
    try:
        return ContentType(content_type)
    except ValueError:
        choices = ", ".join(kind.value for kind in ContentType)
        raise InvalidInput(f"content_type: {content_type!r} is not one of {choices}") from None


def estimate(text: str, content_type: ContentType | str | None = None) -> TokenEstimate:
    """Estimate the tokens of ``text``: its length over the characters per token of its type, rounded up.

    The type is detected unless given. ``confidence`` is how sure the type is: 1.0 when the
    caller named it or the text is empty, lower for a detected type.
    """
    _check_text(text)
    if content_type is None:
        kind, confidence = _detect(text)
    else:
        kind, confidence = _check_content_type(content_type), 1.0
    tokens = math.ceil(len(text) / CHARS_PER_TOKEN[kind]) if text else 0
    return TokenEstimate(tokens=tokens, content_type=kind, confidence=confidence)


def _count_messages(messages: object, count: Callable[[str], int]) -> int:
    if not isinstance(messages, Sequence) or isinstance(messages, (str, bytes)):
        raise InvalidInput(f"messages: expected a list of {{'role', 'content'}} dicts, got {type(messages).__name__}")
    if not messages:
        return 0
    total = REPLY_PRIMING_TOKENS
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidInput(
                f"messages[{index}]: expected a dict with 'role' and 'content', got {type(message).__name__}"
            )
        content = message.get("content")
        if content is None:
            content = ""
        if not isinstance(content, str):
            raise InvalidInput(f"messages[{index}].content: expected a string, got {type(content).__name__}")
        total += MESSAGE_OVERHEAD_TOKENS + count(content)
    return total


def estimate_messages(messages: Sequence[Mapping[str, Any]]) -> int:
    """Estimated tokens of a chat: each content's estimate plus MESSAGE_OVERHEAD_TOKENS per message,
    plus REPLY_PRIMING_TOKENS for the reply (an empty list costs nothing)."""
    return _count_messages(messages, lambda content: estimate(content).tokens)


def _check_budget(budget: object) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise InvalidInput(f"budget: expected a whole number of tokens, got {type(budget).__name__}")
    if budget < 0:
        raise InvalidInput(f"budget: must be 0 or more, got {budget}")
    return budget


class TokenCounter:
    """Counts tokens with an exact tokenizer when given one, with :func:`estimate` otherwise.

    ``tokenizer`` is a callable taking a string and returning either the number of tokens
    or the tokens themselves (a list or tuple, whose length is used). Exceptions the
    tokenizer raises reach the caller unchanged.
    """

    def __init__(self, *, tokenizer: Callable[[str], int | Sequence[Any]] | None = None) -> None:
        if tokenizer is not None and not callable(tokenizer):
            raise InvalidInput(f"tokenizer: expected a callable (str) -> int or list, got {type(tokenizer).__name__}")
        self._tokenizer = tokenizer

    @property
    def exact(self) -> bool:
        """True when counts come from the caller's tokenizer rather than the estimate."""
        return self._tokenizer is not None

    def count(self, text: str) -> int:
        """The number of tokens of ``text``."""
        _check_text(text)
        if self._tokenizer is None:
            return estimate(text).tokens
        result = self._tokenizer(text)
        if isinstance(result, (list, tuple)):
            return len(result)
        if isinstance(result, bool) or not isinstance(result, Integral):
            raise InvalidInput(
                f"tokenizer: returned {type(result).__name__}, expected an int or a list of tokens"
            )
        if result < 0:
            raise InvalidInput(f"tokenizer: returned a negative count ({result})")
        return int(result)

    def count_messages(self, messages: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of a chat, counted like :func:`estimate_messages` but with this counter."""
        return _count_messages(messages, self.count)

    def fits(self, text: str, budget: int) -> bool:
        """Whether ``text`` costs at most ``budget`` tokens."""
        return self.count(text) <= _check_budget(budget)

    def cut_to_budget(self, text: str, budget: int) -> str:
        """The longest prefix of ``text`` that costs at most ``budget`` tokens.

        A binary search on the prefix length, so an exact tokenizer is called about
        log2(len(text)) times. It only returns prefixes it counted, so the result always
        fits; it is the longest one when the count grows with the prefix (true of the
        estimate for a fixed content type and, nearly always, of real tokenizers). The
        empty string is returned when nothing fits.
        """
        _check_text(text)
        _check_budget(budget)
        if self.count(text) <= budget:
            return text
        low, high = 0, len(text)  # text[:low] fits (or low == 0); text[:high] does not
        while high - low > 1:
            middle = (low + high) // 2
            if self.count(text[:middle]) <= budget:
                low = middle
            else:
                high = middle
        return text[:low]
