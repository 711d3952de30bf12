// The session console in the browser. Everything goes through the runner's public /v1 routes
// (capabilities, create, events over SSE, the terminal WebSocket, stop) except the session
// list, which the console serves at /console/api/sessions. The list is polled; each open
// session's panel streams its own events, and several panels are open at once.
import { json } from "./api.js";
import { offer } from "./capabilities.js";
import { statusText } from "./describe.js";
import { setUpForm } from "./form.js";
import { SessionPanel } from "./session-panel.js";

const LIST_POLL_MS = 1000;
const $ = (id) => document.getElementById(id);

const panels = new Map();
let latest = new Map(); // sessionId → the newest session document the list gave

function markOpen() {
  for (const row of $("sessions").tBodies[0].rows) row.classList.toggle("open", panels.has(row.dataset.sessionId));
}

/** Opens session `id`'s panel (or brings the open one into view) and moves the focus to it. */
function open(id, requested) {
  let panel = panels.get(id);
  if (!panel) {
    panel = new SessionPanel($("session-panel"), id, { requested, onClose: close });
    panels.set(id, panel);
    $("panels").prepend(panel.element);
    panel.start();
    if (latest.has(id)) panel.update(latest.get(id));
    markOpen();
  }
  panel.element.scrollIntoView({ block: "nearest" });
  panel.focus();
}

function close(panel) {
  panel.dispose();
  panels.delete(panel.id);
  markOpen();
  // The panel held the focus; the list is where the next one is chosen.
  $("sessions").focus();
}

function listRow(session) {
  const row = document.createElement("tr");
  row.dataset.sessionId = session.sessionId;
  row.dataset.status = session.status.kind;
  const button = document.createElement("button");
  button.type = "button";
  button.className = "link";
  button.textContent = session.sessionId;
  button.setAttribute("aria-label", `Open session ${session.sessionId}`);
  button.addEventListener("click", () => open(session.sessionId));
  const cells = [button, session.mode, statusText(session.status), new Date(session.createdAt).toLocaleTimeString()];
  row.append(
    ...cells.map((content) => {
      const cell = document.createElement("td");
      cell.append(content);
      return cell;
    }),
  );
  return row;
}

function renderList(sessions) {
  latest = new Map(sessions.map((session) => [session.sessionId, session]));
  const sorted = sessions.toSorted((a, b) => b.createdAt.localeCompare(a.createdAt));
  // Rebuilding the rows would drop the focus of a keyboard user on one of them: keep it.
  const focused = document.activeElement?.closest("#sessions tr")?.dataset.sessionId;
  $("sessions").tBodies[0].replaceChildren(...sorted.map(listRow));
  if (focused) $("sessions").querySelector(`tr[data-session-id="${focused}"] button`)?.focus();
  markOpen();
  for (const [id, panel] of panels) if (latest.has(id)) panel.update(latest.get(id));
}

let pollTimer;
/** Reads the list now, and again every LIST_POLL_MS (one timer, however many reads overlap). */
async function pollList() {
  try {
    renderList((await json("GET", "/console/api/sessions")).sessions);
    $("list-error").textContent = "";
  } catch (error) {
    $("list-error").textContent = `session list: ${error.message}`;
  }
  clearTimeout(pollTimer);
  pollTimer = setTimeout(pollList, LIST_POLL_MS);
}

const capabilities = await json("GET", "/v1/capabilities");
offer(capabilities);
setUpForm(capabilities, ({ sessionId, requested }) => {
  open(sessionId, requested);
  // The new session is listed, and its panel filled, without waiting for the next tick.
  pollList();
});
pollList();
