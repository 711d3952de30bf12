import { describe, expect, it } from "vitest";
import {
  basicAuthorization,
  bearerTokenOf,
  credentialsFor,
  MANIFEST_ACCEPT,
  manifestUrl,
  parseBearerChallenge,
  registryHost,
  tokenRequestUrl,
} from "../../../src/kube/build/registry-auth.ts";

const b64 = (text: string) => Buffer.from(text).toString("base64");

describe("manifestUrl", () => {
  it("asks the API for the tag's manifest under the repository path", () => {
    expect(manifestUrl("https://registry.example.com/", "registry.example.com/telo/sessions", "0123abcd")).toBe(
      "https://registry.example.com/v2/telo/sessions/manifests/0123abcd",
    );
  });

  it("cannot ask without an API URL or a registry host in the repository", () => {
    expect(manifestUrl(undefined, "registry.example.com/telo-sessions", "t")).toBeUndefined();
    expect(manifestUrl("https://registry.example.com", "telo-sessions", "t")).toBeUndefined();
  });

  it("accepts every manifest kind a tag can resolve to", () => {
    expect(MANIFEST_ACCEPT).toBe(
      "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json, application/vnd.docker.distribution.manifest.v2+json, application/vnd.docker.distribution.manifest.list.v2+json",
    );
  });
});

describe("credentialsFor", () => {
  const config = JSON.stringify({
    auths: {
      "https://index.docker.io/v1/": { auth: b64("hubuser:hub:pass") },
      "registry.example.com": { username: "pusher", password: "s3cret", auth: b64("ignored:ignored") },
      "https://registry.example.com": { username: "normalised", password: "loser" },
      "http://telo-k8s-runner-registry.telo-runner.svc.cluster.local:5000/": { auth: b64("incluster:pw") },
      "broken.example.com": { auth: b64("no-colon") },
    },
  });

  it("prefers the entry keyed exactly by the host, with username and password", () => {
    expect(credentialsFor(config, "https://registry.example.com/v2/")).toEqual({ username: "pusher", password: "s3cret" });
  });

  it("falls back to a key that normalises to the host, splitting `auth` at the first colon", () => {
    expect(credentialsFor(config, "http://telo-k8s-runner-registry.telo-runner.svc.cluster.local:5000")).toEqual({
      username: "incluster",
      password: "pw",
    });
    expect(credentialsFor(config, "index.docker.io")).toEqual({ username: "hubuser", password: "hub:pass" });
  });

  it("has none for an unknown host, an unusable entry or a malformed config", () => {
    expect(credentialsFor(config, "ghcr.io")).toBeUndefined();
    expect(credentialsFor(config, "broken.example.com")).toBeUndefined();
    expect(credentialsFor("{nope", "registry.example.com")).toBeUndefined();
    expect(credentialsFor(JSON.stringify({ credHelpers: {} }), "registry.example.com")).toBeUndefined();
  });

  it("encodes Basic authorization", () => {
    expect(basicAuthorization({ username: "pusher", password: "s3cret" })).toBe(`Basic ${b64("pusher:s3cret")}`);
  });

  it("strips scheme and path from registry locations", () => {
    expect(registryHost("https://registry.example.com:5000/v2/")).toBe("registry.example.com:5000");
    expect(registryHost("registry.example.com/telo-sessions")).toBe("registry.example.com");
  });
});

describe("bearer challenge", () => {
  it("parses Docker Hub's challenge", () => {
    expect(
      parseBearerChallenge('Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:telorun/node:pull"'),
    ).toEqual({ realm: "https://auth.docker.io/token", service: "registry.docker.io", scope: "repository:telorun/node:pull" });
  });

  it("keeps commas inside quoted values, reads tokens and escapes, ignores case and spacing", () => {
    expect(
      parseBearerChallenge('bearer  realm="https://ghcr.io/token", service=ghcr.io , scope="repository:acme/app:pull,push", error="insufficient \\"scope\\""'),
    ).toEqual({ realm: "https://ghcr.io/token", service: "ghcr.io", scope: "repository:acme/app:pull,push" });
  });

  it("is undefined for another scheme or a challenge without a realm", () => {
    expect(parseBearerChallenge('Basic realm="Registry Realm"')).toBeUndefined();
    expect(parseBearerChallenge('Bearer service="registry.docker.io"')).toBeUndefined();
  });

  it("builds the token request with the challenge's scope, else pull on the repository", () => {
    expect(
      tokenRequestUrl(
        { realm: "https://auth.example.com/token?client=runner", service: "registry.example.com", scope: "repository:telo/sessions:pull" },
        "registry.example.com/telo/sessions",
      ),
    ).toBe("https://auth.example.com/token?client=runner&service=registry.example.com&scope=repository%3Atelo%2Fsessions%3Apull");
    expect(tokenRequestUrl({ realm: "https://auth.example.com/token" }, "registry.example.com/telo-sessions")).toBe(
      "https://auth.example.com/token?scope=repository%3Atelo-sessions%3Apull",
    );
  });

  it("reads `token`, else `access_token`", () => {
    expect(bearerTokenOf({ token: "t1", access_token: "t2" })).toBe("t1");
    expect(bearerTokenOf({ access_token: "t2", expires_in: 300 })).toBe("t2");
    expect(bearerTokenOf({ token: "" })).toBeUndefined();
    expect(bearerTokenOf("nope")).toBeUndefined();
  });
});
