"""A scripted chat model for browser-use: it implements browser-use's chat-model protocol and plays the
part of an LLM by reading the page state browser-use sends it, with no network and no model.

It knows one kind of task, "Subscribe EMAIL to the newsletter": fill Email, fill Password (with
browser-use's ``<secret>news_password</secret>``), click the form's button (Subscribe, or the only
button when there is none of that name), then done. Steps that the task text says were already done
(a replay's hand-over note) are skipped, and so are those it did itself. Every call's messages are kept,
with what it asked for (``kinds``): the agent's next actions ("step"), the judge's verdict on a finished
run ("judge", which it gives as passed) or plain text ("text"), and the output format it was asked for
(``formats``: browser-use's ``AgentOutput`` with the actions it offers). Given ``actions``, it answers
the steps with those actions in turn instead (an action, or a function of the last message's text that
gives one), then with done.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from browser_use.llm.views import ChatInvokeCompletion

_ELEMENT = re.compile(r"^\s*(?:\|SHADOW\([a-z]+\)\|)?\[(?P<index>\d+)\]<(?P<tag>[a-z]+)(?P<attributes>[^>]*)/?>")


def page_elements(text: str) -> list[dict[str, Any]]:
    """Interactive elements from browser-use's browser state: index, tag, attributes, label before, text after."""
    elements: list[dict[str, Any]] = []
    lines = text.splitlines()
    label = ""
    for number, line in enumerate(lines):
        found = _ELEMENT.match(line)
        if found is None:
            if line.strip() and not line.startswith("\t"):
                label = line.strip()
            continue
        after = lines[number + 1].strip() if number + 1 < len(lines) and lines[number + 1].startswith("\t") else ""
        elements.append({"index": int(found.group("index")), "tag": found.group("tag"),
                         "attributes": found.group("attributes"), "label": label, "text": after})
    return elements


class ScriptedChat:
    model = "scripted-newsletter"
    provider = "scripted"
    name = "scripted-newsletter"
    _verified_api_keys = True

    def __init__(self, *, fail_with: str | None = None,
                 actions: list[dict[str, Any] | Callable[[str], dict[str, Any]]] | None = None) -> None:
        self.fail_with = fail_with
        self.actions = list(actions) if actions is not None else None
        self.messages: list[list[Any]] = []
        self.formats: list[Any] = []
        self.kinds: list[str] = []
        self.done: set[str] = set()  # what it did already (its own earlier answers, as an LLM sees them)

    @property
    def model_name(self) -> str:
        return self.model

    @property
    def calls(self) -> int:
        return len(self.messages)

    async def ainvoke(self, messages: list[Any], output_format: Any = None, **kwargs: Any) -> Any:
        self.messages.append(messages)
        self.formats.append(output_format)
        fields = getattr(output_format, "model_fields", {})
        self.kinds.append("text" if output_format is None else "judge" if "verdict" in fields else "step")
        if self.fail_with is not None:
            raise RuntimeError(self.fail_with)
        if output_format is None:
            return ChatInvokeCompletion(completion="ok", usage=None)
        if self.kinds[-1] == "judge":
            verdict = {"reasoning": "the page says so", "verdict": True, "failure_reason": ""}
            return ChatInvokeCompletion(completion=output_format.model_validate(verdict), usage=None)
        user = _text(messages[-1])
        if self.actions is not None:
            action = self.actions.pop(0) if self.actions else {"done": {"text": "Done", "success": True}}
            action = action(user) if callable(action) else action
        else:
            action = self._next(user.split("</webmem_memory>", 1)[-1])  # what the memory says is not the task
        answer = {"evaluation_previous_goal": "", "memory": "", "next_goal": "", "action": [action]}
        return ChatInvokeCompletion(completion=output_format.model_validate(answer), usage=None)

    def _next(self, text: str) -> dict[str, Any]:
        found = re.search(r"<user_request>\s*(.*?)\s*</user_request>", text, re.S)
        request = found.group(1) if found else ""
        email = re.search(r"Subscribe (\S+@\S+) to the newsletter", request)
        state = text[text.rfind("<browser_state>"):]
        elements = page_elements(state)
        fields = {element["label"]: element for element in elements if element["tag"] == "input"}
        buttons = [element for element in elements if element["tag"] == "button"]
        address = email.group(1) if email else ""
        if address and "Email" in fields and 'fill textbox "Email"' not in request and "email" not in self.done:
            self.done.add("email")
            return {"input": {"index": fields["Email"]["index"], "text": address}}
        if "Password" in fields and 'fill textbox "Password"' not in request and "password" not in self.done:
            self.done.add("password")
            return {"input": {"index": fields["Password"]["index"], "text": "<secret>news_password</secret>"}}
        if buttons and "click" not in self.done:
            self.done.add("click")
            named = [button for button in buttons if button["text"] == "Subscribe"] or buttons
            return {"click": {"index": named[0]["index"]}}
        return {"done": {"text": f"Subscribed {email.group(1) if email else ''}".strip(), "success": True}}


def _text(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    return "\n".join(getattr(part, "text", "") for part in content or [])
