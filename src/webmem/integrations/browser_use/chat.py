"""A browser-use chat model with webmem's context in every call.

browser-use has no hook between turns, but every turn is one call of its chat model: wrapping the
model puts the memory's context (the run's last error and the tips it recalled, site tips, the
reference trajectory, session history, facts, known selectors) into the last user message of every
decision call (the one that answers with the agent's next actions), fitted into a token budget, and
counts those calls. browser-use's other calls of the same model (its judge of the finished run, page
extraction, message compaction) go through unchanged, counted apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...run import Run

MEMORY_OPEN = "<webmem_memory>"
MEMORY_CLOSE = "</webmem_memory>"
DEFAULT_BUDGET_TOKENS = 1500
NOTHING_YET = "Nothing is remembered about this page yet."


class MemoryChatModel:
    """Wraps any browser-use chat model (``ChatOpenAI``, ``ChatAnthropic``, ...): same answers, with the
    run's memory context added to the last user message of each decision call. ``calls`` counts the
    decision calls, ``other_calls`` the rest (the judge's, extraction's, compaction's)."""

    _verified_api_keys = True

    def __init__(self, llm: Any, run: Run, *, current_url: Callable[[], str | None] = lambda: None,
                 budget_tokens: int = DEFAULT_BUDGET_TOKENS) -> None:
        if not callable(getattr(llm, "ainvoke", None)):
            raise TypeError("llm: expected a browser-use chat model (an object with ainvoke(messages, output_format))")
        self.llm = llm
        self.run = run
        self.current_url = current_url
        self.budget_tokens = budget_tokens
        self.calls = 0
        self.other_calls = 0

    @property
    def model(self) -> str:
        return str(getattr(self.llm, "model", "unknown"))

    @property
    def provider(self) -> str:
        return str(getattr(self.llm, "provider", "unknown"))

    @property
    def name(self) -> str:
        return str(getattr(self.llm, "name", self.model))

    @property
    def model_name(self) -> str:
        return self.model

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.__dict__["llm"], attribute)  # anything else browser-use reads from its model

    async def ainvoke(self, messages: list[Any], output_format: Any = None, **kwargs: Any) -> Any:
        if not is_decision(output_format):
            self.other_calls += 1
            return await self.llm.ainvoke(messages, output_format, **kwargs)
        self.calls += 1
        return await self.llm.ainvoke(with_memory(messages, self.memory_text()), output_format, **kwargs)

    def memory_text(self) -> str:
        url = self.current_url()
        pack = self.run.context(url=url if url and url.startswith(("http://", "https://")) else None,
                                budget_tokens=self.budget_tokens)
        body = pack.text if pack.text.strip() else NOTHING_YET
        return f"{MEMORY_OPEN}\nFrom earlier runs (webmem):\n{body}\n{MEMORY_CLOSE}"


def is_decision(output_format: Any) -> bool:
    """Whether a call asks for the agent's next actions (browser-use's ``AgentOutput``, whatever its actions)."""
    from browser_use.agent.views import AgentOutput

    return isinstance(output_format, type) and issubclass(output_format, AgentOutput)


def with_memory(messages: list[Any], text: str) -> list[Any]:
    """The messages with ``text`` at the start of the last user message (a new user message when none)."""
    from browser_use.llm.messages import ContentPartTextParam, UserMessage

    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if getattr(message, "role", None) != "user":
            continue
        content = message.content
        if isinstance(content, str):
            updated = message.model_copy(update={"content": f"{text}\n\n{content}"})
        else:
            updated = message.model_copy(update={"content": [ContentPartTextParam(text=text), *content]})
        return [*messages[:index], updated, *messages[index + 1:]]
    return [*messages, UserMessage(content=text)]
