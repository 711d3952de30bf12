/**
 * The pod of the RuntimeClass check (status/runtime-class.ts), only ever created with
 * `dryRun=All`: nothing runs and nothing is stored. It names the RuntimeClass and passes the
 * `restricted` Pod Security profile and the namespace quota, so a refusal is about the class.
 */
import type { V1Pod } from "@kubernetes/client-node";
import { HARDENED_CONTAINER_SECURITY, HARDENED_POD_SECURITY } from "./pod-common.ts";

export function runtimeClassProbePod(runtimeClass: string, image: string): V1Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "telo-runtime-class-check" },
    spec: {
      runtimeClassName: runtimeClass,
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      securityContext: HARDENED_POD_SECURITY,
      containers: [
        {
          name: "check",
          image,
          resources: { limits: { cpu: "50m", memory: "64Mi" }, requests: { cpu: "50m", memory: "64Mi" } },
          securityContext: HARDENED_CONTAINER_SECURITY,
        },
      ],
    },
  };
}
