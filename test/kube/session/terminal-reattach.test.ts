/**
 * A terminal whose attach stream opens and closes at once (docs/kubernetes.md "Terminal"): the
 * backend in-process against the simulated cluster, so that the re-attach pause can be short
 * (the runner's own is a second, doubling to eight: a minute to give up). Real sockets
 * throughout: the simulated apiserver's attach WebSocket, which with `attach-closes-at-once`
 * upgrades, writes an InternalError Status and closes, as kube-apiserver does when it cannot
 * reach the kubelet; the attaches are counted by the simulator.
 */
import { CoreV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PodWatcher } from "../../../src/kube/cluster/pod-watcher.ts";
import { ATTACH_ATTEMPTS, SHORT_LIVED_ATTACH_MS } from "../../../src/kube/retry/attach-retry.ts";
import type { Backend } from "../../../src/sessions/backend-seam.ts";
import { ANNOTATION_PREFIX } from "../../../src/sim/behaviour.ts";
import type { SimulatedCluster } from "../../../src/sim/index.ts";
import { type InProcessBackend, SESSION_NAMESPACE as NAMESPACE, recorder, runSpec, startInProcessBackend } from "../../support/in-process-backend.ts";
import { waitFor } from "../../support/wait.ts";

const REATTACH_DELAY_MS = 50;
/** The longest pause between attempts: eight times the first (attach-retry.ts). */
const LONGEST_PAUSE_MS = 8 * REATTACH_DELAY_MS;
const CLOSES_AT_ONCE = `${ANNOTATION_PREFIX}attach-closes-at-once.session`;
const GAVE_UP =
  `[runner] failed to attach PTY: the Kubernetes API closed the attach stream as soon as it opened (InternalError, HTTP 500); ` +
  `gave up after ${ATTACH_ATTEMPTS} attempts`;

const occurrences = (text: string, marker: string) => text.split(marker).length - 1;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a terminal whose attach closes as soon as it opens", () => {
  let harness: InProcessBackend;
  let sim: SimulatedCluster;
  let backend: Backend;
  let watcher: PodWatcher;

  beforeAll(async () => {
    harness = await startInProcessBackend({ timings: { reattachDelayMs: REATTACH_DELAY_MS } });
    ({ sim, backend, watcher } = harness);
  });
  afterAll(() => harness?.close());

  const attaches = () => sim.counters().requests["get pods/attach"] ?? 0;
  const podName = (sessionId: string) => `telo-run-${sessionId}`;
  /** Whether the pod's next attaches close at once (the simulator reads the annotation at each). */
  const setClosesAtOnce = async (sessionId: string, on: boolean) => {
    const core = sim.kubeConfig().makeApiClient(CoreV1Api);
    const pod = await core.readNamespacedPod({ name: podName(sessionId), namespace: NAMESPACE });
    pod.metadata = { ...pod.metadata, annotations: { ...pod.metadata?.annotations, [CLOSES_AT_ONCE]: String(on) } };
    await core.replaceNamespacedPod({ name: podName(sessionId), namespace: NAMESPACE, body: pod });
  };

  it("tries a bounded number of times, then says once why it gave up, and the session runs on", async () => {
    const sessionId = "closesatonce";
    const before = attaches();
    const { statuses, text, callbacks } = recorder();
    const { workload, running } = await backend.start(runSpec(sessionId, { "attach-closes-at-once": true }), callbacks);
    expect(running).toMatchObject({ kind: "running" });
    await waitFor("the terminal to say it gave up", () => text().includes("failed to attach") || undefined);
    expect(text()).toContain(GAVE_UP);
    expect(attaches() - before).toBe(ATTACH_ATTEMPTS);
    // Nothing more: no attach, no second line, while the session still runs.
    await sleep(3 * LONGEST_PAUSE_MS);
    expect(attaches() - before).toBe(ATTACH_ATTEMPTS);
    expect(occurrences(text(), "failed to attach")).toBe(1);
    expect(statuses).toEqual([]);
    expect(watcher.get(podName(sessionId))?.status?.phase).toBe("Running");
    await workload.stop();
    await workload.done;
  });

  it("counts afresh after a stream that stayed open, so a later run of closes is tried as many times again", async () => {
    const sessionId = "closeslaterx";
    const before = attaches();
    const { text, callbacks } = recorder();
    const { workload } = await backend.start(runSpec(sessionId, { "attach-closes-at-once": true }), callbacks);
    // A few attempts close at once; then the kubelet is reachable again and the next attach stays open.
    await waitFor("a few attempts", () => attaches() - before >= 3 || undefined);
    await setClosesAtOnce(sessionId, false);
    // Keep typing until the attach echoes (keystrokes sent to a stream that closed are lost).
    const typing = setInterval(() => workload.writeStdin("app", Buffer.from("again\r")), 200);
    try {
      await waitFor("the attach to work", () => text().includes("again\r\nagain") || undefined);
    } finally {
      clearInterval(typing);
    }
    expect(text()).not.toContain("failed to attach");
    // Open long enough to count as a stream that was used, then cut; every attach closes at once again.
    await sleep(SHORT_LIVED_ATTACH_MS + 200);
    await setClosesAtOnce(sessionId, true);
    const beforeCut = attaches();
    expect(sim.faults.cutAttachStreams({ pod: podName(sessionId) })).toBe(1);
    await waitFor("the terminal to say it gave up", () => text().includes("failed to attach") || undefined);
    expect(text()).toContain(GAVE_UP);
    expect(attaches() - beforeCut).toBe(ATTACH_ATTEMPTS);
    expect(watcher.get(podName(sessionId))?.status?.phase).toBe("Running");
    await workload.stop();
    await workload.done;
  });
});
