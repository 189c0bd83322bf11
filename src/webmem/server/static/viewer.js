// The webmem viewer: reads /v1 with the namespace and token given above; never writes.
"use strict";

const main = document.getElementById("main");
const settings = { namespace: sessionStorage.getItem("webmem.namespace") || "default",
                   token: sessionStorage.getItem("webmem.token") || "" };
// Kept in sessionStorage: through reloads and namespace switches, never past the browser session.
document.getElementById("namespace").value = settings.namespace;
document.getElementById("token").value = settings.token;

document.getElementById("settings").addEventListener("submit", (event) => {
  event.preventDefault();
  settings.namespace = document.getElementById("namespace").value.trim() || "default";
  settings.token = document.getElementById("token").value;
  sessionStorage.setItem("webmem.namespace", settings.namespace);
  sessionStorage.setItem("webmem.token", settings.token);
  route();
});

function headers() {
  const sent = { "X-Webmem-Namespace": settings.namespace };
  if (settings.token) sent.Authorization = `Bearer ${settings.token}`;
  return sent;
}

async function apiText(path) {
  const response = await fetch(`/v1${path}`, { headers: headers() });
  if (!response.ok) {
    const body = await response.json();
    throw new Error(`${body.title || response.status}: ${body.detail || ""}`);
  }
  return response.text();
}

async function api(path) {
  const response = await fetch(`/v1${path}`, { headers: headers() });
  const body = await response.json();
  if (!response.ok) throw new Error(`${body.title || response.status}: ${body.detail || ""}`);
  return body;
}

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children.flat()) node.append(child instanceof Node ? child : document.createTextNode(child ?? ""));
  return node;
}

function table(headings, rows) {
  return el("table", {}, el("thead", {}, el("tr", {}, headings.map((h) => el("th", {}, h)))),
            el("tbody", {}, rows.length ? rows : [el("tr", {}, el("td", { colspan: headings.length, class: "muted" }, "Nothing yet."))]));
}

function link(href, text) { return el("a", { href }, text); }
function when(text) { return text ? text.replace("T", " ").slice(0, 19) : ""; }
function status(run) { return el("span", { class: run.status }, run.status); }

async function runsPage(params) {
  const query = new URLSearchParams({ limit: "100" });
  if (params.get("domain")) query.set("domain", params.get("domain"));
  if (params.get("status")) query.set("status", params.get("status"));
  const [{ runs }, { sites }] = await Promise.all([api(`/runs?${query}`), api("/sites")]);
  const shown = params.get("domain") ? sites.filter((site) => site.domain === params.get("domain")) : sites;
  const domain = el("input", { placeholder: "domain", value: params.get("domain") || "" });
  const state = el("select", {}, ["", "running", "completed", "failed"].map((s) => {
    const option = el("option", { value: s }, s || "any status");
    if (s === (params.get("status") || "")) option.selected = true;
    return option;
  }));
  const filter = el("form", { class: "filters" }, domain, state, el("button", { type: "submit" }, "Filter"));
  filter.addEventListener("submit", (event) => {
    event.preventDefault();
    const next = new URLSearchParams();
    if (domain.value.trim()) next.set("domain", domain.value.trim());
    if (state.value) next.set("status", state.value);
    location.hash = `#/?${next}`;
  });
  return [el("h1", {}, "Runs"), siteCards(shown), filter, table(["Started", "Goal", "Site", "Status", "Steps", "Replay"], runs.map((run) =>
    el("tr", {}, el("td", {}, when(run.started_at)), el("td", {}, link(`#/run/${run.run_id}`, run.goal)),
       el("td", {}, link(`#/site/${encodeURIComponent(run.domain)}`, run.domain)), el("td", {}, status(run)),
       el("td", {}, String(run.turn_count)), el("td", {}, run.replay ? run.replay.outcome : ""))))];
}

async function runPage(id) {
  const [{ run, steps }, { runs: chain }] = await Promise.all([api(`/runs/${id}`), api(`/runs/${id}/lineage`)]);
  return [
    el("h1", {}, run.goal), el("p", {}, status(run), " on ", link(`#/site/${encodeURIComponent(run.domain)}`, run.domain),
       `, started ${when(run.started_at)}. `, run.summary || ""),
    replaySection(run.replay),
    el("h2", {}, "Steps"),
    table(["#", "Action", "Target", "Value", "Page", "Result", "Error"], steps.map((step, index) =>
      el("tr", {}, el("td", {}, String(index + 1)), el("td", {}, step.action), el("td", {}, el("code", {}, step.target || step.selector || "")),
         el("td", {}, step.value ?? ""), el("td", { class: "muted" }, step.url || ""),
         el("td", { class: step.ok ? "ok" : "failed" }, step.ok ? "ok" : "failed"), el("td", { class: "error" }, step.error || "")))),
    el("h2", {}, "Lineage"),
    table(["Run", "Goal", "Session", "Status"], chain.map((item) =>
      el("tr", {}, el("td", {}, link(`#/run/${item.run_id}`, item.run_id)), el("td", {}, item.goal),
         el("td", { class: "muted" }, item.session_id || ""), el("td", {}, status(item))))),
  ];
}

// What became of the replay a run started with, step by step.
function replaySection(report) {
  if (!report) return [];
  const trajectory = el("code", {}, report.trajectory_id);
  const why = report.reason ? `: ${report.reason}` : ".";
  const said = report.outcome === "replayed" ? ["Replayed ", String(report.step), " steps of ", trajectory, " without the model."]
    : report.outcome === "handed_over" ? ["The replay of ", trajectory, ` handed over at step ${report.step} to the model${why}`]
    : ["The replay of ", trajectory, ` failed at step ${report.step}${why}`];
  return [el("h2", {}, "Replay"), el("p", { "data-testid": "replay-outcome" }, ...said),
          table(["Step", "Action", "Target", "Replayed", "Why", "Page"], report.steps.map((step) =>
            el("tr", {}, el("td", {}, String(step.step)), el("td", {}, step.action), el("td", {}, el("code", {}, step.target || "")),
               el("td", { class: ["hit", "healed"].includes(step.status) ? "ok" : "failed" }, step.status),
               el("td", {}, step.reason || ""), el("td", { class: "muted" }, step.url || ""))))];
}

async function sitePage(domain) {
  const path = encodeURIComponent(domain);
  const [history, { facts }, { selectors }, { trajectories }, { lessons }, { origins }] = await Promise.all([
    api(`/sites/${path}/history`), api(`/sites/${path}/facts`), api(`/sites/${path}/selectors`),
    api(`/trajectories?domain=${path}`), api(`/lessons?domain=${path}`), api(`/sites/${path}/wording`)]);
  const acts = origins.flatMap((o) => o.acts.map((act) => ({ origin: o.origin, ...act })));
  const options = origins.flatMap((o) => o.options.map((option) => ({ origin: o.origin, ...option })));
  return [
    el("h1", {}, domain), el("h2", {}, "What memory saved, per day"), chart(history.days),
    el("h2", {}, "Facts"), table(["Type", "Key", "Value", "Confidence"], facts.map((f) =>
      el("tr", {}, el("td", {}, f.type), el("td", {}, f.key), el("td", {}, f.value), el("td", {}, f.confidence.toFixed(2))))),
    el("h2", {}, "Selectors"), table(["Element", "Selector", "Successes"], selectors.map((s) =>
      el("tr", {}, el("td", {}, el("code", {}, s.element)), el("td", {}, el("code", {}, s.stable_selector || "")), el("td", {}, String(s.success_count))))),
    el("h2", {}, "Trajectories"), trajectoryTable(trajectories),
    el("h2", {}, "Words that name one act here"), table(["One act", "Taught by", "Origin"], acts.map((a) =>
      el("tr", {}, el("td", {}, a.words.map((word) => `"${word}"`).join(" = ")), el("td", {}, el("code", {}, a.trajectory_id)),
         el("td", { class: "muted" }, a.origin)))),
    el("h2", {}, "Options that are values of a task"), table(["Option", "Read as", "Field", "Task", "Origin"], options.map((o) =>
      el("tr", {}, el("td", {}, o.option), el("td", {}, o.value), el("td", {}, o.field), el("td", {}, o.task),
         el("td", { class: "muted" }, o.origin)))),
    el("h2", {}, "Lessons"), lessonTable(lessons),
  ];
}

function trajectoryTable(trajectories) {
  return table(["Recorded", "Goal", "Template", "Steps", "Run", "Script"], trajectories.map((t) =>
    el("tr", {}, el("td", {}, when(t.created_at)), el("td", {}, t.goal), el("td", { class: "muted" }, t.goal_template || ""),
       el("td", {}, String(t.step_count)), el("td", {}, t.run_id ? link(`#/run/${t.run_id}`, t.run_id) : ""),
       el("td", {}, link(`#/script/${t.id}?lang=python`, "Python"), " ", link(`#/script/${t.id}?lang=typescript`, "TypeScript")))));
}

function lessonTable(lessons) {
  return table(["Lesson", "Category", "Site", "Used", "Helpful", "Unhelpful"], lessons.map((l) =>
    el("tr", {}, el("td", {}, l.lesson), el("td", {}, l.category), el("td", {}, l.domain || "any"),
       el("td", {}, String(l.use_count)), el("td", {}, String(l.helpful_count)), el("td", {}, String(l.unhelpful_count)))));
}

async function scriptPage(id, params) {
  const lang = params.get("lang") === "typescript" ? "typescript" : "python";
  const text = await apiText(`/scripts/${encodeURIComponent(id)}?lang=${lang}`);
  const name = lang === "python" ? `${id}.py` : `${id}.spec.ts`;
  const save = el("button", { type: "button" }, `Download ${name}`);
  save.addEventListener("click", () => {
    const anchor = el("a", { href: URL.createObjectURL(new Blob([text], { type: "text/plain" })), download: name });
    anchor.click();
  });
  return [el("h1", {}, `Playwright script (${lang})`), el("p", {}, save), el("pre", { class: "script" }, text)];
}

async function sitesPage() {
  const { sites } = await api("/sites");
  return [el("h1", {}, "Sites"), table(["Site", "Runs", "Succeeded", "Replayed", "Trajectories", "Last run"], sites.map((s) =>
    el("tr", {}, el("td", {}, link(`#/site/${encodeURIComponent(s.domain)}`, s.domain)), el("td", {}, String(s.runs)),
       el("td", {}, String(s.succeeded)), el("td", {}, String(s.replayed)), el("td", {}, String(s.trajectories)),
       el("td", {}, when(s.last_run)))))];
}

async function trajectoriesPage(params) {
  const { trajectories } = await api("/trajectories?limit=100");
  const goal = el("input", { name: "goal", placeholder: "a new run's goal", size: "40", value: params.get("goal") || "" });
  const url = el("input", { name: "url", placeholder: "its start URL", size: "30", value: params.get("url") || "" });
  const ask = el("form", { class: "filters", "aria-label": "Which trajectory would a run get" }, goal, url,
                 el("button", { type: "submit" }, "Match"));
  ask.addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = `#/trajectories?${new URLSearchParams({ goal: goal.value.trim(), url: url.value.trim() })}`;
  });
  const page = [el("h1", {}, "Trajectories"), el("h2", {}, "Which would a new run get, and why"), ask];
  if (params.get("goal") && params.get("url")) page.push(await matchReport(params.get("goal"), params.get("url")));
  return [...page, el("h2", {}, "Recorded"), trajectoryTable(trajectories)];
}

async function matchReport(goal, url) {
  const found = await api(`/trajectories/match?${new URLSearchParams({ goal, url, limit: "10" })}`);
  const verdict = found.best ? `It would get ${found.best}: ${found.reason}` : `It would get none: ${found.reason}`;
  return [el("p", { role: "status" }, verdict),
          table(["Goal", "Similarity", "Score", "Offered", "Why"], found.candidates.map((c) =>
            el("tr", {}, el("td", {}, c.goal), el("td", {}, c.similarity.toFixed(2)), el("td", {}, c.score.toFixed(2)),
               el("td", { class: c.eligible ? "ok" : "muted" }, c.eligible ? "yes" : "no"),
               el("td", {}, [c.why, c.reason].filter(Boolean).join(" — "))))),
          found.replay_unavailable ? el("p", { class: "muted" }, `Replay: ${found.replay_unavailable}`) : ""];
}

async function lessonsPage() {
  const { lessons } = await api("/lessons");
  return [el("h1", {}, "Lessons"), lessonTable(lessons)];
}

async function route() {
  const [path, query = ""] = (location.hash.slice(1) || "/").split("?");
  const params = new URLSearchParams(query);
  let page;
  try {
    if (path.startsWith("/run/")) page = await runPage(decodeURIComponent(path.slice(5)));
    else if (path.startsWith("/site/")) page = await sitePage(decodeURIComponent(path.slice(6)));
    else if (path === "/sites") page = await sitesPage();
    else if (path === "/trajectories") page = await trajectoriesPage(params);
    else if (path === "/lessons") page = await lessonsPage();
    else if (path.startsWith("/script/")) page = await scriptPage(decodeURIComponent(path.slice(8)), params);
    else page = await runsPage(params);
  } catch (error) {
    page = [el("h1", {}, "Cannot read the memory"), el("p", { class: "failed", role: "alert" }, String(error.message))];
  }
  main.replaceChildren(...page.flat());
}

window.addEventListener("hashchange", route);
route();
