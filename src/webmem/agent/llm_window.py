"""A request that fits the model's context window: the turn's sections cut, least needed first.

With a window of N tokens (``WEBMEM_LLM_CONTEXT_TOKENS``), the request's estimated tokens (system
text, the tool schemas, the turn message, a reserve for the answer) must stay within N. What the
model cannot do without (the goal, the page's address, the last error, the latest actions, the
first elements of the page) stays; what helps goes first: the page's text, then the memory's
context, then older actions, then the elements further down the page.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..core.errors import PolicyError
from ..core.tokens import estimate

#: Tokens kept free for the model's answer (one tool call or JSON object), and the most it may write.
ANSWER_RESERVE_TOKENS = 400
MIN_WINDOW_TOKENS = 512
#: Where servers report a model's context window in their model list (vLLM, LM Studio, others).
_WINDOW_FIELDS = ("max_model_len", "context_length", "context_window", "n_ctx")
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


def served_window(client: Any, model: str, errors: type[Exception] | tuple[type[Exception], ...]) -> int | None:
    """The context window the server at ``client`` reports for ``model``: vLLM's ``max_model_len`` (and
    the like) in its model list, else llama.cpp's ``n_ctx`` in ``/props`` beside its ``/v1``; None when
    it reports none or cannot be asked (``errors`` are the client's own)."""
    try:
        models = list(client.models.list())
    except (errors, ValueError, TypeError):
        models = []
    chosen = [entry for entry in models if getattr(entry, "id", None) == model] or models[:1]
    extra = (getattr(chosen[0], "model_extra", None) or {}) if len(chosen) == 1 else {}
    found = next((extra[name] for name in _WINDOW_FIELDS if _tokens(extra.get(name))), None)
    if found is not None:
        return int(found)
    root = str(client.base_url).rstrip("/").removesuffix("/v1")
    try:
        props = client.with_options(base_url=root, max_retries=0).get("/props", cast_to=object)
    except (errors, ValueError, TypeError):
        return None
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    window = settings.get("n_ctx") if isinstance(settings, dict) else None
    return int(window) if _tokens(window) else None


def _tokens(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= MIN_WINDOW_TOKENS
