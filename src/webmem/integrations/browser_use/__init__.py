"""webmem for browser-use agents (``pip install 'webmem[browser-use]'``).

One call::

    from webmem.integrations.browser_use import run_with_memory
    result = await run_with_memory(mem, "Subscribe a@b.com to the newsletter", llm=ChatOpenAI(model="gpt-4.1-mini"),
                                   start_url="https://news.example.org/", browser_session=BrowserSession(...))

or its parts: :class:`MemoryChatModel` (the memory's context in every decision call), :class:`StepRecorder`
(the agent's history recorded as webmem steps), :func:`replay_on_session` (a remembered run replayed
on browser-use's browser with no LLM call), :class:`SkillActions` (the site's skills as actions of the
agent's ``Tools``) and :func:`register_sensitive_data`.
"""

from .chat import MemoryChatModel
from .replay import ReplayResult, replay_on_session
from .session import MemoryRunResult, StepRecorder, register_sensitive_data, run_with_memory
from .skill_actions import SkillActions
from .steps import element_target, step_drafts

__all__ = [
    "MemoryChatModel",
    "MemoryRunResult",
    "ReplayResult",
    "SkillActions",
    "StepRecorder",
    "element_target",
    "register_sensitive_data",
    "replay_on_session",
    "run_with_memory",
    "step_drafts",
]
