// The harness live view: a run list, a run view fed by the run's event
// stream (SSE, resumed with Last-Event-ID), and bench reports as charts.
// Everything the agent wrote is put in the page as text, never as HTML.
"use strict";

const main = document.getElementById("main");
const tokenInput = document.getElementById("token");
tokenInput.value = localStorage.getItem("harness-token") || "";
tokenInput.addEventListener("change", () => localStorage.setItem("harness-token", tokenInput.value.trim()));

function token() { return (localStorage.getItem("harness-token") || "").trim(); }

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined) e.append(kid);
  return e;
}

async function api(path, opts = {}) {
  const headers = Object.assign({}, opts.headers || {});
  if (token()) headers["Authorization"] = "Bearer " + token();
  const res = await fetch(path, Object.assign({}, opts, { headers }));
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || res.status + " " + res.statusText);
  return body;
}

function withToken(url) {
  const t = token();
  return t ? url + (url.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(t) : url;
}

const fmt = {
  ms(ms) {
    if (ms === undefined || ms === null) return "–";
    if (ms < 1000) return ms + " ms";
    const s = ms / 1000;
    if (s < 60) return s.toFixed(1) + " s";
    return Math.floor(s / 60) + "m" + String(Math.round(s % 60)).padStart(2, "0") + "s";
  },
  n(v) { return v ? v.toLocaleString("en") : "0"; },
  count(n, noun) { return n + " " + noun + (n === 1 ? "" : "s"); },
  usd(v, est) { return v === undefined || v === null ? "–" : (est ? "~" : "") + "$" + v.toFixed(v < 0.01 ? 5 : 4); },
  time(t) { const d = new Date(t); return isNaN(d) ? "" : d.toLocaleString(); },
};

// ---- router -------------------------------------------------------------

let cleanup = [];
function route() {
  cleanup.forEach((f) => f());
  cleanup = [];
  main.replaceChildren();
  const p = location.pathname;
  let m;
  if ((m = p.match(/^\/runs\/([^/]+)$/))) return runView(decodeURIComponent(m[1]));
  if ((m = p.match(/^\/bench\/([^/]+)$/))) return benchView(decodeURIComponent(m[1]));
  if (p === "/bench") return benchList();
  return runList();
}
function go(path) { history.pushState(null, "", path); route(); }
document.addEventListener("click", (e) => {
  const a = e.target.closest("a");
  if (a && a.origin === location.origin && !a.target && !e.metaKey && !e.ctrlKey && a.pathname.match(/^\/(runs|bench|$)/) && !a.pathname.startsWith("/api/")) {
    e.preventDefault();
    go(a.pathname + a.search);
  }
});
window.addEventListener("popstate", route);

// ---- run list -----------------------------------------------------------

function runList() {
  main.append(el("h1", { text: "Runs" }), newRunForm());
  const table = el("table", { id: "runs" },
    el("thead", {}, el("tr", {}, ["run", "agent", "model", "status", "started", "duration", "tokens in/out", "cost", "tools", "prompt"].map((h) => el("th", { text: h })))),
    el("tbody"));
  const note = el("p", { class: "muted" });
  main.append(table, note);
  const tbody = table.querySelector("tbody");
  async function refresh() {
    try {
      const { runs } = await api("/api/runs?limit=200");
      tbody.replaceChildren(...runs.map(runRow));
      note.textContent = runs.length ? "" : "No runs yet: start one above, or run `harness run`.";
    } catch (err) { note.textContent = "Could not list runs: " + err.message; }
  }
  refresh();
  const timer = setInterval(refresh, 1500);
  cleanup.push(() => clearInterval(timer));
}

function runRow(r) {
  const tools = Object.entries(r.tools_by_kind || {}).map(([k, v]) => k + " " + v).join(", ");
  return el("tr", { "data-run": r.run },
    el("td", { class: "mono" }, el("a", { href: "/runs/" + encodeURIComponent(r.run), text: r.run })),
    el("td", { text: r.agent }), el("td", { class: "mono", text: r.model || "" }),
    el("td", {}, el("span", { class: "status " + r.status, text: r.status + (r.live ? " ●" : "") })),
    el("td", { text: fmt.time(r.start) }), el("td", { class: "num", text: fmt.ms(r.duration_ms) }),
    el("td", { class: "num", text: fmt.n(r.usage.input_tokens) + " / " + fmt.n(r.usage.output_tokens) }),
    el("td", { class: "num", text: fmt.usd(r.cost_usd, r.cost_estimated) }),
    el("td", { text: (r.tool_calls || 0) + (tools ? " (" + tools + ")" : "") }),
    el("td", { class: "muted", text: r.meta_error ? "(meta " + r.meta_error + ")" : (r.prompt_preview || "").slice(0, 80) }));
}

function newRunForm() {
  const f = el("form", { class: "newrun" },
    el("select", { name: "agent" }, ["claude", "codex", "opencode", "gemini", "cursor"].map((a) => el("option", { value: a, text: a }))),
    el("input", { name: "model", placeholder: "model (optional)" }),
    el("input", { name: "cwd", placeholder: "working directory (optional)" }),
    el("input", { name: "mock", placeholder: "mock scenario (tool, edit, text…)" }),
    el("select", { name: "permissions" }, ["", "full-access", "read-only", "ask"].map((p) => el("option", { value: p, text: p || "permissions (default)" }))),
    el("label", {}, el("input", { name: "session", type: "checkbox" }), " live session (ACP: many turns; prompt optional)"),
    el("textarea", { name: "prompt", placeholder: "prompt" }),
    el("button", { type: "submit", text: "Start run" }),
    el("span", { class: "msgline" }));
  f.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = {};
    for (const k of ["agent", "model", "cwd", "mock", "prompt", "permissions"]) { const v = f.elements[k].value.trim(); if (v) body[k] = v; }
    if (f.elements.session.checked) body.session = true;
    try {
      const r = await api("/api/runs", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      go("/runs/" + encodeURIComponent(r.run));
    } catch (err) { f.querySelector(".msgline").textContent = err.message; }
  });
  return f;
}

// ---- run view -----------------------------------------------------------

function runView(id) {
  if (id === "latest") { // the newest run, named by its id from then on
    api("/api/runs/latest").then((r) => { history.replaceState(null, "", "/runs/" + encodeURIComponent(r.run) + location.search); route(); })
      .catch((err) => main.append(el("div", { class: "error", text: err.message })));
    return;
  }
  const debug = new URLSearchParams(location.search).has("debug");
  const title = el("h1", {}, "Run ", el("span", { class: "mono", text: id }));
  const cards = el("div", { class: "cards", id: "cards" });
  const conv = el("div", { id: "conversation" });
  const tools = el("div", { id: "tools" });
  const result = el("div", { id: "result-slot" });
  const controls = el("div", {},
    el("button", { id: "cancel", text: "Cancel run", onclick: async () => {
      try { await api("/api/runs/" + encodeURIComponent(id) + "/cancel", { method: "POST" }); } catch (err) { alert(err.message); }
    } }), " ",
    el("a", { href: "/runs/" + encodeURIComponent(id) + (debug ? "" : "?debug=1"), text: debug ? "hide debug" : "debug view (raw lines)" }));
  // A live session's commands (docs/serve.md, "Live sessions").
  const runAPI = "/api/runs/" + encodeURIComponent(id);
  const post = async (path, body) => {
    try {
      await api(runAPI + path, body === undefined ? { method: "POST" } : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      return true;
    } catch (err) { sessionLine.textContent = err.message; return false; }
  };
  const sessionLine = el("span", { class: "msgline" });
  const promptBox = el("textarea", { id: "prompt-box", placeholder: "next message" });
  const sessionBox = el("form", { id: "session", class: "newrun", hidden: true },
    promptBox,
    el("button", { id: "send", type: "submit", text: "Send" }),
    el("button", { id: "interrupt", type: "button", text: "Interrupt", onclick: () => post("/interrupt") }),
    el("button", { id: "end", type: "button", text: "End session", onclick: () => post("/end") }),
    sessionLine);
  sessionBox.addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = promptBox.value.trim();
    if (text && await post("/messages", { text })) { promptBox.value = ""; sessionLine.textContent = ""; }
  });
  main.append(title, cards, controls, sessionBox,
    el("div", { class: "cols" },
      el("section", {}, el("h2", { text: "Conversation" }), conv),
      el("section", {}, el("h2", { text: "Tools" }), tools)),
    result);
  document.body.dataset.stream = "connecting";

  const st = { start: null, agent: "", model: "", status: "running", usage: {}, cost: 0, costEst: false, tools: 0, events: 0, ended: false, resultMS: null, lastTS: null, warnings: 0 };
  const msgs = new Map(); // message_id → element (deltas, then the complete message)
  const calls = new Map(); // call_id → row
  let openMsg = null;
  let reasoning = null;
  const rawEvents = [];

  function card(k, v) { return el("div", { class: "card" }, el("div", { class: "k", text: k }), el("div", { class: "v", text: v })); }
  function renderCards() {
    const u = st.usage;
    const dur = st.resultMS !== null ? st.resultMS : (st.start ? Date.now() - st.start : null);
    cards.replaceChildren(card("agent", st.agent || "…"), card("model", st.model || "–"),
      el("div", { class: "card" }, el("div", { class: "k", text: "status" }), el("div", { class: "v status " + st.status, id: "status", text: st.status })),
      card("duration", fmt.ms(dur)), card("input tokens", fmt.n(u.input_tokens)), card("output tokens", fmt.n(u.output_tokens)),
      card("cache read", fmt.n(u.cache_read_tokens)), card("cost", st.cost ? fmt.usd(st.cost, st.costEst) : "–"),
      card("tool calls", String(st.tools)), card("events", String(st.events)));
  }
  const tick = setInterval(() => { if (!st.ended) renderCards(); }, 1000);
  cleanup.push(() => clearInterval(tick));

  api("/api/runs/" + encodeURIComponent(id)).then((r) => {
    st.start = st.start || Date.parse(r.start);
    st.agent = st.agent || r.agent; st.model = st.model || r.model || "";
    document.title = "harness · " + r.agent + " · " + id;
    if (r.session && !st.ended) sessionBox.hidden = false;
    renderCards();
  }).catch((err) => { main.prepend(el("div", { class: "error", text: err.message })); });

  function text(e, role) {
    let box = e.message_id ? msgs.get(e.message_id) : openMsg;
    if (!box) {
      box = el("div", { class: "msg " + role }, el("span", { class: "who", text: role + (e.parent_call_id ? " (sub-agent)" : "") }), el("span", { class: "body" }));
      conv.append(box);
      if (e.message_id) msgs.set(e.message_id, box);
    }
    return box;
  }

  function add(e) {
    st.events = e.seq || st.events;
    if (debug) rawEvents.push(e);
    switch (e.type) {
      case "session_start":
        st.start = e.ts; st.agent = e.agent; st.model = e.model || st.model; break;
      case "text_delta": {
        reasoning = null;
        const box = text(e, "assistant"); openMsg = box;
        box.querySelector(".body").textContent += e.text; break;
      }
      case "message": {
        reasoning = null;
        const box = e.role === "assistant" ? (e.message_id ? msgs.get(e.message_id) : openMsg) : null;
        if (box) box.querySelector(".body").textContent = e.text;
        else conv.append(el("div", { class: "msg " + e.role }, el("span", { class: "who", text: e.role + (e.parent_call_id ? " (sub-agent)" : "") }), el("span", { class: "body", text: e.text })));
        openMsg = null; break;
      }
      case "reasoning_delta":
        if (!reasoning) { reasoning = el("details", { class: "reasoning" }, el("summary", { text: "reasoning" }), el("pre")); conv.append(reasoning); }
        reasoning.querySelector("pre").textContent += e.text; break;
      case "reasoning":
        if (!reasoning) { reasoning = el("details", { class: "reasoning" }, el("summary", { text: "reasoning" }), el("pre")); conv.append(reasoning); }
        reasoning.querySelector("pre").textContent = e.text; reasoning = null; break;
      case "tool_start": {
        openMsg = null; reasoning = null; st.tools++;
        const what = e.command || e.path || (e.paths || []).join(", ") || "";
        const row = el("div", { class: "tool-row", "data-status": "running", "data-call": e.call_id },
          el("div", { class: "head" }, el("span", { class: "kind", text: e.kind }), el("span", { class: "name", text: e.name }),
            el("span", { class: "what mono", text: what, title: what }), el("span", { class: "st", text: "running…" })),
          el("details", {}, el("summary", { class: "pill", text: "input" }), el("pre", { text: JSON.stringify(e.input, null, 2) })));
        row.dataset.started = e.ts;
        calls.set(e.call_id, row); tools.append(row); break;
      }
      case "tool_end": {
        let row = calls.get(e.call_id);
        if (!row) { row = el("div", { class: "tool-row" }, el("div", { class: "head" }, el("span", { class: "kind", text: e.kind }), el("span", { class: "name", text: e.name }), el("span", { class: "st" }))); tools.append(row); }
        row.dataset.status = e.status;
        const bits = [e.status, fmt.ms(e.duration_ms)];
        if (e.exit_code !== undefined) bits.push("exit " + e.exit_code);
        if (e.synthetic) bits.push("synthetic");
        row.querySelector(".st").textContent = bits.join(" · ");
        if (e.output) row.append(el("details", { open: e.status !== "ok" }, el("summary", { class: "pill", text: "output" + (e.output_truncated ? " (cut)" : "") }), el("pre", { class: "output", text: e.output })));
        if (e.diff) row.append(el("details", { open: true }, el("summary", { class: "pill", text: "diff " + (e.paths || []).join(", ") + (e.diff_truncated ? " (cut)" : "") }), diffView(e.diff)));
        else if (e.diff_skipped) row.append(el("div", { class: "pill", text: "no diff: " + e.diff_skipped }));
        break;
      }
      case "usage":
        for (const k of ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens"]) st.usage[k] = (st.usage[k] || 0) + (e[k] || 0);
        if (e.cost_usd) { st.cost += e.cost_usd; st.costEst = st.costEst || !!e.cost_estimated; }
        break;
      case "warning": {
        st.warnings++;
        conv.append(el("div", { class: "warning" }, el("b", { text: e.code + ": " }), e.message));
        const row = e.call_id && calls.get(e.call_id); // a stalled tool: say so on its row too
        if (row) row.append(el("div", { class: "warning", text: e.code + ": " + e.message }));
        break;
      }
      case "turn_start":
        openMsg = null; reasoning = null;
        conv.append(el("div", { class: "msg user turn", "data-turn": e.turn_id }, el("span", { class: "who", text: "user · " + e.turn_id }), el("span", { class: "body", text: e.prompt })));
        break;
      case "turn_end":
        openMsg = null; reasoning = null;
        conv.append(el("div", { class: "turn-end status " + e.status, "data-turn": e.turn_id, "data-status": e.status },
          e.turn_id + " " + e.status + " · " + fmt.ms(e.duration_ms) + (e.synthetic ? " · synthetic" : "")));
        break;
      case "permission_request": {
        const what = e.command || e.path || "";
        const box = el("div", { class: "permission", "data-call": e.call_id },
          el("b", { text: "Permission: " }), (e.tool || e.kind) + (what ? " " + what : "") + " ");
        const answer = async (allow) => {
          if (await post("/permissions/" + encodeURIComponent(e.call_id), { allow })) {
            box.querySelectorAll("button").forEach((b) => b.remove());
            box.dataset.answer = allow ? "allowed" : "denied";
            box.append(el("span", { class: "muted", text: box.dataset.answer }));
          }
        };
        box.append(el("button", { class: "allow", type: "button", text: "Allow", onclick: () => answer(true) }), " ",
          el("button", { class: "deny", type: "button", text: "Deny", onclick: () => answer(false) }));
        conv.append(box); break;
      }
      case "error":
        conv.append(el("div", { class: "error" }, el("b", { text: e.code + (e.fatal ? " (fatal)" : "") + ": " }), e.message, e.hint ? el("div", { class: "muted", text: e.hint }) : null)); break;
      case "result": {
        st.status = e.status; st.usage = Object.assign({}, e.usage); st.resultMS = e.duration_ms;
        if (e.cost_usd !== undefined) { st.cost = e.cost_usd; st.costEst = !!e.cost_estimated; }
        const box = el("div", { id: "result", class: e.status },
          el("h2", {}, "Result: ", el("span", { class: "status " + e.status, text: e.status })),
          el("div", { class: "muted", text: [fmt.ms(e.duration_ms), e.num_turns ? fmt.count(e.num_turns, "turn") : "", fmt.count(e.stats ? e.stats.tool_calls : 0, "tool call"), e.exit_code !== undefined ? "exit " + e.exit_code : "", e.signal || ""].filter(Boolean).join(" · ") }),
          e.text ? el("pre", { class: "result-text", text: e.text }) : null);
        result.replaceChildren(box); break;
      }
    }
    st.lastTS = e.ts;
    renderCards();
  }

  let es = null, last = 0;
  function connect() {
    es = new EventSource(withToken("/api/runs/" + encodeURIComponent(id) + "/events" + (last ? "?after=" + last : "")));
    es.onopen = () => { document.body.dataset.stream = "open"; };
    es.onmessage = (m) => {
      last = Number(m.lastEventId) || last;
      try { add(JSON.parse(m.data)); } catch (err) { console.error(err); }
    };
    es.addEventListener("end", async () => {
      es.close(); st.ended = true; document.body.dataset.stream = "ended";
      const c = document.getElementById("cancel"); if (c) c.remove();
      sessionBox.remove(); conv.querySelectorAll(".permission button").forEach((b) => b.remove());
      if (st.status === "running") { // ended without a result: its harness died (lost) or closed the log (unknown)
        try { st.status = (await api("/api/runs/" + encodeURIComponent(id))).status; } catch (err) { console.error(err); }
      }
      renderCards(); if (debug) showDebug();
    });
    es.addEventListener("reconnect", () => { es.close(); connect(); }); // we fell behind: resume from our last id
    es.onerror = () => {
      if (st.ended) return;
      if (es.readyState === EventSource.CLOSED) { // refused (unknown run, no token): no retry
        document.body.dataset.stream = "failed";
        main.prepend(el("div", { class: "error", text: "The event stream of this run could not be opened." }));
      } else document.body.dataset.stream = "retrying"; // EventSource retries with Last-Event-ID
    };
  }
  connect();
  cleanup.push(() => es && es.close());

  async function showDebug() {
    const box = el("section", { class: "debug" }, el("h2", { text: "Debug: the agent's native lines" }));
    main.append(box);
    try {
      const res = await fetch(withToken("/api/runs/" + encodeURIComponent(id) + "/native"));
      box.append(el("pre", { id: "native", text: res.ok ? await res.text() : "(no native log: " + res.status + ")" }));
    } catch (err) { box.append(el("pre", { text: String(err) })); }
    box.append(el("h2", { text: "Debug: the unified events" }), el("pre", { text: rawEvents.map((e) => JSON.stringify(e)).join("\n") }));
  }
}

function diffView(diff) {
  const pre = el("pre", { class: "diff" });
  for (const line of diff.replace(/\n$/, "").split("\n")) {
    let cls = "ctx";
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("index ") || line.startsWith("new file") || line.startsWith("deleted file")) cls = "meta";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    pre.append(el("span", { class: cls, text: line }));
  }
  return pre;
}

// ---- bench --------------------------------------------------------------

async function benchList() {
  main.append(el("h1", { text: "Bench reports" }));
  try {
    const { reports } = await api("/api/bench");
    if (!reports.length) { main.append(el("p", { class: "muted", text: "No stored bench reports yet: run `harness bench`." })); return; }
    main.append(el("table", { id: "bench" },
      el("thead", {}, el("tr", {}, ["report", "started", "agents", "tasks", "runs", "wall"].map((h) => el("th", { text: h })))),
      el("tbody", {}, reports.map((r) => el("tr", {},
        el("td", { class: "mono" }, el("a", { href: "/bench/" + encodeURIComponent(r.id), text: r.id })),
        el("td", { text: fmt.time(r.started) }), el("td", { text: r.agents.join(", ") }), el("td", { text: (r.tasks || []).join(", ") }),
        el("td", { class: "num", text: String(r.runs) }), el("td", { class: "num", text: fmt.ms(r.wall_ms) }))))));
  } catch (err) { main.append(el("div", { class: "error", text: err.message })); }
}

const palette = ["#1f5fbf", "#c0392b", "#1f7a3a", "#9a6700", "#7b3fa0", "#16808a", "#b5478b", "#555"];

// errorBars draws each dataset's [lo, hi] interval over its bar.
const errorBars = {
  id: "errorBars",
  afterDatasetsDraw(chart) {
    const ctx = chart.ctx;
    chart.data.datasets.forEach((ds, i) => {
      if (!ds.intervals) return;
      const meta = chart.getDatasetMeta(i);
      if (meta.hidden) return;
      meta.data.forEach((bar, j) => {
        const iv = ds.intervals[j];
        if (!iv) return;
        const y = chart.scales.y;
        const top = y.getPixelForValue(iv[1]), bot = y.getPixelForValue(iv[0]);
        ctx.save(); ctx.strokeStyle = "#222"; ctx.lineWidth = 1.5;
        ctx.beginPath(); ctx.moveTo(bar.x, top); ctx.lineTo(bar.x, bot);
        ctx.moveTo(bar.x - 6, top); ctx.lineTo(bar.x + 6, top); ctx.moveTo(bar.x - 6, bot); ctx.lineTo(bar.x + 6, bot);
        ctx.stroke(); ctx.restore();
      });
    });
  },
};

async function benchView(id) {
  main.append(el("h1", {}, "Bench ", el("span", { class: "mono", text: id })));
  let d;
  try { d = await api("/api/bench/" + encodeURIComponent(id)); } catch (err) { main.append(el("div", { class: "error", text: err.message })); return; }
  const rep = d.report, groups = d.intervals;
  const label = (r) => r.model ? r.agent + " · " + r.model : r.agent;
  const labels = groups.map((g) => g.label);
  const color = (i) => palette[i % palette.length];
  // Runs that never started (docs/bench.md, "Not run") say nothing of the agent: no wall time to chart.
  const notRun = new Set(["setup", "not_installed", "spawn_failed", "unsupported"]);
  const runsOf = (l) => rep.runs.filter((r) => label(r) === l && r.status !== "skipped" && !notRun.has(r.reason));
  main.append(el("p", { class: "muted", text: fmt.time(rep.started) + " · " + rep.runs.length + " runs · wall " + fmt.ms(rep.wall_ms) + " · parallel " + rep.parallel }));

  const charts = el("div", { class: "charts" });
  main.append(charts);
  const made = {};
  window.harnessCharts = made;
  function chartBox(key, title) {
    const canvas = el("canvas", { id: "chart-" + key });
    charts.append(el("div", { class: "chart" }, el("h2", { text: title }), el("div", { style: "position:relative;height:260px" }, canvas)));
    return canvas;
  }
  const base = { responsive: true, maintainAspectRatio: false, animation: false, plugins: { legend: { position: "bottom" } } };

  const basis = groups.some((g) => g.basis === "check") ? "pass rate (check)" : "success rate";
  made.pass = new Chart(chartBox("pass", basis + " per agent, 95% Wilson interval"), {
    type: "bar",
    data: { labels: [basis], datasets: groups.map((g, i) => ({ label: g.label + " (" + g.k + "/" + g.n + ")", data: [g.rate], intervals: [[g.lo, g.hi]], backgroundColor: color(i) + "bb" })) },
    options: Object.assign({}, base, { scales: { y: { min: 0, max: 1, ticks: { callback: (v) => Math.round(v * 100) + "%" } } } }),
    plugins: [errorBars],
  });

  function strip(key, title, value, unit) {
    const datasets = labels.map((l, i) => ({
      label: l, backgroundColor: color(i), borderColor: color(i), pointRadius: 5,
      data: runsOf(l).map((r) => value(r)).filter((v) => v !== null && v !== undefined).map((v, j) => ({ x: i + ((j * 0.37) % 0.5) - 0.25, y: v })),
    }));
    made[key] = new Chart(chartBox(key, title), {
      type: "scatter", data: { datasets },
      options: Object.assign({}, base, { scales: {
        x: { min: -0.6, max: labels.length - 0.4, ticks: { stepSize: 1, callback: (v) => labels[v] || "" }, grid: { display: false } },
        y: { beginAtZero: true, title: { display: true, text: unit } } } }),
    });
  }
  strip("wall", "wall time per run", (r) => r.wall_ms / 1000, "seconds");
  strip("cost", "cost per run", (r) => (r.cost_usd === undefined ? null : r.cost_usd), "USD");
  strip("firstTool", "time to first tool", (r) => (r.first_tool_ms === undefined ? null : r.first_tool_ms / 1000), "seconds");

  const tasks = [...new Set(rep.runs.map((r) => r.task || "(task)"))];
  made.tasks = new Chart(chartBox("tasks", "per task: median wall time"), {
    type: "bar",
    data: { labels: tasks, datasets: labels.map((l, i) => ({ label: l, backgroundColor: color(i) + "bb", data: tasks.map((t) => median(runsOf(l).filter((r) => (r.task || "(task)") === t).map((r) => r.wall_ms / 1000))) })) },
    options: Object.assign({}, base, { scales: { y: { beginAtZero: true, title: { display: true, text: "seconds" } } } }),
  });

  main.append(el("h2", { text: "Per task, side by side" }),
    el("table", { id: "pertask" },
      el("thead", {}, el("tr", {}, el("th", { text: "task" }), labels.map((l) => el("th", { text: l })))),
      el("tbody", {}, tasks.map((t) => el("tr", {}, el("td", { text: t }), labels.map((l) => {
        const rs = runsOf(l).filter((r) => (r.task || "(task)") === t);
        const ok = rs.filter((r) => r.check ? r.check.passed : r.status === "success").length;
        return el("td", {}, ok + "/" + rs.length + " passed ",
          el("span", { class: "muted", text: rs.map((r) => fmt.ms(r.wall_ms)).join(", ") }),
          el("div", {}, rs.filter((r) => r.run).map((r) => el("a", { class: "pill", href: "/runs/" + encodeURIComponent(r.run), text: "run " + r.repeat + " " }))));
      }))))));
  document.body.dataset.charts = "ready";
}

function median(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

route();
