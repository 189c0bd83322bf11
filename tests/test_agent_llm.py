"""LLMPolicy against a local HTTP server that speaks the chat-completions protocol.

The server answers from a script; these tests check the protocol (what is sent, how replies are
read), never the quality of a model's decisions.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from chat_endpoint import Endpoint, http_error, serving, text_reply, tool_reply

from webmem import Memory
from webmem.agent import llm
from webmem.agent.actions import ACTION_KINDS, Action, Target
from webmem.agent.llm import TEXT_PROTOCOL, LLMPolicy
from webmem.agent.observation import Observation, parse_snapshot
from webmem.agent.policy import Policy, StepOutcome, Turn
from webmem.core.errors import InvalidInput, PolicyError

SNAPSHOT = '- text: Your email\n- textbox "Email" [ref=e2]\n- button "Submit" [ref=e3]\n- text: Total 42 EUR'
GOAL = "Sign in with the test account"


@pytest.fixture(autouse=True)
def _no_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("WEBMEM_LLM_BASE_URL", "WEBMEM_LLM_API_KEY", "WEBMEM_LLM_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL",
                 "WEBMEM_LLM_TOOLS", "WEBMEM_LLM_TIMEOUT_S"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(llm, "_ENDPOINT_MODES", {})  # what earlier tests' endpoints accepted (a port may be reused)


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    with serving() as server:
        yield server


@pytest.fixture
def policy(endpoint: Endpoint) -> LLMPolicy:
    return LLMPolicy(base_url=endpoint.url, api_key="test-key", model="fake-model", max_retries=0)


def make_turn(snapshot: str = SNAPSHOT, **fields: Any) -> Turn:
    elements, texts = parse_snapshot(snapshot)
    page = Observation(url="http://127.0.0.1/login", title="Sign in", snapshot=snapshot, elements=elements, texts=texts)
    return Turn(goal=GOAL, observation=page, number=fields.pop("number", 1), **fields)


def test_is_a_policy(policy: LLMPolicy) -> None:
    assert isinstance(policy, Policy)
    assert policy.name == "llm"


def test_memory_lessons_and_context_reach_the_messages(tmp_path: Path, endpoint: Endpoint, policy: LLMPolicy) -> None:
    mem = Memory.open(tmp_path / "m")
    try:
        run = mem.start_run(goal=GOAL, start_url="http://127.0.0.1/")
        run.on_error('click button "Pay"', "Timeout 5000ms exceeded waiting for the Pay button")
        lessons, context = run.system_prompt(), str(run.context())
    finally:
        mem.close()
    assert lessons.strip() and context.strip()
    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    policy.decide(make_turn(system_prompt=lessons, context=context))

    system, user = endpoint.messages()
    assert system["role"] == "system" and lessons in system["content"]
    assert user["role"] == "user"
    assert context in user["content"]
    assert "MEMORY" in user["content"]
    for text in (GOAL, "http://127.0.0.1/login", "Sign in", '[e3] button "Submit"', '[e2] textbox "Email"'):
        assert text in user["content"]


def test_empty_memory_sections_are_left_out(endpoint: Endpoint, policy: LLMPolicy) -> None:
    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    policy.decide(make_turn())
    system, user = endpoint.messages()
    assert system["content"].strip()
    assert "MEMORY" not in user["content"] and "LAST ERROR" not in user["content"]


def test_request_carries_model_tools_and_key(endpoint: Endpoint, policy: LLMPolicy) -> None:
    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    policy.decide(make_turn())
    request = endpoint.requests[0]
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["authorization"] == "Bearer test-key"
    body = request["body"]
    assert body["model"] == "fake-model"
    assert body["tool_choice"] == "required"
    assert body["temperature"] == 0
    tools = {tool["function"]["name"]: tool["function"] for tool in body["tools"]}
    assert set(tools) == set(ACTION_KINDS)
    assert all(tool["parameters"]["type"] == "object" for tool in tools.values())
    assert {"ref", "role", "name", "value"} <= set(tools["fill"]["parameters"]["properties"])
    assert tools["finish"]["parameters"]["required"] == ["success"]


@pytest.mark.parametrize(("name", "arguments", "expected"), [
    ("click", {"ref": "e3"}, Action(kind="click", target=Target(ref="e3"))),
    ("click", {"role": "button", "name": "Submit"}, Action(kind="click", target=Target(role="button", name="Submit"))),
    ("fill", {"ref": "e2", "value": "a@b.c"}, Action(kind="fill", target=Target(ref="e2"), value="a@b.c")),
    ("finish", {"success": True, "answer": "42 EUR"}, Action(kind="finish", success=True, answer="42 EUR")),
    ("finish", {"success": False}, Action(kind="finish", success=False)),
    ("press", {"key": "Enter"}, Action(kind="press", value="Enter")),
    ("goto", {"url": "http://127.0.0.1/cart"}, Action(kind="goto", value="http://127.0.0.1/cart")),
    ("scroll", {"direction": "down"}, Action(kind="scroll", value="down")),
    ("wait", {"ms": 500}, Action(kind="wait", wait_ms=500)),
    ("check", {"ref": "e4", "reason": "accept the terms"},
     Action(kind="check", target=Target(ref="e4"), reason="accept the terms")),
])
def test_tool_call_becomes_action(
    endpoint: Endpoint, policy: LLMPolicy, name: str, arguments: dict[str, Any], expected: Action
) -> None:
    endpoint.reply(tool_reply(name, arguments))
    assert policy.decide(make_turn()) == expected
    assert len(endpoint.requests) == 1


def test_calls_and_tokens_counted_from_usage(endpoint: Endpoint, policy: LLMPolicy) -> None:
    endpoint.reply(
        tool_reply("click", {"ref": "e3"}, prompt=120, completion=12),
        tool_reply("fill", {"ref": "e2", "value": "x"}, prompt=80, completion=8),
        tool_reply("finish", {"success": True}, usage=False),
    )
    for number in (1, 2, 3):
        policy.decide(make_turn(number=number))
    stats = policy.stats
    assert (stats.decisions, stats.llm_calls, stats.prompt_tokens, stats.completion_tokens) == (3, 3, 200, 20)
    policy.start("another goal")
    assert policy.stats.decisions == 3


def test_configuration_from_environment(monkeypatch: pytest.MonkeyPatch, endpoint: Endpoint) -> None:
    monkeypatch.setenv("WEBMEM_LLM_BASE_URL", endpoint.url)
    monkeypatch.setenv("WEBMEM_LLM_API_KEY", "env-key")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    monkeypatch.setenv("WEBMEM_LLM_MODEL", "env-model")
    endpoint.reply(tool_reply("click", {"ref": "e3"}), tool_reply("click", {"ref": "e3"}))
    LLMPolicy(max_retries=0).decide(make_turn())
    monkeypatch.delenv("WEBMEM_LLM_API_KEY")
    LLMPolicy(max_retries=0).decide(make_turn())
    first, second = endpoint.requests
    assert first["body"]["model"] == "env-model"
    assert first["headers"]["authorization"] == "Bearer env-key"
    assert second["headers"]["authorization"] == "Bearer openai-key"


def test_missing_configuration_names_the_variable(endpoint: Endpoint) -> None:
    with pytest.raises(InvalidInput, match="WEBMEM_LLM_MODEL"):
        LLMPolicy(base_url=endpoint.url, api_key="k")
    with pytest.raises(InvalidInput, match="WEBMEM_LLM_API_KEY"):
        LLMPolicy(base_url=endpoint.url, model="m")
    with pytest.raises(InvalidInput, match="temperature"):
        LLMPolicy(base_url=endpoint.url, api_key="k", model="m", temperature=5)


def test_a_client_can_be_given(endpoint: Endpoint) -> None:
    client = openai.OpenAI(base_url=endpoint.url, api_key="client-key", max_retries=0)
    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    assert LLMPolicy(client=client, model="fake-model").decide(make_turn()).kind == "click"
    assert endpoint.requests[0]["headers"]["authorization"] == "Bearer client-key"
    with pytest.raises(InvalidInput, match="client"):
        LLMPolicy(client=client, model="fake-model", api_key="other")


def test_no_tool_call_is_retried_once(endpoint: Endpoint) -> None:
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0, tools="auto")
    endpoint.reply(text_reply("I would click Submit."), tool_reply("click", {"ref": "e3"}))
    assert policy.decide(make_turn()) == Action(kind="click", target=Target(ref="e3"))
    retry = endpoint.messages(1)
    assert retry[:2] == endpoint.messages(0)
    assert retry[-2] == {"role": "assistant", "content": "I would click Submit."}
    assert retry[-1]["role"] == "user" and "no tool" in retry[-1]["content"]


def test_no_tool_call_twice_is_a_policy_error(endpoint: Endpoint) -> None:
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0, tools="required")
    endpoint.reply(text_reply("Hello there"), text_reply("Still no tool"))
    with pytest.raises(PolicyError, match="without a tool call.*Still no tool"):
        policy.decide(make_turn())
    assert len(endpoint.requests) == 2
    assert (policy.stats.decisions, policy.stats.llm_calls) == (1, 2)


def test_invalid_json_arguments_are_retried_with_the_error(endpoint: Endpoint, policy: LLMPolicy) -> None:
    endpoint.reply(tool_reply("fill", '{"ref": "e2", "value": '), tool_reply("fill", {"ref": "e2", "value": "x"}))
    assert policy.decide(make_turn()) == Action(kind="fill", target=Target(ref="e2"), value="x")
    retry = endpoint.messages(1)[-1]
    assert retry["role"] == "user" and "not valid JSON" in retry["content"]


def test_invalid_action_twice_is_a_policy_error(endpoint: Endpoint, policy: LLMPolicy) -> None:
    endpoint.reply(tool_reply("click", {}), tool_reply("click", {"reason": "still nothing"}))
    with pytest.raises(PolicyError, match="needs a target"):
        policy.decide(make_turn())
    assert len(endpoint.requests) == 2
    assert "needs a target" in endpoint.messages(1)[-1]["content"]


def test_http_error_is_a_policy_error(endpoint: Endpoint, policy: LLMPolicy) -> None:
    endpoint.reply(http_error(503))
    with pytest.raises(PolicyError, match="503.*the model server broke") as caught:
        policy.decide(make_turn())
    assert isinstance(caught.value.__cause__, openai.APIError)
    assert "\n" not in str(caught.value)
    assert len(endpoint.requests) == 1
    assert policy.stats.llm_calls == 1


def test_unreachable_endpoint_is_a_policy_error() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    policy = LLMPolicy(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", model="m", max_retries=0, timeout_s=5)
    with pytest.raises(PolicyError, match="APIConnectionError"):
        policy.decide(make_turn())


def test_secret_history_values_are_not_sent(endpoint: Endpoint, policy: LLMPolicy) -> None:
    secret = "hunter2-very-secret"
    history = (
        StepOutcome(action=Action(kind="click", target=Target(role="button", name="Log in")), ok=True, verified=True),
        StepOutcome(action=Action(kind="fill", target=Target(ref="e2"), value=secret, secret=True), ok=False,
                    verified=None, error=f"could not fill {secret} into the field"),
    )
    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    policy.decide(make_turn(history=history, last_error=f"fill failed with {secret}"))
    raw, user = endpoint.requests[0]["raw"], endpoint.messages()[-1]["content"]
    assert secret not in raw
    assert "{secret}" in user
    assert 'click button "Log in" -> ok' in user
    assert "failed: could not fill {secret} into the field" in user


def test_element_list_is_bounded(endpoint: Endpoint, policy: LLMPolicy) -> None:
    snapshot = "\n".join(f'- button "Button number {index}" [ref=e{index}]' for index in range(1000))
    endpoint.reply(tool_reply("click", {"ref": "e1"}))
    policy.decide(make_turn(snapshot=snapshot))
    user = endpoint.messages()[-1]["content"]
    assert '[e0] button "Button number 0"' in user
    assert "Button number 999" not in user
    assert "more elements" in user
    assert len(user) < 20_000


def test_missing_openai_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ImportError, match=r"webmem\[agent\]"):
        LLMPolicy(base_url="http://127.0.0.1:9/v1", api_key="k", model="m")


def test_the_agent_loop_sends_tier1_lessons_and_the_memory_context(endpoint: Endpoint, tmp_path: Path, page: Any) -> None:
    from webmem.agent import Agent
    from webmem.demo.server import serve_site

    site = Path(__file__).parent / "sites" / "subscribe" / "v1"
    goal = 'Subscribe to the newsletter with the email "ann@example.com"'
    script = [tool_reply("fill", {"role": "textbox", "name": "Email", "value": "ann@example.com"}),
              tool_reply("click", {"role": "button", "name": "Subscribe"}), tool_reply("finish", {"success": True})]
    mem = Memory.open(tmp_path / "memory")
    with serve_site(site) as url:
        endpoint.reply(*script)
        llm = LLMPolicy(base_url=endpoint.url, api_key="test-key", model="fake-model", max_retries=0)
        first = Agent(page, memory=mem, policy=llm, replay=False).run(goal, url=url)
        endpoint.reply(*script)
        second = Agent(page, memory=mem, policy=llm, replay=False).run(goal, url=url)
    assert first.success and second.success
    assert (second.llm_calls, second.prompt_tokens, second.completion_tokens) == (3, 300, 30)
    tier1 = mem.lessons.system_prompt_section()
    assert tier1
    system, turn = endpoint.messages(3)[:2]
    assert system["role"] == "system" and tier1 in system["content"]
    assert "REFERENCE TRAJECTORY" in turn["content"] and 'fill textbox "Email" "ann@example.com"' in turn["content"]
    assert "REFERENCE TRAJECTORY" not in endpoint.messages(0)[1]["content"]
    mem.close()


def test_a_refused_required_tool_choice_is_asked_again_with_auto_and_kept(endpoint: Endpoint, policy: LLMPolicy) -> None:
    endpoint.reply((500, {"error": {"message": "AssertionError: tool_choice must be 'auto'"}}),
                   tool_reply("click", {"ref": "e3"}), tool_reply("click", {"ref": "e3"}))
    assert policy.decide(make_turn()).kind == "click"
    assert [request["body"].get("tool_choice") for request in endpoint.requests] == ["required", "auto"]
    assert policy.mode == "auto" and policy.stats.llm_calls == 2
    again = LLMPolicy(base_url=endpoint.url, api_key="test-key", model="fake-model", max_retries=0)
    assert again.decide(make_turn()).kind == "click"  # the endpoint's mode is known: no refused request
    assert endpoint.requests[-1]["body"]["tool_choice"] == "auto" and len(endpoint.requests) == 3


def test_a_server_without_tools_gets_the_text_protocol(endpoint: Endpoint, policy: LLMPolicy) -> None:
    refusal = (400, {"error": {"message": "tools are not supported by this model"}})
    endpoint.reply(refusal, refusal, text_reply('Sure. ```json\n{"action": "fill", "ref": "e2", "value": "bo"}\n```'))
    assert policy.decide(make_turn()) == Action(kind="fill", target=Target(ref="e2"), value="bo")
    text_request = endpoint.requests[-1]["body"]
    assert "tools" not in text_request and "tool_choice" not in text_request
    assert text_request["messages"][0]["content"].endswith(TEXT_PROTOCOL) and policy.mode == "text"


def test_a_server_that_ignores_the_tools_gets_the_text_protocol(endpoint: Endpoint, policy: LLMPolicy) -> None:
    # llama-cpp-python without a function-calling chat format accepts tools and tool_choice, and ignores both
    endpoint.reply(text_reply("I would press the Submit button."), text_reply('{"action": "click", "ref": "e3"}'))
    assert policy.decide(make_turn()) == Action(kind="click", target=Target(ref="e3"))
    first, second = (request["body"] for request in endpoint.requests)
    assert first["tool_choice"] == "required" and "tools" not in second
    assert second["messages"][0]["content"].endswith(TEXT_PROTOCOL) and len(second["messages"]) == 2
    assert policy.mode == "text"


def test_the_text_protocol_corrects_once_then_fails_naming_the_answer(endpoint: Endpoint, monkeypatch: Any) -> None:
    monkeypatch.setenv("WEBMEM_LLM_TOOLS", "text")
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0)
    endpoint.reply(text_reply("I click the button"), text_reply('{"action": "click", "ref": "e3"}'))
    assert policy.decide(make_turn()) == Action(kind="click", target=Target(ref="e3"))
    assert "tools" not in endpoint.requests[0]["body"] and "JSON object" in endpoint.messages(1)[-1]["content"]
    endpoint.reply(text_reply("no"), text_reply('{"action": "click"}'))
    with pytest.raises(PolicyError, match="needs a target"):
        policy.decide(make_turn())
    monkeypatch.setenv("WEBMEM_LLM_TOOLS", "sometimes")
    with pytest.raises(InvalidInput, match="tools: expected one of required, auto, text"):
        LLMPolicy(base_url=endpoint.url, api_key="k", model="m")


def test_a_fixed_mode_is_never_changed(endpoint: Endpoint) -> None:
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0, tools="required")
    endpoint.reply((500, {"error": {"message": "tool_choice 'required' is not supported"}}))
    with pytest.raises(PolicyError, match=r"HTTP 500 \(tools: required\).*tool_choice 'required' is not supported"):
        policy.decide(make_turn())
    assert len(endpoint.requests) == 1 and policy.mode == "required"


def test_an_auto_answer_in_text_is_read_as_an_action(endpoint: Endpoint) -> None:
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0, tools="auto")
    endpoint.reply(text_reply('{"action": "finish", "success": true, "answer": "42"}'))
    assert policy.decide(make_turn()) == Action(kind="finish", success=True, answer="42")


def test_a_slow_server_times_out_with_a_clear_error(endpoint: Endpoint, monkeypatch: Any) -> None:
    monkeypatch.setenv("WEBMEM_LLM_TIMEOUT_S", "0.3")
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=1)
    endpoint.delay_s = 1.0
    endpoint.reply(tool_reply("click", {"ref": "e3"}), tool_reply("click", {"ref": "e3"}))
    with pytest.raises(PolicyError, match=r"did not answer in time \(2 tries of 0.3 s each; WEBMEM_LLM_TIMEOUT_S"):
        policy.decide(make_turn())
    assert policy.stats.extra["timeouts"] == 2
    monkeypatch.setenv("WEBMEM_LLM_TIMEOUT_S", "soon")
    with pytest.raises(InvalidInput, match="WEBMEM_LLM_TIMEOUT_S"):
        LLMPolicy(base_url=endpoint.url, api_key="k", model="m")


def test_a_timed_out_auto_request_is_asked_again_in_text_and_kept(endpoint: Endpoint, monkeypatch: Any) -> None:
    monkeypatch.setenv("WEBMEM_LLM_TIMEOUT_S", "0.5")
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=2)
    endpoint.reply((500, {"error": {"message": "assert tool_choice == 'auto'"}}), tool_reply("click", {"ref": "e3"}),
                   text_reply('{"action": "click", "ref": "e3"}'))
    # the auto answer runs away (llama-cpp-python ignores max_tokens there), and the server answers the
    # text request only when the runaway ends: it waits longer than one timeout, once
    endpoint.delays = [0.0, 1.5, 1.0]
    assert policy.decide(make_turn()) == Action(kind="click", target=Target(ref="e3"))
    assert [request["body"].get("tool_choice") for request in endpoint.requests] == ["required", "auto", None]
    assert "tools" not in endpoint.requests[2]["body"] and policy.mode == "text"
    assert policy.stats.extra["timeouts"] == 1 and policy.stats.llm_calls == 3  # the auto request was not retried

    forced = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0, tools="auto")
    endpoint.delays = [1.5, 1.5]
    endpoint.reply(tool_reply("click", {"ref": "e3"}), tool_reply("click", {"ref": "e3"}))
    with pytest.raises(PolicyError, match=r"did not answer in time \(2 tries"):  # a fixed mode retries itself
        forced.decide(make_turn())
    assert forced.mode == "auto"


def test_the_timeout_is_longer_for_a_server_on_this_machine(endpoint: Endpoint) -> None:
    local = LLMPolicy(base_url=endpoint.url, api_key="k", model="m")
    remote = LLMPolicy(base_url="https://llm.example.com/v1", api_key="k", model="m")
    assert (local.client.timeout, remote.client.timeout) == (llm.DEFAULT_LOCAL_TIMEOUT_S, llm.DEFAULT_TIMEOUT_S)


def test_a_request_is_cut_to_the_context_window_least_needed_part_first(endpoint: Endpoint, monkeypatch: Any) -> None:
    from webmem.agent.llm_window import request_tokens

    monkeypatch.setenv("WEBMEM_LLM_CONTEXT_TOKENS", "2500")
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0)
    memory = "\n".join(f"- earlier run {n}: clicked Submit after filling the email" for n in range(400))
    page_text = "\n".join(f"Paragraph {n} of the terms and conditions." for n in range(300))
    snapshot = SNAPSHOT + "".join(f"\n- text: {line}" for line in page_text.splitlines())
    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    policy.decide(make_turn(snapshot=snapshot, context=memory, last_error="the button was covered"))
    system, user = (message["content"] for message in endpoint.messages(0))
    assert request_tokens(system, user, json.dumps(endpoint.requests[0]["body"]["tools"])) <= 2500
    assert GOAL in user and 'textbox "Email"' in user and "the button was covered" in user  # what it cannot do without
    assert "Paragraph 99" not in user and "earlier run 100" not in user

    unlimited = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0, context_tokens=100_000)
    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    unlimited.decide(make_turn(snapshot=snapshot, context=memory))
    assert "earlier run 100" in endpoint.messages(1)[-1]["content"]  # a wide window cuts nothing more


def test_a_window_too_small_for_the_request_sends_nothing(endpoint: Endpoint) -> None:
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0, context_tokens=600)
    with pytest.raises(PolicyError, match="more than the model's context window of 600"):
        policy.decide(make_turn())
    assert endpoint.requests == []
    with pytest.raises(InvalidInput, match="context_tokens"):
        LLMPolicy(base_url=endpoint.url, api_key="k", model="m", context_tokens=100)


def test_the_window_a_server_reports_is_used(endpoint: Endpoint) -> None:
    endpoint.models = {"object": "list", "data": [
        {"id": "other", "object": "model", "owned_by": "x", "max_model_len": 100_000},
        {"id": "m", "object": "model", "owned_by": "x", "max_model_len": 2500}]}
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0)
    memory = "\n".join(f"- earlier run {n}: clicked Submit after filling the email" for n in range(200))
    endpoint.reply(tool_reply("click", {"ref": "e3"}), tool_reply("click", {"ref": "e3"}))
    policy.decide(make_turn(context=memory))
    policy.decide(make_turn(context=memory))
    assert policy.context_tokens == 2500 and "earlier run 100" not in endpoint.messages(0)[-1]["content"]
    assert (len(endpoint.requests), endpoint.listed, policy.stats.llm_calls) == (2, 1, 2)  # the list is asked once


def test_the_window_llama_cpp_reports_in_props_is_used(endpoint: Endpoint) -> None:
    endpoint.models = {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "llamacpp"}]}
    endpoint.props = {"default_generation_settings": {"n_ctx": 2500, "temperature": 0.8}, "total_slots": 1}
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0)
    memory = "\n".join(f"- earlier run {n}: clicked Submit after filling the email" for n in range(200))
    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    policy.decide(make_turn(context=memory))
    assert policy.context_tokens == 2500 and "earlier run 100" not in endpoint.messages(0)[-1]["content"]
    assert endpoint.gets == ["/v1/models", "/props"]

    endpoint.props = {"default_generation_settings": {"n_ctx": "big"}}  # nothing usable: no window, nothing cut
    unknown = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0)
    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    unknown.decide(make_turn(context=memory))
    assert unknown.context_tokens is None and "earlier run 100" in endpoint.messages(1)[-1]["content"]


def test_probing_the_mode_does_not_retry_a_refusal_and_answers_are_bounded(endpoint: Endpoint) -> None:
    policy = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=2)
    endpoint.reply((500, {"error": {"message": "assert tool_choice == 'auto'"}}), tool_reply("click", {"ref": "e3"}))
    assert policy.decide(make_turn()).kind == "click"
    assert [request["body"].get("tool_choice") for request in endpoint.requests] == ["required", "auto"]
    assert all(request["body"]["max_tokens"] == llm.ANSWER_RESERVE_TOKENS for request in endpoint.requests)
    hosted = LLMPolicy(base_url="https://api.openai.com/v1", api_key="k", model="m")
    assert not hosted.limit_answer  # some of OpenAI's models refuse max_tokens


def test_skills_are_offered_as_tools_and_a_call_of_one_is_a_skill_action(endpoint: Endpoint, policy: LLMPolicy) -> None:
    from webmem.agent.actions import SkillCall
    from webmem.core.skill_records import Skill, SkillParameter

    skill = Skill(id="skill_0123", name="create_ticket", origin="http://127.0.0.1", domain="127.0.0.1",
                  description='Does: Create a ticket titled "{summary}" with priority {priority} in {days} days',
                  template='Create a ticket titled "{summary}" with priority {priority} in {days} days',
                  parameters=[SkillParameter(name="summary", kind="text", slot=1),
                              SkillParameter(name="priority", kind="choice", slot=2, options=["low", "high"]),
                              SkillParameter(name="days", kind="number", slot=3),
                              SkillParameter(name="password", kind="secret", slot=4)],
                  status="verified", status_reason="a replay did a new instance", trajectory_id="traj_1")
    endpoint.reply(tool_reply("skill_nope", {}),
                   tool_reply("skill_create_ticket", {"summary": "Slow", "priority": "high", "days": 3, "reason": "r"}))
    action = policy.decide(make_turn(skills=(skill,)))
    assert action == Action(kind="skill", skill=SkillCall(id="skill_0123", name="create_ticket", values={
        "summary": "Slow", "priority": "high", "days": 3}), reason="r")
    assert action.describe() == "skill create_ticket(summary='Slow', priority='high', days=3)"
    tools = {tool["function"]["name"]: tool["function"] for tool in endpoint.requests[0]["body"]["tools"]}
    assert set(tools) == {*ACTION_KINDS, "skill_create_ticket"}
    schema = tools["skill_create_ticket"]["parameters"]
    assert schema["required"] == ["summary", "priority", "days"]  # the secret is webmem's to fill, never asked
    assert [schema["properties"][name]["type"] for name in ("summary", "priority", "days")] == ["string"] * 2 + ["number"]
    assert schema["properties"]["priority"]["enum"] == ["low", "high"]
    assert tools["skill_create_ticket"]["description"].endswith("Status: verified (a replay did a new instance)")
    assert "no such skill is offered (the skills: skill_create_ticket)" in endpoint.messages(1)[-1]["content"]
    assert "skill_" in endpoint.messages(0)[0]["content"]

    endpoint.reply(tool_reply("click", {"ref": "e3"}))
    policy.decide(make_turn())  # a page without skills: only the actions, and no word of skills
    assert "skill_" not in endpoint.requests[-1]["raw"]

    text = LLMPolicy(base_url=endpoint.url, api_key="k", model="m", max_retries=0, tools="text")
    endpoint.reply(text_reply('{"action": "skill_create_ticket", "summary": "Slow", "priority": "low", "days": 1}'))
    assert text.decide(make_turn(skills=(skill,))).kind == "skill"
    assert '- "skill_create_ticket": Does: Create a ticket' in endpoint.messages()[0]["content"]
