// A webmem client in Node.js with nothing but fetch: record a run through `webmem serve`, read its context.
//
//   webmem serve --port 8765 &
//   node examples/node/record_run.mjs http://127.0.0.1:8765 [token]   (or the token in $WEBMEM_API_TOKEN)
//
// Prints one JSON line: the run id, the context the next turn would get, and the finished run's status.
// On failure, prints one line to stderr and exits with 1.

const [base = "http://127.0.0.1:8765", token = process.env.WEBMEM_API_TOKEN] = process.argv.slice(2);
const headers = { "content-type": "application/json", "x-webmem-namespace": process.env.WEBMEM_NAMESPACE ?? "default" };
if (token) headers.authorization = `Bearer ${token}`;

class Refused extends Error {}

async function call(method, path, body) {
  let response;
  try {
    response = await fetch(`${base}/v1${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
  } catch (error) {
    throw new Refused(`cannot reach webmem at ${base}: ${error.cause?.code ?? error.cause?.message ?? error.message}`);
  }
  const data = await response.json().catch(() => ({}));
  if (response.status === 401) {
    throw new Refused(token ? `webmem refused the token (401 Unauthorized): give the one \`webmem serve\` was started with`
                            : "webmem needs a token (401 Unauthorized): give it as the second argument or in $WEBMEM_API_TOKEN");
  }
  if (!response.ok) throw new Refused(`${method} /v1${path}: ${response.status} ${data.title ?? ""}: ${data.detail ?? ""}`);
  return data; // errors come as problem+json: title and detail
}

async function recordRun() {
  const site = "https://news.example.org/";
  const run = await call("POST", "/runs", { goal: "Subscribe node@example.org to the newsletter", start_url: site });
  await call("POST", `/runs/${run.run_id}/steps`, { action: "goto", value: site });
  await call("POST", `/runs/${run.run_id}/steps`, { action: "fill", target: 'textbox "Email"', selector: "#email",
                                                   value: "node@example.org", url: site });
  const failed = await call("POST", `/runs/${run.run_id}/steps`, { action: "click", target: 'button "Subscribe"',
                                                                 url: site, ok: false, error: "Timeout 5000ms exceeded" });
  await call("POST", `/runs/${run.run_id}/steps`, { action: "click", target: 'button "Subscribe"', url: site });
  const context = await call("GET", `/runs/${run.run_id}/context?budget_tokens=500`);
  const finished = await call("POST", `/runs/${run.run_id}/finish`, { success: true, outcome: "Subscribed" });
  console.log(JSON.stringify({ run_id: run.run_id, tips: failed.tips, context_tokens: context.tokens,
                               status: finished.run.status, steps: finished.steps }));
}

try {
  await recordRun();
} catch (error) {
  console.error(`record_run: ${error instanceof Refused ? error.message : String(error).split("\n")[0]}`);
  process.exitCode = 1;
}
