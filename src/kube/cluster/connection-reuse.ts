/**
 * Kept-alive connections to the Kubernetes API for the typed clients. client-node applies a
 * kubeconfig's authentication by building a new http(s).Agent for every request, so no
 * connection is ever reused: each call (a pod create, an attach's log read, a delete) pays a
 * TCP connect and, on a real cluster, a TLS handshake, which shows most when many sessions
 * start at once. This authentication applies the kubeconfig's exactly as
 * before and then puts one kept-alive agent in place of the fresh plain one, made again only
 * when the TLS material the kubeconfig hands out changes (a rotated client certificate). Proxy
 * agents are left alone.
 */
import http from "node:http";
import https from "node:https";
import type { KubeConfig, RequestContext, SecurityAuthentication } from "@kubernetes/client-node";

/**
 * An idle kept-alive connection is closed after this long, before common servers' idle limits
 * (Node's 5 s, Go's longer ones), so a reuse seldom meets a connection the server is closing.
 */
export const IDLE_CONNECTION_MS = 4_000;

/** The agent options that decide which server and identity a connection is for. */
const IDENTITY_OPTIONS = ["ca", "cert", "key", "pfx", "passphrase", "rejectUnauthorized", "servername"] as const;

type PlainAgent = http.Agent & { options: Record<string, unknown> };

export function reusingConnections(kubeConfig: KubeConfig): SecurityAuthentication {
  let shared: { kind: Function; identity: unknown[]; agent: http.Agent } | undefined;
  return {
    getName: () => "kubeconfig, kept-alive connections",
    async applySecurityAuthentication(context: RequestContext): Promise<void> {
      await kubeConfig.applySecurityAuthentication(context);
      const fresh = context.getAgent() as PlainAgent | undefined;
      const Kind = fresh?.constructor;
      if (fresh === undefined || (Kind !== http.Agent && Kind !== https.Agent)) return;
      const identity = IDENTITY_OPTIONS.map((name) => fresh.options[name]);
      if (shared === undefined || shared.kind !== Kind || !sameValues(shared.identity, identity)) {
        const options = { ...fresh.options, keepAlive: true, timeout: IDLE_CONNECTION_MS };
        shared = { kind: Kind, identity, agent: Kind === https.Agent ? new https.Agent(options) : new http.Agent(options) };
      }
      context.setAgent(shared.agent);
    },
  };
}

/** Element-wise equality; client-node reads key material afresh for every request, so buffers are compared by content. */
function sameValues(a: unknown[], b: unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => sameValue(value, b[i]));
}

function sameValue(a: unknown, b: unknown): boolean {
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return sameValues(a, b);
  return a === b;
}
