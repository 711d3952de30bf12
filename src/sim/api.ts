// The resource endpoints: get, list, watch, create, update, patch, delete, deletecollection for
// every served type, plus the `status` subresource. Admission, defaulting and deletion rules live
// in their own modules; this one is the apiserver's request flow.
import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseYaml } from "yaml";
import { admitNew, invalidError, validateObject } from "./admission.ts";
import { applyCreateDefaults, defaultTolerations, mergeStringData } from "./defaults.ts";
import { deleteObject, finishIfFinalized, type DeleteOptions } from "./deletion.ts";
import { readBody, readBodyBytes, sendJson } from "./http-util.ts";
import { decodeProtobufObject, PROTOBUF, UnknownProtobufField } from "./protobuf.ts";
import { type KubeObject, clone, newUid, randomSuffix, timestamp, keyOf } from "./object.ts";
import { validateFields } from "./field-validation.ts";
import { applyPatch } from "./patch.ts";
import { createsOnUpdate, decodeLease, requiresResourceVersionOnUpdate } from "./lease.ts";
import type { RequestInfo } from "./request-info.ts";
import { apiVersionOf, lookupType, verbsFor, type ResourceType } from "./resources.ts";
import { compileFieldSelector, compileLabelSelector } from "./selectors.ts";
import { alreadyExists, badRequest, conflict, expired, forbidden, methodNotSupported, notFound, StatusError, unsupportedMediaType } from "./status.ts";
import type { Store } from "./store.ts";
import { renderTable, wantsTable } from "./table.ts";

const NAMESPACE = lookupType("", "v1", "namespaces")!;
/** Types whose DELETE answers with the object rather than a Status (as their registries do). */
const RETURNS_DELETED_OBJECT = new Set(["pods", "services", "namespaces"]);

export interface ApiOptions {
  /** Upper bound for a watch without timeoutSeconds (the apiserver picks 30–60 min). */
  maxWatchSeconds: number;
}

function ref(type: ResourceType) {
  return { group: type.group, plural: type.plural };
}

/**
 * Request bodies in JSON, YAML, or (for the kinds kubectl's imperative commands create) the
 * Kubernetes protobuf envelope; anything else is 415, as the apiserver answers it.
 */
function parseBody(contentType: string | undefined, raw: Buffer): KubeObject {
  const type = (contentType ?? "application/json").split(";")[0]!.trim();
  const accepted = ["application/json", "application/yaml", PROTOBUF];
  if (type === PROTOBUF) {
    try {
      return decodeProtobufObject(raw);
    } catch (err) {
      if (err instanceof UnknownProtobufField) throw unsupportedMediaType(`${type} (${err.message})`, accepted);
      throw badRequest(`unable to decode protobuf body: ${(err as Error).message}`);
    }
  }
  if (type !== "application/json" && type !== "application/yaml" && type !== "") throw unsupportedMediaType(type, accepted);
  const text = raw.toString("utf8");
  let body: unknown;
  try {
    body = type === "application/yaml" ? parseYaml(text) : JSON.parse(text);
  } catch (err) {
    throw badRequest(`couldn't get version/kind; json parse error: ${(err as Error).message}`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw badRequest("Object 'Kind' is missing in the request body");
  const obj = body as KubeObject;
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = { name: "" };
  if (typeof obj.metadata !== "object") throw badRequest("metadata must be an object");
  return obj;
}

/** Warnings as the apiserver sends them: one `299 - "<text>"` value per warning. */
function warningHeaders(warnings: string[]): Record<string, string> {
  return warnings.length > 0 ? { warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`).join(", ") } : {};
}

function specOf(obj: KubeObject): string {
  const { metadata: _m, status: _s, ...rest } = obj;
  return JSON.stringify(rest);
}

export class ResourceApi {
  constructor(
    private readonly store: Store,
    private readonly options: ApiOptions,
  ) {}

  async handle(req: IncomingMessage, res: ServerResponse, info: RequestInfo): Promise<void> {
    const { verb, type, subresource } = info;
    if (subresource && subresource !== "status") throw methodNotSupported(ref(type), verb);
    if (!verbsFor(type).includes(verb)) throw methodNotSupported(ref(type), verb);
    switch (verb) {
      case "get":
        return this.get(req, res, info);
      case "list":
        return this.list(req, res, info);
      case "watch":
        return this.watch(req, res, info);
      case "create":
        return this.create(res, info, parseBody(req.headers["content-type"], await readBodyBytes(req)));
      case "update":
        return this.update(res, info, parseBody(req.headers["content-type"], await readBodyBytes(req)));
      case "patch":
        return this.patch(req, res, info, await readBody(req));
      case "delete":
        return this.delete(res, info, this.deleteOptions(info, req.headers["content-type"], await readBodyBytes(req)));
      case "deletecollection":
        return this.deleteCollection(res, info, this.deleteOptions(info, req.headers["content-type"], await readBodyBytes(req)));
    }
  }

  private existing(info: RequestInfo): KubeObject {
    const obj = this.store.get(info.type, info.namespace, info.name!);
    if (!obj) throw notFound(ref(info.type), info.name!);
    return obj;
  }

  private get(req: IncomingMessage, res: ServerResponse, info: RequestInfo): void {
    const obj = this.existing(info);
    if (wantsTable(req.headers.accept)) {
      sendJson(res, 200, renderTable(info.type, [obj], String(obj.metadata.resourceVersion)));
      return;
    }
    sendJson(res, 200, obj);
  }

  private selectors(info: RequestInfo) {
    const label = compileLabelSelector(info.query.get("labelSelector") ?? undefined);
    const field = compileFieldSelector(info.type.kind, info.query.get("fieldSelector") ?? undefined);
    return { label, field };
  }

  private list(req: IncomingMessage, res: ServerResponse, info: RequestInfo): void {
    const { label, field } = this.selectors(info);
    const rvParam = info.query.get("resourceVersion");
    if (rvParam && info.query.get("resourceVersionMatch") === "Exact") {
      // Only the current state is kept, so an exact read of an older version is a compacted read.
      if (Number(rvParam) !== this.store.currentRv()) throw expired(`too old resource version: ${rvParam} (${this.store.currentRv()})`);
    }
    let items = this.store.list(info.type, info.namespace).filter((o) => (!label || label(o)) && (!field || field.matcher(o)));
    const rv = String(this.store.currentRv());
    const metadata: Record<string, unknown> = { resourceVersion: rv };
    const cont = info.query.get("continue");
    if (cont) {
      let after: string;
      try {
        after = JSON.parse(Buffer.from(cont, "base64url").toString("utf8")).after;
      } catch {
        throw badRequest("continue key is not valid: illegal base64 data at input byte 0");
      }
      items = items.filter((o) => keyOf(o) > after);
    }
    const limit = Number(info.query.get("limit") ?? 0);
    if (limit > 0 && items.length > limit) {
      const last = items[limit - 1]!;
      metadata.continue = Buffer.from(JSON.stringify({ after: keyOf(last), rv })).toString("base64url");
      metadata.remainingItemCount = items.length - limit;
      items = items.slice(0, limit);
    }
    if (wantsTable(req.headers.accept)) {
      const table = renderTable(info.type, items, rv);
      Object.assign(table.metadata, metadata);
      sendJson(res, 200, table);
      return;
    }
    sendJson(res, 200, { kind: `${info.type.kind}List`, apiVersion: apiVersionOf(info.type), metadata, items });
  }

  private watch(req: IncomingMessage, res: ServerResponse, info: RequestInfo): void {
    const table = wantsTable(req.headers.accept);
    const { label, field } = this.selectors(info);
    const filter: { namespace?: string; label?: typeof label; field?: (o: KubeObject) => boolean; exactName?: string } = {};
    if (info.namespace !== undefined) filter.namespace = info.namespace;
    if (label) filter.label = label;
    if (field) {
      filter.field = field.matcher;
      if (field.exactName !== undefined) filter.exactName = field.exactName;
    }
    // GET /namespaces/ns/pods/name?watch=1 is the legacy single-object watch.
    if (info.name !== undefined) {
      const name = info.name;
      const prev = filter.field;
      filter.field = prev ? (o) => o.metadata.name === name && prev(o) : (o) => o.metadata.name === name;
      filter.exactName = name;
    }
    const hub = this.store.collection(info.type).hub;
    const rvParam = info.query.get("resourceVersion");
    const bookmarks = info.query.get("allowWatchBookmarks") === "true";
    const timeoutParam = Number(info.query.get("timeoutSeconds") ?? 0);
    const timeoutMs = (timeoutParam > 0 ? timeoutParam : this.options.maxWatchSeconds * (0.5 + Math.random() / 2)) * 1000;

    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-cache, private", "transfer-encoding": "chunked" });
    res.flushHeaders();

    let backlog: string[];
    let fromRv = this.store.currentRv();
    if (rvParam && rvParam !== "0") {
      const rv = Number(rvParam);
      try {
        if (!Number.isInteger(rv)) throw badRequest(`invalid resource version: ${rvParam}`);
        backlog = hub.since(rv, filter).map((e) => e.lines.line(e.type, table ? hub.table : undefined));
        fromRv = rv;
      } catch (err) {
        // The watch cache answers an expired version inside a 200 stream, as an ERROR event.
        const status = err instanceof StatusError ? err : expired(String(err));
        res.end(`{"type":"ERROR","object":${JSON.stringify(status.body())}}\n`);
        return;
      }
    } else {
      backlog = [];
      for (const obj of this.store.list(info.type, info.namespace)) {
        if ((filter.label && !filter.label(obj)) || (filter.field && !filter.field(obj))) continue;
        backlog.push(`{"type":"ADDED","object":${JSON.stringify(table ? hub.table(obj) : obj)}}\n`);
      }
    }
    const watcher = hub.add(res, filter, { bookmarks, table, fromRv }, timeoutMs, () => {
      if (bookmarks) hub.write(watcher, hub.bookmarkLine(hub.bookmarkRv(this.store.currentRv())));
      hub.close(watcher);
    });
    if (backlog.length > 0) hub.write(watcher, backlog.join(""));
  }

  private namespaceGate(info: RequestInfo, name: string): void {
    if (!info.type.namespaced) return;
    const ns = this.store.get(NAMESPACE, undefined, info.namespace!);
    if (!ns) throw notFound(ref(NAMESPACE), info.namespace!);
    if (ns.metadata.deletionTimestamp) {
      throw forbidden(ref(info.type), name, `unable to create new content in namespace ${info.namespace} because it is being terminated`);
    }
  }

  private checkTypeMeta(info: RequestInfo, obj: KubeObject): void {
    const apiVersion = apiVersionOf(info.type);
    if (obj.apiVersion !== undefined && obj.apiVersion !== apiVersion) {
      throw badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${apiVersion})`);
    }
    if (obj.kind !== undefined && obj.kind !== info.type.kind) {
      throw badRequest(`the kind in the data (${obj.kind}) does not match the expected kind (${info.type.kind})`);
    }
    obj.apiVersion = apiVersion;
    obj.kind = info.type.kind;
    if (info.type.kind === "Lease") decodeLease(obj);
    if (info.type.namespaced) {
      if (obj.metadata.namespace !== undefined && obj.metadata.namespace !== "" && obj.metadata.namespace !== info.namespace) {
        throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
      }
      obj.metadata.namespace = info.namespace!;
    } else delete obj.metadata.namespace;
  }

  private create(res: ServerResponse, info: RequestInfo, obj: KubeObject): void {
    const { type } = info;
    if (info.name !== undefined) throw new StatusError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {});
    this.checkTypeMeta(info, obj);
    const meta = obj.metadata;
    if (!meta.name) {
      if (meta.generateName) {
        do meta.name = `${meta.generateName}${randomSuffix()}`;
        while (this.store.get(type, meta.namespace, meta.name));
      } else {
        throw invalidError(obj, [{ field: "metadata.name", reason: "FieldValueRequired", message: "Required value: name or generateName is required" }]);
      }
    }
    this.namespaceGate(info, meta.name);
    // Server-populated metadata: whatever the client sent is replaced.
    meta.uid = newUid();
    meta.creationTimestamp = timestamp();
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    if (type.generation) meta.generation = 1;
    const fieldWarnings = validateFields(obj, info.query.get("fieldValidation"));
    applyCreateDefaults(obj);
    if (this.store.get(type, meta.namespace, meta.name)) {
      // Validation and admission run first, as in the apiserver; only then does storage refuse.
      admitNew(this.store, type, NAMESPACE, obj);
      throw alreadyExists(ref(type), meta.name);
    }
    const headers = warningHeaders([...fieldWarnings, ...admitNew(this.store, type, NAMESPACE, obj)]);
    if (info.query.get("dryRun") === "All") {
      sendJson(res, 201, obj, headers);
      return;
    }
    sendJson(res, 201, this.store.write(type, obj, "ADDED"), headers);
  }

  /** Shared by PUT and PATCH: `next` is the full desired object. */
  private replace(res: ServerResponse, info: RequestInfo, current: KubeObject, next: KubeObject): void {
    const { type } = info;
    const name = info.name!;
    this.checkTypeMeta(info, next);
    const headers = warningHeaders(validateFields(next, info.query.get("fieldValidation")));
    if (next.metadata.name !== undefined && next.metadata.name !== "" && next.metadata.name !== name) {
      throw badRequest(`the name of the object (${next.metadata.name}) does not match the name on the URL (${name})`);
    }
    const sentRv = next.metadata.resourceVersion;
    if (sentRv !== undefined && sentRv !== "" && sentRv !== current.metadata.resourceVersion) throw conflict(ref(type), name);

    let updated: KubeObject;
    if (info.subresource === "status") {
      updated = clone(current);
      updated.status = next.status;
    } else {
      updated = next;
      updated.metadata = {
        ...next.metadata,
        name,
        uid: current.metadata.uid!,
        creationTimestamp: current.metadata.creationTimestamp!,
      };
      if (type.namespaced) updated.metadata.namespace = current.metadata.namespace!;
      for (const k of ["deletionTimestamp", "deletionGracePeriodSeconds", "generation"] as const) {
        if (current.metadata[k] !== undefined) updated.metadata[k] = current.metadata[k] as never;
        else delete updated.metadata[k];
      }
      // The status subresource owns status; writes to the main resource keep it.
      if (type.subresources.includes("status")) {
        if (current.status !== undefined) updated.status = current.status;
        else delete updated.status;
      }
      if (type.kind === "Pod") defaultTolerations((updated.spec ??= {}));
      if (type.kind === "Secret") mergeStringData(updated);
      if (type.generation && specOf(updated) !== specOf(current)) updated.metadata.generation = (current.metadata.generation ?? 1) + 1;
      this.checkImmutable(type, current, updated);
    }
    if (current.metadata.deletionTimestamp && (updated.metadata.finalizers?.length ?? 0) > (current.metadata.finalizers?.length ?? 0)) {
      throw forbidden(ref(type), name, "no new finalizers can be added if the object is being deleted");
    }
    validateObject(type, updated);
    if (info.query.get("dryRun") === "All") {
      sendJson(res, 200, updated, headers);
      return;
    }
    if (JSON.stringify({ ...updated, metadata: { ...updated.metadata, resourceVersion: "" } }) === JSON.stringify({ ...current, metadata: { ...current.metadata, resourceVersion: "" } })) {
      // A no-op update keeps the resourceVersion and emits no event, as in etcd-backed storage.
      sendJson(res, 200, current, headers);
      return;
    }
    const stored = this.store.write(type, updated, "MODIFIED");
    finishIfFinalized(this.store, type, stored);
    sendJson(res, 200, stored, headers);
  }

  private checkImmutable(type: ResourceType, current: KubeObject, next: KubeObject): void {
    if (type.kind === "Pod") {
      // Only images, activeDeadlineSeconds and added tolerations may change on a pod.
      const strip = (spec: KubeObject["spec"]) => {
        const s = clone(spec ?? {});
        delete s.activeDeadlineSeconds;
        delete s.tolerations;
        for (const list of ["containers", "initContainers"]) for (const c of s[list] ?? []) delete c.image;
        return canonicalJson(s);
      };
      if (strip(current.spec) !== strip(next.spec)) {
        throw invalidError(next, [{ field: "spec", reason: "FieldValueForbidden", message: "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)" }]);
      }
    }
    if (type.kind === "Service") {
      const s = next.spec ?? (next.spec = {});
      if (!s.clusterIP) s.clusterIP = current.spec?.clusterIP;
      if (!s.clusterIPs?.length) s.clusterIPs = current.spec?.clusterIPs;
      if (s.clusterIP !== current.spec?.clusterIP) {
        throw invalidError(next, [{ field: "spec.clusterIPs[0]", reason: "FieldValueInvalid", message: `Invalid value: ${JSON.stringify([s.clusterIP])}: may not change once set` }]);
      }
      for (const p of s.ports ?? []) {
        p.protocol ??= "TCP";
        p.targetPort ??= p.port;
      }
      s.type ??= "ClusterIP";
      s.sessionAffinity ??= "None";
      // What the allocator and defaulting chose on create stays when an update leaves it out.
      s.ipFamilies ??= current.spec?.ipFamilies;
      s.ipFamilyPolicy ??= current.spec?.ipFamilyPolicy;
      s.internalTrafficPolicy ??= "Cluster";
    }
    if (type.kind === "Job" && JSON.stringify(current.spec?.template) !== JSON.stringify(next.spec?.template)) {
      throw invalidError(next, [{ field: "spec.template", reason: "FieldValueInvalid", message: "Invalid value: ...: field is immutable" }]);
    }
  }

  private update(res: ServerResponse, info: RequestInfo, obj: KubeObject): void {
    const { type, name } = info;
    if (name === undefined) throw methodNotSupported(ref(type), "update");
    // Decoding comes first in the apiserver: a body that does not decode is a 400 before anything else.
    if (type.kind === "Lease") decodeLease(obj);
    const current = this.store.get(type, info.namespace, name);
    if (!current && createsOnUpdate(type.kind)) {
      // The registry lets this PUT create the object; the name still has to agree with the URL.
      if (obj.metadata.name && obj.metadata.name !== name) throw badRequest(`the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`);
      obj.metadata.name = name;
      const { name: _onUrl, ...collection } = info;
      this.create(res, collection, obj);
      return;
    }
    if (!current) throw notFound(ref(type), name);
    if (!obj.metadata.resourceVersion && requiresResourceVersionOnUpdate(type.kind)) {
      // The error names the resource, not the kind, as the generic registry words it.
      throw invalidError({ apiVersion: apiVersionOf(type), kind: type.plural, metadata: { name } }, [
        { field: "metadata.resourceVersion", reason: "FieldValueInvalid", message: "Invalid value: 0: must be specified for an update" },
      ]);
    }
    this.replace(res, info, current, obj);
  }

  private patch(req: IncomingMessage, res: ServerResponse, info: RequestInfo, body: string): void {
    if (info.name === undefined) throw methodNotSupported(ref(info.type), "patch");
    const current = this.existing(info);
    const next = applyPatch(req.headers["content-type"] ?? "", clone(current), body) as KubeObject;
    if (!next || typeof next !== "object" || !next.metadata) throw badRequest("patched object has no metadata");
    // A patch that does not mention resourceVersion is unconditional.
    if (next.metadata.resourceVersion === current.metadata.resourceVersion || next.metadata.resourceVersion === undefined) {
      delete next.metadata.resourceVersion;
    }
    this.replace(res, info, current, next);
  }

  private deleteOptions(info: RequestInfo, contentType: string | undefined, body: Buffer): DeleteOptions {
    let fromBody: Record<string, unknown> = {};
    if (body.length > 0) fromBody = parseBody(contentType, body);
    // As the apiserver decodes them: from the body when there is one, the query ignored then;
    // from the query otherwise (a grace in the query beside a body is dropped).
    const option = (name: string): unknown => (body.length > 0 ? fromBody[name] : (info.query.get(name) ?? undefined));
    const grace = option("gracePeriodSeconds");
    const policy = (option("propagationPolicy") ?? (fromBody.orphanDependents === true ? "Orphan" : undefined)) as DeleteOptions["propagationPolicy"];
    if (policy !== undefined && !["Orphan", "Background", "Foreground"].includes(policy)) {
      throw invalidError({ kind: "DeleteOptions", metadata: { name: "" } }, [{ field: "propagationPolicy", reason: "FieldValueNotSupported", message: `Unsupported value: "${policy}": supported values: "Foreground", "Background", "Orphan", "nil"` }]);
    }
    const opts: DeleteOptions = { propagationPolicy: policy, preconditions: fromBody.preconditions as DeleteOptions["preconditions"] };
    if (grace !== undefined && grace !== null) opts.gracePeriodSeconds = Number(grace);
    return opts;
  }

  private delete(res: ServerResponse, info: RequestInfo, opts: DeleteOptions): void {
    const { type } = info;
    const result = deleteObject(this.store, type, info.namespace, info.name!, opts);
    if (!result.deleted || RETURNS_DELETED_OBJECT.has(type.plural)) {
      sendJson(res, 200, result.object);
      return;
    }
    const details: Record<string, string> = { name: info.name!, kind: type.plural, uid: result.object.metadata.uid! };
    if (type.group) details.group = type.group;
    sendJson(res, 200, { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", details });
  }

  private deleteCollection(res: ServerResponse, info: RequestInfo, opts: DeleteOptions): void {
    const { label, field } = this.selectors(info);
    const items: KubeObject[] = [];
    for (const obj of this.store.list(info.type, info.namespace)) {
      if ((label && !label(obj)) || (field && !field.matcher(obj))) continue;
      try {
        items.push(deleteObject(this.store, info.type, obj.metadata.namespace, obj.metadata.name, opts).object);
      } catch {
        // deleted concurrently
      }
    }
    sendJson(res, 200, { kind: `${info.type.kind}List`, apiVersion: apiVersionOf(info.type), metadata: { resourceVersion: String(this.store.currentRv()) }, items });
  }
}

/** JSON with object keys sorted: equal for equal objects whatever order a client wrote the keys in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner,
  );
}
