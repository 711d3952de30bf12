// The simulated containers' shell: command lines parsed as sh parses them (quotes, `$VAR` and
// `${VAR}` from the env, field splitting), the kubelet's own `$(VAR)` expansion of command and
// args, and what is left to the container's default behaviour.
import { describe, expect, it } from "vitest";
import { parseCommandLine } from "../../src/sim/shell.ts";
import { waitFor } from "../support/wait.ts";
import { freshNamespace, pod, useCluster } from "./helpers.ts";

const argvs = (argv: string[], env: Record<string, string> = {}) => parseCommandLine(argv, env)?.map((c) => [c.after, ...(c.kind === undefined ? c.argv : [c.kind])]);

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
    for (const script of ["wget http://[bad", "echo $(date)", "echo `date`", "cat /x | grep y", "echo x > /tmp/y", "echo x 2>/tmp/y", "echo x 2>&1", "until true; do done", "while true; do sleep 1", "do sleep 1; done", "until true; done", "done", "exec", "export A-B=1", "/pool/busybox nosuch", "echo ${X:-d}", "echo $1", "ls /", "echo &&", "&& echo"]) {
      expect(parseCommandLine(["sh", "-c", script], {}), script).toBeUndefined();
    }
    // a program run directly gets no shell: its `$VAR` stays literal
    expect(argvs(["echo", "$HOME"], { HOME: "/root" })).toEqual([[";", "echo", "$HOME"]]);
    expect(parseCommandLine(["telo", "run", "/app/telo.yaml"], {})).toBeUndefined();
    // a shell's builtins are no programs of their own
    expect(parseCommandLine(["export", "A=1"], {})).toBeUndefined();
  });

  it("reads loops, /dev/null redirections and applets called through busybox", () => {
    const script = parseCommandLine(
      ["/pool/busybox", "sh", "-c", 'until /pool/busybox wget -q -O /tmp/claim "$URL" 2>/dev/null; do /pool/busybox sleep 1; done; . /tmp/claim'],
      { URL: "http://runner/claim" },
    );
    expect(script).toEqual([
      {
        kind: "until",
        after: ";",
        condition: [{ argv: ["/pool/busybox", "wget", "-q", "-O", "/tmp/claim", "http://runner/claim"], after: ";", discard: ["stderr"] }],
        body: [{ argv: ["/pool/busybox", "sleep", "1"], after: ";" }],
      },
      { argv: [".", "/tmp/claim"], after: ";" },
    ]);
    expect(argvs(["sh", "-c", "while false; do true; done && echo x >/dev/null; export 'A=b c' B=; unset A; exec telo run /app/x"])).toEqual([
      [";", "while"],
      ["&&", "echo", "x"],
      [";", "export", "A=b c", "B="],
      [";", "unset", "A"],
      [";", "exec", "telo", "run", "/app/x"],
    ]);
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

  it("runs loops, `.` scripts, export/unset and exec as busybox sh does", async () => {
    const ns = await freshNamespace(c);
    const volumes = [{ name: "tmp", emptyDir: {} }];
    const volumeMounts = [{ name: "tmp", mountPath: "/tmp" }];
    // The script writes a file in a loop's body, sources nothing until it exists, then runs it.
    const script = [
      "until /bin/busybox cat /tmp/next 2>/dev/null >/dev/null; do /bin/busybox wget -q -O /tmp/next \"$URL\"; done",
      ". /tmp/next",
    ].join("\n");
    // The answer waits until the test has scripted the program the shell will exec.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const server = await import("node:http").then(({ createServer }) =>
      createServer((_req, res) => void released.then(() => res.end("set -e\nrm -f /tmp/next\nunset URL\nexport 'GREETING=hi there' 'ODD=a'\\''b'\nexec telo run /app/x\n"))),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/next`;
    try {
      await c.core.createNamespacedPod({
        namespace: ns,
        body: pod("loop", {
          spec: { volumes },
          container: { command: ["/bin/busybox", "sh", "-c", script], env: [{ name: "URL", value: url }], volumeMounts },
        }),
      });
      await waitFor("the shell runs", async () => (await c.core.readNamespacedPod({ name: "loop", namespace: ns })).status?.phase === "Running" || undefined);
      const annotations = { "sim.k8s-runner.dev/report-start": "true", "sim.k8s-runner.dev/exit-code": "5" };
      await c.core.patchNamespacedPod({ name: "loop", namespace: ns, body: [{ op: "add", path: "/metadata/annotations", value: annotations }] });
      release();
      const ended = await waitFor("the exec'd program ended", async () => {
        const p = await c.core.readNamespacedPod({ name: "loop", namespace: ns });
        return p.status?.phase === "Failed" ? p : undefined;
      });
      // the exec'd program behaves as the annotations say: it prints its argv and env, exits 5
      expect(ended.status?.containerStatuses?.[0]?.state?.terminated?.exitCode).toBe(5);
      const log = await c.core.readNamespacedPodLog({ name: "loop", namespace: ns });
      expect(log).toBe(`[sim] argv ["telo","run","/app/x"]\n[sim] env GREETING="hi there"\n[sim] env ODD="a'b"\n`);
    } finally {
      server.close();
    }
  });
});
