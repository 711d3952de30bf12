/**
 * Section 6 in a process of its own: bench/sim.ts's runSimBench, with `--expose-gc` so its
 * heap figures are taken after a collection, and without the other sections' sockets and
 * garbage in the same heap. Prints the result as one JSON line on stdout.
 */
import { runSimBench } from "../sim.ts";

const result = await runSimBench({ quick: process.argv.includes("--quick") });
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(0);
