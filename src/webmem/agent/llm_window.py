"""A request that fits the model's context window: the turn's sections cut, least needed first.

With a window of N tokens (``WEBMEM_LLM_CONTEXT_TOKENS``), the request's estimated tokens (system
text, the tool schemas, the turn message, a reserve for the answer) must stay within N. What the
model cannot do without (the goal, the page's address, the last error, the latest actions, the
first elements of the page) stays; what helps goes first: the page's text, then the memory's
context, then older actions, then the elements further down the page.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core.errors import PolicyError
from ..core.tokens import estimate

#: Tokens kept free for the model's answer (one tool call or JSON object), and the most it may write.
ANSWER_RESERVE_TOKENS = 400
MIN_WINDOW_TOKENS = 512
_SHORTEST_HISTORY = 3
_FEWEST_ELEMENT_CHARS = 1_500


@dataclass(frozen=True)
class Limits:
    """How much of each section of a turn message is sent (characters, or actions for the history)."""

    context_chars: int = 16_000
    history: int = 15
    element_chars: int = 12_000
    page_text_chars: int = 4_000


DEFAULT_LIMITS = Limits()


def shrinking(limits: Limits) -> list[Limits]:
    """The limits to try after ``limits``, each sending less than the one before, least needed part first."""
    steps: list[Limits] = []
    current = limits
    while current.page_text_chars:
        current = replace(current, page_text_chars=current.page_text_chars // 4 if current.page_text_chars > 400 else 0)
        steps.append(current)
    while current.context_chars:
        current = replace(current, context_chars=current.context_chars // 2 if current.context_chars > 400 else 0)
        steps.append(current)
    while current.history > _SHORTEST_HISTORY:
        current = replace(current, history=max(_SHORTEST_HISTORY, current.history // 2))
        steps.append(current)
    while current.element_chars > _FEWEST_ELEMENT_CHARS:
        current = replace(current, element_chars=max(_FEWEST_ELEMENT_CHARS, current.element_chars * 2 // 3))
        steps.append(current)
    return steps


def request_tokens(system: str, user: str, tools_json: str) -> int:
    """The estimated tokens of a request: its texts, the tools' schemas, and the answer's reserve."""
    return estimate(system).tokens + estimate(user).tokens + (estimate(tools_json, "code").tokens if tools_json
                                                                  else 0) + ANSWER_RESERVE_TOKENS + 16


def too_large(needed: int, window: int) -> PolicyError:
    return PolicyError(f"the request needs about {needed} tokens even with the page and memory cut down, "
                       f"more than the model's context window of {window} (WEBMEM_LLM_CONTEXT_TOKENS)")
