"""Token estimates for budgeting what reaches the LLM."""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Roughly four characters per token, rounded up; empty text costs nothing."""
    return -(-len(text) // CHARS_PER_TOKEN)

