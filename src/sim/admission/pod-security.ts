/**
 * Pod Security admission for the simulated apiserver: the Pod Security Standards checks at
 * version `latest`, with the violation texts and ordering of the Kubernetes
 * pod-security-admission plugin, so a Pod the simulator refuses is refused with the same words a
 * real cluster uses.
 *
 * Order of evaluation (as the plugin's registry does it): the baseline checks, then either the
 * baseline-only checks (level baseline) or the restricted checks (level restricted), each list
 * in the plugin's check order. Every check looks at init containers, then containers, then
 * ephemeral containers. The user-namespace relaxation (`hostUsers: false`) is an opt-in of the
 * plugin's configuration, off by default, and is not modelled.
 */

export type PodSecurityLevel = "privileged" | "baseline" | "restricted";

type Maybe<T> = T | null | undefined;

type SecurityContextLike = {
  privileged?: Maybe<boolean>;
  allowPrivilegeEscalation?: Maybe<boolean>;
  runAsNonRoot?: Maybe<boolean>;
  runAsUser?: Maybe<number>;
  procMount?: Maybe<string>;
  capabilities?: Maybe<{ add?: Maybe<string[]>; drop?: Maybe<string[]> }>;
  seccompProfile?: Maybe<{ type?: Maybe<string> }>;
  appArmorProfile?: Maybe<{ type?: Maybe<string> }>;
  seLinuxOptions?: Maybe<{ type?: Maybe<string>; user?: Maybe<string>; role?: Maybe<string> }>;
  windowsOptions?: Maybe<{ hostProcess?: Maybe<boolean> }>;
};

type HostHandlerLike = Maybe<{ httpGet?: Maybe<{ host?: Maybe<string> }>; tcpSocket?: Maybe<{ host?: Maybe<string> }> }>;

type ContainerLike = {
  name?: Maybe<string>;
  ports?: Maybe<Array<{ hostPort?: Maybe<number> }>>;
  securityContext?: Maybe<SecurityContextLike>;
  livenessProbe?: HostHandlerLike;
  readinessProbe?: HostHandlerLike;
  startupProbe?: HostHandlerLike;
  lifecycle?: Maybe<{ postStart?: HostHandlerLike; preStop?: HostHandlerLike }>;
};

type PodSecurityContextLike = SecurityContextLike & {
  sysctls?: Maybe<Array<{ name?: Maybe<string> }>>;
};

type VolumeLike = { name?: Maybe<string> } & Record<string, unknown>;

/** The parts of a Pod the checks read; any Pod object (plain JSON, client-node types) fits. */
export type PodLike = {
  metadata?: Maybe<{ name?: Maybe<string>; annotations?: Maybe<Record<string, string>> }>;
  spec?: Maybe<{
    hostNetwork?: Maybe<boolean>;
    hostPID?: Maybe<boolean>;
    hostIPC?: Maybe<boolean>;
    securityContext?: Maybe<PodSecurityContextLike>;
    initContainers?: Maybe<ContainerLike[]>;
    containers?: Maybe<ContainerLike[]>;
    ephemeralContainers?: Maybe<ContainerLike[]>;
    volumes?: Maybe<VolumeLike[]>;
  }>;
};

type Spec = NonNullable<PodLike["spec"]>;
type Meta = NonNullable<PodLike["metadata"]>;
/** A failed check: `reason` always, `detail` optional (rendered as `reason (detail)`). */
type Violation = { reason: string; detail?: string };
type Check = (meta: Meta, spec: Spec) => Violation | undefined;

// ---- helpers (same rendering rules as the plugin) ----

function joinQuote(items: readonly string[]): string {
  return items.length === 0 ? "" : `"${items.join('", "')}"`;
}

function plural(singular: string, pluralForm: string, count: number): string {
  return count === 1 ? singular : pluralForm;
}

/** Sorted, de-duplicated (Go's sets.String.List()). */
function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort(byCodeUnit);
}

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function allContainers(spec: Spec): ContainerLike[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

function nameOf(c: ContainerLike): string {
  return c.name ?? "";
}

function containersPhrase(names: string[]): string {
  return `${plural("container", "containers", names.length)} ${joinQuote(names)}`;
}

// ---- baseline checks ----

const ALLOWED_CAPABILITIES_BASELINE = new Set([
  "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
  "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
]);

const ALLOWED_SYSCTLS = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
  "net.ipv4.tcp_rmem",
  "net.ipv4.tcp_wmem",
]);

const ALLOWED_SELINUX_TYPES = new Set(["", "container_t", "container_init_t", "container_kvm_t"]);

const APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/";

const appArmorProfile: Check = (meta, spec) => {
  const setters: string[] = [];
  const badValues = new Set<string>();
  const podType = spec.securityContext?.appArmorProfile ? spec.securityContext.appArmorProfile.type ?? "" : undefined;
  if (podType !== undefined && podType !== "RuntimeDefault" && podType !== "Localhost") {
    setters.push("pod");
    badValues.add(podType);
  }
  const badContainers: string[] = [];
  for (const c of allContainers(spec)) {
    const profile = c.securityContext?.appArmorProfile;
    if (!profile) continue;
    const type = profile.type ?? "";
    if (type !== "RuntimeDefault" && type !== "Localhost") {
      badContainers.push(nameOf(c));
      badValues.add(type);
    }
  }
  if (badContainers.length > 0) setters.push(containersPhrase(badContainers));
  const values = sortedSet(badValues);
  const annotations: string[] = [];
  for (const [key, value] of Object.entries(meta.annotations ?? {})) {
    if (!key.startsWith(APPARMOR_ANNOTATION_PREFIX)) continue;
    if (value === "" || value === "runtime/default" || value.startsWith("localhost/")) continue;
    annotations.push(`${key}=${JSON.stringify(value)}`);
  }
  annotations.sort(byCodeUnit);
  if (annotations.length > 0) {
    values.push(...annotations);
    setters.push(plural("annotation", "annotations", annotations.length));
  }
  if (setters.length === 0) return undefined;
  return {
    reason: plural("forbidden AppArmor profile", "forbidden AppArmor profiles", values.length),
    detail: `${setters.join(" and ")} must not set AppArmor profile type to ${joinQuote(values)}`,
  };
};

const hostNamespaces: Check = (_meta, spec) => {
  const used: string[] = [];
  if (spec.hostNetwork) used.push("hostNetwork=true");
  if (spec.hostPID) used.push("hostPID=true");
  if (spec.hostIPC) used.push("hostIPC=true");
  return used.length > 0 ? { reason: "host namespaces", detail: used.join(", ") } : undefined;
};

const hostPorts: Check = (_meta, spec) => {
  const badContainers: string[] = [];
  const ports = new Set<string>();
  for (const c of allContainers(spec)) {
    let bad = false;
    for (const p of c.ports ?? []) {
      if (p.hostPort) {
        bad = true;
        ports.add(String(p.hostPort));
      }
    }
    if (bad) badContainers.push(nameOf(c));
  }
  if (badContainers.length === 0) return undefined;
  return {
    reason: "hostPort",
    detail: `${containersPhrase(badContainers)} ${plural("uses", "use", badContainers.length)} ${plural("hostPort", "hostPorts", ports.size)} ${sortedSet(ports).join(", ")}`,
  };
};

const hostProbesAndHostLifecycle: Check = (_meta, spec) => {
  const badContainers = new Set<string>();
  const hosts = new Set<string>();
  const inspect = (c: ContainerLike, handler: HostHandlerLike) => {
    if (!handler) return;
    for (const host of [handler.httpGet?.host, handler.tcpSocket?.host]) {
      if (host) {
        badContainers.add(nameOf(c));
        hosts.add(host);
      }
    }
  };
  for (const c of allContainers(spec)) {
    inspect(c, c.livenessProbe);
    inspect(c, c.readinessProbe);
    inspect(c, c.startupProbe);
    inspect(c, c.lifecycle?.postStart);
    inspect(c, c.lifecycle?.preStop);
  }
  if (badContainers.size === 0) return undefined;
  const names = sortedSet(badContainers);
  return {
    reason: "probe or lifecycle host",
    detail: `${containersPhrase(names)} ${plural("uses", "use", names.length)} ${plural("probe or lifecycle host", "probe or lifecycle hosts", hosts.size)} ${joinQuote(sortedSet(hosts))}`,
  };
};

const privileged: Check = (_meta, spec) => {
  const bad = allContainers(spec).filter((c) => c.securityContext?.privileged === true).map(nameOf);
  if (bad.length === 0) return undefined;
  return { reason: "privileged", detail: `${containersPhrase(bad)} must not set securityContext.privileged=true` };
};

const procMount: Check = (_meta, spec) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const c of allContainers(spec)) {
    const mount = c.securityContext?.procMount;
    if (mount !== undefined && mount !== null && mount !== "Default") {
      bad.push(nameOf(c));
      types.add(mount);
    }
  }
  if (bad.length === 0) return undefined;
  return {
    reason: "procMount",
    detail: `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  };
};

const seLinuxOptions: Check = (_meta, spec) => {
  const setters: string[] = [];
  const badTypes = new Set<string>();
  let setUser = false;
  let setRole = false;
  const valid = (opts: NonNullable<SecurityContextLike["seLinuxOptions"]>): boolean => {
    let ok = true;
    const type = opts.type ?? "";
    if (!ALLOWED_SELINUX_TYPES.has(type)) {
      ok = false;
      badTypes.add(type);
    }
    if (opts.user) {
      ok = false;
      setUser = true;
    }
    if (opts.role) {
      ok = false;
      setRole = true;
    }
    return ok;
  };
  const podOpts = spec.securityContext?.seLinuxOptions;
  if (podOpts && !valid(podOpts)) setters.push("pod");
  const badContainers: string[] = [];
  for (const c of allContainers(spec)) {
    const opts = c.securityContext?.seLinuxOptions;
    if (opts && !valid(opts)) badContainers.push(nameOf(c));
  }
  if (badContainers.length > 0) setters.push(containersPhrase(badContainers));
  if (setters.length === 0) return undefined;
  // As in the plugin, user/role are only spelled out when a bad type is listed too.
  const data: string[] = [];
  if (badTypes.size > 0) {
    data.push(`${plural("type", "types", badTypes.size)} ${joinQuote(sortedSet(badTypes))}`);
    if (setUser) data.push("user may not be set");
    if (setRole) data.push("role may not be set");
  }
  return {
    reason: "seLinuxOptions",
    detail: `${setters.join(" and ")} set forbidden securityContext.seLinuxOptions: ${data.join("; ")}`,
  };
};

const sysctls: Check = (_meta, spec) => {
  const forbidden = (spec.securityContext?.sysctls ?? [])
    .map((s) => s.name ?? "")
    .filter((name) => !ALLOWED_SYSCTLS.has(name));
  return forbidden.length > 0 ? { reason: "forbidden sysctls", detail: forbidden.join(", ") } : undefined;
};

const windowsHostProcess: Check = (_meta, spec) => {
  const setters: string[] = [];
  if (spec.securityContext?.windowsOptions?.hostProcess === true) setters.push("pod");
  const bad = allContainers(spec).filter((c) => c.securityContext?.windowsOptions?.hostProcess === true).map(nameOf);
  if (bad.length > 0) setters.push(containersPhrase(bad));
  if (setters.length === 0) return undefined;
  return { reason: "hostProcess", detail: `${setters.join(" and ")} must not set securityContext.windowsOptions.hostProcess=true` };
};

// ---- baseline-only checks (replaced by stricter ones at restricted) ----

const capabilitiesBaseline: Check = (_meta, spec) => {
  const bad: string[] = [];
  const caps = new Set<string>();
  for (const c of allContainers(spec)) {
    let ok = true;
    for (const cap of c.securityContext?.capabilities?.add ?? []) {
      if (!ALLOWED_CAPABILITIES_BASELINE.has(cap)) {
        ok = false;
        caps.add(cap);
      }
    }
    if (!ok) bad.push(nameOf(c));
  }
  if (bad.length === 0) return undefined;
  return {
    reason: "non-default capabilities",
    detail: `${containersPhrase(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
  };
};

const hostPathVolumes: Check = (_meta, spec) => {
  const names = (spec.volumes ?? []).filter((v) => v.hostPath != null).map((v) => v.name ?? "");
  if (names.length === 0) return undefined;
  return { reason: "hostPath volumes", detail: `${plural("volume", "volumes", names.length)} ${joinQuote(names)}` };
};

function seccompIsValid(type: Maybe<string>): boolean {
  return type === "RuntimeDefault" || type === "Localhost";
}

/** Pod and containers that explicitly set a seccomp profile type other than the allowed two. */
function explicitBadSeccomp(spec: Spec): { setters: string[]; values: string[]; podSet: boolean } {
  const setters: string[] = [];
  const values = new Set<string>();
  let podSet = false;
  const podProfile = spec.securityContext?.seccompProfile;
  if (podProfile) {
    if (!seccompIsValid(podProfile.type)) {
      setters.push("pod");
      values.add(podProfile.type ?? "");
    } else {
      podSet = true;
    }
  }
  const bad: string[] = [];
  for (const c of allContainers(spec)) {
    const profile = c.securityContext?.seccompProfile;
    if (profile && !seccompIsValid(profile.type)) {
      bad.push(nameOf(c));
      values.add(profile.type ?? "");
    }
  }
  if (bad.length > 0) setters.push(containersPhrase(bad));
  return { setters, values: sortedSet(values), podSet };
}

// At `latest` only the field form is evaluated; the deprecated seccomp annotations belong to
// policy versions before 1.19.
const seccompProfileBaseline: Check = (_meta, spec) => {
  const { setters, values } = explicitBadSeccomp(spec);
  if (setters.length === 0) return undefined;
  return {
    reason: "seccompProfile",
    detail: `${setters.join(" and ")} must not set securityContext.seccompProfile.type to ${joinQuote(values)}`,
  };
};

// ---- restricted checks ----

const allowPrivilegeEscalation: Check = (_meta, spec) => {
  const bad = allContainers(spec)
    .filter((c) => c.securityContext?.allowPrivilegeEscalation !== false)
    .map(nameOf);
  if (bad.length === 0) return undefined;
  return {
    reason: "allowPrivilegeEscalation != false",
    detail: `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`,
  };
};

const capabilitiesRestricted: Check = (_meta, spec) => {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const forbiddenCaps = new Set<string>();
  for (const c of allContainers(spec)) {
    const caps = c.securityContext?.capabilities;
    if (!caps) {
      missingDropAll.push(nameOf(c));
      continue;
    }
    if (!(caps.drop ?? []).includes("ALL")) missingDropAll.push(nameOf(c));
    let adds = false;
    for (const cap of caps.add ?? []) {
      if (cap !== "NET_BIND_SERVICE") {
        adds = true;
        forbiddenCaps.add(cap);
      }
    }
    if (adds) addingForbidden.push(nameOf(c));
  }
  const details: string[] = [];
  if (missingDropAll.length > 0) {
    details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  }
  if (addingForbidden.length > 0) {
    details.push(
      `${containersPhrase(addingForbidden)} must not include ${joinQuote(sortedSet(forbiddenCaps))} in securityContext.capabilities.add`,
    );
  }
  return details.length > 0 ? { reason: "unrestricted capabilities", detail: details.join("; ") } : undefined;
};

/** Volume sources the restricted level allows; everything else is named by its source field. */
const ALLOWED_VOLUME_SOURCES = new Set([
  "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret",
]);

/** Restricted volume sources, in the plugin's order, with the name it reports for each. */
const RESTRICTED_VOLUME_SOURCES: ReadonlyArray<readonly [field: string, reported: string]> = [
  ["hostPath", "hostPath"],
  ["gcePersistentDisk", "gcePersistentDisk"],
  ["awsElasticBlockStore", "awsElasticBlockStore"],
  ["gitRepo", "gitRepo"],
  ["nfs", "nfs"],
  ["iscsi", "iscsi"],
  ["glusterfs", "glusterfs"],
  ["rbd", "rbd"],
  ["flexVolume", "flexVolume"],
  ["cinder", "cinder"],
  ["cephfs", "cephfs"],
  ["flocker", "flocker"],
  ["fc", "fc"],
  ["azureFile", "azureFile"],
  ["vsphereVolume", "vsphereVolume"],
  ["quobyte", "quobyte"],
  ["azureDisk", "azureDisk"],
  ["photonPersistentDisk", "photonPersistentDisk"],
  ["portworxVolume", "portworxVolume"],
  ["scaleIO", "scaleIO"],
  ["storageos", "storageos"],
];

const restrictedVolumes: Check = (_meta, spec) => {
  const bad: string[] = [];
  const types = new Set<string>();
  for (const volume of spec.volumes ?? []) {
    if ([...ALLOWED_VOLUME_SOURCES].some((source) => volume[source] != null)) continue;
    bad.push(volume.name ?? "");
    const restricted = RESTRICTED_VOLUME_SOURCES.find(([source]) => volume[source] != null);
    types.add(restricted ? restricted[1] : "unknown");
  }
  if (bad.length === 0) return undefined;
  return {
    reason: "restricted volume types",
    detail: `${plural("volume", "volumes", bad.length)} ${joinQuote(bad)} ${plural("uses", "use", bad.length)} ${plural("restricted volume type", "restricted volume types", types.size)} ${joinQuote(sortedSet(types))}`,
  };
};

const runAsNonRoot: Check = (_meta, spec) => {
  const setters: string[] = [];
  let podNonRoot = false;
  const podValue = spec.securityContext?.runAsNonRoot;
  if (podValue === false) setters.push("pod");
  if (podValue === true) podNonRoot = true;
  const explicitlyBad: string[] = [];
  const implicitlyBad: string[] = [];
  for (const c of allContainers(spec)) {
    const value = c.securityContext?.runAsNonRoot;
    if (value === false) explicitlyBad.push(nameOf(c));
    else if (value !== true && !podNonRoot) implicitlyBad.push(nameOf(c));
  }
  if (explicitlyBad.length > 0) setters.push(containersPhrase(explicitlyBad));
  if (setters.length > 0) {
    return { reason: "runAsNonRoot != true", detail: `${setters.join(" and ")} must not set securityContext.runAsNonRoot=false` };
  }
  if (implicitlyBad.length > 0) {
    return {
      reason: "runAsNonRoot != true",
      detail: `pod or ${containersPhrase(implicitlyBad)} must set securityContext.runAsNonRoot=true`,
    };
  }
  return undefined;
};

const runAsUser: Check = (_meta, spec) => {
  const setters: string[] = [];
  if (spec.securityContext?.runAsUser === 0) setters.push("pod");
  const bad = allContainers(spec).filter((c) => c.securityContext?.runAsUser === 0).map(nameOf);
  if (bad.length > 0) setters.push(containersPhrase(bad));
  if (setters.length === 0) return undefined;
  return { reason: "runAsUser=0", detail: `${setters.join(" and ")} must not set runAsUser=0` };
};

const seccompProfileRestricted: Check = (_meta, spec) => {
  const { setters, values, podSet } = explicitBadSeccomp(spec);
  if (setters.length > 0) {
    return {
      reason: "seccompProfile",
      detail: `${setters.join(" and ")} must not set securityContext.seccompProfile.type to ${joinQuote(values)}`,
    };
  }
  const implicit = allContainers(spec)
    .filter((c) => !c.securityContext?.seccompProfile && !podSet)
    .map(nameOf);
  if (implicit.length === 0) return undefined;
  return {
    reason: "seccompProfile",
    detail: `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
  };
};

const BASELINE_CHECKS: Check[] = [
  appArmorProfile,
  hostNamespaces,
  hostPorts,
  hostProbesAndHostLifecycle,
  privileged,
  procMount,
  seLinuxOptions,
  sysctls,
  windowsHostProcess,
];
const BASELINE_ONLY_CHECKS: Check[] = [capabilitiesBaseline, hostPathVolumes, seccompProfileBaseline];
const RESTRICTED_CHECKS: Check[] = [
  allowPrivilegeEscalation,
  capabilitiesRestricted,
  restrictedVolumes,
  runAsNonRoot,
  runAsUser,
  seccompProfileRestricted,
];

/**
 * The violations of `pod` against `level`, each rendered `reason` or `reason (detail)`, in the
 * plugin's order. Empty = admitted. `privileged` admits everything.
 */
export function podSecurityViolations(level: PodSecurityLevel, pod: PodLike): string[] {
  if (level === "privileged") return [];
  const meta: Meta = pod.metadata ?? {};
  const spec: Spec = pod.spec ?? {};
  const checks = [...BASELINE_CHECKS, ...(level === "baseline" ? BASELINE_ONLY_CHECKS : RESTRICTED_CHECKS)];
  const out: string[] = [];
  for (const check of checks) {
    const v = check(meta, spec);
    if (v) out.push(v.detail ? `${v.reason} (${v.detail})` : v.reason);
  }
  return out;
}

/** `pods "<name>" is forbidden: violates PodSecurity "<level>:latest": <v1>, <v2>` */
export function podSecurityForbiddenMessage(podName: string, level: PodSecurityLevel, violations: string[]): string {
  return `pods ${JSON.stringify(podName)} is forbidden: violates PodSecurity ${JSON.stringify(`${level}:latest`)}: ${violations.join(", ")}`;
}

/** The full 403 Status body (metav1.Status) the apiserver returns for a refused Pod. */
export function podSecurityForbiddenStatus(
  podName: string,
  level: PodSecurityLevel,
  violations: string[],
): {
  kind: "Status";
  apiVersion: "v1";
  metadata: Record<string, never>;
  status: "Failure";
  message: string;
  reason: "Forbidden";
  details: { name: string; kind: "pods" };
  code: 403;
} {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message: podSecurityForbiddenMessage(podName, level, violations),
    reason: "Forbidden",
    details: { name: podName, kind: "pods" },
    code: 403,
  };
}

/**
 * The level a namespace enforces, from its `pod-security.kubernetes.io/enforce` label: absent →
 * privileged (the plugin's default configuration); a value that is not a level → restricted
 * (the plugin evaluates namespaces with invalid labels as restricted).
 */
export function enforcedLevel(namespaceLabels: Maybe<Record<string, string>>): PodSecurityLevel {
  const value = namespaceLabels?.["pod-security.kubernetes.io/enforce"];
  if (value === undefined) return "privileged";
  return value === "privileged" || value === "baseline" || value === "restricted" ? value : "restricted";
}
