// The shell of a simulated container: the subset of POSIX `sh` that init containers, Job
// templates, the warm pool's waiting script and examples lean on, parsed as sh parses it
// (quotes, backslashes, `$VAR` and `${VAR}` expanded from the shell's env, field splitting of
// unquoted expansions, comments, `until`/`while` loops, output thrown to `/dev/null`) and run for
// real by commands.ts. A command line using anything beyond the subset (pipes, other
// redirections, substitutions, an unknown program) is not interpreted: the container keeps its
// default behaviour. Busybox applets called through the binary (`/pool/busybox wget …`) are the
// applets themselves.

export type Joiner = ";" | "&&" | "||";

/** One simple command and how it joins the one before it. */
export interface Command {
  kind?: undefined;
  argv: string[];
  after: Joiner;
  /** Streams redirected to /dev/null (`>/dev/null`, `2>/dev/null`). */
  discard?: Array<"stdout" | "stderr">;
}

/** `until COND; do BODY; done` (or `while`), joined to what precedes it like a command. */
export interface Loop {
  kind: "until" | "while";
  condition: Script;
  body: Script;
  after: Joiner;
}

export type Script = Array<Command | Loop>;

const SHELLS = new Set(["sh", "/bin/sh", "bash", "/bin/bash"]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** Programs the subset knows, each with the argument shapes it accepts. */
const PROGRAMS: Record<string, (args: string[]) => boolean> = {
  echo: () => true,
  true: (a) => a.length === 0,
  false: (a) => a.length === 0,
  sleep: (a) => a.length === 1 && /^\d+(\.\d+)?$/.test(a[0]!),
  exit: (a) => a.length === 0 || (a.length === 1 && /^\d+$/.test(a[0]!) && Number(a[0]) <= 255),
  set: (a) => a.every((f) => /^[-+][eux]+$/.test(f)),
  cat: (a) => a.length > 0 && a.every((f) => !f.startsWith("-")),
  wget: (a) => wgetArgs(a) !== undefined,
  tar: (a) => tarArgs(a) !== undefined,
  rm: (a) => rmArgs(a) !== undefined,
  ".": (a) => a.length === 1,
  export: (a) => a.length > 0 && a.every((w) => ASSIGNMENT.test(w)),
  unset: (a) => a.length > 0 && a.every((w) => new RegExp(`${NAME.source}$`).test(w)),
  // The process becomes the program: what it then does is the container's behaviour.
  exec: (a) => a.length > 0,
};

const ASSIGNMENT = new RegExp(`${NAME.source}=`, "s");

/** A busybox applet called through the binary (`/pool/busybox wget …`) is that applet. */
export function applet(argv: string[]): string[] {
  const [program, ...rest] = argv;
  return program !== undefined && /(^|\/)busybox$/.test(program) && rest.length > 0 ? rest : argv;
}

/** `rm [-f] FILE…`: the files; undefined for other options. */
export function rmArgs(args: string[]): { files: string[]; force: boolean } | undefined {
  const force = args[0] === "-f";
  const files = force ? args.slice(1) : args;
  if (files.length === 0 || files.some((f) => f.startsWith("-"))) return undefined;
  return { files, force };
}

export interface WgetArgs {
  url: string;
  /** `-` for stdout; else the file, by default the URL's last path segment. */
  output: string;
}

/** busybox wget's options as the runner and examples use them: `-q`, `-O FILE`, `-T SECONDS`, one http(s) URL. */
export function wgetArgs(args: string[]): WgetArgs | undefined {
  let url: string | undefined;
  let output: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const flags = /^-([qOT]+)(.*)$/.exec(a);
    if (flags) {
      const [, letters, rest] = flags as unknown as [string, string, string];
      const takes = letters.endsWith("O") || letters.endsWith("T") ? letters.at(-1) : undefined;
      if (letters.slice(0, -1).replace(/q/g, "") !== "" || (!takes && rest !== "")) return undefined;
      if (!takes) continue;
      const value = rest !== "" ? rest : args[++i];
      if (value === undefined) return undefined;
      if (takes === "O") output = value;
      else if (!/^\d+$/.test(value)) return undefined;
      continue;
    }
    if (url !== undefined || !/^https?:\/\/\S+$/.test(a)) return undefined;
    url = a;
  }
  if (url === undefined || !URL.canParse(url)) return undefined;
  return { url, output: output ?? (new URL(url).pathname.split("/").pop() || "index.html") };
}

export interface TarArgs {
  file: string;
  gzip: boolean;
  directory?: string;
}

/** Extraction only: `tar xzf FILE [-C DIR]` (with or without the dash, `v` allowed). */
export function tarArgs(args: string[]): TarArgs | undefined {
  const [mode, ...rest] = args;
  const letters = /^-?([xzvf]+)$/.exec(mode ?? "")?.[1];
  if (!letters || !letters.includes("x") || !letters.includes("f") || !letters.endsWith("f")) return undefined;
  const [file, ...more] = rest;
  if (file === undefined) return undefined;
  const parsed: TarArgs = { file, gzip: letters.includes("z") };
  if (more.length === 2 && more[0] === "-C") parsed.directory = more[1]!;
  else if (more.length !== 0) return undefined;
  return parsed;
}

/**
 * The script a container's command line runs, or undefined when it is not in the subset. A
 * program started directly (no shell) gets its argv as is: only a shell expands variables.
 */
export function parseCommandLine(argv: string[], env: Record<string, string>): Script | undefined {
  const [program, ...args] = applet(argv);
  if (program === undefined) return undefined;
  if (SHELLS.has(program) && args[0] === "-c" && args.length === 2) return parseShell(args[1]!, env);
  return known([program, ...args]) && !BUILTINS.has(program) ? [{ argv, after: ";" }] : undefined;
}

/** Only a shell runs these builtins: a container whose command is `export` runs no such program. */
const BUILTINS = new Set([".", "export", "unset", "exec"]);

function known(argv: string[]): boolean {
  const [program, ...args] = applet(argv);
  return program !== undefined && PROGRAMS[program]?.(args) === true;
}

const KEYWORDS = new Set(["until", "while", "do", "done"]);

/** A simple command as the tokenizer reads it, before loops are put together. */
type Flat = Command & { keyword?: string };

/**
 * Puts `until`/`while … do … done` together from the flat list, checking every command.
 * `stop` is the keyword that ends the list being read; undefined at the top.
 */
function structure(flat: Flat[], at: { i: number }, stop: string | undefined): Script | undefined {
  const script: Script = [];
  while (at.i < flat.length) {
    const item = flat[at.i]!;
    if (item.keyword === stop && stop !== undefined) return script;
    if (item.keyword === "until" || item.keyword === "while") {
      at.i += 1;
      const condition = structure(flat, at, "do");
      if (!condition || condition.length === 0 || flat[at.i]?.keyword !== "do") return undefined;
      at.i += 1;
      const body = structure(flat, at, "done");
      if (!body || body.length === 0 || flat[at.i]?.keyword !== "done") return undefined;
      at.i += 1;
      script.push({ kind: item.keyword, condition, body, after: item.after });
      continue;
    }
    if (item.keyword !== undefined) return undefined;
    if (!known(item.argv)) return undefined;
    script.push(item.discard ? { argv: item.argv, after: item.after, discard: item.discard } : { argv: item.argv, after: item.after });
    at.i += 1;
  }
  return stop === undefined ? script : undefined;
}

/** Splits `text` into simple commands as sh would; undefined for syntax beyond the subset. */
export function parseShell(text: string, env: Record<string, string>): Script | undefined {
  const flat: Flat[] = [];
  let words: string[] = [];
  let discard: Array<"stdout" | "stderr"> = [];
  let word = "";
  /** A word exists once anything, even an empty quoted string, was written to it. */
  let started = false;
  let after: Command["after"] = ";";

  const endWord = () => {
    if (started) words.push(word);
    word = "";
    started = false;
  };
  const endCommand = (next: Joiner): boolean => {
    endWord();
    if (words.length === 0) {
      // `a && ; b` or a leading `&&` is a syntax error; blank statements between `;` are fine.
      if (next !== ";" || after !== ";" || discard.length > 0) return false;
    } else {
      // A keyword opens or closes a loop and the command after it starts with the next word.
      const keyword = KEYWORDS.has(words[0]!) ? words.shift() : undefined;
      if (keyword !== undefined) flat.push({ argv: [], after, keyword });
      if (keyword === "done" && words.length > 0) return false;
      if (words.length > 0) flat.push({ argv: words, after: keyword ? ";" : after, ...(discard.length > 0 && { discard }) });
    }
    words = [];
    discard = [];
    after = next;
    return true;
  };
  /** `>/dev/null` or `2>/dev/null` at text[i] (the `2` already read as the word); where it ends. */
  const redirect = (i: number): number | undefined => {
    const stream = word === "2" ? "stderr" : word === "" && !started ? "stdout" : undefined;
    if (stream === undefined) return undefined;
    const target = /^>[ \t]*\/dev\/null(?=$|[\s;&|])/.exec(text.slice(i))?.[0];
    if (target === undefined) return undefined;
    word = "";
    started = false;
    discard.push(stream);
    return i + target.length;
  };
  /** `$NAME` or `${NAME}` at text[i]; returns the value and where the reference ends. */
  const expand = (i: number): { value: string; end: number } | undefined => {
    if (text[i + 1] === "{") {
      const close = text.indexOf("}", i + 2);
      const name = text.slice(i + 2, close);
      if (close < 0 || !new RegExp(`${NAME.source}$`).test(name)) return undefined;
      return { value: env[name] ?? "", end: close + 1 };
    }
    const name = NAME.exec(text.slice(i + 1))?.[0];
    if (name === undefined) return undefined;
    return { value: env[name] ?? "", end: i + 1 + name.length };
  };

  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === " " || ch === "\t") {
      endWord();
      i++;
    } else if (ch === "\n" || ch === ";") {
      if (!endCommand(";")) return undefined;
      i++;
    } else if (text.startsWith("&&", i) || text.startsWith("||", i)) {
      if (!endCommand(text.startsWith("&&", i) ? "&&" : "||")) return undefined;
      i += 2;
    } else if (ch === "#" && !started) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (ch === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) return undefined;
      word += text.slice(i + 1, close);
      started = true;
      i = close + 1;
    } else if (ch === '"') {
      started = true;
      i++;
      for (;;) {
        const c = text[i];
        if (c === undefined) return undefined;
        if (c === '"') break;
        if (c === "\\" && '$"\\`\n'.includes(text[i + 1] ?? "")) {
          if (text[i + 1] !== "\n") word += text[i + 1];
          i += 2;
        } else if (c === "$" && /[A-Za-z_{]/.test(text[i + 1] ?? "")) {
          const ref = expand(i);
          if (!ref) return undefined;
          word += ref.value;
          i = ref.end;
        } else if (c === "`" || (c === "$" && text[i + 1] !== undefined && !/[\s"]/.test(text[i + 1]!))) {
          return undefined; // command substitution, special parameters
        } else {
          word += c;
          i++;
        }
      }
      i++;
    } else if (ch === "\\") {
      if (i + 1 >= text.length) return undefined;
      if (text[i + 1] !== "\n") {
        word += text[i + 1];
        started = true;
      }
      i += 2;
    } else if (ch === "$" && /[A-Za-z_{]/.test(text[i + 1] ?? "")) {
      const ref = expand(i);
      if (!ref) return undefined;
      // Unquoted, the value is split into fields on whitespace; an empty one makes no word.
      for (const c of ref.value) {
        if (/\s/.test(c)) endWord();
        else {
          word += c;
          started = true;
        }
      }
      i = ref.end;
    } else if (ch === ">") {
      const end = redirect(i);
      if (end === undefined) return undefined;
      i = end;
    } else if ("|&<>()`".includes(ch) || (ch === "$" && text[i + 1] !== undefined && !/\s/.test(text[i + 1]!))) {
      return undefined; // pipes, background jobs, redirections, subshells, substitutions
    } else {
      word += ch;
      started = true;
      i++;
    }
  }
  if (!endCommand(";")) return undefined;
  const script = structure(flat, { i: 0 }, undefined);
  return script && script.length > 0 ? script : undefined;
}
