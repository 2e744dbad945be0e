/**
 * The status page at `/status`: one static HTML document (style and script inline, nothing from the
 * network) that polls /v1/status (every second, or every `?every=MS`) and shows the model, the queue,
 * the KV budget (blocks held, filled and free, each running generation's), the devices and actors with their states and restarts, the jobs, the blob cache and the last errors.
 * Each device row carries data-kind and data-state, so a script (or a test) can read it. The inline
 * script avoids backticks, as this file holds it in a template string.
 */

/** The status page. */
export const STATUS_HTML: string = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>npu-offload status</title>
<style>
  :root { --fg: #1d232a; --muted: #66707a; --line: #d9dee3; --bg: #f6f7f9; --accent: #1f6feb; }
  body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
  header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: #fff; flex-wrap: wrap; }
  header h1 { font-size: 1rem; margin: 0; }
  header a { color: var(--accent); }
  main { padding: 1rem; display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(26rem, 1fr)); }
  section { background: #fff; border: 1px solid var(--line); border-radius: .5rem; padding: .6rem .9rem; }
  section.wide { grid-column: 1 / -1; }
  h2 { font-size: .95rem; margin: 0 0 .4rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .2rem .5rem .2rem 0; border-bottom: 1px solid #eef0f2; vertical-align: top; }
  th { color: var(--muted); font-weight: 500; }
  td.num { font-variant-numeric: tabular-nums; }
  .state { padding: .05rem .5rem; border-radius: 1rem; font-size: .8rem; background: #e7ebef; }
  .state[data-state=ready] { background: #dcf5e3; }
  .state[data-state=starting], .state[data-state=restarting], .state[data-state=loading] { background: #fff3cd; }
  .state[data-state=poisoned], .state[data-state=down], .state[data-state=failed] { background: #fde2e1; }
  .muted { color: var(--muted); }
  label { color: var(--muted); font-size: .85rem; }
  input { font: inherit; padding: .15rem .4rem; border: 1px solid var(--line); border-radius: .3rem; }
  button { font: inherit; padding: .2rem .8rem; border-radius: .3rem; border: 1px solid var(--accent); background: #fff; color: var(--accent); cursor: pointer; }
  #problem { color: #b42318; }
</style>
</head>
<body>
<header>
  <h1>npu-offload status</h1>
  <span>model <b id="model-id">?</b> <span id="model-state" class="state" data-state="unknown">?</span></span>
  <span class="muted">updated <span id="updated">never</span></span>
  <button id="refresh" type="button">Refresh</button>
  <label>API key <input id="api-key" type="password" placeholder="if --api-key" autocomplete="off" style="width:10em"></label>
  <a href="/">chat</a>
  <span id="problem"></span>
</header>
<main>
  <section class="wide"><h2>Devices</h2><table id="devices"><thead><tr><th>device</th><th>kind</th><th>state</th><th>restarts</th><th>poisoned since</th><th>running</th><th>waiting</th><th>sessions</th></tr></thead><tbody></tbody></table><p id="no-engine" class="muted" hidden>The model does not run on an engine this server knows (an add-on route): no devices to show.</p></section>
  <section><h2>Queue</h2><table id="queue"><tbody></tbody></table></section>
  <section><h2>KV cache</h2><table id="kv"><tbody></tbody></table><table id="kv-slots"><thead><tr><th>running generation</th><th>blocks held</th><th>positions filled</th></tr></thead><tbody></tbody></table></section>
  <section><h2>Prefix cache</h2><table id="prefix"><tbody></tbody></table></section>
  <section><h2>Blob cache</h2><table id="cache"><tbody></tbody></table></section>
  <section><h2>Actors</h2><table id="actors"><thead><tr><th>actor</th><th>state</th><th>restarts</th></tr></thead><tbody></tbody></table></section>
  <section><h2>Jobs</h2><table id="jobs"><tbody></tbody></table></section>
  <section class="wide"><h2>Failed requests</h2><p id="by-code" class="muted"></p><table id="failures"><thead><tr><th>at</th><th>status</th><th>code</th><th>path</th><th>message</th></tr></thead><tbody></tbody></table></section>
  <section class="wide"><h2>Last engine errors</h2><table id="errors"><thead><tr><th>at</th><th>job</th><th>target</th><th>code</th><th>message</th></tr></thead><tbody></tbody></table></section>
</main>
<script>
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var every = parseInt(new URLSearchParams(location.search).get("every") || "1000", 10);
  if (!(every >= 100)) every = 1000;
  var keyField = $("api-key");
  keyField.value = sessionStorage.getItem("npu-offload-api-key") || "";
  keyField.addEventListener("change", function () { sessionStorage.setItem("npu-offload-api-key", keyField.value); refresh(); });

  function cell(tr, v, cls) { var td = document.createElement("td"); td.textContent = v === null || v === undefined ? "\\u2013" : String(v); if (cls) td.className = cls; tr.appendChild(td); return td; }
  function stateCell(tr, s) { var td = document.createElement("td"); var b = document.createElement("span"); b.className = "state"; b.dataset.state = s; b.textContent = s; td.appendChild(b); tr.appendChild(td); }
  function rows(id, list, fill) {
    var tb = $(id).querySelector("tbody"); tb.textContent = "";
    list.forEach(function (x) { var tr = document.createElement("tr"); fill(tr, x); tb.appendChild(tr); });
    var head = $(id).querySelector("thead th");
    if (list.length === 0 && head !== null) { var tr = document.createElement("tr"); var td = cell(tr, "none"); td.className = "muted"; td.colSpan = $(id).querySelectorAll("thead th").length; tb.appendChild(tr); }
  }
  function pairs(id, obj) { rows(id, Object.keys(obj), function (tr, k) { var th = document.createElement("th"); th.textContent = k; tr.appendChild(th); cell(tr, obj[k], "num"); }); }
  function bytes(n) { return n < 1024 ? n + " B" : n < 1048576 ? (n / 1024).toFixed(1) + " KiB" : (n / 1048576).toFixed(1) + " MiB"; }

  function show(s) {
    $("model-id").textContent = s.model.id;
    var ms = $("model-state"); ms.dataset.state = s.model.state; ms.textContent = s.model.state;
    ms.title = s.model.error ? s.model.error.code + ": " + s.model.error.message : "";
    pairs("queue", { running: s.queue.running, slots: s.queue.slots, waiting: s.queue.waiting, "most waiting": s.queue.maxQueue, "refused (429)": s.queue.refused429 });
    var k = s.kv;
    pairs("kv", k ? { "blocks free": k.free + " of " + k.total + " (" + k.block + " positions each)", "blocks held": k.reserved, "blocks filled": k.used, "reuse (prefix cache)": k.reuseRate === null ? "no lookups yet" : (100 * k.reuseRate).toFixed(1) + " %", admitted: k.admitted, "refused (KvCacheFull)": k.refused } : { budget: "none (the model is not loaded, or keeps no budget)" });
    rows("kv-slots", k ? k.generations : [], function (tr, g) { tr.dataset.blocks = String(g.blocks); cell(tr, k.generations.indexOf(g) + 1, "num"); cell(tr, g.blocks, "num"); cell(tr, g.filled, "num"); });
    var p = s.prefixCache;
    pairs("prefix", p ? { "hit rate": p.lookups === 0 ? "no lookups yet" : (100 * p.hits / p.lookups).toFixed(1) + " %", "prompt tokens reused": p.promptTokens === 0 ? "none yet" : p.reusedTokens + " of " + p.promptTokens + " (" + (100 * p.reusedTokens / p.promptTokens).toFixed(1) + " %)", blocks: p.blocks + " of " + p.block + " positions", bytes: bytes(p.bytes) + " of " + bytes(p.budget), evicted: p.evicted } : { cache: "none (--no-prefix-cache, or the model is not loaded)" });
    var codes = Object.keys(s.failures.byCode);
    $("by-code").textContent = codes.length === 0 ? "none so far" : s.failures.total + " so far: " + codes.map(function (c) { return c + " \\u00d7" + s.failures.byCode[c]; }).join(", ");
    rows("failures", s.failures.last.slice().reverse(), function (tr, f) { cell(tr, f.at); cell(tr, f.status, "num"); cell(tr, f.code).className = "code"; cell(tr, f.path); cell(tr, f.message); });
    var e = s.engine;
    $("no-engine").hidden = e !== null;
    rows("devices", e ? e.devices : [], function (tr, d) { tr.dataset.kind = d.kind; tr.dataset.state = d.state; cell(tr, d.name); cell(tr, d.kind); stateCell(tr, d.state); cell(tr, d.restarts, "num restarts"); cell(tr, d.poisonedSince); cell(tr, d.running, "num"); cell(tr, d.waiting, "num"); cell(tr, d.sessions, "num"); });
    rows("actors", e ? e.actors : [], function (tr, a) { tr.dataset.name = a.name; cell(tr, a.name); stateCell(tr, a.state); cell(tr, a.restarts, "num"); });
    pairs("jobs", e ? e.jobs : {});
    var c = e && e.cache;
    pairs("cache", c ? { entries: c.entries, bytes: bytes(c.bytes), "hit rate": c.hitRate === null ? "no lookups yet" : (100 * c.hitRate).toFixed(1) + " %", "local hits": c.localHits, "remote hits": c.remoteHits, misses: c.misses } : { cache: e ? "not started" : "no engine" });
    rows("errors", e ? e.lastErrors.slice().reverse() : [], function (tr, x) { cell(tr, x.at); cell(tr, x.jobId, "num"); cell(tr, x.target); cell(tr, x.code).className = "code"; cell(tr, x.message); });
    $("updated").textContent = new Date(s.at).toLocaleTimeString();
    document.body.dataset.updates = String(parseInt(document.body.dataset.updates || "0", 10) + 1);
  }

  var timer = null;
  function refresh() {
    clearTimeout(timer);
    var h = keyField.value !== "" ? { authorization: "Bearer " + keyField.value } : {};
    return fetch("/v1/status", { cache: "no-store", headers: h })
      .then(function (r) { return r.json().then(function (b) { if (!r.ok) throw new Error(r.status + " " + (b.error ? b.error.code + ": " + b.error.message : "")); return b; }); })
      .then(function (s) { $("problem").textContent = ""; show(s); })
      .catch(function (err) { $("problem").textContent = "cannot read /v1/status: " + err.message; })
      .then(function () { timer = setTimeout(refresh, every); });
  }
  $("refresh").addEventListener("click", refresh);
  refresh();
})();
</script>
</body>
</html>
`;
