/**
 * How every runner process's Node is started, wherever it is started: the image's command and
 * environment, the manifests and the chart, the supervisor child of `k8s-runner serve` and
 * `k8s-runner supervisor`, the bench and the tests (which run the processes as deployed). Both
 * trade CPU for memory that a runner with hundreds of mostly idle terminals otherwise keeps:
 * measured, about 18 % on a burst of 50 starts and a third more of the supervisor's CPU per KiB
 * of terminal output, for a third less memory at 500 sessions (docs/benchmarks-relay.md,
 * "Node's memory settings"):
 *
 * - `--optimize-for-size`: V8 grows the heap in smaller steps and keeps a 1 MiB young
 *   generation instead of letting it grow to 16 MiB per semi-space; a burst of session starts
 *   no longer leaves each process tens of MiB larger for good.
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates (Node's worker and libuv pool
 *   threads) an arena of its own, and an arena keeps freed memory; two arenas is what a process
 *   that runs JavaScript on one thread needs.
 */
export const NODE_RUNTIME_FLAGS: readonly string[] = ["--optimize-for-size"];
export const NODE_RUNTIME_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2" };

/** The Dockerfile's and the image's `ENV` lines for NODE_RUNTIME_ENV. */
export const nodeRuntimeEnvLines = (): string[] => Object.entries(NODE_RUNTIME_ENV).map(([name, value]) => `${name}=${value}`);

/** The command line that starts `entry` (a path under dist/) as deployed. */
export const nodeCommand = (entry: string): string[] => ["node", ...NODE_RUNTIME_FLAGS, entry];

/** fork() options for a runner process started by another: this process's own flags (a loader under tsx) and the settings. */
export const forkWithNodeRuntime = (env: NodeJS.ProcessEnv) => ({ env: { ...NODE_RUNTIME_ENV, ...env }, execArgv: [...process.execArgv, ...NODE_RUNTIME_FLAGS] });
