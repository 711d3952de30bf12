/** The load run (load-run.ts) at the size `npm test` affords: 200 concurrent creations, 100 admitted. */
import { describe, it } from "vitest";
import { runLoad } from "./load-run.ts";

describe("load run, reduced size", () => {
  it("admits exactly the capacity of 200 concurrent creations, runs, follows and stops them all", () => runLoad({ creates: 200, capacity: 100 }), 300_000);
});
