/**
 * A registry token service for the registry's `token` auth provider, on loopback: it checks
 * Basic credentials and answers `{"token": <JWT>}` granting the requested repository scope.
 *
 * distribution verifies a token against `rootcertbundle`, so the signing key needs an X.509
 * certificate. Node can sign but not issue certificates, so a minimal self-signed one (EC P-256,
 * no extensions) is DER-encoded here; the token carries it in `x5c`, and the registry accepts a
 * chain whose leaf is itself one of its roots.
 */
import { generateKeyPairSync, type KeyObject, randomBytes, sign } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const sequence = (...content: Buffer[]) => der(0x30, ...content);
/** ecdsa-with-SHA256 (1.2.840.10045.4.3.2); ECDSA algorithm identifiers carry no parameters. */
const ECDSA_SHA256 = sequence(Buffer.from([0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x02]));
/** commonName (2.5.4.3). */
const COMMON_NAME = Buffer.from([0x06, 0x03, 0x55, 0x04, 0x03]);

function name(commonName: string): Buffer {
  return sequence(der(0x31, sequence(COMMON_NAME, der(0x0c, Buffer.from(commonName, "utf8")))));
}

/** UTCTime `YYMMDDHHMMSSZ`. */
function utcTime(date: Date): Buffer {
  const iso = date.toISOString();
  const text = `${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return der(0x17, Buffer.from(text, "ascii"));
}

/** A self-signed X.509 v3 certificate for `publicKey`, valid from an hour ago for a day. */
function selfSignedCertificate(commonName: string, publicKey: KeyObject, privateKey: KeyObject): Buffer {
  const now = Date.now();
  // A positive serial: the top bit of the first byte clear.
  const serial = randomBytes(8);
  serial[0] = serial[0]! & 0x7f;
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.from([2]))), // [0] version v3
    der(0x02, serial),
    ECDSA_SHA256,
    name(commonName),
    sequence(utcTime(new Date(now - 3_600_000)), utcTime(new Date(now + 86_400_000))),
    name(commonName),
    publicKey.export({ type: "spki", format: "der" }),
  );
  const signature = sign("sha256", tbs, privateKey); // DER-encoded ECDSA signature, as X.509 wants
  return sequence(tbs, ECDSA_SHA256, der(0x03, Buffer.from([0]), signature));
}

function pem(certificate: Buffer): string {
  const lines = certificate.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");

export interface TokenRequest {
  service: string | null;
  scope: string | null;
  authorization: string | undefined;
}

export interface TokenService {
  /** The `realm` the registry names in its challenges. */
  realm: string;
  service: string;
  issuer: string;
  /** The registry's `rootcertbundle`. */
  certificatePem: string;
  /** Every token request, in order. */
  requests: TokenRequest[];
  /** A token for `scope` (e.g. `repository:telo/sessions:pull,push`), as a push client would get. */
  tokenFor(scope: string): string;
  stop(): Promise<void>;
}

export async function startTokenService(user: { username: string; password: string }): Promise<TokenService> {
  const issuer = "telo-test-token-issuer";
  const service = "telo-test-registry";
  const { publicKey, privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const certificate = selfSignedCertificate(issuer, publicKey, privateKey);
  const expected = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`;
  const requests: TokenRequest[] = [];

  /** `repository:<name>:<a,b>` → the token's access claim; anything else grants nothing. */
  function access(scope: string) {
    const match = /^repository:([^:]+):([a-z,*]+)$/.exec(scope);
    return match ? [{ type: "repository", name: match[1], actions: match[2]!.split(",") }] : [];
  }

  function tokenFor(scope: string): string {
    const now = Math.floor(Date.now() / 1000);
    const header = base64url(JSON.stringify({ typ: "JWT", alg: "ES256", x5c: [certificate.toString("base64")] }));
    const claims = base64url(
      JSON.stringify({
        iss: issuer,
        sub: user.username,
        aud: service,
        exp: now + 300,
        nbf: now - 10,
        iat: now,
        jti: randomBytes(8).toString("hex"),
        access: access(scope),
      }),
    );
    // JWS wants the raw r||s form of an ECDSA signature, not DER.
    const signature = sign("sha256", Buffer.from(`${header}.${claims}`), { key: privateKey, dsaEncoding: "ieee-p1363" });
    return `${header}.${claims}.${base64url(signature)}`;
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://token.test");
    requests.push({ service: url.searchParams.get("service"), scope: url.searchParams.get("scope"), authorization: req.headers.authorization });
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ details: "incorrect username or password" }));
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ token: tokenFor(url.searchParams.get("scope") ?? "") }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const realm = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;

  return {
    realm,
    service,
    issuer,
    certificatePem: pem(certificate),
    requests,
    tokenFor,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
