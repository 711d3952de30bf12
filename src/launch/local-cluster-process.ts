/**
 * The embedded simulated cluster in a process of its own: whatever the
 * simulator does (a pathological tty, a burst of watches), it never runs on the api process's
 * event loop, and the api process never loads it or a Kubernetes client.
 * The child lays the cluster out with startLocalCluster and reports where it listens.
 */
import { type ChildProcess, fork } from "node:child_process";
import * as v from "valibot";
import { entryPath } from "../install-layout.ts";

const ReadyMessageSchema = v.object({
  kind: v.literal("ready"),
  url: v.string(),
  kubeconfigPath: v.string(),
  env: v.record(v.string(), v.string()),
});

export type LocalClusterProcess = {
  url: string;
  kubeconfigPath: string;
  /** What the runner needs to use the cluster (startLocalCluster's env). */
  env: Record<string, string>;
  child: ChildProcess;
  stop(): Promise<void>;
};

const entry = entryPath("launch/local-cluster-main");

export function forkLocalCluster(env: NodeJS.ProcessEnv): Promise<LocalClusterProcess> {
  const child = fork(entry, { env, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`the embedded simulated cluster exited (code ${code}) before it was ready`));
    child.once("exit", exited);
    child.once("message", (message) => {
      child.off("exit", exited);
      const ready = v.safeParse(ReadyMessageSchema, message);
      if (!ready.success) {
        child.kill("SIGKILL");
        reject(new Error("the embedded simulated cluster sent an unexpected message"));
        return;
      }
      resolve({
        url: ready.output.url,
        kubeconfigPath: ready.output.kubeconfigPath,
        env: ready.output.env,
        child,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    });
  });
}
