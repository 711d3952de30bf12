/**
 * The init container that downloads a staged archive from the runner's bundle listener and
 * unpacks it into a volume (`body-fetch` of run pods, `context-fetch` of build Jobs).
 */
import type { V1Container, V1SecurityContext } from "@kubernetes/client-node";
import { FETCH_INIT_CONTAINER_RESOURCES } from "./limits.ts";

export interface FetchInitInput {
  name: string;
  /** RUNNER_INIT_IMAGE: needs sh, wget and tar. */
  image: string;
  /** The single-use archive URL. */
  url: string;
  /** Volume and path the archive unpacks into. */
  volume: string;
  mountPath: string;
  securityContext: V1SecurityContext;
}

/**
 * The URL reaches the shell through `$ARCHIVE_URL`, never interpolated into the script, so no
 * character of RUNNER_SELF_URL can change what the script does. The download goes to `/tmp`, an
 * emptyDir, because the root filesystem is read-only.
 */
export function fetchInitContainer(input: FetchInitInput): V1Container {
  return {
    name: input.name,
    image: input.image,
    command: ["sh", "-c"],
    args: [`set -e; wget -qO /tmp/archive.tgz "$ARCHIVE_URL"; tar xzf /tmp/archive.tgz -C ${input.mountPath}`],
    env: [{ name: "ARCHIVE_URL", value: input.url }],
    resources: FETCH_INIT_CONTAINER_RESOURCES,
    volumeMounts: [
      { name: input.volume, mountPath: input.mountPath },
      { name: "tmp", mountPath: "/tmp" },
    ],
    securityContext: input.securityContext,
  };
}
