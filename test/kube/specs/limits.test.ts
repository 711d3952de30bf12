import { describe, expect, it } from "vitest";
import { clampLimits, containerResources, cpuMillicores, quantityBytes } from "../../../src/kube/specs/limits.ts";

const CEILING = { cpu: "500m", memory: "512Mi", ephemeralStorage: "1Gi", ttlSeconds: 3600 };

describe("quantities", () => {
  it("reads CPU in millicores", () => {
    expect(cpuMillicores("500m")).toBe(500);
    expect(cpuMillicores("1")).toBe(1000);
    expect(cpuMillicores("0.5")).toBe(500);
    expect(cpuMillicores("lots")).toBeUndefined();
    expect(cpuMillicores("1Gi")).toBeUndefined();
  });

  it("reads memory and storage in bytes, binary and decimal", () => {
    expect(quantityBytes("512Mi")).toBe(512 * 2 ** 20);
    expect(quantityBytes("1Gi")).toBe(2 ** 30);
    expect(quantityBytes("2Ki")).toBe(2048);
    expect(quantityBytes("1Ti")).toBe(2 ** 40);
    expect(quantityBytes("500M")).toBe(500e6);
    expect(quantityBytes("1G")).toBe(1e9);
    expect(quantityBytes("3k")).toBe(3000);
    expect(quantityBytes("3K")).toBe(3000);
    expect(quantityBytes("1T")).toBe(1e12);
    expect(quantityBytes("1024")).toBe(1024);
    expect(quantityBytes("1.5Gi")).toBe(1.5 * 2 ** 30);
    expect(quantityBytes("12Zi")).toBeUndefined();
  });
});

describe("clampLimits", () => {
  it("uses the ceilings verbatim when nothing is requested (the /v1 contract today)", () => {
    expect(clampLimits(CEILING)).toEqual(CEILING);
  });

  it("lowers to a smaller request, never raises", () => {
    expect(clampLimits(CEILING, { cpu: "0.25", memory: "256Mi", ephemeralStorage: "500M", ttlSeconds: 60 })).toEqual({
      cpu: "0.25",
      memory: "256Mi",
      ephemeralStorage: "500M",
      ttlSeconds: 60,
    });
    expect(clampLimits(CEILING, { cpu: "2", memory: "1Gi", ephemeralStorage: "2Gi", ttlSeconds: 7200 })).toEqual(CEILING);
  });

  it("falls back to the ceiling for an unparseable request or a non-positive TTL", () => {
    expect(clampLimits(CEILING, { cpu: "fast", memory: "big", ttlSeconds: 0 })).toEqual(CEILING);
    expect(clampLimits(CEILING, { ttlSeconds: -5 }).ttlSeconds).toBe(3600);
  });
});

describe("containerResources", () => {
  it("limits all three and requests exactly the cpu and memory limits", () => {
    expect(containerResources(CEILING)).toEqual({
      limits: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "1Gi" },
      requests: { cpu: "500m", memory: "512Mi" },
    });
  });
});
