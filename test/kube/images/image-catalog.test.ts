import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DockerHubClient,
  notOfferedMessage,
  offeredImages,
  parseDockerHubRef,
  selectTags,
  tagPasses,
  type TagFilter,
} from "../../../src/kube/images/image-catalog.ts";

const DEFAULT_FILTER: TagFilter = { pinnedOnly: true, excludeSha: true, excludePrerelease: true, include: [], exclude: [] };
const NO_FILTER: TagFilter = { pinnedOnly: false, excludeSha: false, excludePrerelease: false, include: [], exclude: [] };

describe("tag rules", () => {
  it("keeps pinned releases and their variants by default", () => {
    const tags = ["latest", "latest-slim", "0.14.0", "0.14.0-slim", "0.14.0-rust-1.95.0", "0.14", "0.15.0-rc.1", "0.15.0-beta", "1.0.0.1", "sha-4b1f2c3", "4b1f2c3d"];
    expect(tags.filter((tag) => tagPasses(tag, DEFAULT_FILTER))).toEqual(["0.14.0", "0.14.0-slim", "0.14.0-rust-1.95.0", "1.0.0.1"]);
  });

  it("applies each rule only when enabled", () => {
    expect(tagPasses("latest", NO_FILTER)).toBe(true);
    expect(tagPasses("latest", { ...NO_FILTER, pinnedOnly: true })).toBe(false);
    expect(tagPasses("DEADBEEF", { ...NO_FILTER, excludeSha: true })).toBe(false);
    expect(tagPasses("deadbe", { ...NO_FILTER, excludeSha: true })).toBe(true); // six hex digits is not a commit
    for (const word of ["rc", "alpha", "beta", "pre", "preview", "next", "canary", "dev", "nightly", "snapshot"]) {
      expect(tagPasses(`1.2.3-${word.toUpperCase()}.4`, { ...NO_FILTER, excludePrerelease: true })).toBe(false);
    }
    expect(tagPasses("1.2.3-slim", { ...NO_FILTER, excludePrerelease: true })).toBe(true);
    expect(tagPasses("1.2.3.rc1", { ...NO_FILTER, excludePrerelease: true })).toBe(true);
  });

  it("needs one include match when includes are given and no exclude match", () => {
    const filter = { ...DEFAULT_FILTER, include: [/-slim$/], exclude: [/^0\.13\./] };
    expect(selectTags(["0.14.0-slim", "0.14.0", "0.13.2-slim"], filter, 20)).toEqual(["0.14.0-slim"]);
  });

  it("keeps the first `limit` passing tags in order", () => {
    expect(selectTags(["latest", "0.14.2", "0.14.1", "0.14.0"], DEFAULT_FILTER, 2)).toEqual(["0.14.2", "0.14.1"]);
  });
});

describe("offered images", () => {
  it("always offers the default first, then the repository's tags, without duplicates", () => {
    expect(offeredImages("telorun/node:0.14.0-slim", "telorun/node", ["0.14.1-slim", "0.14.0-slim"])).toEqual([
      "telorun/node:0.14.0-slim",
      "telorun/node:0.14.1-slim",
    ]);
    expect(offeredImages("telorun/node:latest-slim", "telorun/node", [])).toEqual(["telorun/node:latest-slim"]);
  });

  it("words the refusal of an image not offered", () => {
    expect(notOfferedMessage("evil/miner:1", ["telorun/node:latest-slim", "telorun/node:0.14.0"])).toBe(
      "base image 'evil/miner:1' is not offered by this runner. Allowed images: telorun/node:latest-slim, telorun/node:0.14.0",
    );
  });
});

describe("parseDockerHubRef", () => {
  it("reads official, namespaced, tagged, digested and docker.io-qualified references", () => {
    expect(parseDockerHubRef("node")).toEqual({ namespace: "library", repository: "node", tag: "latest" });
    expect(parseDockerHubRef("telorun/node:0.14.0-slim")).toEqual({ namespace: "telorun", repository: "node", tag: "0.14.0-slim" });
    expect(parseDockerHubRef("docker.io/telorun/node:latest-slim")).toEqual({ namespace: "telorun", repository: "node", tag: "latest-slim" });
    expect(parseDockerHubRef("index.docker.io/library/busybox:stable")).toEqual({ namespace: "library", repository: "busybox", tag: "stable" });
    expect(parseDockerHubRef("registry-1.docker.io/node:20")).toEqual({ namespace: "library", repository: "node", tag: "20" });
    expect(parseDockerHubRef(`telorun/node:0.14.0@sha256:${"a".repeat(64)}`)).toEqual({
      namespace: "telorun",
      repository: "node",
      tag: "0.14.0",
      digest: `sha256:${"a".repeat(64)}`,
    });
  });

  it("is null for any other registry", () => {
    expect(parseDockerHubRef("ghcr.io/acme/app:1")).toBeNull();
    expect(parseDockerHubRef("localhost/app:1")).toBeNull();
    expect(parseDockerHubRef("registry.local:5000/app")).toBeNull();
    expect(parseDockerHubRef("quay.io/org/app@sha256:abc")).toBeNull();
  });
});

describe("DockerHubClient against a local HTTP server", () => {
  let server: Server;
  let baseUrl: string;
  const requests: Array<{ url: string; accept: string | undefined }> = [];

  function reply(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    requests.push({ url: req.url ?? "", accept: req.headers.accept });
    const url = new URL(req.url ?? "/", baseUrl);
    if (url.pathname === "/v2/repositories/telorun/node/tags") {
      const page = url.searchParams.get("page") ?? "1";
      if (page === "1") {
        return reply(res, 200, {
          next: `${baseUrl}/v2/repositories/telorun/node/tags?page_size=100&page=2`,
          results: [
            { name: "0.13.0", last_updated: "2026-09-01T00:00:00Z" },
            { name: "latest-slim", last_updated: "2026-11-20T00:00:00Z" },
          ],
        });
      }
      return reply(res, 200, {
        next: "https://elsewhere.example/v2/page3",
        results: [
          { name: "0.14.0-slim", last_updated: "2026-11-20T00:00:00Z" },
          { name: "0.14.1", last_updated: "2026-11-25T00:00:00Z" },
          { name: "ancient", last_updated: null },
        ],
      });
    }
    if (url.pathname === "/v2/repositories/library/node/tags") return reply(res, 503, { message: "maintenance" });
    if (url.pathname === "/v2/repositories/telorun/node/tags/latest-slim") return reply(res, 200, { digest: "sha256:top" });
    if (url.pathname === "/v2/repositories/library/busybox/tags/stable") {
      return reply(res, 200, { images: [{ digest: null }, { digest: "sha256:amd64" }] });
    }
    reply(res, 404, { message: "object not found" });
  }

  beforeAll(async () => {
    server = createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const client = () => new DockerHubClient({ fetch, baseUrl });

  it("lists tags newest first across pages, asking for JSON, never following a foreign next", async () => {
    requests.length = 0;
    expect(await client().listTags("telorun/node")).toEqual(["0.14.1", "latest-slim", "0.14.0-slim", "0.13.0", "ancient"]);
    expect(requests).toEqual([
      { url: "/v2/repositories/telorun/node/tags?page_size=100", accept: "application/json" },
      { url: "/v2/repositories/telorun/node/tags?page_size=100&page=2", accept: "application/json" },
    ]);
  });

  it("stops following pages once maxTagsScanned tags were collected", async () => {
    requests.length = 0;
    const tags = await new DockerHubClient({ fetch, baseUrl, maxTagsScanned: 2 }).listTags("telorun/node");
    expect(tags).toEqual(["latest-slim", "0.13.0"]);
    expect(requests).toHaveLength(1);
  });

  it("throws on a non-2xx answer, addressing a bare name as an official image", async () => {
    await expect(client().listTags("node")).rejects.toThrow("Docker Hub tags request for 'node' failed: 503 Service Unavailable");
  });

  it("resolves a moving tag's digest from `digest`, else the first image digest", async () => {
    expect(await client().resolveTagDigest("telorun/node:latest-slim")).toEqual({ kind: "resolved", digest: "sha256:top" });
    expect(await client().resolveTagDigest("busybox:stable")).toEqual({ kind: "resolved", digest: "sha256:amd64" });
  });

  it("needs no request for a pinned reference and does not resolve other registries", async () => {
    requests.length = 0;
    expect(await client().resolveTagDigest("ghcr.io/acme/app@sha256:abc")).toEqual({ kind: "pinned", digest: "sha256:abc" });
    expect(await client().resolveTagDigest("ghcr.io/acme/app:1")).toEqual({ kind: "not-hub" });
    expect(requests).toEqual([]);
  });

  it("reports a failed lookup instead of throwing", async () => {
    expect(await client().resolveTagDigest("telorun/node:gone")).toEqual({
      kind: "failed",
      message: "Docker Hub tag request for 'telorun/node:gone' failed: 404 Not Found",
    });
    const unreachable = new DockerHubClient({ fetch, baseUrl: "http://127.0.0.1:1" });
    expect(await unreachable.resolveTagDigest("telorun/node:latest")).toEqual({
      kind: "failed",
      message: "Docker Hub tag request for 'telorun/node:latest' failed: fetch failed",
    });
  });
});
