/**
 * The runner's client of a watch pod's workspace surface (docs/api.md "Watch sessions"; docs/kubernetes.md "Watch pods"):
 * `http://<podIP>:8099`, reached over the pod network and never published. Each request gives
 * up after 30 s so a wedged workspace container cannot hang a session's routes or its bring-up.
 */
import { request } from "undici";
import * as v from "valibot";
import {
  type WorkspaceApplyResult,
  type WorkspaceChangeSet,
  type WorkspaceFile,
  type WorkspaceTree,
  WorkspaceApplyResultSchema,
  WorkspaceFileSchema,
  WorkspaceSnapshotSchema,
  WorkspaceTreeSchema,
} from "../../contract/wire.ts";
import type { WorkspaceClient } from "../../sessions/backend-seam.ts";
import { WORKSPACE_PORT } from "../specs/watch-pod.ts";

const REQUEST_TIMEOUT_MS = 30_000;

/** The workspace app answers a failing route with 500 `{error: message}`. */
const ErrorBodySchema = v.object({ error: v.string() });

class WorkspaceRequestError extends Error {
  override name = "WorkspaceRequestError";
}

/**
 * The core's WorkspaceClient, plus what the bring-up and reload need: a signal to give up a
 * probe or a seed at once when the session is stopped, and the base64 read that lets a reload
 * write an entry back unchanged (docs/kubernetes.md "Watch pods").
 */
export type PodWorkspaceClient = WorkspaceClient & {
  tree(signal?: AbortSignal): Promise<WorkspaceTree>;
  apply(changes: WorkspaceChangeSet, signal?: AbortSignal): Promise<WorkspaceApplyResult>;
  fileBase64(path: string): Promise<WorkspaceFile>;
};

export function workspaceClient(podIp: string): PodWorkspaceClient {
  const base = `http://${podIp}:${WORKSPACE_PORT}`;

  async function call<T extends v.GenericSchema>(
    schema: T,
    path: string,
    options: { body?: unknown; signal?: AbortSignal | undefined } = {},
  ): Promise<v.InferOutput<T>> {
    const { body, signal } = options;
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const response = await request(`${base}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: body === undefined ? { accept: "application/json" } : { accept: "application/json", "content-type": "application/json" },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
    });
    const text = await response.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new WorkspaceRequestError(`the workspace answered HTTP ${response.statusCode} with a body that is not JSON`);
    }
    if (response.statusCode < 200 || response.statusCode > 299) {
      const failure = v.safeParse(ErrorBodySchema, json);
      throw new WorkspaceRequestError(failure.success ? failure.output.error : `the workspace answered HTTP ${response.statusCode}`);
    }
    const parsed = v.safeParse(schema, json);
    if (!parsed.success) throw new WorkspaceRequestError(`the workspace answered ${path} with an unexpected shape`);
    return parsed.output;
  }

  return {
    tree: (signal?: AbortSignal) => call(WorkspaceTreeSchema, "/workspace", { signal }),
    apply: (changes: WorkspaceChangeSet, signal?: AbortSignal) => call(WorkspaceApplyResultSchema, "/workspace", { body: changes, signal }),
    file: (path: string) => call(WorkspaceFileSchema, `/workspace/file?${new URLSearchParams({ path })}`),
    fileBase64: (path: string) => call(WorkspaceFileSchema, `/workspace/file?${new URLSearchParams({ path, encoding: "base64" })}`),
    snapshot: () => call(WorkspaceSnapshotSchema, "/workspace/snapshot"),
  };
}
