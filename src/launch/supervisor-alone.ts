/**
 * `k8s-runner supervisor`: the supervisor process alone, for a host that serves the `/v1` routes
 * itself (docs/clients.md, embedding). As under `k8s-runner serve`, with no cluster configured it
 * runs the embedded simulated cluster, so the embedding can be tried anywhere. The supervisor
 * runs as a child, not in this process, so the simulated cluster's child is stopped after it
 * however the supervisor ends; both end with this process (a signal, or the parent gone).
 */
import { fork } from "node:child_process";
import { currentEnv } from "../config/environment.ts";
import { entryPath } from "../install-layout.ts";
import { embeddedClusterUnlessConfigured } from "./embedded-cluster.ts";
import { forkWithNodeRuntime } from "./node-runtime.ts";
import { onStopRequest } from "./parent.ts";

const env = currentEnv();
const simulated = await embeddedClusterUnlessConfigured(env);
const supervisor = fork(entryPath("supervisor/main"), { ...forkWithNodeRuntime(env), stdio: "inherit" });
let stopping = false;

/** The supervisor's exit code is this process's, once the simulated cluster is stopped too. */
supervisor.once("exit", (code, signal) => {
  stopping = true;
  void (simulated?.stop() ?? Promise.resolve()).then(() => process.exit(code ?? (signal === "SIGTERM" ? 0 : 1)));
});
simulated?.child.once("exit", (code, signal) => {
  if (stopping) return;
  process.stderr.write(`k8s-runner supervisor: the embedded simulated cluster exited (code ${code}, signal ${signal}); stopping\n`);
  supervisor.kill("SIGTERM");
});
onStopRequest(() => {
  stopping = true;
  supervisor.kill("SIGTERM");
});
