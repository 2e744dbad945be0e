/**
 * The chat page at `/`: one static HTML document, its style and script inline (no framework, no build
 * step, nothing from the network). It streams each answer from the server's own /v1/chat/completions
 * (server-sent events), shows time to first token and tokens per second per answer, stops a generation
 * by aborting its fetch (the server frees the model at the next token, as for a disconnect), and polls
 * /v1/health for the model's id and whether it is loading. The inline script avoids backticks, as this
 * file holds it in a template string.
 */

/** The chat page. */
export const CHAT_HTML: string = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>npu-offload chat</title>
<style>
  :root { --fg: #1d232a; --muted: #66707a; --line: #d9dee3; --bg: #f6f7f9; --accent: #1f6feb; --bad: #b42318; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); display: flex; flex-direction: column; height: 100vh; }
  header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: #fff; flex-wrap: wrap; }
  header h1 { font-size: 1rem; margin: 0; }
  header a { color: var(--accent); }
  .pill { padding: .1rem .55rem; border-radius: 1rem; font-size: .8rem; background: #e7ebef; }
  .pill[data-state=ready] { background: #dcf5e3; }
  .pill[data-state=loading] { background: #fff3cd; }
  .pill[data-state=failed], .pill[data-state=unreachable] { background: #fde2e1; }
  label { font-size: .85rem; color: var(--muted); }
  input { font: inherit; padding: .2rem .4rem; border: 1px solid var(--line); border-radius: .3rem; }
  #messages { flex: 1; overflow-y: auto; padding: 1rem; display: flex; flex-direction: column; gap: .7rem; }
  .msg { max-width: 80ch; padding: .55rem .8rem; border-radius: .6rem; background: #fff; border: 1px solid var(--line); white-space: pre-wrap; word-break: break-word; }
  .msg.user { align-self: flex-end; background: #e8f0fe; }
  .msg .text:empty::after { content: "\\2026"; color: var(--muted); }
  .msg .thinking { color: var(--muted); font-style: italic; border-left: 2px solid var(--line); padding-left: .5rem; margin-bottom: .4rem; }
  .msg .meta { margin-top: .3rem; font-size: .78rem; color: var(--muted); }
  .msg[data-state=error] .meta { color: var(--bad); }
  form { display: flex; gap: .5rem; padding: .7rem 1rem; border-top: 1px solid var(--line); background: #fff; }
  textarea { flex: 1; font: inherit; padding: .45rem; border: 1px solid var(--line); border-radius: .4rem; resize: vertical; min-height: 2.6rem; }
  button { font: inherit; padding: .4rem 1rem; border-radius: .4rem; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
  button#stop { background: #fff; color: var(--bad); border-color: var(--bad); }
  button:disabled { opacity: .45; cursor: default; }
</style>
</head>
<body>
<header>
  <h1>npu-offload</h1>
  <span>model <b id="model-id">?</b></span>
  <span id="model-state" class="pill" data-state="unknown">checking</span>
  <label>max tokens <input id="max-tokens" type="number" min="1" value="256" style="width:6em"></label>
  <label>API key <input id="api-key" type="password" placeholder="if --api-key" autocomplete="off" style="width:10em"></label>
  <a href="/status">status</a>
</header>
<main id="messages" aria-live="polite"></main>
<form id="chat">
  <textarea id="prompt" placeholder="Message (Enter sends, Shift+Enter a new line)" rows="2"></textarea>
  <button id="send" type="submit" disabled>Send</button>
  <button id="stop" type="button" disabled>Stop</button>
</form>
<script>
(function () {
  "use strict";
  var $ = function (id) { return document.getElementById(id); };
  var history = [];
  var modelId = null;
  var running = null;
  var keyField = $("api-key");
  keyField.value = sessionStorage.getItem("npu-offload-api-key") || "";
  keyField.addEventListener("change", function () { sessionStorage.setItem("npu-offload-api-key", keyField.value); });

  function headers() {
    var h = { "content-type": "application/json" };
    if (keyField.value !== "") h.authorization = "Bearer " + keyField.value;
    return h;
  }

  function showState(state, text) {
    var el = $("model-state");
    el.dataset.state = state;
    el.textContent = text;
  }

  function health() {
    fetch("/v1/health", { cache: "no-store" }).then(function (r) {
      return r.json().then(function (b) {
        if (typeof b.model === "string") { modelId = b.model; $("model-id").textContent = b.model; if (running === null) busy(false); }
        if (r.ok) showState("ready", "ready");
        else if (b.status === "loading") showState("loading", "loading\\u2026");
        else showState("failed", (b.error && b.error.message) || "failed");
      });
    }).catch(function () { showState("unreachable", "server unreachable"); })
      .then(function () { setTimeout(health, $("model-state").dataset.state === "ready" ? 5000 : 1000); });
  }

  function bubble(role) {
    var div = document.createElement("div");
    div.className = "msg " + role;
    var text = document.createElement("div");
    text.className = "text";
    div.appendChild(text);
    $("messages").appendChild(div);
    return div;
  }

  function meta(div, text) {
    var m = div.querySelector(".meta");
    if (m === null) { m = document.createElement("div"); m.className = "meta"; div.appendChild(m); }
    m.textContent = text;
  }

  function scroll() { var m = $("messages"); m.scrollTop = m.scrollHeight; }

  function busy(on) { $("send").disabled = on; $("stop").disabled = !on; }

  function send(content) {
    history.push({ role: "user", content: content });
    bubble("user").querySelector(".text").textContent = content;
    var div = bubble("assistant");
    div.dataset.state = "streaming";
    var out = div.querySelector(".text");
    var ctrl = new AbortController();
    running = ctrl;
    busy(true);
    scroll();
    var t0 = performance.now();
    var tFirst = null;
    var pieces = 0;
    var usage = null;
    var finish = null;
    var max = parseInt($("max-tokens").value, 10);
    var body = { model: modelId, messages: history, stream: true, stream_options: { include_usage: true } };
    if (max > 0) body.max_tokens = max;

    function figures() {
      var now = performance.now();
      var n = usage !== null ? usage.completion_tokens : pieces;
      var parts = [];
      if (tFirst !== null) {
        div.dataset.ttftMs = String(Math.round(tFirst - t0));
        parts.push("first token " + Math.round(tFirst - t0) + " ms");
        var secs = (now - tFirst) / 1000;
        if (n > 1 && secs > 0) { div.dataset.tokS = ((n - 1) / secs).toFixed(1); parts.push(div.dataset.tokS + " tok/s"); }
      }
      div.dataset.tokens = String(n);
      parts.push(n + " tokens");
      return parts.join(" \\u00b7 ");
    }

    function end(state, why) {
      div.dataset.state = state;
      if (state === "done" || state === "stopped") history.push({ role: "assistant", content: out.textContent });
      else history.pop();
      meta(div, figures() + (why ? " \\u00b7 " + why : ""));
      running = null;
      busy(false);
      scroll();
    }

    function onEvent(data) {
      if (data === "[DONE]") return;
      var msg = JSON.parse(data);
      if (msg.error) throw new Error((msg.error.code || "error") + ": " + msg.error.message);
      if (msg.usage) usage = msg.usage;
      var c = msg.choices && msg.choices[0];
      if (!c) return;
      if (c.finish_reason) finish = c.finish_reason;
      // A thinking model's reasoning (delta.reasoning_content) is shown apart, above the answer, and not kept in the history.
      var thought = c.delta && c.delta.reasoning_content;
      if (thought) {
        var th = div.querySelector(".thinking");
        if (th === null) { th = document.createElement("div"); th.className = "thinking"; div.insertBefore(th, out); }
        if (tFirst === null) tFirst = performance.now();
        pieces++;
        th.textContent += thought;
        scroll();
      }
      var piece = c.delta && c.delta.content;
      if (piece) {
        if (tFirst === null) tFirst = performance.now();
        pieces++;
        out.textContent += piece;
        meta(div, figures());
        scroll();
      }
    }

    fetch("/v1/chat/completions", { method: "POST", headers: headers(), body: JSON.stringify(body), signal: ctrl.signal })
      .then(function (r) {
        if (!r.ok) return r.json().then(function (b) { throw new Error(r.status + " " + ((b.error && b.error.code) || "") + ": " + ((b.error && b.error.message) || r.statusText)); });
        var reader = r.body.getReader();
        var decoder = new TextDecoder();
        var buf = "";
        function pump() {
          return reader.read().then(function (x) {
            if (x.done) return;
            buf += decoder.decode(x.value, { stream: true });
            var at;
            while ((at = buf.indexOf("\\n\\n")) >= 0) {
              var ev = buf.slice(0, at);
              buf = buf.slice(at + 2);
              ev.split("\\n").forEach(function (line) { if (line.indexOf("data: ") === 0) onEvent(line.slice(6)); });
            }
            return pump();
          });
        }
        return pump();
      })
      .then(function () { end("done", finish ? "finish: " + finish : ""); })
      .catch(function (e) {
        if (ctrl.signal.aborted) end("stopped", "stopped");
        else end("error", e.message);
      });
  }

  $("chat").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var p = $("prompt");
    var content = p.value.trim();
    if (content === "" || running !== null || modelId === null) return;
    p.value = "";
    send(content);
  });
  $("prompt").addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("chat").requestSubmit(); }
  });
  $("stop").addEventListener("click", function () { if (running !== null) running.abort(); });
  health();
})();
</script>
</body>
</html>
`;
