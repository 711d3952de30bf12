/**
 * Every object a builder can produce, in every combination of its options (builder-matrix.ts), is
 * valid against the official schema and admitted by the Pod Security level of the namespace it
 * goes to (`restricted` for sessions, `baseline` for builds).
 */
import { describe, expect, it } from "vitest";
import type { V1Job } from "@kubernetes/client-node";
import { expectAdmitted, expectSchemaValid } from "../fixtures.ts";
import { builtObjects } from "./builder-matrix.ts";

const objects = builtObjects();

describe.each(["run pod", "app pod", "watch pod", "build Job", "Service", "Ingress", "HTTPRoute", "workspace ConfigMap"] as const)("%s", (builder) => {
  it.each(objects.filter((built) => built.builder === builder).map((built) => [built.label, built] as const))("%s", (_, built) => {
    expectSchemaValid(built.object);
    if (built.builder === "build Job") {
      const job = built.object as V1Job;
      expectAdmitted("baseline", { metadata: job.metadata, spec: job.spec?.template.spec });
    } else if (built.builder.endsWith("pod")) {
      expectAdmitted("restricted", built.object);
    }
  });
});

it("a port set with TCP builds an Ingress, one without builds none", () => {
  const ingressLabels = new Set(objects.filter((built) => built.builder === "Ingress").map((built) => built.label));
  const serviceLabels = objects.filter((built) => built.builder === "Service").map((built) => built.label);
  expect(serviceLabels.filter((label) => !ingressLabels.has(label)).every((label) => label.startsWith("udp,"))).toBe(true);
  expect([...ingressLabels].every((label) => label.startsWith("tcp") )).toBe(true);
});
