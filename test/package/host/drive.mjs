// Run in the project that installed the package: one session on the runner at argv[2] (a base
// URL, with the host's prefix when embedded), through the installed typed client. Prints one
// JSON line: the terminal's output, the statuses seen, the session's last document, and the
// answer to a create without `env` (docs/api.md says it is required).
import { RunnerClient } from "k8s-runner/client";

const base = process.argv[2];
const client = new RunnerClient(base);
const bundle = { entryRelativePath: "telo.yaml", files: [{ relativePath: "telo.yaml", contents: "kind: Telo.Application\n" }] };
const { sessionId } = await client.createSession({
  bundle,
  env: {},
  config: { simulate: { output: "hello from the package\n", "exit-code": 0, "run-ms": 1500 } },
});
const terminal = client.terminal(sessionId);
let output = "";
// The terminal replays the output from its start and closes when the app has ended.
for await (const frame of terminal.frames()) if (frame.kind === "bytes") output += Buffer.from(frame.payload).toString();
const statuses = [];
for await (const item of client.events(sessionId)) {
  if (!("event" in item) || item.event.type !== "status") continue;
  statuses.push(item.event.status.kind);
  if (["exited", "failed", "stopped"].includes(item.event.status.kind)) break;
}
const withoutEnv = await fetch(`${base}/v1/sessions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ bundle }) });
const answer = { output, statuses, session: await client.getSession(sessionId), withoutEnv: { status: withoutEnv.status, body: await withoutEnv.json() } };
process.stdout.write(`${JSON.stringify(answer)}\n`);
