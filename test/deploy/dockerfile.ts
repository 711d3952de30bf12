/** The Dockerfile parsed into stages of instructions, for the tests that hold it to other files. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "./render.ts";

export type Instruction = { keyword: string; args: string };
export type Stage = { from: string; name?: string; instructions: Instruction[] };

/** Dockerfile → stages of instructions (continuation lines joined, comments dropped). */
export function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const lines = text.replace(/\\\r?\n/g, " ").split(/\r?\n/);
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [, keyword = "", rest = ""] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args: rest.replace(/\s+/g, " ") };
    if (instruction.keyword === "FROM") {
      const [image = "", , name] = instruction.args.split(" ");
      stages.push({ from: image, ...(name !== undefined && { name }), instructions: [] });
    } else if (stages.length === 0 && instruction.keyword === "ARG") {
      const [name = "", value = ""] = instruction.args.split("=");
      args.set(name, value);
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return { args, stages };
}

export const dockerfile = parseDockerfile(readFileSync(join(REPO_ROOT, "Dockerfile"), "utf8"));
export const finalStage = dockerfile.stages.at(-1)!;
export const resolveImage = (image: string) => image.replace(/^\$\{(\w+)\}$/, (_, name: string) => dockerfile.args.get(name) ?? "");
export const instructionsOf = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
