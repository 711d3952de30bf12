// Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), which kubectl's
// typed clients send for imperative commands (`create namespace`, `create configmap`,
// `create secret`, `run`, `expose`). Only the kinds those commands create are known; a body carrying a field
// this decoder does not know (with a non-empty value) is refused with 415 rather than guessed at,
// so nothing is ever silently dropped. Field numbers follow k8s.io/api's generated.proto.
import type { KubeObject } from "./object.ts";

export const PROTOBUF = "application/vnd.kubernetes.protobuf";

/** `ptrInt` is an optional (pointer) integer: present means set, so 0 is kept. */
type Scalar = "string" | "bool" | "int" | "ptrInt" | "bytes" | "time" | "quantity" | "intOrString" | "skip";
type FieldType = Scalar | Message | { repeated: FieldType } | { map: FieldType };
interface Message {
  [field: number]: [name: string, type: FieldType];
}

export class UnknownProtobufField extends Error {}

const Time: Scalar = "time";
const stringMap = { map: "string" } as const;

const OwnerReference: Message = { 1: ["kind", "string"], 3: ["name", "string"], 4: ["uid", "string"], 5: ["apiVersion", "string"], 6: ["controller", "bool"], 7: ["blockOwnerDeletion", "bool"] };
const ObjectMeta: Message = {
  1: ["name", "string"],
  2: ["generateName", "string"],
  3: ["namespace", "string"],
  4: ["selfLink", "string"],
  5: ["uid", "string"],
  6: ["resourceVersion", "string"],
  7: ["generation", "int"],
  8: ["creationTimestamp", Time],
  9: ["deletionTimestamp", Time],
  10: ["deletionGracePeriodSeconds", "ptrInt"],
  11: ["labels", stringMap],
  12: ["annotations", stringMap],
  13: ["ownerReferences", { repeated: OwnerReference }],
  14: ["finalizers", { repeated: "string" }],
};
const ContainerPort: Message = { 1: ["name", "string"], 2: ["hostPort", "int"], 3: ["containerPort", "int"], 4: ["protocol", "string"], 5: ["hostIP", "string"] };
const EnvVar: Message = { 1: ["name", "string"], 2: ["value", "string"] };
const ResourceRequirements: Message = { 1: ["limits", { map: "quantity" }], 2: ["requests", { map: "quantity" }] };
const Container: Message = {
  1: ["name", "string"],
  2: ["image", "string"],
  3: ["command", { repeated: "string" }],
  4: ["args", { repeated: "string" }],
  5: ["workingDir", "string"],
  6: ["ports", { repeated: ContainerPort }],
  7: ["env", { repeated: EnvVar }],
  8: ["resources", ResourceRequirements],
  13: ["terminationMessagePath", "string"],
  14: ["imagePullPolicy", "string"],
  16: ["stdin", "bool"],
  17: ["stdinOnce", "bool"],
  18: ["tty", "bool"],
  20: ["terminationMessagePolicy", "string"],
};
const PodSpec: Message = {
  2: ["containers", { repeated: Container }],
  3: ["restartPolicy", "string"],
  4: ["terminationGracePeriodSeconds", "ptrInt"],
  5: ["activeDeadlineSeconds", "ptrInt"],
  6: ["dnsPolicy", "string"],
  7: ["nodeSelector", stringMap],
  8: ["serviceAccountName", "string"],
  // 9 is the deprecated serviceAccount alias; the apiserver derives it from serviceAccountName.
  9: ["serviceAccount", "string"],
  10: ["nodeName", "string"],
  11: ["hostNetwork", "bool"],
  12: ["hostPID", "bool"],
  13: ["hostIPC", "bool"],
  16: ["hostname", "string"],
  17: ["subdomain", "string"],
  19: ["schedulerName", "string"],
  20: ["initContainers", { repeated: Container }],
};

const ServicePort: Message = { 1: ["name", "string"], 2: ["protocol", "string"], 3: ["port", "int"], 4: ["targetPort", "intOrString"], 5: ["nodePort", "int"], 6: ["appProtocol", "string"] };
const ServiceSpec: Message = { 1: ["ports", { repeated: ServicePort }], 2: ["selector", stringMap], 3: ["clusterIP", "string"], 4: ["type", "string"], 7: ["sessionAffinity", "string"] };

/** Kinds by `kind`, each `{1: metadata, ...}`; status is server-owned and ignored on create. */
const KINDS: Record<string, Message> = {
  Namespace: { 1: ["metadata", ObjectMeta], 2: ["spec", { 1: ["finalizers", { repeated: "string" }] }], 3: ["status", "skip"] },
  ConfigMap: { 1: ["metadata", ObjectMeta], 2: ["data", stringMap], 3: ["binaryData", { map: "bytes" }], 4: ["immutable", "bool"] },
  Secret: { 1: ["metadata", ObjectMeta], 2: ["data", { map: "bytes" }], 3: ["type", "string"], 4: ["stringData", stringMap], 5: ["immutable", "bool"] },
  Pod: { 1: ["metadata", ObjectMeta], 2: ["spec", PodSpec], 3: ["status", "skip"] },
  Service: { 1: ["metadata", ObjectMeta], 2: ["spec", ServiceSpec], 3: ["status", "skip"] },
  DeleteOptions: {
    1: ["gracePeriodSeconds", "ptrInt"],
    2: ["preconditions", { 1: ["uid", "string"], 2: ["resourceVersion", "string"] }],
    3: ["orphanDependents", "bool"],
    4: ["propagationPolicy", "string"],
    5: ["dryRun", { repeated: "string" }],
  },
};

class Reader {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  get done(): boolean {
    return this.pos >= this.buf.length;
  }
  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.buf[this.pos++];
      if (b === undefined) throw new Error("truncated varint");
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  }
  bytes(): Buffer {
    const len = Number(this.varint());
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }
  skip(wire: number): void {
    if (wire === 0) this.varint();
    else if (wire === 1) this.pos += 8;
    else if (wire === 2) this.bytes();
    else if (wire === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wire}`);
  }
}

/** Reads raw fields of a message: number → values (wire type, payload). */
function fields(buf: Buffer): Map<number, { wire: number; value: bigint | Buffer }[]> {
  const r = new Reader(buf);
  const out = new Map<number, { wire: number; value: bigint | Buffer }[]>();
  while (!r.done) {
    const key = r.varint();
    const num = Number(key >> 3n);
    const wire = Number(key & 7n);
    let value: bigint | Buffer;
    if (wire === 0) value = r.varint();
    else if (wire === 2) value = r.bytes();
    else {
      r.skip(wire);
      continue;
    }
    const list = out.get(num) ?? [];
    list.push({ wire, value });
    out.set(num, list);
  }
  return out;
}

function signed(v: bigint): number {
  return Number(BigInt.asIntN(64, v));
}

/** Go's zero time.Time marshals as -62135596800 s: that is "unset". */
const ZERO_TIME = -62135596800;

function decodeValue(type: FieldType, raw: bigint | Buffer): unknown {
  if (type === "string") return (raw as Buffer).toString("utf8");
  if (type === "bytes") return (raw as Buffer).toString("base64");
  if (type === "bool") return raw !== 0n;
  if (type === "int" || type === "ptrInt") return signed(raw as bigint);
  if (type === "time") {
    const f = fields(raw as Buffer);
    const seconds = signed((f.get(1)?.[0]?.value as bigint | undefined) ?? 0n);
    return seconds === ZERO_TIME ? undefined : new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
  }
  if (type === "intOrString") {
    // intstr.IntOrString: type 0 = int (field 2), 1 = string (field 3).
    const f = fields(raw as Buffer);
    const isString = ((f.get(1)?.[0]?.value as bigint | undefined) ?? 0n) === 1n;
    return isString ? ((f.get(3)?.[0]?.value as Buffer | undefined) ?? Buffer.alloc(0)).toString("utf8") : signed((f.get(2)?.[0]?.value as bigint | undefined) ?? 0n);
  }
  if (type === "quantity") return ((fields(raw as Buffer).get(1)?.[0]?.value as Buffer | undefined) ?? Buffer.alloc(0)).toString("utf8");
  return decodeMessage(type as Message, raw as Buffer);
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === "" || v === false || v === 0 || (Array.isArray(v) && v.length === 0) || (typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);
}

function decodeMessage(schema: Message, buf: Buffer): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [num, values] of fields(buf)) {
    const field = schema[num];
    if (!field) {
      // An unknown field that carries something: refuse rather than drop it.
      if (values.some((v) => (v.wire === 0 ? v.value !== 0n : (v.value as Buffer).length > 0))) throw new UnknownProtobufField(`field ${num}`);
      continue;
    }
    const [name, type] = field;
    if (type === "skip") continue;
    if (typeof type === "object" && "repeated" in type) {
      out[name] = values.map((v) => decodeValue(type.repeated as FieldType, v.value));
    } else if (typeof type === "object" && "map" in type) {
      const map: Record<string, unknown> = {};
      for (const v of values) {
        const entry = fields(v.value as Buffer);
        const key = ((entry.get(1)?.[0]?.value as Buffer | undefined) ?? Buffer.alloc(0)).toString("utf8");
        const val = entry.get(2)?.[0]?.value;
        map[key] = val === undefined ? (type.map === "bytes" || type.map === "string" ? "" : undefined) : decodeValue(type.map as FieldType, val);
      }
      out[name] = map;
    } else {
      out[name] = decodeValue(type, values[values.length - 1]!.value);
    }
    // Go structs marshal every field; JSON's omitempty is what clients mean by "unset".
    if (type !== "ptrInt" && isEmpty(out[name])) delete out[name];
  }
  return out;
}

/** Decodes a `k8s\0`-framed runtime.Unknown envelope into a JSON-shaped object. */
export function decodeProtobufObject(body: Buffer): KubeObject {
  if (body.length < 4 || body.subarray(0, 4).toString("latin1") !== "k8s\0") throw new UnknownProtobufField("missing k8s envelope");
  const envelope = fields(body.subarray(4));
  const typeMeta = fields((envelope.get(1)?.[0]?.value as Buffer | undefined) ?? Buffer.alloc(0));
  const apiVersion = ((typeMeta.get(1)?.[0]?.value as Buffer | undefined) ?? Buffer.alloc(0)).toString("utf8");
  const kind = ((typeMeta.get(2)?.[0]?.value as Buffer | undefined) ?? Buffer.alloc(0)).toString("utf8");
  const schema = KINDS[kind];
  // DeleteOptions travels as meta.k8s.io/v1 or as the group version of the resource deleted.
  if (!schema || (apiVersion !== "v1" && kind !== "DeleteOptions")) throw new UnknownProtobufField(`kind ${apiVersion}/${kind}`);
  const raw = (envelope.get(2)?.[0]?.value as Buffer | undefined) ?? Buffer.alloc(0);
  const obj = decodeMessage(schema, raw) as KubeObject;
  obj.metadata ??= { name: "" };
  return { apiVersion, kind, ...obj };
}
