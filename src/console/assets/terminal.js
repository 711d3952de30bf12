// A session's terminal: xterm.js on the session's I/O WebSocket (docs/api.md "Terminal
// (WebSocket)"), sized to the width it is given, so a narrow window gets a narrow terminal.
import { Terminal } from "./xterm.mjs";
import { sessionPath } from "./api.js";

const encoder = new TextEncoder();
const FONT = { size: 13, family: "ui-monospace, monospace" };
const ROWS = 20;

// Close codes after which reopening cannot help; others (1006, 1011: an api restart) reopen
// from the last byte shown, with backoff, and keys typed meanwhile wait.
const FINAL_CLOSE_CODES = new Set([1000, 1001, 1005, 4403, 4404, 4410]);

let charWidth;
/** The width of one cell of the terminal's font, measured once. */
function cellWidth() {
  if (charWidth === undefined) {
    const context = document.createElement("canvas").getContext("2d");
    context.font = `${FONT.size}px ${FONT.family}`;
    charWidth = context.measureText("M".repeat(100)).width / 100;
  }
  return charWidth;
}

const columnsFor = (host) => Math.max(20, Math.min(160, Math.floor((host.clientWidth - 16) / cellWidth())));

function onFrame(state, term, message) {
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
}

function connect(id, term) {
  const state = { socket: undefined, lastSeq: 0, delay: 250, pending: [], closed: false };
  const sendResize = () => {
    if (state.socket?.readyState === WebSocket.OPEN) state.socket.send(JSON.stringify({ type: "resize", cols: term.cols, rows: term.rows }));
  };
  const open = () => {
    const url = new URL(sessionPath(id, "/io"), location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("lastSeq", String(state.lastSeq));
    const socket = new WebSocket(url);
    state.socket = socket;
    socket.binaryType = "arraybuffer";
    socket.addEventListener("open", () => {
      state.delay = 250;
      sendResize();
      for (const bytes of state.pending.splice(0)) socket.send(bytes);
    });
    socket.addEventListener("message", (message) => onFrame(state, term, message));
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
  term.onResize(sendResize);
  open();
  return () => {
    state.closed = true;
    state.socket?.close(1000);
  };
}

/**
 * The terminal takes Tab (the app may want it), which would trap a keyboard user inside it:
 * Escape then Tab (or Shift+Tab) leaves it instead. The Escape still reaches the app.
 */
function escapeThenTabLeaves(term) {
  let escaped = false;
  term.attachCustomKeyEventHandler((event) => {
    if (event.type !== "keydown") return !(escaped && event.key === "Tab");
    if (escaped && event.key === "Tab") return false;
    escaped = event.key === "Escape";
    return true;
  });
}

/** Opens session `id`'s terminal in `host`; returns what closes it (the session keeps running). */
export function openTerminal(host, id, label, hintId) {
  const term = new Terminal({ cols: columnsFor(host), rows: ROWS, fontSize: FONT.size, fontFamily: FONT.family });
  term.open(host);
  escapeThenTabLeaves(term);
  // xterm's input is a textarea; its name is what a screen reader announces on focus.
  const input = host.querySelector("textarea");
  input?.setAttribute("aria-label", label);
  input?.setAttribute("aria-describedby", hintId);
  const resize = new ResizeObserver(() => {
    const cols = columnsFor(host);
    if (cols !== term.cols) term.resize(cols, ROWS);
  });
  resize.observe(host);
  const close = connect(id, term);
  return {
    focus: () => term.focus(),
    close() {
      resize.disconnect();
      close();
      term.dispose();
    },
  };
}
