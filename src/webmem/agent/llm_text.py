"""The text protocol: the next action as one JSON object in the model's answer, for servers and models
without tool calling (or that answer in text although tools were offered).

The model is shown each action with its arguments and answers ``{"action": "click", "ref": "e3"}``;
the first JSON object of the answer is read and checked like a tool call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..core.errors import InvalidInput

_OPENERS = "{"


def text_protocol(specs: Mapping[str, tuple[str, dict[str, Any], tuple[str, ...]]]) -> str:
    """The instructions that replace tool calling: every action, its arguments, and the answer's form."""
    lines = ["Answer with exactly one JSON object and nothing else, naming the action and its arguments, "
             'for example {"action": "click", "ref": "e3"}. The actions:']
    for kind, (description, properties, required) in specs.items():
        arguments = ", ".join(
            f'"{name}"' + ("" if name in required else " (optional)") for name in properties
        )
        lines.append(f'- "{kind}": {description}' + (f" Arguments: {arguments}." if arguments else ""))
    return "\n".join(lines)


def first_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object written in ``text`` (inside a code fence or not), or None when there is none."""
    decoder = json.JSONDecoder()
    position = text.find(_OPENERS)
    while position != -1:
        try:
            found, _ = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find(_OPENERS, position + 1)
            continue
        if isinstance(found, dict):
            return found
        position = text.find(_OPENERS, position + 1)
    return None


def action_from_text(text: str) -> tuple[str, str]:
    """The action name and its arguments (as JSON) from a text answer; :class:`InvalidInput` says what
    is wrong with it."""
    found = first_json_object(text or "")
    if found is None:
        raise InvalidInput("the answer holds no JSON object")
    name = found.pop("action", None)
    if name is None and len(found) == 1 and isinstance(next(iter(found.values())), dict):
        name, found = next(iter(found.items()))  # {"click": {"ref": "e3"}}
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput('the JSON object names no "action"')
    return name.strip(), json.dumps(found)
