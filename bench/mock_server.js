// A fast mock OpenAI-compatible streaming server for load-generator benchmarks.
//
// POST /v1/chat/completions and /v1/completions stream `max_tokens` (or
// `max_completion_tokens`) chunks as SSE: the first after --first-ms, then one every --gap-ms,
// then a finish chunk, a usage chunk and `data: [DONE]`. With --gap-ms 0 it writes as fast as
// the client reads, --burst chunks per write, waiting for `drain` (so its rate is the client's).
// Every write time is epoch ms (performance.timeOrigin + performance.now()): comparable with
// agentload's clock. GET /stats gives counters; GET /log returns and clears per-request logs
// (with --log: arrival, first and last write, and every token write time).
//
//   node bench/mock_server.js --port 0 --first-ms 100 --gap-ms 50 [--log] [--burst 16]
//       [--workers N]
//
// With --workers N (> 1) it is N processes sharing the port (Node's cluster module: the
// primary accepts connections and hands them out in turn), for machines where one core cannot
// serve the load under test; /stats and /log then answer for all of them.
// Prints one line `listening <port>` on stdout when ready.
"use strict";

const cluster = require("cluster");
const http = require("http");
const { performance } = require("perf_hooks");

function parseArgs(argv) {
  const opts = {
    port: 0, host: "127.0.0.1", firstMs: 0, gapMs: 0, burst: 16, log: false, workers: 1,
  };
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i];
    const next = () => argv[++i];
    if (arg === "--port") opts.port = Number(next());
    else if (arg === "--host") opts.host = next();
    else if (arg === "--first-ms") opts.firstMs = Number(next());
    else if (arg === "--gap-ms") opts.gapMs = Number(next());
    else if (arg === "--burst") opts.burst = Math.max(1, Number(next()));
    else if (arg === "--log") opts.log = true;
    else if (arg === "--workers") opts.workers = Math.max(1, Number(next()) | 0);
    else {
      process.stderr.write(`mock_server: unknown argument ${arg}\n`);
      process.exit(2);
    }
  }
  return opts;
}

const opts = parseArgs(process.argv);
const DEFAULT_TOKENS = 16;
const TOKEN_TEXT = " tok";
const origin = performance.timeOrigin;
const epochMs = () => origin + performance.now();

function chunkBase(api, model) {
  const object = api === "chat" ? "chat.completion.chunk" : "text_completion";
  return { id: "mock", object, created: 0, model };
}

// Pre-serialised pieces per (api, model): one token event, the finish event, the usage event.
const templates = new Map();
function template(api, model) {
  const key = api + "\u0000" + model;
  let t = templates.get(key);
  if (t) return t;
  const base = chunkBase(api, model);
  const choice = api === "chat"
    ? { index: 0, delta: { content: TOKEN_TEXT }, finish_reason: null }
    : { index: 0, text: TOKEN_TEXT, finish_reason: null };
  const finish = api === "chat"
    ? { index: 0, delta: {}, finish_reason: "length" }
    : { index: 0, text: "", finish_reason: "length" };
  const token = "data: " + JSON.stringify({ ...base, choices: [choice] }) + "\n\n";
  t = {
    token,
    burst: token.repeat(opts.burst),
    finish: "data: " + JSON.stringify({ ...base, choices: [finish] }) + "\n\n",
    usagePrefix: "data: " + JSON.stringify({ ...base, choices: [] }).slice(0, -1) + ',"usage":',
  };
  templates.set(key, t);
  return t;
}

const stats = { requests: 0, done: 0, open: 0, chunks: 0, errors: 0 };
let logs = [];

function promptTokens(body) {
  // A rough count (4 bytes a token): the mock does not tokenize.
  return Math.max(1, Math.round(body.length / 4));
}

function finish(res, t, tokens, prompt, entry) {
  const usage = { prompt_tokens: prompt, completion_tokens: tokens,
    total_tokens: prompt + tokens, prompt_tokens_details: { cached_tokens: 0 } };
  res.end(t.finish + t.usagePrefix + JSON.stringify(usage) + "}\n\ndata: [DONE]\n\n");
  stats.open--;
  stats.done++;
  if (entry) {
    entry.t_end = epochMs();
    logs.push(entry);
  }
}

// Paced streams share one clock: a timing wheel of 1 ms slots, served by one timer, so
// thousands of streams cost one wake-up per millisecond instead of one timer per token.
const wheel = new Map(); // slot (integer ms) -> array of steps due then
let ticking = false;

function schedule(due, step) {
  const slot = Math.ceil(due);
  let list = wheel.get(slot);
  if (list === undefined) { list = []; wheel.set(slot, list); }
  list.push(step);
  if (!ticking) { ticking = true; setTimeout(tick, Math.max(0, slot - performance.now())); }
}

function tick() {
  const now = performance.now();
  let next = Infinity;
  for (const [slot, list] of wheel) {
    if (slot <= now) {
      wheel.delete(slot);
      for (const step of list) step();
    } else if (slot < next) {
      next = slot;
    }
  }
  for (const slot of wheel.keys()) if (slot < next) next = slot;
  if (next === Infinity) { ticking = false; return; }
  setTimeout(tick, Math.max(0, next - performance.now()));
}

function paced(res, t, tokens, prompt, entry, arrival) {
  // Token k is due at arrival + first + k*gap, planned from the arrival, so lateness does
  // not accumulate.
  let k = 0;
  const step = () => {
    if (res.destroyed) { stats.open--; stats.errors++; return; }
    res.write(t.token);
    stats.chunks++;
    if (entry) {
      const now = epochMs();
      if (k === 0) entry.t_first = now;
      entry.writes.push(now);
    }
    k++;
    if (k >= tokens) { finish(res, t, tokens, prompt, entry); return; }
    schedule(arrival + opts.firstMs + k * opts.gapMs, step);
  };
  schedule(arrival + opts.firstMs, step);
}

function burst(res, t, tokens, prompt, entry) {
  // As fast as the client reads: `burst` events per write, wait for drain when buffered.
  let left = tokens;
  const pump = () => {
    while (left > 0) {
      if (res.destroyed) { stats.open--; stats.errors++; return; }
      const n = Math.min(left, opts.burst);
      const piece = n === opts.burst ? t.burst : t.token.repeat(n);
      if (entry && left === tokens) entry.t_first = epochMs();
      left -= n;
      stats.chunks += n;
      if (!res.write(piece)) {
        if (left > 0) { res.once("drain", pump); return; }
      }
    }
    finish(res, t, tokens, prompt, entry);
  };
  if (opts.firstMs > 0) setTimeout(pump, opts.firstMs);
  else pump();
}

function handleCompletion(req, res, api, raw) {
  const arrival = performance.now();
  let body;
  try {
    body = JSON.parse(raw);
  } catch (e) {
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "body is not JSON" } }));
    stats.errors++;
    return;
  }
  const tokens = Math.max(1, Number(body.max_tokens ?? body.max_completion_tokens
    ?? DEFAULT_TOKENS) | 0);
  const model = typeof body.model === "string" ? body.model : "mock";
  const t = template(api, model);
  stats.requests++;
  stats.open++;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const entry = opts.log ? {
    id: req.headers["x-request-id"] || String(stats.requests),
    t_arrival: origin + arrival, t_first: null, t_end: null, writes: [],
  } : null;
  const prompt = promptTokens(raw);
  if (opts.gapMs > 0) paced(res, t, tokens, prompt, entry, arrival);
  else burst(res, t, tokens, prompt, entry);
}

// --- cluster mode: the primary gathers /stats and /log from every worker ---------------------

const clustered = opts.workers > 1;
const pending = new Map(); // request number -> response waiting for the gathered answer
let asked = 0;

function answerLocal(what) {
  if (what === "stats") return { ...stats, t: epochMs() };
  const mine = logs;
  logs = [];
  return mine;
}

function merge(what, parts) {
  if (what === "log") return [].concat(...parts);
  const total = { requests: 0, done: 0, open: 0, chunks: 0, errors: 0, t: epochMs() };
  for (const p of parts) for (const k of Object.keys(stats)) total[k] += p[k];
  total.per_process = parts.map((p) => p.requests);
  return total;
}

function answer(res, what) {
  res.writeHead(200, { "content-type": "application/json" });
  if (!clustered) { res.end(JSON.stringify(answerLocal(what))); return; }
  const n = ++asked;
  pending.set(n, res);
  process.send({ type: "gather", what, n });
}

if (clustered && cluster.isWorker) {
  process.on("message", (m) => {
    if (m.type === "dump") process.send({ type: "dumped", id: m.id, data: answerLocal(m.what) });
    else if (m.type === "gathered") {
      const res = pending.get(m.n);
      pending.delete(m.n);
      if (res) res.end(JSON.stringify(m.data));
    }
  });
}

function runPrimary() {
  let ready = 0;
  let port = null;
  let gathers = 0;
  const open = new Map(); // gather id -> {what, n, from, parts, left}
  const workers = [];
  for (let k = 0; k < opts.workers; k++) workers.push(cluster.fork());
  cluster.on("listening", (worker, address) => {
    port = address.port;
    if (++ready === opts.workers) process.stdout.write(`listening ${port}\n`);
  });
  for (const w of workers) {
    w.on("message", (m) => {
      if (m.type === "gather") {
        const id = ++gathers;
        open.set(id, { what: m.what, n: m.n, from: w, parts: [], left: workers.length });
        for (const other of workers) other.send({ type: "dump", what: m.what, id });
      } else if (m.type === "dumped") {
        const g = open.get(m.id);
        if (!g) return;
        g.parts.push(m.data);
        if (--g.left === 0) {
          open.delete(m.id);
          g.from.send({ type: "gathered", n: g.n, data: merge(g.what, g.parts) });
        }
      }
    });
  }
  const stop = () => { for (const w of workers) w.kill("SIGTERM"); process.exit(0); };
  process.on("SIGTERM", stop);
}

if (clustered && cluster.isPrimary) {
  cluster.schedulingPolicy = cluster.SCHED_RR;
  runPrimary();
} else {
  startServer();
}

function startServer() {
const server = http.createServer({ noDelay: true, keepAlive: true }, (req, res) => {
  const url = req.url || "";
  if (req.method === "GET") {
    if (url.startsWith("/stats")) {
      answer(res, "stats");
    } else if (url.startsWith("/log")) {
      answer(res, "log");
    } else if (url.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ object: "list", data: [{ id: "mock", object: "model" }] }));
    } else if (url.startsWith("/health")) {
      res.writeHead(200);
      res.end("ok");
    } else {
      res.writeHead(404);
      res.end();
    }
    return;
  }
  const api = url.endsWith("/chat/completions") ? "chat"
    : url.endsWith("/completions") ? "completions" : null;
  if (req.method !== "POST" || api === null) {
    res.writeHead(404);
    res.end();
    return;
  }
  const parts = [];
  req.on("data", (d) => parts.push(d));
  req.on("end", () => handleCompletion(req, res, api, Buffer.concat(parts).toString()));
});

server.keepAliveTimeout = 120000;
server.headersTimeout = 130000;
server.requestTimeout = 0;
server.maxHeadersCount = 100;
const BACKLOG = 65535; // thousands of streams connect at once: a short accept queue drops SYNs
server.listen(opts.port, opts.host, BACKLOG, () => {
  if (!clustered) process.stdout.write(`listening ${server.address().port}\n`);
});
process.on("SIGTERM", () => { server.close(); process.exit(0); });
}
