function tickets() { return JSON.parse(localStorage.getItem("tickets") || "[]"); }
function keep(list) { localStorage.setItem("tickets", JSON.stringify(list)); show(); }
function show() {
  const list = document.getElementById("tickets");
  list.replaceChildren(...tickets().map(t => {
    const item = document.createElement("li");
    item.textContent = `${t.summary} | ${t.owner} | ${t.priority} | ${t.status}`;
    return item;
  }));
}
function create(event) {
  event.preventDefault();
  const field = id => document.getElementById(id).value;
  keep([...tickets(), {summary: field("summary"), owner: field("owner"), priority: field("priority"), status: "open"}]);
  document.getElementById("result").textContent = `Created "${field("summary")}" for ${field("owner")} (${field("priority")})`;
}
function setStatus(event) {
  event.preventDefault();
  const title = document.getElementById("ticket").value, status = document.getElementById("status").value;
  const list = tickets(), found = list.find(t => t.summary === title);
  if (found) { found.status = status; keep(list); }
  document.getElementById("result").textContent = found ? `"${title}" is now ${status}` : `No ticket "${title}"`;
}
window.addEventListener("DOMContentLoaded", show);
