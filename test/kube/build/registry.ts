/**
 * A real OCI registry on loopback for the build path's existence check: CNCF distribution's
 * `registry`, built from its Go module by test/support/provision.ts, with filesystem storage in
 * a temp directory, and a minimal image push over the registry HTTP API v2 (blob upload POST +
 * PUT, manifest PUT).
 *
 * Nothing is skipped when the binary is missing: the tests fail and say how to get it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { fetch } from "undici";
import { inject } from "vitest";
import { stringify } from "yaml";
import { tarArchive } from "../../../src/kube/bundle/bundle-archive.ts";
import { freePort } from "../../support/ports.ts";


/**
 * A user for registries started with `htpasswd`: distribution reads bcrypt entries only, and
 * Node has no bcrypt, so the entry is fixed (cost 4: `registry-test-password`).
 */
export const REGISTRY_USER = {
  username: "telo-builder",
  password: "registry-test-password",
  htpasswd: "telo-builder:$2b$04$G/ap0Z1Bkd4p0c.xPBVGC.nS5UEr67imtGmrIDX0uD0WKkfulNtaW",
} as const;

export interface RegistryOptions {
  /** Basic authentication for every request (distribution's `htpasswd` provider). */
  htpasswd?: boolean;
  /** Bearer token authentication: tokens from `realm`, signed by the key of `certificate`. */
  token?: { realm: string; service: string; issuer: string; certificatePem: string };
}

export interface TestRegistry {
  /** `http://127.0.0.1:<port>`: RUNNER_REGISTRY_API_URL. */
  url: string;
  /** `127.0.0.1:<port>`: the first segment of RUNNER_IMAGE_REPOSITORY. */
  host: string;
  /** Pushes a one-layer OCI image as `<path>:<tag>`; returns the manifest digest. */
  pushImage(path: string, tag: string, authorization?: string): Promise<string>;
  stop(): Promise<void>;
}

function registryBinary(): string {
  const binary = inject("registryBinary");
  if ("missing" in binary) throw new Error(binary.missing);
  return binary.path;
}

function sha256(data: Buffer): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

async function expectStatus(response: Awaited<ReturnType<typeof fetch>>, expected: number, what: string): Promise<void> {
  if (response.status === expected) return;
  throw new Error(`${what}: registry answered ${response.status} ${await response.text()}`);
}

/** Waits until the registry answers on /v2/ (200, or 401 when it authenticates), or it exits. */
async function waitUntilServing(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const exited = new Promise<never>((_, reject) => {
    child.once("exit", (code, signal) => reject(new Error(`registry exited (${code ?? signal}) before serving: ${output()}`)));
  });
  const serving = (async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        const response = await fetch(`${url}/v2/`);
        await response.body?.cancel();
        if (response.status === 200 || response.status === 401) return;
      } catch {
        // not listening yet
      }
      if (attempt > 300) throw new Error(`the registry did not serve ${url}/v2/ within 15s: ${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  await Promise.race([serving, exited]);
}

export async function startRegistry(options: RegistryOptions = {}): Promise<TestRegistry> {
  const binary = registryBinary();
  const dir = await mkdtemp(join(tmpdir(), "telo-registry-"));
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const url = `http://${host}`;

  let auth: Record<string, unknown> | undefined;
  if (options.htpasswd) {
    await writeFile(join(dir, "htpasswd"), `${REGISTRY_USER.htpasswd}\n`);
    auth = { htpasswd: { realm: "telo-test", path: join(dir, "htpasswd") } };
  } else if (options.token) {
    await writeFile(join(dir, "token-ca.pem"), options.token.certificatePem);
    const { realm, service, issuer } = options.token;
    auth = { token: { realm, service, issuer, rootcertbundle: join(dir, "token-ca.pem") } };
  }
  const config = {
    version: 0.1,
    log: { level: "error", accesslog: { disabled: true } },
    storage: { filesystem: { rootdirectory: join(dir, "storage") } },
    // A fixed secret spares the warning about a generated one; uploads never span restarts here.
    http: { addr: host, secret: "telo-registry-test" },
    ...(auth && { auth }),
  };
  await writeFile(join(dir, "config.yml"), stringify(config));

  const child = spawn(binary, ["serve", join(dir, "config.yml")], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await waitUntilServing(url, child, () => output);
  } catch (err) {
    await stop();
    throw err;
  }

  async function uploadBlob(path: string, data: Buffer, authorization: string | undefined): Promise<string> {
    const headers = authorization ? { authorization } : {};
    const start = await fetch(`${url}/v2/${path}/blobs/uploads/`, { method: "POST", headers });
    await expectStatus(start, 202, `starting the blob upload to ${path}`);
    const location = start.headers.get("location");
    if (!location) throw new Error("the registry answered the upload start without a Location");
    // The Location is opaque (it already carries query state): append the digest, never rebuild it.
    const target = new URL(location, url);
    const digest = sha256(data);
    target.searchParams.set("digest", digest);
    const put = await fetch(target, {
      method: "PUT",
      headers: { ...headers, "content-type": "application/octet-stream" },
      body: data,
    });
    await expectStatus(put, 201, `finishing the blob upload to ${path}`);
    return digest;
  }

  async function pushImage(path: string, tag: string, authorization?: string): Promise<string> {
    const tar = tarArchive([{ relativePath: "hello.txt", contents: `image ${path}:${tag}\n` }]);
    const layer = gzipSync(tar);
    const imageConfig = Buffer.from(
      JSON.stringify({ architecture: "amd64", os: "linux", rootfs: { type: "layers", diff_ids: [sha256(tar)] } }),
    );
    const configDigest = await uploadBlob(path, imageConfig, authorization);
    const layerDigest = await uploadBlob(path, layer, authorization);
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: configDigest, size: imageConfig.length },
        layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", digest: layerDigest, size: layer.length }],
      }),
    );
    const put = await fetch(`${url}/v2/${path}/manifests/${tag}`, {
      method: "PUT",
      headers: { ...(authorization && { authorization }), "content-type": "application/vnd.oci.image.manifest.v1+json" },
      body: manifest,
    });
    await expectStatus(put, 201, `pushing the manifest ${path}:${tag}`);
    return sha256(manifest);
  }

  return { url, host, pushImage, stop };
}
