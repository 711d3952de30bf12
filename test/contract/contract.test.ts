import { describe, expect, it } from "vitest";
import { capabilitiesDocument, configJsonSchema } from "../../src/contract/capabilities.ts";
import { SESSION_ID_PATTERN, newSessionId } from "../../src/contract/ids.ts";
import { normaliseRelativePath } from "../../src/contract/paths.ts";
import { decodeByteFrame, encodeByteFrame } from "../../src/contract/streams.ts";

describe("path guard", () => {
  it.each([
    ["/a/b.yaml", "a/b.yaml"],
    ["./a//b.yaml", "a/b.yaml"],
    ["a/./b/../c", "a/c"],
    // The root cannot be climbed out of: normalisation keeps this inside the bundle.
    ["/../x", "x"],
  ])("normalises %s to %s", (input, output) => expect(normaliseRelativePath(input)).toBe(output));

  it.each(["", ".", "..", "../x", "a/../../x", "/"])("refuses %j", (input) => expect(normaliseRelativePath(input)).toBeUndefined());
});

describe("session ids", () => {
  it("are 12 base32 characters and do not repeat across 10,000 draws", () => {
    const ids = new Set(Array.from({ length: 10_000 }, newSessionId));
    expect(ids.size).toBe(10_000);
    for (const id of ids) expect(id).toMatch(SESSION_ID_PATTERN);
  });
});

describe("byte frames", () => {
  it("carry a 4-byte big-endian seq and a 1-byte stream tag", () => {
    const frame = encodeByteFrame(258, "stderr", Buffer.from("hi"));
    expect([...frame]).toEqual([0, 0, 1, 2, 2, 0x68, 0x69]);
    expect(decodeByteFrame(frame)).toEqual({ seq: 258, tag: "stderr", payload: Buffer.from("hi") });
    expect(decodeByteFrame(new Uint8Array(4))).toBeUndefined();
  });
});

describe("config schema builder", () => {
  it("gives defaults and locks only the image when enforced", () => {
    const schema = configJsonSchema({ imageDefault: "img", enforced: true });
    expect(schema.required).toEqual(["image", "pullPolicy"]);
    expect(schema.properties.image).toMatchObject({ default: "img", readOnly: true });
    expect(schema.properties.pullPolicy).toMatchObject({ default: "missing", enum: ["missing", "always", "never"] });
    expect("readOnly" in schema.properties.pullPolicy).toBe(false);
    expect("registryUrl" in schema.properties).toBe(false);
  });

  it("offers an editable enum for a non-empty picker list and falls back to readOnly for an empty one", () => {
    const picked = configJsonSchema({ imageDefault: "a", imageEnum: ["a", "b"], enforced: true });
    expect(picked.properties.image).toMatchObject({ enum: ["a", "b"] });
    expect("readOnly" in picked.properties.image).toBe(false);
    expect(configJsonSchema({ imageDefault: "a", imageEnum: [], enforced: true }).properties.image).toMatchObject({ readOnly: true });
    expect(configJsonSchema({ imageDefault: "a", registryUrl: true }).properties).toHaveProperty("registryUrl");
  });
});

describe("capabilities document", () => {
  const base = {
    displayName: "D",
    description: "d",
    configSchema: configJsonSchema({ imageDefault: "i" }),
    io: ["tty", "streams"] as ("tty" | "streams")[],
    ports: true,
    terms: undefined,
    apps: [],
  };

  it("advertises agents only with watch on and a non-empty list", () => {
    expect(capabilitiesDocument({ ...base, watch: false, agents: ["a"] }).features).toEqual({ io: ["tty", "streams"], ports: true, watch: false });
    expect(capabilitiesDocument({ ...base, watch: true, agents: [] }).features).toEqual({ io: ["tty", "streams"], ports: true, watch: true });
    expect(capabilitiesDocument({ ...base, watch: true, agents: ["a"] }).features.agents).toEqual(["a"]);
  });

  it("lists apps by identity only and omits the key for an empty catalog", () => {
    expect("apps" in capabilitiesDocument({ ...base, watch: false, agents: [] })).toBe(false);
    const document = capabilitiesDocument({ ...base, watch: false, agents: [], apps: [{ name: "tool", title: "Acme tool", image: "x" } as never] });
    expect(document.apps).toEqual([{ name: "tool", title: "Acme tool" }]);
  });
});
