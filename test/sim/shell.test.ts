// The simulated containers' shell: command lines parsed as sh parses them (quotes, `$VAR` and
// `${VAR}` from the env, field splitting), the kubelet's own `$(VAR)` expansion of command and
// args, and what is left to the container's default behaviour.
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../src/sim/shell.ts";
import { waitFor } from "../support/wait.ts";
import { freshNamespace, pod, useCluster } from "./helpers.ts";

const argvs = (argv: string[], env: Record<string, string> = {}) => parseCommandLine(argv, env)?.map((c) => [c.after, ...c.argv]);

describe("parsing", () => {
  it("expands variables as sh does: in double quotes and bare, never in single quotes", () => {
    const env = { URL: "http://runner:8063/internal/bundles/x?token=a&b", TWO: "a  b" };
    expect(argvs(["sh", "-c", 'set -e; wget -qO /tmp/archive.tgz "$URL"; tar xzf /tmp/archive.tgz -C /app'], env)).toEqual([
      [";", "set", "-e"],
      [";", "wget", "-qO", "/tmp/archive.tgz", "http://runner:8063/internal/bundles/x?token=a&b"],
      [";", "tar", "xzf", "/tmp/archive.tgz", "-C", "/app"],
    ]);
    expect(argvs(["sh", "-c", `echo '$TWO' "$TWO" $TWO \${TWO}x "$MISSING" $MISSING end`], env)).toEqual([[";", "echo", "$TWO", "a  b", "a", "b", "a", "bx", "", "end"]]);
    expect(argvs(["sh", "-c", 'echo a\\ b "q\\"uote" # a comment\nfalse || echo c && exit 3'])).toEqual([
      [";", "echo", "a b", 'q"uote'],
      [";", "false"],
      ["||", "echo", "c"],
      ["&&", "exit", "3"],
    ]);
  });

  it("leaves anything beyond the subset to the container's default behaviour", () => {
    for (const script of ["wget http://[bad", "echo $(date)", "echo `date`", "cat /x | grep y", "echo x > /tmp/y", "while true; do sleep 1; done", "echo ${X:-d}", "echo $1", "ls /", "echo &&", "&& echo"]) {
      expect(parseCommandLine(["sh", "-c", script], {}), script).toBeUndefined();
    }
    // a program run directly gets no shell: its `$VAR` stays literal
    expect(argvs(["echo", "$HOME"], { HOME: "/root" })).toEqual([[";", "echo", "$HOME"]]);
    expect(parseCommandLine(["telo", "run", "/app/telo.yaml"], {})).toBeUndefined();
  });
});

describe("in a container", () => {
  const c = useCluster();

  it("expands $(VAR) in command and args as the kubelet does, and $VAR in sh -c as the shell does", async () => {
    const ns = await freshNamespace(c);
    const env = [
      { name: "GREETING", value: "hello" },
      { name: "WHO", value: "world" },
    ];
    await c.core.createNamespacedPod({ namespace: ns, body: pod("kubelet", { container: { command: ["echo", "$(GREETING)", "$$(WHO)", "$(NOPE)"], env } }) });
    await c.core.createNamespacedPod({ namespace: ns, body: pod("shell", { container: { command: ["sh", "-c", 'echo "$GREETING, $WHO"; exit 4'], env } }) });
    const ended = (name: string) =>
      waitFor(`${name} ended`, async () => {
        const p = await c.core.readNamespacedPod({ name, namespace: ns });
        return p.status?.phase === "Succeeded" || p.status?.phase === "Failed" ? p : undefined;
      });
    expect((await ended("kubelet")).status?.phase).toBe("Succeeded");
    expect(await c.core.readNamespacedPodLog({ name: "kubelet", namespace: ns })).toBe("hello $(WHO) $(NOPE)\n");
    expect((await ended("shell")).status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(4);
    expect(await c.core.readNamespacedPodLog({ name: "shell", namespace: ns })).toBe("hello, world\n");
  });
});
