/**
 * The command line of `k8s-runner`, parsed into one typed command. Pure: argv and the
 * environment in, a command or a usage error out, so every refusal is tested without a process.
 */
import { parseArgs } from "node:util";
import * as v from "valibot";
import { loadCliConfig } from "../config/cli.ts";
import { PullPolicySchema } from "../contract/wire.ts";

export const DEFAULT_URL = "http://localhost:8062";

export type GlobalOptions = { url: string; json: boolean; acceptTerms: string | undefined };

export type RunOptions = {
  dir: string;
  image: string | undefined;
  pullPolicy: v.InferOutput<typeof PullPolicySchema>;
  /** A Telo version: the runner picks its image (then no image or pull policy is sent). */
  telo: string | undefined;
  entry: string | undefined;
  env: Record<string, string>;
  simulate: Record<string, string>;
};

export type Command =
  | { name: "help" }
  | { name: "serve" }
  | { name: "supervisor" }
  | { name: "run"; global: GlobalOptions; run: RunOptions }
  | { name: "sessions"; global: GlobalOptions }
  | { name: "logs" | "attach"; global: GlobalOptions; sessionId: string; app: string | undefined }
  | { name: "stop" | "describe"; global: GlobalOptions; sessionId: string }
  | { name: "probe"; global: GlobalOptions; image: string; pullPolicy: v.InferOutput<typeof PullPolicySchema> }
  | { name: "capabilities"; global: GlobalOptions };

export type ParseResult = { ok: true; command: Command } | { ok: false; message: string };

export const USAGE = `usage: k8s-runner <command> [options]

commands:
  serve               start the runner (api and supervisor) on the cluster it finds, else on
                      the embedded simulated cluster; configured by environment variables
  supervisor          start the supervisor alone, for a host that serves the /v1 routes
                      itself (its socket: $RUNNER_INTERNAL_SOCKET); cluster as for serve
  run <dir>           create a session from a directory, follow it, attach the terminal;
                      exits with the app's exit code
  sessions            list the runner's sessions (needs RUNNER_CONSOLE=true on the runner)
  logs <id>           print a session's output (replayed, then live until it ends)
  attach <id>         attach this terminal to a session; exits with the app's exit code
  stop <id>           stop a session
  describe <id>       print a session's mode, status, endpoints and its start's timeline
  probe               ask the runner whether it can run an image
  capabilities        print the runner's capabilities document

options:
  --url <url>         the runner (default: $K8S_RUNNER_URL or ${DEFAULT_URL})
  --json              machine-readable output: one JSON document, or JSON lines for streams
  --accept-terms <v>  accept the runner's usage terms of version <v> (run)
  --image <ref>       the kernel image (run, probe; default: the runner's default for run)
  --pull <policy>     missing | always | never (default: missing)
  --telo <version>    run the app on this Telo version's kernel image (run; not with --image/--pull)
  --entry <path>      the entry file inside <dir> (run; default: telo.yaml)
  --env KEY=VALUE     an environment variable for the app, repeatable (run)
  --simulate K=V      script the simulated cluster's pod, repeatable (run; docs/simulated-cluster.md)
  --app <name>        which app of a multi-app session (logs, attach)
  -h, --help          this text`;

const KeyValueSchema = v.pipe(
  v.string(),
  v.regex(/^[^=]+=/, "expected KEY=VALUE"),
  v.transform((raw) => [raw.slice(0, raw.indexOf("=")), raw.slice(raw.indexOf("=") + 1)] as const),
);
const UrlSchema = v.pipe(v.string(), v.url("expected an http(s) URL"), v.regex(/^https?:\/\//i, "expected an http(s) URL"));

/** Which options each command accepts, beyond the global ones. */
const COMMAND_OPTIONS: Record<string, readonly string[]> = {
  run: ["image", "pull", "telo", "entry", "env", "simulate", "accept-terms"],
  sessions: [],
  logs: ["app"],
  attach: ["app"],
  stop: [],
  describe: [],
  probe: ["image", "pull"],
  capabilities: [],
};
const COMMAND_ARGUMENTS: Record<string, readonly string[]> = {
  run: ["dir"],
  logs: ["id"],
  attach: ["id"],
  stop: ["id"],
  describe: ["id"],
};

function keyValues(option: string, raws: string[] | undefined): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const raw of raws ?? []) {
    const parsed = v.safeParse(KeyValueSchema, raw);
    if (!parsed.success) return `--${option} ${JSON.stringify(raw)}: expected KEY=VALUE`;
    out[parsed.output[0]] = parsed.output[1];
  }
  return out;
}

/** The runner's own processes take no option: they read the variables docs/operating.md lists. */
function serverCommand(name: "serve" | "supervisor", options: string[], rest: string[]): ParseResult {
  if (options[0] !== undefined) return { ok: false, message: `'${name}' takes no --${options[0]}: it is configured by environment variables` };
  if (rest[0] !== undefined) return { ok: false, message: `unexpected argument '${rest[0]}'` };
  return { ok: true, command: { name } };
}

export function parseCommandLine(argv: readonly string[], env: Record<string, string | undefined>): ParseResult {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        url: { type: "string" },
        json: { type: "boolean" },
        "accept-terms": { type: "string" },
        image: { type: "string" },
        pull: { type: "string" },
        telo: { type: "string" },
        entry: { type: "string" },
        env: { type: "string", multiple: true },
        simulate: { type: "string", multiple: true },
        app: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const { values, positionals } = parsed;
  const [name, ...rest] = positionals;
  if (values.help || name === undefined || name === "help") return { ok: true, command: { name: "help" } };
  if (name === "serve" || name === "supervisor") return serverCommand(name, Object.keys(values), rest);
  const allowed = COMMAND_OPTIONS[name];
  if (!allowed) return { ok: false, message: `unknown command '${name}'` };

  const global = new Set(["url", "json", "help"]);
  for (const option of Object.keys(values)) {
    if (!global.has(option) && !allowed.includes(option)) return { ok: false, message: `'${name}' takes no --${option}` };
  }
  const wanted = COMMAND_ARGUMENTS[name] ?? [];
  if (rest.length < wanted.length) return { ok: false, message: `'${name}' needs <${wanted[rest.length]}>` };
  if (rest.length > wanted.length) return { ok: false, message: `unexpected argument '${rest[wanted.length]}'` };

  const url = values.url ?? loadCliConfig(env).runnerUrl ?? DEFAULT_URL;
  if (!v.is(UrlSchema, url)) return { ok: false, message: `--url ${JSON.stringify(url)}: expected an http(s) URL` };
  const options: GlobalOptions = { url, json: values.json ?? false, acceptTerms: values["accept-terms"] };

  const pull = v.safeParse(PullPolicySchema, values.pull ?? "missing");
  if (!pull.success) return { ok: false, message: `--pull ${JSON.stringify(values.pull)}: expected missing, always or never` };

  switch (name) {
    case "run": {
      const envVars = keyValues("env", values.env);
      if (typeof envVars === "string") return { ok: false, message: envVars };
      const simulate = keyValues("simulate", values.simulate);
      if (typeof simulate === "string") return { ok: false, message: simulate };
      if (values.telo !== undefined && (values.image !== undefined || values.pull !== undefined)) {
        return { ok: false, message: "--telo chooses the kernel image and its pull policy: drop --image and --pull" };
      }
      return {
        ok: true,
        command: {
          name,
          global: options,
          run: { dir: rest[0]!, image: values.image, pullPolicy: pull.output, telo: values.telo, entry: values.entry, env: envVars, simulate },
        },
      };
    }
    case "logs":
    case "attach":
      return { ok: true, command: { name, global: options, sessionId: rest[0]!, app: values.app } };
    case "stop":
    case "describe":
      return { ok: true, command: { name, global: options, sessionId: rest[0]! } };
    case "probe":
      if (values.image === undefined) return { ok: false, message: "'probe' needs --image <ref>" };
      return { ok: true, command: { name, global: options, image: values.image, pullPolicy: pull.output } };
    default:
      return { ok: true, command: { name: name as "sessions" | "capabilities", global: options } };
  }
}
