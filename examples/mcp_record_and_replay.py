"""An MCP session through `webmem mcp --browser ...` in front of Playwright MCP, printed as a transcript.

A client (this script, standing in for an LLM client) records a run on a local newsletter page, then asks
for the same task with another email address and lets `webmem_replay` do it with no model turn, then
renames the page's button and sees the replay stop with a report.

    python examples/mcp_record_and_replay.py [--playwright-mcp PATH_TO_cli.js]

Needs `pip install 'webmem[mcp]'`, Node.js with `@playwright/mcp` (`scripts/setup.sh` installs it into
.cache/node) and a Chromium (/usr/bin/chromium, or Playwright's own).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import re
import shlex
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Newsletter</title>
<link rel="icon" href="data:,"></head><body><h1>Newsletter</h1>
<form onsubmit="event.preventDefault(); document.getElementById('result').textContent =
  'Subscribed ' + document.getElementById('email').value;">
<label for="email">Email</label> <input id="email" type="email">
<label for="password">Password</label> <input id="password" type="password">
<button type="submit">Subscribe</button></form><p id="result" role="status"></p></body></html>"""
PASSWORD = "Tr0ub4dor&3-news"
DEFAULT_CLI = Path(__file__).resolve().parent.parent / ".cache/node/node_modules/@playwright/mcp/cli.js"


def shown(value: Any, width: int = 110) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def summary(tool: str, data: dict[str, Any] | None, texts: list[str]) -> str:
    """The part of an answer worth reading in a transcript."""
    if data is None:
        code = re.search(r"```\w*\n(.*?)```", texts[0] if texts else "", re.S)
        status = re.search(r'- status \[ref=\w+\]: (.*)', "\n".join(texts))
        if tool == "browser_snapshot":
            return f"status line: {status.group(1) if status else '(empty)'}"
        return shown(code.group(1).strip() if code else " ".join(texts))
    if tool == "webmem_start_run":
        offer = data.get("replay")
        plan = [" ".join(str(part) for part in (call["tool"], call["target"] or call["arguments"].get("url"),
                                                call["value"] if call["action"] != "goto" else None) if part)
                for call in offer["steps"]] if offer else None
        return (f"run {data['run_id']}, {len(data['lessons'])} lessons, "
                + (f"replay offer: {'; '.join(plan)}" if plan else f"no replay: {data.get('replay_unavailable')}"))
    if tool == "webmem_replay":
        return shown({key: data[key] for key in ("outcome", "steps_done", "steps_total", "summary")}, 400)
    if tool == "webmem_finish_run":
        return shown({"status": data["run"]["status"], "steps": data["steps"]})
    return shown(data)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass


class Transcript:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> Any:
        print(f"> {tool} {shown(arguments or {}).replace(PASSWORD, '<the password>')}")
        result = await self.client.call_tool(tool, arguments or {})
        texts = [item.text for item in result.content if hasattr(item, "text")]
        memory = next((text for text in texts if text.startswith("### Memory")), None)
        print(f"< {'ERROR ' if result.is_error else ''}{summary(tool, result.structured_content, texts)}")
        if memory:
            print("  " + memory.replace("\n", "\n  "))
        return result

    async def snapshot_refs(self) -> dict[str, str]:
        result = await self.call("browser_snapshot")
        text = "\n".join(item.text for item in result.content if hasattr(item, "text"))
        return {found.group(1): found.group(2) for found in re.finditer(r'- (\w+ "[^"]*") \[ref=(\w+)\]', text)}


async def session(command: list[str], memory_dir: str, url: str, script: Any) -> None:
    env = {**os.environ, "NEWS_PASSWORD": PASSWORD}
    server = [sys.executable, "-m", "webmem", "--memory-dir", memory_dir, "mcp", "--secret", "NEWS_PASSWORD",
              "--browser", shlex.join(command)]
    async with Client(StdioServerParameters(command=server[0], args=server[1:], env=env)) as client:
        await script(Transcript(client), url)


async def record(t: Transcript, url: str) -> None:
    run = (await t.call("webmem_start_run", {"goal": "Subscribe a@b.com to the newsletter", "start_url": url}))
    run_id = run.structured_content["run_id"]
    await t.call("browser_navigate", {"url": url})
    refs = await t.snapshot_refs()
    await t.call("browser_type", {"element": "Email", "target": refs['textbox "Email"'], "text": "a@b.com"})
    await t.call("browser_type", {"element": "Password", "target": refs['textbox "Password"'], "text": PASSWORD})
    await t.call("browser_click", {"element": "Subscribe", "target": refs['button "Subscribe"']})
    await t.call("webmem_finish_run", {"run_id": run_id, "success": True, "outcome": "Subscribed a@b.com"})


async def replay(t: Transcript, url: str, email: str) -> None:
    run = await t.call("webmem_start_run", {"goal": f"Subscribe {email} to the newsletter", "start_url": url})
    run_id = run.structured_content["run_id"]
    result = await t.call("webmem_replay", {"run_id": run_id})
    await t.call("browser_snapshot")
    success = result.structured_content is not None and result.structured_content["outcome"] == "replayed"
    await t.call("webmem_finish_run", {"run_id": run_id, "success": success})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playwright-mcp", type=Path, default=DEFAULT_CLI, help="Playwright MCP's cli.js")
    parser.add_argument("--executable-path", default="/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="webmem-mcp-example-"))
    (work / "site").mkdir()
    page = work / "site" / "index.html"
    page.write_text(PAGE)
    handler = functools.partial(_QuietHandler, directory=str(work / "site"))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    command = ["node", str(args.playwright_mcp), "--headless", "--isolated", "--no-sandbox", "--timeout-action", "2000",
               "--output-dir", str(work / "playwright-output")]
    if args.executable_path:
        command += ["--executable-path", args.executable_path]
    memory_dir = str(work / "memory")
    print("## 1. An agent records a run\n")
    anyio.run(session, command, memory_dir, url, record)
    print("\n## 2. The same task for another address: replayed with no model turn\n")
    anyio.run(session, command, memory_dir, url, lambda t, u: replay(t, u, "c@d.org"))
    page.write_text(PAGE.replace(">Subscribe</button>", ">Join</button>"))
    print("\n## 3. The site renamed its button: the replay stops and says where\n")
    anyio.run(session, command, memory_dir, url, lambda t, u: replay(t, u, "e@f.net"))
    stored = (Path(memory_dir) / "memory.db").read_bytes() + (Path(memory_dir) / "events.jsonl").read_bytes()
    print(f"\nThe password in the memory's files: {'FOUND' if PASSWORD.encode() in stored else 'nowhere'}")
    httpd.shutdown()


if __name__ == "__main__":
    main()
