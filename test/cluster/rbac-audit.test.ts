/**
 * RBAC held to the real authorizer, after every other file of the tier has run (sequencer.ts):
 * the apiserver's audit log shows no 403 for any call of the runner's ServiceAccount (but for
 * calls its RBAC allows, refused while the apiserver restarted), and every verb k8s/base grants
 * was used by some call, except the grants rbac-expectations.ts explains. The same log holds
 * the runner to one delete per object and no attach to an ended container.
 */
import { describe, expect, inject, it } from "vitest";
import { rbacFindings, type RbacFindings } from "./fixture/audit.ts";
import { RUNNER_NAMESPACE, RUNNER_SERVICE_ACCOUNT } from "./fixture/cluster.ts";
import { GRANTS_THE_TIER_DOES_NOT_USE } from "./rbac-expectations.ts";

describe("the runner's ServiceAccount against the real authorizer", () => {
  let findings: RbacFindings;
  const audit = async () => (findings ??= await rbacFindings(inject("realCluster").auditLog, {
    namespace: RUNNER_NAMESPACE,
    serviceAccount: RUNNER_SERVICE_ACCOUNT,
    apiserverRestarts: inject("realCluster").apiserverRestarts,
  }));

  it("made calls, none of them refused with 403", async () => {
    const { calls, forbidden } = await audit();
    expect(calls).toBeGreaterThan(0);
    expect(forbidden.map((call) => `${call.verb} ${call.uri}`)).toEqual([]);
  });

  it("was refused while the apiserver restarted only calls its rules allow", async () => {
    expect((await audit()).restartRefusalsNotGranted).toEqual([]);
  });

  it("was allowed only what test/deploy/rbac.ts says the rules allow", async () => {
    expect((await audit()).checkerDisagrees).toEqual([]);
  });

  it("used every verb k8s/base grants, but those the tier cannot exercise", async () => {
    const explained = new Set(GRANTS_THE_TIER_DOES_NOT_USE.map(({ grant }) => JSON.stringify(grant)));
    expect((await audit()).unused.filter((grant) => !explained.has(JSON.stringify(grant)))).toEqual([]);
  });

  it("explains only grants the tier indeed leaves unused", async () => {
    const unused = new Set((await audit()).unused.map((grant) => JSON.stringify(grant)));
    expect(GRANTS_THE_TIER_DOES_NOT_USE.filter(({ grant }) => !unused.has(JSON.stringify(grant)))).toEqual([]);
  });

  it("deleted every object once: no DELETE answered 404", async () => {
    expect((await audit()).deletesNotFound.map((call) => `${call.verb} ${call.uri}`)).toEqual([]);
  });

  it("never attached to a container that had ended: no attach answered 5xx", async () => {
    expect((await audit()).attachesFailed.map((call) => `${call.code} ${call.uri}`)).toEqual([]);
  });
});
