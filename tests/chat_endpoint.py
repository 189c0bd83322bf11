"""A chat-completions server on 127.0.0.1 that answers from a script (the LLM of the agent's tests): it records
each request and answers with the next reply given; it checks the protocol, never a model's decisions."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Endpoint:
    """A chat-completions server on 127.0.0.1: records each request, answers from ``replies``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.replies: list[tuple[int, dict[str, Any]]] = []
        self.delay_s = 0.0  # how long it thinks before each answer (a slow local model)
        self.delays: list[float] = []  # per request, before delay_s applies
        self.models: dict[str, Any] | None = None  # what GET /v1/models answers (404 when None)
        self.props: dict[str, Any] | None = None  # what GET /props answers (llama.cpp's server; 404 when None)
        self.listed = 0  # GET requests
        self.gets: list[str] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
                headers = {key.lower(): value for key, value in self.headers.items()}
                endpoint.requests.append({"path": self.path, "headers": headers, "raw": raw, "body": json.loads(raw)})
                status, payload = endpoint.replies.pop(0) if endpoint.replies else (500, {"error": "no reply"})
                time.sleep(endpoint.delays.pop(0) if endpoint.delays else endpoint.delay_s)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    return

            def do_GET(self) -> None:
                endpoint.listed += 1
                endpoint.gets.append(self.path)
                found = {"/v1/models": endpoint.models, "/props": endpoint.props}.get(self.path)
                data = json.dumps(found or {"error": "not found"}).encode()
                self.send_response(200 if found is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def reply(self, *replies: tuple[int, dict[str, Any]]) -> None:
        self.replies.extend(replies)

    def messages(self, index: int = -1) -> list[dict[str, Any]]:
        return list(self.requests[index]["body"]["messages"])


def _completion(message: dict[str, Any], usage: dict[str, int] | None) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {
        "id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "fake-model",
        "choices": [{"index": 0, "message": {"role": "assistant", **message},
                     "finish_reason": "tool_calls" if "tool_calls" in message else "stop"}],
    }
    if usage is not None:
        body["usage"] = {**usage, "total_tokens": sum(usage.values())}
    return 200, body


def tool_reply(name: str, arguments: dict[str, Any] | str, *, prompt: int = 100, completion: int = 10,
               usage: bool = True) -> tuple[int, dict[str, Any]]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": raw}}
    return _completion({"content": None, "tool_calls": [call]},
                       {"prompt_tokens": prompt, "completion_tokens": completion} if usage else None)


def text_reply(text: str) -> tuple[int, dict[str, Any]]:
    return _completion({"content": text}, {"prompt_tokens": 50, "completion_tokens": 5})


def http_error(status: int) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"message": "the model server broke", "type": "server_error"}}


@contextmanager
def serving() -> Iterator[Endpoint]:
    """A started Endpoint, shut down after the block."""
    server = Endpoint()
    server.thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
