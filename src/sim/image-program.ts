// Image conventions for programs a test would otherwise have to script: the Kaniko executor
// (the legacy build Job) logs a build of its context and a push of its destination, then exits 0.
import { createHash } from "node:crypto";
import type { Script } from "./shell.ts";

export function imageProgram(image: string, argv: string[]): Script | undefined {
  if (!/kaniko-project\/executor/.test(image)) return undefined;
  const flag = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const destination = flag("destination") ?? "image:latest";
  const digest = createHash("sha256").update(destination).digest("hex");
  const lines = [
    `INFO[0000] Using dockerignore file: ${flag("context")?.replace(/^dir:\/\//, "") ?? "/workspace"}/.dockerignore`,
    "INFO[0000] Executing 0 build triggers",
    `INFO[0001] Pushing image to ${destination}`,
    `INFO[0002] Pushed ${destination.replace(/:[^/:]+$/, "")}@sha256:${digest}`,
  ];
  return lines.map((line) => ({ argv: ["echo", line], after: ";" as const }));
}
