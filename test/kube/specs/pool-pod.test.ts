/**
 * The warm pool's pure builders (docs/kubernetes.md "Warm pool"): the pool pod is a run pod with the session left out,
 * the claim script hands the kernel what a cold start does, the claim patch makes the pod the
 * session's. The claim script is read back with the simulated cluster's shell, which parses as sh.
 */
import { describe, expect, it } from "vitest";
import { LABEL } from "../../../src/kube/specs/names.ts";
import { claimedPod, claimScript, poolClaimUrl, poolPod, poolPodDeadlineSeconds, shellQuote, WAIT_SCRIPT } from "../../../src/kube/specs/pool-pod.ts";
import { runPod } from "../../../src/kube/specs/run-pod.ts";
import { parseSessionRecord } from "../../../src/kube/specs/session-record.ts";
import { parseShell, type Command } from "../../../src/sim/shell.ts";
import { expectAdmitted, expectSchemaValid, FULL_SETTINGS, PLAIN_SETTINGS, RUN_LIMITS, runSession, SESSION_ID } from "../fixtures.ts";

const CLAIM_URL = `http://runner:8063/internal/pool/telo-pool-0123456789ab?token=${"c".repeat(48)}`;

function pool(settings = PLAIN_SETTINGS) {
  return poolPod({ name: "telo-pool-0123456789ab", settings, limits: RUN_LIMITS, defaultImage: "telorun/node:latest-slim", claimUrl: CLAIM_URL, maxIdleSeconds: 600 });
}

function cold(settings = PLAIN_SETTINGS) {
  return runPod({
    session: runSession({ config: {} }),
    env: {},
    settings,
    limits: RUN_LIMITS,
    defaultImage: "telorun/node:latest-slim",
    bundleUrl: `http://runner:8063/internal/bundles/${SESSION_ID}?token=${"a".repeat(48)}`,
  });
}

describe("poolPod", () => {
  it.each([
    ["plain", PLAIN_SETTINGS],
    ["pull secret + runtime class", FULL_SETTINGS],
  ])("is the cold run pod of the default image but for the session (%s)", (_label, settings) => {
    const pod = pool(settings);
    const run = cold(settings);
    expectSchemaValid(pod);
    expectAdmitted("restricted", pod);
    // Labelled as the pool's, no session id, no record, no annotation at all.
    expect(pod.metadata).toEqual({ name: "telo-pool-0123456789ab", namespace: "telo-sessions", labels: { [LABEL.managedBy]: "telo-k8s-runner", [LABEL.owner]: "default", [LABEL.pool]: "true" } });
    const { initContainers, containers, volumes, activeDeadlineSeconds, ...podLevel } = pod.spec!;
    const { initContainers: _i, containers: runContainers, volumes: runVolumes, activeDeadlineSeconds: _d, ...runPodLevel } = run.spec!;
    expect(podLevel).toEqual(runPodLevel);
    expect(activeDeadlineSeconds).toBe(poolPodDeadlineSeconds(600, RUN_LIMITS.ttlSeconds));
    expect(volumes).toEqual([...runVolumes!, { name: "pool", emptyDir: {} }]);
    // The session container: the cold one's image, terminal, ceilings, mounts and hardening.
    const { command, env, volumeMounts, ...container } = containers[0]!;
    const { command: runCommand, env: runEnv, volumeMounts: runMounts, ...runContainer } = runContainers[0]!;
    expect(container).toEqual(runContainer);
    expect(volumeMounts).toEqual([...runMounts!, { name: "pool", mountPath: "/pool", readOnly: true }]);
    // NODE_OPTIONS comes with the claim, merged with the session's own.
    expect(env).toEqual([...runEnv!.filter(({ name }) => name !== "NODE_OPTIONS"), { name: "CLAIM_URL", value: CLAIM_URL }]);
    expect(command).toEqual(["/pool/busybox", "sh", "-c", WAIT_SCRIPT]);
    expect(runCommand).toEqual(["telo", "run", "/app/telo.yaml"]);
    expect(initContainers).toEqual([
      {
        name: "pool-shell",
        image: settings.initImage,
        command: ["cp", "/bin/busybox", "/pool/busybox"],
        resources: run.spec!.initContainers![0]!.resources,
        volumeMounts: [{ name: "pool", mountPath: "/pool" }],
        securityContext: run.spec!.initContainers![0]!.securityContext,
      },
    ]);
    expect(poolClaimUrl(pod)).toBe(CLAIM_URL);
  });

  it("waits in a loop the simulated shell runs as sh would: poll until claimed, then source the claim", () => {
    const script = parseShell(WAIT_SCRIPT, { CLAIM_URL });
    expect(script?.map((node) => node.kind ?? (node as Command).argv[0])).toEqual(["until", "."]);
  });
});

describe("claimScript", () => {
  const env = { GREETING: "it's \"quoted\" $HOME `x` \\", MULTI: "one\ntwo", EMPTY: "", HOME: "/elsewhere" };
  const bundleUrl = `http://runner:8063/internal/bundles/${SESSION_ID}?token=${"a".repeat(48)}&x='y'`;

  it("fetches the bundle, exports the env, forgets the claim, execs the cold command line", () => {
    const script = parseShell(claimScript({ bundleUrl, env, entryRelativePath: "apps/it's.yaml", inspect: true }), {});
    const argvs = script!.map((node) => (node as Command).argv);
    expect(argvs).toEqual([
      ["set", "-e"],
      ["/pool/busybox", "rm", "-f", "/tmp/claim"],
      ["/pool/busybox", "wget", "-q", "-O", "/tmp/bundle.tgz", bundleUrl],
      ["/pool/busybox", "tar", "xzf", "/tmp/bundle.tgz", "-C", "/app"],
      ["/pool/busybox", "rm", "-f", "/tmp/bundle.tgz"],
      ["unset", "CLAIM_URL"],
      // The kernel's own HOME wins, as the later duplicate does in a cold pod's env.
      ["export", `GREETING=${env.GREETING}`],
      ["export", "MULTI=one\ntwo"],
      ["export", "EMPTY="],
      ["export", "NODE_OPTIONS=--report-exclude-network"],
      ["exec", "telo", "run", "--inspect", "0.0.0.0:9230", "--no-open", "/app/apps/it's.yaml"],
    ]);
  });

  it("quotes every word so that nothing in it is the shell's", () => {
    for (const word of ["", "a b", "'", "''", "$(x)", "`x`", "\\", "\n", "a'b'c"]) {
      expect((parseShell(`echo ${shellQuote(word)}`, {})![0] as Command).argv).toEqual(["echo", word]);
    }
  });
});

describe("claimedPod", () => {
  it("carries the resourceVersion seen, the session's labels and record (names, no values), the TTL from now; the spec else unchanged", () => {
    const base = pool();
    const started = Date.parse("2026-12-01T10:00:00Z");
    const seen = { ...base, metadata: { ...base.metadata, resourceVersion: "42", uid: "u-1" }, status: { phase: "Running", startTime: new Date(started) } };
    const claimed = claimedPod({
      pod: seen,
      session: runSession({ config: {} }),
      settings: PLAIN_SETTINGS,
      env: { API_KEY: "s3cret" },
      annotations: { "sim.k8s-runner.dev/output": "x" },
      ttlSeconds: 3600,
      now: started + 90_500,
    });
    expect(claimed.metadata).toMatchObject({ name: base.metadata!.name, resourceVersion: "42", uid: "u-1", labels: { [LABEL.managedBy]: "telo-k8s-runner", [LABEL.sessionId]: SESSION_ID } });
    expect(claimed.metadata?.annotations?.["sim.k8s-runner.dev/output"]).toBe("x");
    expect(claimed.spec).toEqual({ ...base.spec, activeDeadlineSeconds: 91 + 3600 });
    expect(claimed.spec!.activeDeadlineSeconds).toBeLessThan(base.spec!.activeDeadlineSeconds!);
    expect(JSON.stringify(claimed)).not.toContain("s3cret");
    expect(parseSessionRecord(claimed)).toMatchObject({ sessionId: SESSION_ID, envNames: ["API_KEY"] });
  });
});
