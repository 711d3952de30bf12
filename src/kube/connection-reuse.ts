/**
 * Kept-alive connections to the Kubernetes API for the typed clients. client-node applies a
 * kubeconfig's authentication by building a new http(s).Agent for every request, so no
 * connection is ever reused: each call (a pod create, an attach's log read, a delete) pays a
 * TCP connect and, on a real cluster, a TLS handshake, which shows most when many sessions
 * start at once (issue 13, cold start). This authentication applies the kubeconfig's exactly as
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
  let shared: { identity: string; agent: http.Agent } | undefined;
  return {
    getName: () => "kubeconfig, kept-alive connections",
    async applySecurityAuthentication(context: RequestContext): Promise<void> {
      await kubeConfig.applySecurityAuthentication(context);
      const fresh = context.getAgent() as PlainAgent | undefined;
      const Kind = fresh?.constructor;
      if (fresh === undefined || (Kind !== http.Agent && Kind !== https.Agent)) return;
      const identity = `${Kind === https.Agent ? "https" : "http"} ${JSON.stringify(IDENTITY_OPTIONS.map((name) => fresh.options[name] ?? null))}`;
      if (shared?.identity !== identity) {
        const options = { ...fresh.options, keepAlive: true, timeout: IDLE_CONNECTION_MS };
        shared = { identity, agent: Kind === https.Agent ? new https.Agent(options) : new http.Agent(options) };
      }
      context.setAgent(shared.agent);
    },
  };
}
