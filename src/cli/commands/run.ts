/**
 * `run <dir>`: create a session from a directory, follow its events, attach the terminal,
 * and answer the app's exit code. The terminal is opened at once so no output is missed;
 * stdin flows from `running` on. ^C without a raw TTY stops the session (exit 130).
 */
import type { RunOptions } from "../args.ts";
import { readBundle } from "../bundle.ts";
import { type CliContext, createSink } from "../context.ts";
import { EXIT_ERROR, exitCodeFor } from "../exit-code.ts";
import { defaultImage } from "../render.ts";
import { relayTerminal } from "../terminal-io.ts";
import type { RunStatus } from "../../contract/wire.ts";

/** A version names the kernel; otherwise the image (the runner's default when not given) and its pull policy. */
async function imageConfig(context: CliContext, options: RunOptions): Promise<Record<string, string>> {
  if (options.telo !== undefined) return {};
  const image = options.image ?? defaultImage(await context.client.capabilities());
  if (image === undefined) throw new Error("the runner advertises no default image: pass --image");
  return { image, pullPolicy: options.pullPolicy };
}

export async function runCommand(context: CliContext, options: RunOptions): Promise<number> {
  const { client } = context;
  const sink = createSink(context);
  const bundle = await readBundle(options.dir, options.entry);
  const simulate = Object.keys(options.simulate).length > 0 ? { simulate: options.simulate } : {};
  const created = await client.createSession({
    bundle,
    env: options.env,
    ...(options.telo !== undefined && { telo: options.telo }),
    config: { ...(await imageConfig(context, options)), ...simulate },
  });
  sink.session(created);

  let interrupted = false;
  context.onInterrupt(() => {
    interrupted = true;
    void client.deleteSession(created.sessionId).catch(() => undefined);
  });

  let openStdin!: () => void;
  const stdinGate = new Promise<void>((resolve) => (openStdin = resolve));
  const relayed = relayTerminal((lastSeq) => client.terminal(created.sessionId, { lastSeq }), {
    stdin: context.stdin,
    stdout: context.streams.stdout,
    sink,
    stdinGate,
  });

  let final: RunStatus | undefined;
  for await (const item of client.events(created.sessionId)) {
    if ("gap" in item) continue;
    sink.event(item.id, item.event);
    if (item.event.type !== "status") continue;
    if (item.event.status.kind === "running") openStdin();
    if (["exited", "failed", "stopped"].includes(item.event.status.kind)) final = item.event.status;
  }
  // The runner closes the terminal once its last bytes are sent: wait, so no output is cut.
  await relayed.catch(() => undefined);
  const code = final ? exitCodeFor(final, interrupted) : EXIT_ERROR;
  sink.exit(code, final);
  return code;
}
