"""The HTTP API with the framework's test client, on SQLite and a real PostgreSQL: every endpoint, the
token, namespaces that hold, and a problem+json answer for each error."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import webmem
from webmem.server import create_app
from webmem.server.hot_path import HotPath

SITE = "https://news.example.org/"
PROBLEM = "application/problem+json"


@pytest.fixture(params=[True, False], ids=["hot-path", "routes"])
def client(memory_location: str, memory_dir: Path, request: pytest.FixtureRequest) -> Iterator[TestClient]:
    """Each test runs against the hot path (a run's start, steps, context and finish answered by middleware)
    and against FastAPI's routes alone: the same assertions hold for both."""
    with TestClient(create_app(memory_location, local_dir=memory_dir, hot_path=request.param)) as test_client:
        yield test_client


def started(client: TestClient, goal: str = "Subscribe a@b.com to the newsletter", **headers: str) -> dict[str, Any]:
    answer = client.post("/v1/runs", json={"goal": goal, "start_url": SITE}, headers=headers)
    assert answer.status_code == 201, answer.text
    return answer.json()


def assert_problem(answer: Any, status: int, title: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith(PROBLEM)
    body = answer.json()
    assert body["title"] == title and body["status"] == status and body["type"] == f"urn:webmem:problem:{title}"
    assert "Traceback" not in answer.text
    return body


def test_every_endpoint(client: TestClient) -> None:
    assert client.get("/v1/health").json()["status"] == "ok"
    run = started(client)
    run_id = run["run_id"]
    assert run["lessons"] and run["replay"] is None
    for step in ({"action": "goto", "value": SITE},
                 {"action": "fill", "target": 'textbox "Email"', "selector": "#email", "value": "a@b.com", "url": SITE},
                 {"action": "click", "target": 'button "Subscribe"', "url": SITE}):
        assert client.post(f"/v1/runs/{run_id}/steps", json=step).status_code == 201
    context = client.get(f"/v1/runs/{run_id}/context", params={"budget_tokens": 300}).json()
    assert context["tokens"] <= 300 and context["url"] == SITE
    finished = client.post(f"/v1/runs/{run_id}/finish", json={"success": True, "outcome": "Subscribed"}).json()
    assert finished["run"]["status"] == "completed" and finished["steps"] == 3
    assert [r["run_id"] for r in client.get("/v1/runs", params={"status": "completed"}).json()["runs"]] == [run_id]
    assert len(client.get(f"/v1/runs/{run_id}").json()["steps"]) == 3
    assert [s["action"] for s in client.get(f"/v1/runs/{run_id}/steps").json()["steps"]] == ["goto", "fill", "click"]
    resumed = client.post(f"/v1/runs/{run_id}/resume", json={}).json()
    forked = client.post(f"/v1/runs/{run_id}/fork", json={"goal": "Unsubscribe a@b.com"}).json()
    assert resumed["session_id"] == finished["run"]["session_id"] and forked["session_id"] != resumed["session_id"]
    match = client.get("/v1/trajectories/match", params={"goal": "Subscribe c@d.org to the newsletter",
                                                        "url": SITE}).json()
    assert match["best"] and match["candidates"][0]["goal"] == "Subscribe a@b.com to the newsletter"
    plan = client.get("/v1/replay-plan", params={"goal": "Subscribe c@d.org to the newsletter", "url": SITE}).json()
    assert plan["replay"]["steps"][1]["arguments"]["text"] == "c@d.org"
    assert client.get("/v1/lessons").json()["lessons"]
    assert client.get("/v1/lessons/recall", params={"domain": "news.example.org"}).status_code == 200
    assert any(f["key"] == "typical-steps" for f in client.get("/v1/sites/news.example.org/facts").json()["facts"])
    selectors = client.get("/v1/sites/news.example.org/selectors").json()["selectors"]
    assert [s["stable_selector"] for s in selectors] == ["#email"]
    assert client.get("/v1/stats").json()["counts"]["runs"]["total"] == 3
    openapi = client.get("/openapi.json").json()
    recording = openapi["paths"]["/v1/runs/{run_id}/steps"]["post"]
    body_schema = recording["requestBody"]["content"]["application/json"]["schema"]["$ref"].rpartition("/")[2]
    assert "action" in openapi["components"]["schemas"][body_schema]["properties"]
    assert {p["name"] for p in recording["parameters"]} == {"run_id", "authorization", "X-Webmem-Namespace"}


def test_each_error_is_a_problem(client: TestClient) -> None:
    assert_problem(client.post("/v1/runs/run_nope/steps", json={"action": "click"}), 404, "RunNotFound")
    assert_problem(client.post("/v1/runs", json={"goal": "x", "start_url": "ftp://x"}), 422, "InvalidInput")
    body = assert_problem(client.post("/v1/runs", json={"goal": 5, "start_url": SITE}), 422, "InvalidInput")
    assert "goal" in body["detail"]
    assert_problem(client.post("/v1/runs", json={"goal": "x", "start_url": SITE, "colour": "red"}), 422,
                   "InvalidInput")
    assert_problem(client.post("/v1/runs", content=b"{not json", headers={"content-type": "application/json"}),
                   422, "InvalidInput")
    run_id = started(client)["run_id"]
    assert_problem(client.get(f"/v1/runs/{run_id}/context", params={"budget_tokens": 0}), 422, "InvalidInput")
    assert_problem(client.get("/v1/runs", params={"status": "exploded"}), 422, "InvalidInput")
    steps = f"/v1/runs/{run_id}/steps"  # a route that reads its own body and headers: the same answers
    assert "action" in assert_problem(client.post(steps, json={"action": 5}), 422, "InvalidInput")["detail"]
    assert "colour" in assert_problem(client.post(steps, json={"action": "click", "colour": "red"}), 422,
                                      "InvalidInput")["detail"]
    assert_problem(client.post(steps, content=b"{not json", headers={"content-type": "application/json"}), 422,
                   "InvalidInput")
    assert_problem(client.post(steps, content=b""), 422, "InvalidInput")
    assert_problem(client.post(steps, json={"action": "click"}, headers={"X-Webmem-Namespace": "no spaces"}), 422,
                   "InvalidInput")
    assert client.get(f"/v1/runs/{run_id}").json()["steps"] == []
    client.post(f"/v1/runs/{run_id}/finish", json={"success": False})
    assert_problem(client.post(steps, json={"action": "click"}), 409, "RunClosed")
    assert_problem(client.get("/v1/nowhere"), 404, "NotFound")
    assert_problem(client.get("/v1/runs", headers={"X-Webmem-Namespace": "no spaces"}), 422, "InvalidInput")


def test_an_unknown_action_is_refused_and_not_stored(client: TestClient) -> None:
    run_id = started(client)["run_id"]
    steps = f"/v1/runs/{run_id}/steps"
    assert client.post(steps, json={"action": "click", "target": 'button "Subscribe"', "url": SITE}).status_code == 201
    body = assert_problem(client.post(steps, json={"action": "teleport", "url": SITE}), 422, "InvalidInput")
    assert body["detail"] == ("action: unknown action 'teleport'; valid actions: goto, click, fill, type, select, "
                              "check, uncheck, press, hover, scroll, wait, back")
    assert [step["action"] for step in client.get(steps).json()["steps"]] == ["click"]


def test_a_match_lists_the_closest_few_unless_asked_for_every_candidate(client: TestClient, memory_location: str,
                                                                       memory_dir: Path) -> None:
    """``GET /v1/trajectories/match`` answers the closest ``limit`` (default 5) from the pruned ranking; ``all=true``
    scores and explains every candidate; ``scored`` says how many there were; a wrong ``all`` is a problem."""
    with webmem.Memory.open(memory_location, local_dir=memory_dir) as writer:  # another process's saves
        step = webmem.Step(action="click", target='button "Subscribe"', url=SITE)
        with writer.store.write():
            for number in range(12):
                writer.trajectories.save(goal=f"Subscribe user{number}@example.org to the newsletter", start_url=SITE,
                                         steps=[step])
    asked = {"goal": "Subscribe user3@example.org to the newsletter", "url": SITE}
    closest = client.get("/v1/trajectories/match", params=asked).json()
    every = client.get("/v1/trajectories/match", params={**asked, "all": "true"}).json()
    assert len(closest["candidates"]) == 5 and closest["scored"] == every["scored"] == len(every["candidates"]) == 12
    assert closest["candidates"] == every["candidates"][:5] and closest["best"] == every["best"] is not None
    assert all(candidate["why"] for candidate in every["candidates"])
    assert len(client.get("/v1/trajectories/match", params={**asked, "limit": 2}).json()["candidates"]) == 2
    body = assert_problem(client.get("/v1/trajectories/match", params={**asked, "all": "maybe"}), 422, "InvalidInput")
    assert "all" in body["detail"]
    parameters = client.get("/openapi.json").json()["paths"]["/v1/trajectories/match"]["get"]["parameters"]
    assert {p["name"]: p["schema"].get("default") for p in parameters if p["name"] in ("limit", "all")} == {
        "limit": 5, "all": False}



def test_a_sites_wording_lists_what_its_recordings_taught_per_origin(client: TestClient, memory_location: str,
                                                                     memory_dir: Path) -> None:
    """``GET /v1/sites/{domain}/wording``: per origin of the site, the words its recordings showed to name one act
    and the options of a field that are values of a task; a site with no recordings has none; a bad domain is a
    problem."""
    shop = "http://shop.example.test"
    status = webmem.ElementSignals(label="Status", tag="select", options=("Pending", "Complete", "On hold"))
    with webmem.Memory.open(memory_location, local_dir=memory_dir) as writer:
        writer.trajectories.save(goal="Show the completed orders", start_url=shop, steps=[
            webmem.Step(action="select", target='combobox "Status"', value="Complete", element=status)])
        for verb, name in (("Archive", "Apollo"), ("Hide", "Zeus")):
            writer.trajectories.save(goal=f"{verb} the note {name}", start_url=shop, steps=[
                webmem.Step(action="click", target=f'link "{name}"', url=f"{shop}/notes/"),
                webmem.Step(action="click", target='button "Archive"', url=f"{shop}/notes/7")])
        writer.trajectories.save(goal="Show the orders", start_url="https://shop.example.test/", steps=[
            webmem.Step(action="click", target='link "Orders"')])
    wording = client.get("/v1/sites/shop.example.test/wording").json()
    assert wording["domain"] == "shop.example.test"
    assert [origin["origin"] for origin in wording["origins"]] == [shop, "https://shop.example.test"]
    taught, bare = wording["origins"]
    assert [sorted(act["words"]) for act in taught["acts"]] == [["archive", "hide"]]
    assert {(option["option"], option["value"], option["field"]) for option in taught["options"]} == {
        ("pending", "completed", "Status"), ("on hold", "completed", "Status")}
    assert bare["acts"] == bare["options"] == []
    assert client.get("/v1/sites/nowhere.example.test/wording").json() == {"domain": "nowhere.example.test",
                                                                          "origins": []}
    assert_problem(client.get("/v1/sites/not a domain/wording"), 422, "InvalidInput")


def test_no_answer_names_where_the_memory_lives(client: TestClient, memory_location: str, memory_dir: Path) -> None:
    """A client learns the backend's name, never the server's files or database URL: every GET, with simple
    arguments, on a memory with a finished run, a trajectory and a script."""
    run_id = started(client)["run_id"]
    client.post(f"/v1/runs/{run_id}/steps", json={"action": "click", "target": 'button "Subscribe"', "url": SITE})
    client.post(f"/v1/runs/{run_id}/finish", json={"success": True, "outcome": "Subscribed"})
    stats = client.get("/v1/stats").json()
    assert stats["backend"] == ("sqlite" if memory_location == str(memory_dir) else "postgresql")
    trajectory_id = client.get("/v1/trajectories").json()["trajectories"][0]["id"]
    arguments = {"run_id": run_id, "domain": "news.example.org", "source_id": trajectory_id}
    query = {"goal": "Subscribe c@d.org to the newsletter", "url": SITE}
    swept = []
    for route in client.app.routes:
        if "GET" not in getattr(route, "methods", ()) or not route.path.startswith("/v1"):
            continue
        answer = client.get(route.path.format(**arguments), params=query)
        assert answer.status_code == 200, (route.path, answer.text)
        assert str(memory_dir) not in answer.text and memory_location not in answer.text, route.path
        swept.append(route.path)
    assert "/v1/stats" in swept and len(swept) >= 15

@pytest.mark.parametrize("hot_path", [True, False], ids=["hot-path", "routes"])
def test_a_token_guards_everything_but_health(memory_dir: Path, hot_path: bool) -> None:
    with TestClient(create_app(str(memory_dir), token="tok-123", hot_path=hot_path)) as client:
        assert client.get("/v1/health").status_code == 200
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "tok-123"}):
            assert_problem(client.get("/v1/runs", headers=headers), 401, "Unauthorized")
            assert_problem(client.post("/v1/runs", json={"goal": "g", "start_url": SITE}, headers=headers), 401,
                           "Unauthorized")
        good = {"Authorization": "Bearer tok-123"}
        run_id = client.post("/v1/runs", json={"goal": "g", "start_url": SITE}, headers=good).json()["run_id"]
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "tok-123"},
                        [("Authorization", "Bearer nope"), ("Authorization", "Bearer tok-123")]):
            assert_problem(client.post(f"/v1/runs/{run_id}/steps", json={"action": "click"}, headers=headers), 401,
                           "Unauthorized")
        assert len(client.get("/v1/runs", headers=good).json()["runs"]) == 1
        assert client.post(f"/v1/runs/{run_id}/steps", json={"action": "click"}, headers=good).status_code == 201
    with webmem.Memory.open(memory_dir) as mem:
        assert len(mem.runs.list()) == 1  # the refused requests stored nothing
        assert len(mem.runs.steps(run_id)) == 1


def answers(client: TestClient) -> list[tuple[int, str, Any]]:
    """What the four hot requests answer to good and bad input, with ids and times left out."""
    def seen(answer: Any) -> tuple[int, str, Any]:
        text = re.sub(r"\b[a-z]+_\d{10,}_[0-9a-z]+\b", "<id>", answer.text)
        text = re.sub(r"\d{4}-\d\d-\d\d[ T][0-9:.]+(Z|[+-]\d\d:\d\d)?", "<time>", text)
        return answer.status_code, answer.headers["content-type"], json.loads(text)

    found = [seen(client.post("/v1/runs", json=body)) for body in (
        {"goal": 5, "start_url": SITE}, {"goal": "x", "start_url": "ftp://x"}, {"goal": "x"},
        {"goal": "x", "start_url": SITE, "colour": "red"})]
    found.append(seen(client.post("/v1/runs", content=b"{not json", headers={"content-type": "application/json"})))
    found.append(seen(client.post("/v1/runs", content=b"", headers={"content-type": "application/json"})))
    found.append(seen(client.post("/v1/runs", json={"goal": "g", "start_url": SITE},
                                  headers={"X-Webmem-Namespace": "no spaces"})))
    found.append(seen(client.post("/v1/runs", json={"goal": "g", "start_url": SITE},  # the first of two counts
                                  headers=[("X-Webmem-Namespace", "no spaces"), ("X-Webmem-Namespace", "default")])))
    found.append(seen(client.post("/v1/runs/run_nope/steps", json={"action": "click"})))
    found.append(seen(client.get("/v1/runs/run_nope/context")))
    found.append(seen(client.post("/v1/runs/run_nope/finish", json={"success": True})))
    run_id = started(client)["run_id"]
    steps = f"/v1/runs/{run_id}/steps"
    for body in ({"action": 5}, {"action": "click", "colour": "red"}, {"action": "click", "url": "nope"},
                 {"action": "fill", "target": 'textbox "Email"', "value": "a@b.com", "url": SITE},
                 {"action": "click", "target": 'button "Go"', "ok": False, "error": "Timeout 500ms exceeded"}):
        found.append(seen(client.post(steps, json=body)))
    for params in ({"budget_tokens": "many"}, {"budget_tokens": 0}, {"url": ""}, {"budget_tokens": 300},
                   {"url": SITE + "page", "budget_tokens": 200, "unknown": "ignored"}):
        found.append(seen(client.get(f"/v1/runs/{run_id}/context", params=params)))
    found.append(seen(client.post(f"/v1/runs/{run_id}/finish", json={"success": "maybe"})))
    found.append(seen(client.post(f"/v1/runs/{run_id}/finish", json={"success": True, "outcome": "Done"})))
    found.append(seen(client.post(steps, json={"action": "click"})))
    return found


def test_the_hot_path_answers_exactly_as_the_routes_do(tmp_path: Path) -> None:
    """Two fresh memories (the hot path's answers do not depend on the backend: the service gives them)."""
    hot = create_app(str(tmp_path / "hot"), local_dir=tmp_path / "hot-local")
    assert any(middleware.cls is HotPath for middleware in hot.user_middleware)
    with TestClient(hot) as client:
        through_hot_path = answers(client)
    routes = create_app(str(tmp_path / "routes"), local_dir=tmp_path / "routes-local", hot_path=False)
    with TestClient(routes) as client:
        through_routes = answers(client)
    assert [answer[0] for answer in through_hot_path] == [422, 422, 422, 422, 422, 422, 422, 422, 404, 404, 404, 422,
                                                          422, 422, 201, 201, 422, 422, 422, 200, 200, 422, 200, 409]
    assert through_hot_path == through_routes


def test_namespaces_never_read_each_other(client: TestClient) -> None:
    mine = started(client, **{"X-Webmem-Namespace": "agent-a"})
    theirs = started(client, goal="Find a pie", **{"X-Webmem-Namespace": "agent-b"})
    listed = client.get("/v1/runs", headers={"X-Webmem-Namespace": "agent-a"}).json()["runs"]
    assert [run["run_id"] for run in listed] == [mine["run_id"]]
    assert_problem(client.get(f"/v1/runs/{theirs['run_id']}", headers={"X-Webmem-Namespace": "agent-a"}), 404,
                   "RunNotFound")
    assert_problem(client.post(f"/v1/runs/{theirs['run_id']}/steps", json={"action": "click"},
                               headers={"X-Webmem-Namespace": "agent-a"}), 404, "RunNotFound")
    assert client.get("/v1/runs").json()["runs"] == []  # the default namespace has none


TRACED = """
import json, sys
from fastapi import FastAPI
from fastapi.testclient import TestClient
from opentelemetry import trace

started = []


class RecordingTracer(trace.NoOpTracer):
    def start_span(self, name, *args, **kwargs):
        started.append(name)
        return super().start_span(name, *args, **kwargs)

    def start_as_current_span(self, name, *args, **kwargs):
        started.append(name)
        return super().start_as_current_span(name, *args, **kwargs)


class RecordingProvider(trace.TracerProvider):
    def get_tracer(self, *args, **kwargs):
        return RecordingTracer()


trace.set_tracer_provider(RecordingProvider())  # as an application that set OpenTelemetry up would
from webmem.server import create_app
from webmem.server.hot_path import HotPath

with TestClient(create_app(sys.argv[1])) as client:
    assert client.post("/v1/runs", json={"goal": "Buy a lamp", "start_url": "https://shop.example.org/"}).status_code == 201
    assert client.get("/v1/health").status_code == 200
ours = len(started)
plain = FastAPI()
plain.get("/ping")(lambda: {"ok": True})
with TestClient(plain) as client:
    client.get("/ping")
print(json.dumps({"webmem": ours, "plain_fastapi": len(started) - ours}))
"""


def test_the_server_records_no_telemetry_even_where_opentelemetry_is_set_up(memory_dir: Path) -> None:
    done = subprocess.run([sys.executable, "-c", TRACED, str(memory_dir)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    spans = json.loads(done.stdout.strip().splitlines()[-1])
    assert spans["webmem"] == 0
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters:  # FastAPI traces requests by itself
        assert spans["plain_fastapi"] > 0  # the recorder sees what FastAPI would send
