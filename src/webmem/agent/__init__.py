"""webmem's reference browser agent: a Playwright loop wired to the memory, its policies, and replay.

    from webmem import Memory
    from webmem.agent import Agent, HeuristicPolicy

    agent = Agent(page, memory=Memory.open(".agent-memory"), policy=HeuristicPolicy())
    result = agent.run('Enter "Kasie" into the text field and press Submit.', url="http://127.0.0.1:8000/")
"""

from .actions import ACTION_KINDS, Action, Target
from .browser import launch_chromium
from .checks import SuccessCheck
from .heuristic import HeuristicPolicy
from .llm import LLMPolicy
from .loop import Agent
from .results import AgentResult, Environment, EnvironmentOutcome
from .observation import Element, Observation, observe
from .policy import Policy, PolicyStats, StepOutcome, Turn
from .replay import ReplayPolicy

__all__ = [
    "ACTION_KINDS",
    "Action",
    "Agent",
    "AgentResult",
    "Element",
    "Environment",
    "EnvironmentOutcome",
    "HeuristicPolicy",
    "LLMPolicy",
    "Observation",
    "Policy",
    "PolicyStats",
    "ReplayPolicy",
    "launch_chromium",
    "StepOutcome",
    "SuccessCheck",
    "Target",
    "Turn",
    "observe",
]
