// The viewer's pictures, drawn as inline SVG (no library): a site's figures per day, and a site's latest runs.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

function svgEl(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  return node;
}

function chart(days) {
  const width = 640, height = 200, pad = 32;
  const svg = svgEl("svg");
  svg.setAttribute("class", "chart"); svg.setAttribute("width", width); svg.setAttribute("height", height);
  svg.setAttribute("role", "img"); svg.setAttribute("aria-label", "What memory saved over time");
  const maxSteps = Math.max(1, ...days.map((d) => d.steps_per_run));
  const x = (i) => pad + (days.length < 2 ? (width - 2 * pad) / 2 : i * (width - 2 * pad) / (days.length - 1));
  const series = [["steps_per_run", "#2563eb", (v) => v / maxSteps], ["replay_rate", "#16a34a", (v) => v],
                  ["success_rate", "#f59e0b", (v) => v]];
  for (const [key, colour, scale] of series) {
    const points = days.map((d, i) => `${x(i)},${height - pad - scale(d[key]) * (height - 2 * pad)}`).join(" ");
    const line = svgEl("polyline");
    line.setAttribute("points", points); line.setAttribute("fill", "none"); line.setAttribute("stroke", colour);
    line.setAttribute("stroke-width", "2"); line.setAttribute("data-series", key);
    svg.append(line);
  }
  days.forEach((d, i) => {
    const label = svgEl("text");
    label.setAttribute("x", x(i)); label.setAttribute("y", height - 10); label.setAttribute("text-anchor", "middle");
    label.textContent = d.day.slice(5); svg.append(label);
  });
  const legend = el("p", { class: "legend" },
    el("span", {}, el("i", { style: "background:#2563eb" }), `steps per run (max ${maxSteps.toFixed(1)})`),
    el("span", {}, el("i", { style: "background:#16a34a" }), "replayed without the model"),
    el("span", {}, el("i", { style: "background:#f59e0b" }), "succeeded"));
  return [svg, legend];
}

const OUTCOME_COLOURS = { replayed: "#16a34a", "handed over": "#0891b2", "replay failed": "#a4161a",
                          succeeded: "#f59e0b", failed: "#a4161a", unfinished: "#9ca3af" };

function outcome(point) {
  if (point.replay === "replayed") return "replayed";
  if (point.replay === "handed_over") return "handed over";
  if (point.replay === "replay_failed") return "replay failed";
  return point.success === true ? "succeeded" : point.success === false ? "failed" : "unfinished";
}

// A site's latest finished runs, oldest first: steps per run, the steps the model decided, a dot per run.
function runsChart(domain, points) {
  const width = 260, height = 72, pad = 8;
  const svg = svgEl("svg", { class: "runs-chart", width, height, role: "img", "aria-label": `${domain}: steps per run` });
  const most = Math.max(1, ...points.map((p) => p.steps));
  const x = (i) => pad + (points.length < 2 ? (width - 2 * pad) / 2 : i * (width - 2 * pad) / (points.length - 1));
  const y = (v) => height - pad - (v / most) * (height - 2 * pad);
  for (const [key, colour, dash] of [["steps", "#2563eb", ""], ["decided", "#7c3aed", "4 3"]]) {
    svg.append(svgEl("polyline", { points: points.map((p, i) => `${x(i)},${y(p[key])}`).join(" "), fill: "none",
                                   stroke: colour, "stroke-width": "1.5", "stroke-dasharray": dash, "data-series": key }));
  }
  points.forEach((point, i) => {
    const said = outcome(point);
    const dot = svgEl("circle", { cx: x(i), cy: y(point.steps), r: 4, fill: OUTCOME_COLOURS[said], "data-outcome": said });
    const title = svgEl("title");
    title.textContent = `${point.started_at.replace("T", " ").slice(0, 16)}: ${point.steps} steps, ` +
                        `${point.decided} decided by the model; ${said}`;
    dot.append(title);
    const to = svgEl("a", { href: `#/run/${point.run_id}` });
    to.append(dot);
    svg.append(to);
  });
  return svg;
}

function percent(part, whole) { return `${whole ? Math.round(100 * part / whole) : 0}%`; }

// A site's card on the first page: its latest runs pictured, what replay and success came to, a link to the site.
function siteCard(site) {
  const points = site.recent;
  const first = points[0], last = points[points.length - 1];
  const replayed = points.filter((p) => p.replay === "replayed").length;
  const succeeded = points.filter((p) => p.success === true).length;
  return el("figure", { class: "site-card" },
    el("figcaption", {}, el("a", { href: `#/site/${encodeURIComponent(site.domain)}` }, site.domain)),
    runsChart(site.domain, points),
    el("p", { class: "muted" }, `${points.length} run${points.length === 1 ? "" : "s"}: ${percent(replayed, points.length)} replayed, ` +
       `${percent(succeeded, points.length)} succeeded; steps per run ${first.steps} → ${last.steps}, ` +
       `decided by the model ${first.decided} → ${last.decided}`));
}

function siteCards(sites) {
  const pictured = sites.filter((site) => site.recent.length).slice(0, 6);
  if (!pictured.length) return [];
  const legend = el("p", { class: "legend" },
    el("span", {}, el("i", { style: "background:#2563eb" }), "steps per run"),
    el("span", {}, el("i", { style: "background:#7c3aed" }), "steps the model decided"),
    ...["replayed", "handed over", "succeeded", "failed"].map((said) =>
      el("span", {}, el("b", { class: "dot", style: `background:${OUTCOME_COLOURS[said]}` }), said)));
  return [el("h2", {}, "What memory saved, per site"), el("div", { class: "site-cards" }, pictured.map(siteCard)), legend];
}
