// The session console in the browser. Everything goes through the runner's public /v1 routes
// (create, events over SSE, the terminal WebSocket, stop) except the session list, which the
// console serves at /console/api/sessions. The list is polled; the selected session's status
// and progress come live from its event stream.
import { Terminal } from "./xterm.mjs";

const LIST_POLL_MS = 1000;
const encoder = new TextEncoder();
const $ = (id) => document.getElementById(id);

let selected; // { id, source, terminal, term }

async function json(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const value = text === "" ? undefined : JSON.parse(text);
  if (!response.ok) throw new Error(value?.message ?? value?.error ?? `HTTP ${response.status}`);
  return value;
}

function statusText(status) {
  if (status.kind === "exited") return `exited (${status.code})`;
  if (status.kind === "failed") return `failed: ${status.message}`;
  return status.kind;
}

function showStatus(status) {
  const badge = $("detail-status");
  badge.textContent = statusText(status);
  badge.className = `status ${status.kind}`;
  badge.dataset.kind = status.kind;
}

function renderList(sessions) {
  const body = $("sessions").tBodies[0];
  body.replaceChildren(
    ...sessions
      .toSorted((a, b) => b.createdAt.localeCompare(a.createdAt))
      .map((session) => {
        const row = document.createElement("tr");
        row.dataset.sessionId = session.sessionId;
        row.dataset.status = session.status.kind;
        if (selected?.id === session.sessionId) row.classList.add("selected");
        for (const text of [session.sessionId, session.mode, statusText(session.status), new Date(session.createdAt).toLocaleTimeString()]) {
          const cell = document.createElement("td");
          cell.textContent = text;
          row.append(cell);
        }
        row.addEventListener("click", () => select(session.sessionId));
        return row;
      }),
  );
}

async function pollList() {
  try {
    renderList((await json("GET", "/console/api/sessions")).sessions);
    $("list-error").textContent = "";
  } catch (error) {
    $("list-error").textContent = `session list: ${error.message}`;
  }
  setTimeout(pollList, LIST_POLL_MS);
}

function addEventLine(text) {
  const item = document.createElement("li");
  item.textContent = text;
  $("events").append(item);
  item.scrollIntoView({ block: "nearest" });
}

function describeEvent(event) {
  switch (event.type) {
    case "status":
      return `status ${statusText(event.status)}`;
    case "progress":
      return `progress [${event.phase}] ${event.message}${event.done ? " (done)" : ""}`;
    case "run":
      return `run ${event.app} #${event.generation} ${event.phase}${event.telo !== undefined ? ` on telo ${event.telo}` : ""}${event.code !== undefined ? ` (${event.code})` : ""}`;
    case "route":
      return `route ${event.host} (${event.app ?? "agent"}:${event.port}) ${event.state}${event.reason ? `: ${event.reason}` : ""}`;
    default:
      return `${event.type} ${JSON.stringify(event)}`;
  }
}

// Close codes after which reopening cannot help (docs/api.md "Terminal (WebSocket)"); others (1006, 1011: an api
// restart) reopen from the last byte shown, with backoff, and keys typed meanwhile wait.
const FINAL_CLOSE_CODES = new Set([1000, 1001, 1005, 4403, 4404, 4410]);

function connectTerminal(id, term) {
  const state = { socket: undefined, lastSeq: 0, delay: 250, pending: [], closed: false };
  const open = () => {
    const url = new URL(`/v1/sessions/${encodeURIComponent(id)}/io`, location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("lastSeq", String(state.lastSeq));
    const socket = new WebSocket(url);
    state.socket = socket;
    socket.binaryType = "arraybuffer";
    socket.addEventListener("open", () => {
      state.delay = 250;
      socket.send(JSON.stringify({ type: "resize", cols: term.cols, rows: term.rows }));
      for (const bytes of state.pending.splice(0)) socket.send(bytes);
    });
    socket.addEventListener("message", (message) => {
      if (typeof message.data === "string") {
        const control = JSON.parse(message.data);
        if (control.type === "gap") term.write("\r\n\x1b[2m[earlier output was evicted]\x1b[0m\r\n");
        return;
      }
      // [seq u32 BE][stream u8][payload]; shorter frames carry nothing, replayed ones were shown.
      const bytes = new Uint8Array(message.data);
      if (bytes.length <= 5) return;
      const seq = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0);
      if (seq <= state.lastSeq) return;
      state.lastSeq = seq;
      term.write(bytes.subarray(5));
    });
    socket.addEventListener("close", (event) => {
      if (state.closed) return;
      if (FINAL_CLOSE_CODES.has(event.code)) {
        if (event.code !== 1000 && event.code !== 4410) term.write(`\r\n\x1b[2m[terminal closed: ${event.code} ${event.reason}]\x1b[0m\r\n`);
        return;
      }
      setTimeout(open, state.delay);
      state.delay = Math.min(state.delay * 2, 10_000);
    });
  };
  term.onData((data) => {
    const bytes = encoder.encode(data);
    if (state.socket?.readyState === WebSocket.OPEN) state.socket.send(bytes);
    else state.pending.push(bytes);
  });
  open();
  return {
    close() {
      state.closed = true;
      state.socket?.close(1000);
    },
  };
}

function select(id) {
  if (selected?.id === id) return;
  if (selected) {
    selected.source.close();
    selected.terminal.close();
    selected.term.dispose();
  }
  $("detail").hidden = false;
  $("detail-id").textContent = id;
  $("detail-status").textContent = "";
  $("events").replaceChildren();
  for (const row of $("sessions").tBodies[0].rows) row.classList.toggle("selected", row.dataset.sessionId === id);

  const term = new Terminal({ cols: 100, rows: 24, convertEol: false, fontSize: 13 });
  const host = document.createElement("div");
  $("terminal").replaceChildren(host);
  term.open(host);
  const source = new EventSource(`/v1/sessions/${encodeURIComponent(id)}/events`);
  for (const type of ["status", "progress", "debug", "reachability", "run", "endpoints", "route"]) {
    source.addEventListener(type, (message) => {
      const event = JSON.parse(message.data);
      if (event.type === "status") {
        showStatus(event.status);
        // The stream ends after a terminal status; no reconnect.
        if (["exited", "failed", "stopped"].includes(event.status.kind)) source.close();
      }
      addEventLine(describeEvent(event));
    });
  }
  source.addEventListener("gap", () => addEventLine("[earlier events were evicted]"));
  selected = { id, source, terminal: connectTerminal(id, term), term };
  term.focus();
}

$("stop").addEventListener("click", async () => {
  if (!selected) return;
  try {
    await json("DELETE", `/v1/sessions/${encodeURIComponent(selected.id)}`);
  } catch (error) {
    addEventLine(`stop failed: ${error.message}`);
  }
});

$("new-session").addEventListener("submit", async (event) => {
  event.preventDefault();
  $("form-error").textContent = "";
  try {
    const created = await json("POST", "/v1/sessions", {
      bundle: { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: $("entry").value }] },
      env: {},
      config: { image: $("image").value, pullPolicy: "missing" },
    });
    select(created.sessionId);
  } catch (error) {
    $("form-error").textContent = error.message;
  }
});

const capabilities = await json("GET", "/v1/capabilities");
$("runner").textContent = capabilities.displayName ?? "";
$("image").value = capabilities.config?.schema?.properties?.image?.default ?? "";
pollList();
