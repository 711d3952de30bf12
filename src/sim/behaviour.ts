// What a simulated container does, read from pod annotations under `sim.k8s-runner.dev/`. A key
// applies to every container; `<key>.<container>` applies to one container and wins. Values are
// strings (annotations are); valibot turns them into typed settings and refuses nonsense.
import * as v from "valibot";
import type { KubeObject } from "./object.ts";

export const ANNOTATION_PREFIX = "sim.k8s-runner.dev/";

const int = (min: number, max: number) => v.pipe(v.string(), v.trim(), v.regex(/^-?\d+$/, "must be an integer"), v.transform(Number), v.integer(), v.minValue(min), v.maxValue(max));
/** `8080/tcp,9000/udp` (protocol defaults to tcp); empty means no ports. */
const portList = v.pipe(
  v.string(),
  v.trim(),
  v.regex(/^(\d{1,5}(\/(tcp|udp))?(\s*,\s*\d{1,5}(\/(tcp|udp))?)*)?$/, "must be a list like 8080/tcp,9000/udp"),
  v.transform((s) =>
    s === ""
      ? []
      : s.split(",").map((item) => {
          const [port, protocol] = item.trim().split("/");
          return { port: Number(port), protocol: protocol === "udp" ? ("udp" as const) : ("tcp" as const) };
        }),
  ),
);
const bool = v.pipe(v.string(), v.trim(), v.toLowerCase(), v.picklist(["true", "false"]), v.transform((s) => s === "true"));

/** One schema per annotation key; docs/simulated-cluster.md documents each. */
const AnnotationSchemas = {
  "exit-code": int(0, 255),
  "run-ms": int(0, 86_400_000),
  output: v.string(),
  stderr: v.string(),
  "image-pull": v.picklist(["ok", "fail", "never-cached"]),
  oom: bool,
  crash: bool,
  "start-delay-ms": int(0, 86_400_000),
  "ignore-sigterm": bool,
  listen: bool,
  "listen-ports": portList,
  "kernel-debug": v.picklist(["auto", "off", "run-failed"]),
  workspace: bool,
  "report-resize": bool,
  "tick-ms": int(1, 86_400_000),
  "attach-delay-ms": int(0, 60_000),
  "attach-closes-at-once": bool,
  "report-start": bool,
  "termination-message": v.string(),
  "kernel-ports": portList,
} as const;

type Key = keyof typeof AnnotationSchemas;
export type Settings = { [K in Key]?: v.InferOutput<(typeof AnnotationSchemas)[K]> };

export interface ContainerBehaviour extends Settings {
  /** Why an annotation was ignored: reported in the container's log, never fatal. */
  problems: string[];
}

/** Reads the settings that apply to `container` (pod-wide keys, then per-container keys). */
export function behaviourFor(pod: KubeObject, container: string): ContainerBehaviour {
  const annotations = pod.metadata.annotations ?? {};
  const problems: string[] = [];
  const settings: Record<string, unknown> = {};
  for (const pass of ["pod", "container"] as const) {
    for (const key of Object.keys(AnnotationSchemas) as Key[]) {
      const name = pass === "pod" ? `${ANNOTATION_PREFIX}${key}` : `${ANNOTATION_PREFIX}${key}.${container}`;
      const raw = annotations[name];
      if (raw === undefined) continue;
      const parsed = v.safeParse(AnnotationSchemas[key], raw);
      if (parsed.success) settings[key] = parsed.output;
      else problems.push(`${name}: ${parsed.issues[0].message}`);
    }
  }
  // Each value was produced by the schema of its own key, so the record is a Settings.
  return { ...(settings as Settings), problems };
}

/** Image-name conventions, so a manifest can script a failure without annotations. */
export function imageFailsToPull(image: string): boolean {
  return /(^|[/:@-])nonexistent([/:@-]|$)/.test(image);
}
