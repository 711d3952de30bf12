/** The load run (load-run.ts) at full size for `npm run test:soak`: 1,000 concurrent creations, 500 admitted. */
import { describe, it } from "vitest";
import { runLoad } from "./load-run.ts";

describe("load run, full size", () => {
  it("fills its capacity of 500 from 1,000 concurrent creations, refuses the rest with 409, runs, follows and stops them all", () => runLoad({ creates: 1000, capacity: 500 }), 900_000);
});
