// One line of text per session status and stream event, for the badge and the event log.

export const TERMINAL_KINDS = ["exited", "failed", "stopped"];

export function statusText(status) {
  if (status.kind === "exited") return `exited (${status.code})`;
  if (status.kind === "failed") return `failed: ${status.message}`;
  return status.kind;
}

const port = (endpoint) => `${endpoint.protocol}/${endpoint.port}`;

function describeRun(event) {
  const head = `run ${event.app} #${event.generation} ${event.phase}`;
  if (event.phase === "started") return `${head} (${event.trigger})${event.telo !== undefined ? ` on telo ${event.telo}` : ""}`;
  if (event.phase === "completed") return `${head} (${event.code})${event.durationMs !== undefined ? ` in ${event.durationMs} ms` : ""}`;
  return `${head}: ${event.reason}`;
}

function describeEndpoints(event) {
  const parts = [
    ...(event.added ?? []).map((endpoint) => `+${port(endpoint)}`),
    ...(event.removed ?? []).map((endpoint) => `-${port(endpoint)}`),
    ...(event.rejected ?? []).map((rejected) => `rejected ${rejected.port}: ${rejected.reason}`),
  ];
  return `endpoints ${event.app} ${parts.join(" ")}`;
}

export function describeEvent(event) {
  switch (event.type) {
    case "status":
      return `status ${statusText(event.status)}`;
    case "progress":
      return `progress [${event.phase}] ${event.message}${event.done ? " (done)" : ""}`;
    case "run":
      return describeRun(event);
    case "debug":
      // Kernel event frames: their name says what happened; the payload stays out of the line.
      return `debug ${event.app} ${event.frame.event ?? event.frame.kind ?? "frame"}`;
    case "reachability":
      return `reachability ${event.app}:${event.port} ${event.state}`;
    case "endpoints":
      return describeEndpoints(event);
    case "route":
      return `route ${event.host} (${event.app ?? "agent"}:${event.port}) ${event.state}${event.reason ? `: ${event.reason}` : ""}`;
    default:
      return `${event.type} ${JSON.stringify(event)}`;
  }
}
