import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  formatInvalidMessage,
  invalidStatus,
  knownKinds,
  validateAgainstSchema,
} from "../../../src/sim/admission/schema.ts";

const manifest = (text: string) => parse(text) as { apiVersion?: string; kind?: string; metadata?: { name?: string } };

const runPod = manifest(`
apiVersion: v1
kind: Pod
metadata:
  name: telo-run-k7m3qx4r2abc
  namespace: telo-sessions
  labels:
    app.kubernetes.io/managed-by: telo-k8s-runner
    telo.run/session-id: k7m3qx4r2abc
spec:
  restartPolicy: Never
  activeDeadlineSeconds: 3600
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
    command: ["sh", "-c"]
    args: ['set -e; wget -qO /tmp/body.tgz "http://x"; tar xzf /tmp/body.tgz -C /app']
    resources:
      limits: {cpu: 100m, memory: 64Mi}
      requests: {cpu: 100m, memory: 64Mi}
    volumeMounts:
    - {name: app, mountPath: /app}
    - {name: tmp, mountPath: /tmp}
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      runAsNonRoot: true
      capabilities: {drop: ["ALL"]}
  containers:
  - name: session
    image: telorun/node:latest-slim
    imagePullPolicy: IfNotPresent
    stdin: true
    tty: true
    ports: [{containerPort: 8080, protocol: TCP}]
    resources:
      limits: {cpu: 500m, memory: 512Mi, ephemeral-storage: 1Gi}
      requests: {cpu: 500m, memory: 512Mi}
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      runAsNonRoot: true
      capabilities: {drop: ["ALL"]}
  volumes:
  - {name: app, emptyDir: {}}
  - {name: tmp, emptyDir: {}}
`);


describe("validateAgainstSchema", () => {
  it("accepts a well-formed run pod", () => {
    expect(validateAgainstSchema(runPod)).toEqual([]);
  });

  it("reports each schema violation of an invalid Pod as an apiserver StatusCause", () => {
    const pod = manifest(`
apiVersion: v1
kind: Pod
metadata:
  name: broken
spec:
  restartPolicy: Sometimes
  containers:
  - image: busybox
    ports: [{containerPort: "80"}]
    resources:
      limits: {cpu: lots}
`);
    expect(validateAgainstSchema(pod)).toEqual([
      { field: "spec.containers[0].name", reason: "FieldValueRequired", message: "Required value" },
      {
        field: "spec.containers[0].ports[0].containerPort",
        reason: "FieldValueTypeInvalid",
        message: 'Invalid value: "80": must be of type integer',
      },
      {
        field: "spec.containers[0].resources.limits.cpu",
        reason: "FieldValueInvalid",
        message:
          "Invalid value: \"lots\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
      },
      {
        field: "spec.restartPolicy",
        reason: "FieldValueNotSupported",
        message: 'Unsupported value: "Sometimes": supported values: "Always", "Never", "OnFailure"',
      },
    ]);
  });

  it("requires spec.containers on a Pod and renders one cause without brackets", () => {
    const pod = manifest(`{apiVersion: v1, kind: Pod, metadata: {name: empty}, spec: {}}`);
    const causes = validateAgainstSchema(pod);
    expect(causes).toEqual([{ field: "spec.containers", reason: "FieldValueRequired", message: "Required value" }]);
    expect(formatInvalidMessage(pod, causes)).toBe('Pod "empty" is invalid: spec.containers: Required value');
  });

  it("brackets several causes and qualifies the kind with its group, as apierrors.NewInvalid does", () => {
    const deployment = manifest(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  strategy: {type: Sideways}
  template: {}
`);
    const causes = validateAgainstSchema(deployment);
    expect(formatInvalidMessage(deployment, causes)).toBe(
      'Deployment.apps "web" is invalid: [spec.selector: Required value, ' +
        'spec.strategy.type: Unsupported value: "Sideways": supported values: "Recreate", "RollingUpdate"]',
    );
    const status = invalidStatus(deployment, causes);
    expect(status).toMatchObject({
      kind: "Status",
      status: "Failure",
      reason: "Invalid",
      code: 422,
      details: { name: "web", group: "apps", kind: "Deployment" },
    });
    expect(status.details.causes).toHaveLength(2);
  });

  it("reports the int-or-string alternative once, not once per branch", () => {
    const service = manifest(`
apiVersion: v1
kind: Service
metadata: {name: s}
spec:
  ports: [{port: 80, targetPort: true, protocol: XTCP}]
`);
    expect(validateAgainstSchema(service)).toEqual([
      {
        field: "spec.ports[0].protocol",
        reason: "FieldValueNotSupported",
        message: 'Unsupported value: "XTCP": supported values: "SCTP", "TCP", "UDP"',
      },
      {
        field: "spec.ports[0].targetPort",
        reason: "FieldValueInvalid",
        message: "Invalid value: true: must be of type string or integer",
      },
    ]);
  });

  it("puts map keys that are not identifiers in brackets", () => {
    const cm = manifest(`{apiVersion: v1, kind: ConfigMap, metadata: {name: c, labels: {app.kubernetes.io/name: 3}}}`);
    expect(validateAgainstSchema(cm)).toEqual([
      {
        field: "metadata.labels[app.kubernetes.io/name]",
        reason: "FieldValueTypeInvalid",
        message: "Invalid value: 3: must be of type string",
      },
    ]);
  });

  it("validates Gateway API kinds against their CRD schemas", () => {
    const route = manifest(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: telo-run-k7m3qx4r2abc-8080, namespace: telo-sessions}
spec:
  parentRefs: [{name: public, sectionName: https}]
  hostnames: [8080-k7m3qx4r2abc.apps.example.com]
  rules:
  - backendRefs: [{name: telo-run-k7m3qx4r2abc, port: 8080}]
`);
    expect(validateAgainstSchema(route)).toEqual([]);
    const broken = manifest(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{sectionName: https}]
  rules:
  - backendRefs: [{name: svc, port: 0}]
`);
    const causes = validateAgainstSchema(broken);
    expect(causes).toEqual([
      { field: "spec.parentRefs[0].name", reason: "FieldValueRequired", message: "Required value" },
      {
        field: "spec.rules[0].backendRefs[0].port",
        reason: "FieldValueInvalid",
        message: "Invalid value: 0: should be greater than or equal to 1",
      },
    ]);
    expect(formatInvalidMessage(broken, causes)).toMatch(/^HTTPRoute\.gateway\.networking\.k8s\.io "r" is invalid: \[/);

    const gateway = manifest(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: public}
spec:
  listeners: [{name: http, port: 80}]
`);
    expect(validateAgainstSchema(gateway)).toEqual([
      { field: "spec.gatewayClassName", reason: "FieldValueRequired", message: "Required value" },
      { field: "spec.listeners[0].protocol", reason: "FieldValueRequired", message: "Required value" },
    ]);
  });

  it("knows every kind the runner and its manifests use", () => {
    const expected = [
      ["v1", "Pod"], ["v1", "Service"], ["v1", "ConfigMap"], ["v1", "Secret"], ["v1", "Namespace"],
      ["v1", "Event"], ["v1", "ResourceQuota"], ["v1", "ServiceAccount"], ["batch/v1", "Job"],
      ["networking.k8s.io/v1", "Ingress"], ["networking.k8s.io/v1", "IngressClass"],
      ["networking.k8s.io/v1", "NetworkPolicy"], ["apps/v1", "Deployment"],
      ["rbac.authorization.k8s.io/v1", "Role"], ["rbac.authorization.k8s.io/v1", "RoleBinding"],
      ["rbac.authorization.k8s.io/v1", "ClusterRole"], ["rbac.authorization.k8s.io/v1", "ClusterRoleBinding"],
      ["gateway.networking.k8s.io/v1", "Gateway"], ["gateway.networking.k8s.io/v1", "HTTPRoute"],
    ];
    const known = knownKinds().map((k) => `${k.apiVersion}/${k.kind}`);
    for (const [apiVersion, kind] of expected) expect(known).toContain(`${apiVersion}/${kind}`);
  });

  it("checks kinds whose schema has required fields (Job, RoleBinding, Ingress, NetworkPolicy)", () => {
    expect(validateAgainstSchema(manifest(`{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {}}`))).toEqual([
      { field: "spec.template", reason: "FieldValueRequired", message: "Required value" },
    ]);
    expect(
      validateAgainstSchema(manifest(`{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: b}}`)),
    ).toEqual([{ field: "roleRef", reason: "FieldValueRequired", message: "Required value" }]);
    expect(
      validateAgainstSchema(
        manifest(`
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: i}
spec:
  rules:
  - host: a.example.com
    http:
      paths: [{path: /, backend: {service: {name: s, port: {number: 80}}}}]
`),
      ),
    ).toEqual([{ field: "spec.rules[0].http.paths[0].pathType", reason: "FieldValueRequired", message: "Required value" }]);
    expect(
      validateAgainstSchema(manifest(`{apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: n}, spec: {}}`)),
    ).toEqual([{ field: "spec.podSelector", reason: "FieldValueRequired", message: "Required value" }]);
  });

  it("accepts line-wrapped base64 in Secret data, as the apiserver's decoder does, and refuses non-base64", () => {
    const wrapped = manifest(`
apiVersion: v1
kind: Secret
metadata: {name: apps}
data:
  RUNNER_APPS: |
    ewogICJoZWxsbyI6IHsKICAgICJpbWFnZSI6ICJ0ZWxvcnVuL2hlbGxvOjEuMC4wIiwKIC
    AgICJ0aXRsZSI6ICJIZWxsbyIsCiAgICAiZGVzY3JpcHRpb24iOiAiQSBtaW5pbWFsIFRl
    bG8gYXBwbGljYXRpb24iLAogICAgInBvcnQiOiA4MDgwCiAgfQp9Cg==
`);
    expect(validateAgainstSchema(wrapped)).toEqual([]);
    const broken = manifest(`{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {token: "not base64!"}}`);
    expect(validateAgainstSchema(broken)).toEqual([
      { field: "data.token", reason: "FieldValueInvalid", message: 'Invalid value: "not base64!": must be a valid byte' },
    ]);
  });

  it("reports an unknown kind as one cause on kind", () => {
    const causes = validateAgainstSchema({ apiVersion: "example.com/v1", kind: "Widget" });
    expect(causes).toHaveLength(1);
    expect(causes[0]).toMatchObject({ field: "kind", reason: "FieldValueNotSupported" });
    expect(causes[0]!.message).toContain('"Widget"');
    expect(causes[0]!.message).toContain("not known");
  });

  it("requires apiVersion and kind", () => {
    expect(validateAgainstSchema({})).toEqual([
      { field: "apiVersion", reason: "FieldValueRequired", message: "Required value" },
      { field: "kind", reason: "FieldValueRequired", message: "Required value" },
    ]);
  });
});
