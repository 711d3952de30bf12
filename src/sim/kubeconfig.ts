// The kubeconfig clients use to reach the simulator: one cluster, one context, a token user
// (the simulator authenticates nobody; client-node and kubectl still want a user entry).
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";

const CONTEXT = "k8s-runner-sim";

function kubeconfigYaml(server: string, namespace = "default"): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    // client-node 1.x refuses plain http unless TLS verification is explicitly off.
    clusters: [{ name: CONTEXT, cluster: { server, "insecure-skip-tls-verify": true } }],
    users: [{ name: CONTEXT, user: { token: "simulated" } }],
    contexts: [{ name: CONTEXT, context: { cluster: CONTEXT, user: CONTEXT, namespace } }],
    "current-context": CONTEXT,
    preferences: {},
  });
}

/** Writes the kubeconfig to `path`, or to a fresh temp directory; returns where it went. */
export async function writeKubeconfig(server: string, path?: string): Promise<string> {
  const target = path ?? join(await mkdtemp(join(tmpdir(), "k8s-runner-sim-")), "kubeconfig");
  await writeFile(target, kubeconfigYaml(server), { mode: 0o600 });
  return target;
}
