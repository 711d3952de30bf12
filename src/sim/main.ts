// `npm run sim`: the simulated cluster on its own, until interrupted. SIM_PORT / SIM_HOST /
// SIM_KUBECONFIG choose where it listens and where the kubeconfig goes; SIM_NAMESPACES
// (comma-separated) names namespaces to create at start.
import * as v from "valibot";
import { startSimulatedCluster } from "./index.ts";

const Env = v.object({
  SIM_PORT: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, "SIM_PORT must be an integer"), v.transform(Number), v.maxValue(65535, "SIM_PORT must be at most 65535")), "0"),
  SIM_HOST: v.optional(v.string(), "127.0.0.1"),
  SIM_KUBECONFIG: v.optional(v.string()),
  SIM_NAMESPACES: v.optional(
    v.pipe(
      v.string(),
      v.transform((s) => s.split(",").map((n) => n.trim()).filter((n) => n !== "")),
    ),
    "",
  ),
});

const parsed = v.safeParse(Env, process.env);
if (!parsed.success) {
  console.error(parsed.issues.map((i) => i.message).join("\n"));
  process.exit(2);
}
const env = parsed.output;
const cluster = await startSimulatedCluster({
  port: env.SIM_PORT,
  host: env.SIM_HOST,
  namespaces: env.SIM_NAMESPACES,
  ...(env.SIM_KUBECONFIG ? { kubeconfigPath: env.SIM_KUBECONFIG } : {}),
});
console.log(`simulated Kubernetes cluster listening on ${cluster.url}`);
console.log(`kubeconfig: ${cluster.kubeconfigPath}`);
console.log(`try: KUBECONFIG=${cluster.kubeconfigPath} kubectl get namespaces`);

const shutdown = async () => {
  await cluster.stop();
  process.exit(0);
};
process.once("SIGINT", shutdown);
process.once("SIGTERM", shutdown);
