import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  enforcedLevel,
  podSecurityForbiddenMessage,
  podSecurityForbiddenStatus,
  podSecurityViolations,
  type PodLike,
} from "../../../src/sim/admission/pod-security.ts";

const pod = (text: string) => parse(text) as PodLike;

/** The run pod of docs/kubernetes.md "Run pods": what the runner creates in the restricted namespace. */
const HARDENED = `
apiVersion: v1
kind: Pod
metadata:
  name: telo-run-k7m3qx4r2abc
  labels: {app.kubernetes.io/managed-by: telo-k8s-runner}
spec:
  restartPolicy: Never
  automountServiceAccountToken: false
  securityContext:
    runAsNonRoot: true
    runAsUser: 1000
    runAsGroup: 1000
    fsGroup: 1000
    seccompProfile: {type: RuntimeDefault}
  initContainers:
  - name: body-fetch
    image: busybox:stable
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      runAsNonRoot: true
      capabilities: {drop: ["ALL"]}
  containers:
  - name: session
    image: telorun/node:latest-slim
    ports: [{containerPort: 8080}]
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      runAsNonRoot: true
      capabilities: {drop: ["ALL"], add: ["NET_BIND_SERVICE"]}
  volumes:
  - {name: app, emptyDir: {}}
  - {name: workspace, configMap: {name: telo-workspace-app-0123456789ab}}
`;

/** A pod with no security settings at all (what a naive manifest looks like). */
const PLAIN = `
apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  containers:
  - {name: session, image: busybox}
`;

describe("podSecurityViolations", () => {
  it("admits the hardened run pod at restricted", () => {
    expect(podSecurityViolations("restricted", pod(HARDENED))).toEqual([]);
    expect(podSecurityViolations("baseline", pod(HARDENED))).toEqual([]);
  });

  it("reports the four restricted violations of an unhardened pod, in the plugin's order", () => {
    const violations = podSecurityViolations("restricted", pod(PLAIN));
    expect(violations).toEqual([
      'allowPrivilegeEscalation != false (container "session" must set securityContext.allowPrivilegeEscalation=false)',
      'unrestricted capabilities (container "session" must set securityContext.capabilities.drop=["ALL"])',
      'runAsNonRoot != true (pod or container "session" must set securityContext.runAsNonRoot=true)',
      'seccompProfile (pod or container "session" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    ]);
    expect(podSecurityForbiddenMessage("plain", "restricted", violations)).toBe(
      'pods "plain" is forbidden: violates PodSecurity "restricted:latest": ' +
        'allowPrivilegeEscalation != false (container "session" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "session" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or container "session" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or container "session" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    expect(podSecurityViolations("baseline", pod(PLAIN))).toEqual([]);
    expect(podSecurityViolations("privileged", pod(PLAIN))).toEqual([]);
  });

  it("looks at init, regular and ephemeral containers, pluralising the names", () => {
    const p = pod(HARDENED);
    p.spec!.initContainers![0]!.securityContext!.allowPrivilegeEscalation = true;
    p.spec!.ephemeralContainers = [{ name: "debugger", securityContext: { capabilities: { drop: ["ALL"] }, allowPrivilegeEscalation: false } }];
    p.spec!.containers![0]!.securityContext!.allowPrivilegeEscalation = null;
    expect(podSecurityViolations("restricted", p)).toEqual([
      'allowPrivilegeEscalation != false (containers "body-fetch", "session" must set securityContext.allowPrivilegeEscalation=false)',
    ]);
  });

  it("reports each baseline violation with its exact text", () => {
    const bad = pod(`
apiVersion: v1
kind: Pod
metadata:
  name: bad
  annotations:
    container.apparmor.security.beta.kubernetes.io/app: unconfined
spec:
  hostNetwork: true
  hostPID: true
  hostIPC: true
  securityContext:
    sysctls: [{name: kernel.msgmax, value: "1"}, {name: net.ipv4.tcp_syncookies, value: "1"}]
    seLinuxOptions: {type: spc_t}
  initContainers:
  - name: init
    image: busybox
    securityContext: {procMount: Unmasked}
  containers:
  - name: app
    image: busybox
    ports: [{containerPort: 80, hostPort: 80}, {containerPort: 443, hostPort: 443}]
    readinessProbe: {httpGet: {host: 10.0.0.1, port: 80}}
    securityContext:
      privileged: true
      capabilities: {add: [NET_RAW, SYS_ADMIN, CHOWN]}
      seccompProfile: {type: Unconfined}
      windowsOptions: {hostProcess: true}
  volumes:
  - {name: host, hostPath: {path: /var/run}}
`);
    expect(podSecurityViolations("baseline", bad)).toEqual([
      // joinQuote wraps without escaping, so the annotation's own quotes appear bare
      'forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/app="unconfined"")',
      "host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)",
      'hostPort (container "app" uses hostPorts 443, 80)',
      'probe or lifecycle host (container "app" uses probe or lifecycle host "10.0.0.1")',
      'privileged (container "app" must not set securityContext.privileged=true)',
      'procMount (container "init" must not set securityContext.procMount to "Unmasked")',
      'seLinuxOptions (pod set forbidden securityContext.seLinuxOptions: type "spc_t")',
      "forbidden sysctls (kernel.msgmax)",
      'hostProcess (container "app" must not set securityContext.windowsOptions.hostProcess=true)',
      'non-default capabilities (container "app" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
      'hostPath volumes (volume "host")',
      'seccompProfile (container "app" must not set securityContext.seccompProfile.type to "Unconfined")',
    ]);
  });

  it("reports AppArmor profile types set in the security context", () => {
    const p = pod(HARDENED);
    p.spec!.securityContext!.appArmorProfile = { type: "Unconfined" };
    expect(podSecurityViolations("baseline", p)).toEqual([
      'forbidden AppArmor profile (pod must not set AppArmor profile type to "Unconfined")',
    ]);
  });

  it("at restricted replaces the baseline capability, hostPath and seccomp checks with the stricter ones", () => {
    const p = pod(HARDENED);
    p.spec!.containers![0]!.securityContext!.capabilities = { drop: ["ALL"], add: ["NET_BIND_SERVICE", "CHOWN"] };
    p.spec!.containers![0]!.securityContext!.runAsUser = 0;
    p.spec!.securityContext!.seccompProfile = { type: "Unconfined" };
    p.spec!.volumes!.push({ name: "host", hostPath: { path: "/" } }, { name: "share", nfs: { server: "s", path: "/" } });
    expect(podSecurityViolations("restricted", p)).toEqual([
      'unrestricted capabilities (container "session" must not include "CHOWN" in securityContext.capabilities.add)',
      'restricted volume types (volumes "host", "share" use restricted volume types "hostPath", "nfs")',
      'runAsUser=0 (container "session" must not set runAsUser=0)',
      'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")',
    ]);
  });

  it("names pod and containers that explicitly set runAsNonRoot=false", () => {
    const p = pod(HARDENED);
    p.spec!.securityContext!.runAsNonRoot = false;
    p.spec!.containers![0]!.securityContext!.runAsNonRoot = false;
    expect(podSecurityViolations("restricted", p)).toEqual([
      'runAsNonRoot != true (pod and container "session" must not set securityContext.runAsNonRoot=false)',
    ]);
  });

  it("accepts container-level settings in place of pod-level ones", () => {
    const p = pod(HARDENED);
    delete p.spec!.securityContext;
    for (const c of [...p.spec!.initContainers!, ...p.spec!.containers!]) {
      c.securityContext!.seccompProfile = { type: "Localhost" };
    }
    expect(podSecurityViolations("restricted", p)).toEqual([]);
  });
});

describe("forbidden status and namespace level", () => {
  it("builds the 403 Status the apiserver returns", () => {
    expect(podSecurityForbiddenStatus("p", "baseline", ["host namespaces (hostPID=true)"])).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: 'pods "p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostPID=true)',
      reason: "Forbidden",
      details: { name: "p", kind: "pods" },
      code: 403,
    });
  });

  it("reads the enforce label of a namespace", () => {
    expect(enforcedLevel({ "pod-security.kubernetes.io/enforce": "restricted" })).toBe("restricted");
    expect(enforcedLevel({ "pod-security.kubernetes.io/enforce": "baseline" })).toBe("baseline");
    expect(enforcedLevel({ "kubernetes.io/metadata.name": "x" })).toBe("privileged");
    expect(enforcedLevel(undefined)).toBe("privileged");
    expect(enforcedLevel({ "pod-security.kubernetes.io/enforce": "strict" })).toBe("restricted");
  });
});
