// A session's endpoints as one table, merged from the events that speak of them: `running`
// lists them (with host and url when routed), `endpoints` adds and removes, `route` says where
// the routing layer stands on each routed port, `reachability` whether the runner can dial it.
// A port is keyed by protocol/port, unique within a session; the agent's port is its own row.

const keyOf = (protocol, port, agent = false) => `${agent ? "agent " : ""}${protocol}/${port}`;

export class Endpoints {
  constructor(table) {
    this.table = table;
    this.rows = new Map();
  }

  row(key, fields) {
    const row = { ...(this.rows.get(key) ?? {}), ...fields };
    this.rows.set(key, row);
    return row;
  }

  /** Takes one stream event; events that say nothing of endpoints leave the table as it is. */
  apply(event) {
    if (event.type === "status" && event.status.kind === "running") {
      for (const endpoint of event.status.endpoints ?? []) this.row(keyOf(endpoint.protocol, endpoint.port), endpoint);
      const agent = event.status.agent;
      if (agent) this.row(keyOf(agent.protocol, agent.port, true), { ...agent, app: "agent" });
    } else if (event.type === "endpoints") {
      for (const endpoint of event.added ?? []) this.row(keyOf(endpoint.protocol, endpoint.port), { ...endpoint, app: event.app });
      for (const endpoint of event.removed ?? []) this.rows.delete(keyOf(endpoint.protocol, endpoint.port));
      // A rejection names a port only, no protocol: its own row, whatever the port's protocol.
      for (const rejected of event.rejected ?? []) this.row(`rejected ${rejected.port}`, { app: event.app, port: rejected.port, rejected: rejected.reason });
    } else if (event.type === "route") {
      // Routes (HTTP hosts) and reachability probes are for tcp ports only.
      const key = keyOf("tcp", event.port, event.app === undefined);
      this.row(key, { app: event.app ?? "agent", port: event.port, protocol: "tcp", host: event.host, route: event.state, routeReason: event.reason });
    } else if (event.type === "reachability") {
      this.row(keyOf("tcp", event.port), { app: event.app, port: event.port, protocol: "tcp", reachability: event.state });
    } else {
      return;
    }
    this.render();
  }

  render() {
    this.table.hidden = this.rows.size === 0;
    this.table.tBodies[0].replaceChildren(...[...this.rows.entries()].map(([key, row]) => renderRow(key, row)));
  }
}

function cell(content, className) {
  const td = document.createElement("td");
  if (className) td.className = className;
  td.append(content ?? "");
  return td;
}

function link(row) {
  if (row.url) {
    const anchor = document.createElement("a");
    anchor.href = row.url;
    anchor.target = "_blank";
    anchor.rel = "noopener noreferrer";
    anchor.textContent = row.url;
    return anchor;
  }
  if (row.rejected) return `rejected: ${row.rejected}`;
  return row.host ? row.host : "not routed";
}

function renderRow(key, row) {
  const tr = document.createElement("tr");
  tr.dataset.endpoint = key;
  if (row.route) tr.dataset.route = row.route;
  if (row.reachability) tr.dataset.reachability = row.reachability;
  const route = row.route ? `${row.route}${row.routeReason ? `: ${row.routeReason}` : ""}` : "—";
  tr.append(
    cell(row.protocol ? `${row.protocol}/${row.port}` : String(row.port)),
    cell(row.app ?? "app"),
    cell(route, row.route ? `state ${row.route}` : undefined),
    cell(row.reachability ?? "—", row.reachability ? `state ${row.reachability}` : undefined),
    cell(link(row)),
  );
  return tr;
}
