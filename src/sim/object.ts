// The shape every stored object shares. Bodies are open JSON (the schema helper validates them),
// so fields below `metadata` are typed loosely on purpose.
import { randomUUID } from "node:crypto";

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  [k: string]: unknown;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  // Bodies are arbitrary JSON checked by the schema helper, so fields past metadata stay untyped.
  [field: string]: any;
}

export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export function keyOf(obj: KubeObject): string {
  return objectKey(obj.metadata.namespace, obj.metadata.name);
}

export function clone<T>(obj: T): T {
  return structuredClone(obj);
}

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function timestamp(date = new Date()): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export function newUid(): string {
  return randomUUID();
}

const NAME_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

/** The 5-character suffix `generateName` gets (the apiserver's alphabet avoids vowels). */
export function randomSuffix(length = 5): string {
  let s = "";
  for (let i = 0; i < length; i++) s += NAME_SUFFIX_ALPHABET[Math.floor(Math.random() * NAME_SUFFIX_ALPHABET.length)];
  return s;
}
