// The few shell commands examples and Job templates lean on (`echo`, `sleep`, `exit`, `true`,
// `false`, joined by `;` or `&&`, directly or under `sh -c`), run for real so `kubectl run … --
// sleep 10` or a Job printing and exiting behaves as on a cluster. A command line with anything
// else is not interpreted and the container keeps its default behaviour.
import { createHash } from "node:crypto";

export type Step = { echo: string } | { sleepMs: number } | { exit: number };

function words(statement: string): string[] | undefined {
  const out: string[] = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s"'`$|<>()]+))/y;
  let m: RegExpExecArray | null;
  let rest = statement.trim();
  re.lastIndex = 0;
  while (rest.length > 0 && (m = re.exec(rest))) {
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3]!));
    rest = rest.slice(re.lastIndex);
    re.lastIndex = 0;
    rest = rest.trimStart();
  }
  return rest.length === 0 ? out : undefined;
}

function step(argv: string[]): Step | undefined {
  const [cmd, ...args] = argv;
  switch (cmd) {
    case "echo":
      return args[0] === "-n" ? { echo: args.slice(1).join(" ") } : { echo: `${args.join(" ")}\n` };
    case "sleep": {
      const s = Number(args[0]);
      return args.length === 1 && Number.isFinite(s) && s >= 0 ? { sleepMs: s * 1000 } : undefined;
    }
    case "exit": {
      const code = args.length === 0 ? 0 : Number(args[0]);
      return Number.isInteger(code) && code >= 0 && code <= 255 ? { exit: code } : undefined;
    }
    case "true":
      return args.length === 0 ? { echo: "" } : undefined;
    case "false":
      return args.length === 0 ? { exit: 1 } : undefined;
    default:
      return undefined;
  }
}

/** The steps of a recognised command line, or undefined when it is anything more. */
export function interpret(argv: string[]): Step[] | undefined {
  if (argv.length === 0) return undefined;
  let script: string;
  if ((argv[0] === "sh" || argv[0] === "bash" || argv[0] === "/bin/sh") && argv[1] === "-c" && argv.length === 3) script = argv[2]!;
  else if (["echo", "sleep", "exit", "true", "false"].includes(argv[0]!)) {
    const s = step(argv);
    return s ? [s] : undefined;
  } else return undefined;
  const steps: Step[] = [];
  for (const statement of script.split(/;|&&|\n/)) {
    if (statement.trim() === "") continue;
    const w = words(statement);
    const s = w && step(w);
    if (!s) return undefined;
    steps.push(s);
  }
  return steps.length > 0 ? steps : undefined;
}

/**
 * Image conventions for programs a test would otherwise have to script: the Kaniko executor
 * (the legacy build Job) logs a build of its context and a push of its destination, then exits 0.
 */
export function imageProgram(image: string, argv: string[]): Step[] | undefined {
  if (!/kaniko-project\/executor/.test(image)) return undefined;
  const flag = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const destination = flag("destination") ?? "image:latest";
  const digest = createHash("sha256").update(destination).digest("hex");
  return [
    { echo: `INFO[0000] Using dockerignore file: ${flag("context")?.replace(/^dir:\/\//, "") ?? "/workspace"}/.dockerignore\n` },
    { echo: "INFO[0000] Executing 0 build triggers\n" },
    { echo: `INFO[0001] Pushing image to ${destination}\n` },
    { echo: `INFO[0002] Pushed ${destination.replace(/:[^/:]+$/, "")}@sha256:${digest}\n` },
  ];
}
