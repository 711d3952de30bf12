// One open session: its status, the Telo version its kernel reports, its endpoints, the
// waterfall of its start, its terminal, its events, and Stop. Several panels live side by
// side, each with its own event stream and terminal, so several sessions are watched at once.
import { RunnerError, json, sessionPath } from "./api.js";
import { TERMINAL_KINDS, describeEvent, statusText } from "./describe.js";
import { Endpoints } from "./endpoints.js";
import { openTerminal } from "./terminal.js";
import { renderTimeline } from "./timeline.js";

const EVENT_TYPES = ["status", "progress", "debug", "reachability", "run", "endpoints", "route"];
// A long-lived session's debug stream is unbounded; the page keeps the newest lines only.
const MAX_EVENT_LINES = 2000;

/** What the Telo line says: the version each app's kernel reported, against the one asked for. */
function teloText(reported, requested) {
  const versions = [...new Set(reported.values())];
  if (versions.length === 0) return requested ? `${requested} requested, not reported yet` : "not reported";
  const text = versions.join(", ");
  if (requested && versions.some((version) => version !== requested)) return `${text} (requested ${requested})`;
  return text;
}

export class SessionPanel {
  /** `requested`: the Telo version this page asked for, when it started the session. */
  constructor(template, id, { requested, onClose }) {
    this.id = id;
    this.requested = requested;
    this.reported = new Map();
    this.element = template.content.firstElementChild.cloneNode(true);
    this.element.dataset.sessionId = id;
    this.$ = (name) => this.element.querySelector(`.${name}`);
    const headingId = `session-${id}-heading`;
    this.$("heading").id = headingId;
    this.element.setAttribute("aria-labelledby", headingId);
    this.$("id").textContent = id;
    this.$("stop").setAttribute("aria-label", `Stop session ${id}`);
    this.$("close").setAttribute("aria-label", `Close the panel of session ${id}`);
    this.$("stop").addEventListener("click", () => this.stop());
    this.$("close").addEventListener("click", () => onClose(this));
    this.endpoints = new Endpoints(this.$("endpoints"));
    this.showTelo();
  }

  /** Starts the event stream and the terminal; call once the panel is in the page (the terminal measures its width). */
  start() {
    const hint = this.$("term-hint");
    hint.id = `session-${this.id}-term-hint`;
    this.terminal = openTerminal(this.$("term-host"), this.id, `Terminal of session ${this.id}`, hint.id);
    this.source = new EventSource(sessionPath(this.id, "/events"));
    for (const type of EVENT_TYPES) this.source.addEventListener(type, (message) => this.onEvent(JSON.parse(message.data)));
    this.source.addEventListener("gap", () => this.log("[earlier events were evicted]"));
  }

  onEvent(event) {
    if (event.type === "status") {
      this.showStatus(event.status);
      // The stream ends after a terminal status; no reconnect.
      if (TERMINAL_KINDS.includes(event.status.kind)) this.source.close();
    }
    if (event.type === "run" && event.phase === "started" && event.telo !== undefined) {
      this.reported.set(event.app, event.telo);
      this.showTelo();
    }
    this.endpoints.apply(event);
    this.log(describeEvent(event), event.type);
  }

  showStatus(status) {
    const badge = this.$("status");
    badge.textContent = statusText(status);
    badge.className = `status ${status.kind}`;
    badge.dataset.kind = status.kind;
    this.$("stop").disabled = TERMINAL_KINDS.includes(status.kind);
  }

  showTelo() {
    const line = this.$("telo");
    line.textContent = teloText(this.reported, this.requested);
    const mismatch = this.requested !== undefined && [...this.reported.values()].some((version) => version !== this.requested);
    line.classList.toggle("warning", mismatch);
  }

  /** The session document from the list: mode, creation time and the start's timeline. */
  update(session) {
    this.$("mode").textContent = session.mode;
    this.$("created").textContent = new Date(session.createdAt).toLocaleString();
    renderTimeline(this.$("timeline"), session.timeline);
  }

  log(text, type = "note") {
    const list = this.$("events");
    const item = document.createElement("li");
    item.dataset.type = type;
    item.textContent = text;
    list.append(item);
    while (list.childElementCount > MAX_EVENT_LINES) list.firstElementChild.remove();
    list.scrollTop = list.scrollHeight;
  }

  async stop() {
    try {
      await json("DELETE", sessionPath(this.id));
    } catch (error) {
      this.log(`stop failed: ${error instanceof RunnerError ? error.message : String(error)}`);
    }
  }

  focus() {
    this.terminal?.focus();
  }

  /** Closes the page's view of the session; the session itself keeps running. */
  dispose() {
    this.source?.close();
    this.terminal?.close();
    this.element.remove();
  }
}
