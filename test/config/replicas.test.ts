import { describe, expect, it } from "vitest";
import { loadCoreConfig } from "../../src/config/core.ts";
import { loadKubeConfig } from "../../src/config/kube.ts";
import { leaseTiming, replicaSettings } from "../../src/config/replicas.ts";
import { timingProblem } from "../../src/replicas/lease-rules.ts";

const SELF_URL = "http://10.0.0.5:8063";
const SECRET = "a-shared-credential-of-enough-length-0123";

/** The replica settings both processes' variables give, as the supervisor's startup computes them. */
function settings(env: Record<string, string>, warmPool = "0") {
  const all = { RUNNER_SELF_URL: SELF_URL, RUNNER_WARM_POOL_SIZE: warmPool, ...env };
  // The kube variables load beside them as at startup (the warm pool's among them).
  loadKubeConfig(all);
  const core = loadCoreConfig(all);
  return replicaSettings(core.replicas, core.peer);
}

describe("replica settings", () => {
  it("are off without RUNNER_REPLICA_ID: one replica, as every install before", () => {
    expect(settings({})).toBeUndefined();
  });

  it("read the identity, the advertised address, the shard count and the lease timing", () => {
    const read = settings({
      RUNNER_REPLICA_ID: "telo-k8s-runner-7f9c-abcde",
      RUNNER_PEER_LISTEN: "0.0.0.0:8065",
      RUNNER_PEER_SECRET: SECRET,
      RUNNER_PEER_ADVERTISE: "10.0.0.5:8065",
      RUNNER_SHARDS: "16",
      RUNNER_LEASE_DURATION_SECONDS: "30",
    });
    expect(read).toEqual({ identity: "telo-k8s-runner-7f9c-abcde", peerAddress: "10.0.0.5:8065", shardCount: 16, timing: { durationSeconds: 30, renewDeadlineMs: 20_000, retryMs: 4_000 } });
  });

  it("advertise the peer listener's own address when it names one", () => {
    const read = settings({ RUNNER_REPLICA_ID: "a", RUNNER_PEER_LISTEN: "127.0.0.1:9000", RUNNER_PEER_SECRET: SECRET });
    expect(read).toMatchObject({ peerAddress: "127.0.0.1:9000", shardCount: 32, timing: { durationSeconds: 15, renewDeadlineMs: 10_000, retryMs: 2_000 } });
    expect(settings({ RUNNER_REPLICA_ID: "a", RUNNER_PEER_LISTEN: "[::1]:9000", RUNNER_PEER_SECRET: SECRET })?.peerAddress).toBe("[::1]:9000");
  });

  it("take an IPv6 pod address as `$(POD_IP):8065` gives it, unbracketed, and advertise it bracketed", () => {
    const replica = { RUNNER_REPLICA_ID: "a", RUNNER_PEER_LISTEN: "[::]:8065", RUNNER_PEER_SECRET: SECRET };
    expect(settings({ ...replica, RUNNER_PEER_ADVERTISE: "fd00:10:244::5:8065" })?.peerAddress).toBe("[fd00:10:244::5]:8065");
    expect(settings({ ...replica, RUNNER_PEER_ADVERTISE: "[fd00:10:244::5]:8065" })?.peerAddress).toBe("[fd00:10:244::5]:8065");
    expect(settings({ ...replica, RUNNER_PEER_ADVERTISE: "::ffff:10.0.0.5:8065" })?.peerAddress).toBe("[::ffff:10.0.0.5]:8065");
    expect(() => settings({ ...replica, RUNNER_PEER_ADVERTISE: "fd00:10:244::5" })).toThrow("RUNNER_PEER_ADVERTISE must be IP:port");
    expect(() => settings({ ...replica, RUNNER_PEER_ADVERTISE: "10.0.0.5:1:8065" })).toThrow("RUNNER_PEER_ADVERTISE must be IP:port");
  });

  it.each([
    [{ RUNNER_REPLICA_ID: "Replica_A" }, "RUNNER_REPLICA_ID must be a DNS-1123 label"],
    [{ RUNNER_REPLICA_ID: "a" }, "RUNNER_REPLICA_ID needs RUNNER_PEER_LISTEN"],
    [{ RUNNER_PEER_LISTEN: "127.0.0.1:9000" }, "RUNNER_PEER_LISTEN needs RUNNER_PEER_SECRET"],
    [{ RUNNER_REPLICA_ID: "a", RUNNER_PEER_LISTEN: "0.0.0.0:8065", RUNNER_PEER_SECRET: SECRET }, "needs RUNNER_PEER_ADVERTISE"],
    [{ RUNNER_PEER_ADVERTISE: "10.0.0.5:8065" }, "RUNNER_PEER_ADVERTISE needs RUNNER_REPLICA_ID"],
    [{ RUNNER_REPLICA_ID: "a", RUNNER_PEER_ADVERTISE: "pod-a:8065" }, "RUNNER_PEER_ADVERTISE must be IP:port"],
    [{ RUNNER_SHARDS: "2048" }, "RUNNER_SHARDS must be at most 1024"],
    [{ RUNNER_LEASE_DURATION_SECONDS: "1" }, "RUNNER_LEASE_DURATION_SECONDS must be at least 2"],
  ])("refuse %j", (env, message) => expect(() => settings(env)).toThrow(message));

  it("accept the warm pool beside several replicas (docs/replicas.md)", () => {
    expect(settings({ RUNNER_REPLICA_ID: "a", RUNNER_PEER_LISTEN: "127.0.0.1:9000", RUNNER_PEER_SECRET: SECRET }, "2")).toMatchObject({ identity: "a", peerAddress: "127.0.0.1:9000" });
  });

  it("keep client-go's proportions at every allowed duration, which the Lease rules accept", () => {
    for (let seconds = 2; seconds <= 120; seconds++) expect(timingProblem(leaseTiming(seconds))).toBeUndefined();
  });
});
