/** The load run (load-run.ts) at the size `npm test` affords: 200 concurrent creations, 100 admitted. */
import { describe, it } from "vitest";
import { runLoad } from "./load-run.ts";

describe("load run, reduced size", () => {
  it("fills its capacity of 100 from 200 concurrent creations, refuses the rest with 409, runs, follows and stops them all", () => runLoad({ creates: 200, capacity: 100 }), 300_000);
});
