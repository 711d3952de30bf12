// The HTTP front door: discovery, OpenAPI, health, the control endpoint, and the resource API
// (with request accounting and injected faults applied first, as a proxy in front would).
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import type { ResourceApi } from "./api.ts";
import type { AttachServer } from "./attach.ts";
import { CONTROL_PREFIX, handleControl, type ControlTarget } from "./control.ts";
import { WriteAudit } from "./audit.ts";
import type { RequestCounters } from "./counters.ts";
import { discoveryDocument } from "./discovery.ts";
import type { RequestFaults } from "./faults.ts";
import { sendJson, sendStatus } from "./http-util.ts";
import type { Kubelet } from "./kubelet.ts";
import { serveLogs } from "./logs.ts";
import { openApiV2, openApiV3, openApiV3Root } from "./openapi.ts";
import { parseRequestInfo, type RequestInfo } from "./request-info.ts";
import { badRequest, internalError, notFound, pathNotFound, StatusError } from "./status.ts";
import type { Store } from "./store.ts";

export interface ServerParts {
  store: Store;
  api: ResourceApi;
  kubelet: Kubelet;
  attach: AttachServer;
  counters: RequestCounters;
  audit: WriteAudit;
  requestFaults: RequestFaults;
  control: ControlTarget;
}

function asStatus(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  console.error("[sim] internal error:", err);
  return internalError(err instanceof Error ? err.message : String(err));
}

/** The request is served as usual, but its answer never leaves: the connection is cut instead. */
function loseAnswer(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead = (() => res) as unknown as ServerResponse["writeHead"];
  res.write = (() => true) as unknown as ServerResponse["write"];
  res.end = (() => {
    req.socket.destroy();
    return res;
  }) as unknown as ServerResponse["end"];
}

export function createSimServer(parts: ServerParts): http.Server {
  const { store, api, kubelet, attach, counters, audit, requestFaults } = parts;

  /** Accounting and injected faults, applied to every API request before it is served; true: serve it, then lose the answer. */
  async function gate(info: RequestInfo): Promise<boolean> {
    counters.record(info);
    const delay = requestFaults.latencyFor(info);
    if (delay > 0) await sleep(delay);
    const failure = requestFaults.takeFailure(info);
    if (failure === "lose") return true;
    if (failure) throw failure;
    return false;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://sim");
    const path = url.pathname;
    if (path.startsWith(CONTROL_PREFIX)) return handleControl(parts.control, req, res, path);
    if (path === "/healthz" || path === "/livez" || path === "/readyz") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("ok");
      return;
    }
    if (path === "/openapi/v2") {
      // client-go asks for protobuf first and accepts JSON only if it offered it.
      if (!String(req.headers.accept ?? "application/json").includes("json") && req.headers.accept !== "*/*") {
        throw new StatusError(406, "NotAcceptable", "only application/json is served");
      }
      return sendJson(res, 200, openApiV2());
    }
    if (path === "/openapi/v3") return sendJson(res, 200, openApiV3Root());
    if (path.startsWith("/openapi/v3/")) {
      const doc = openApiV3(path);
      if (!doc) throw pathNotFound();
      return sendJson(res, 200, doc, { etag: `"${path}"` });
    }
    const discovery = discoveryDocument(path.replace(/\/$/, ""), req.headers.host ?? "");
    if (discovery !== undefined && req.method === "GET") return sendJson(res, 200, discovery);

    const info = parseRequestInfo(req.method ?? "GET", url);
    if (!info) throw pathNotFound();
    if (WriteAudit.audits(info)) {
      const at = Date.now();
      res.once("finish", () => audit.record(info, String(req.headers["user-agent"] ?? ""), res.statusCode, at));
    }
    if (await gate(info)) loseAnswer(req, res);
    if (info.subresource === "log") {
      const pod = store.get(info.type, info.namespace, info.name!);
      if (!pod) throw notFound({ group: "", plural: "pods" }, info.name!);
      return serveLogs(kubelet, pod, info.query, res);
    }
    if (info.subresource === "attach" || info.subresource === "exec") throw badRequest("Upgrade request required");
    await api.handle(req, res, info);
  }

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? "/", "http://sim");
    const info = parseRequestInfo(req.method ?? "GET", url);
    if (!info || (info.subresource !== "attach" && info.subresource !== "exec") || info.type.plural !== "pods") throw pathNotFound();
    await gate(info);
    const pod = store.get(info.type, info.namespace, info.name!);
    if (!pod) throw notFound({ group: "", plural: "pods" }, info.name!);
    if (info.subresource === "exec") attach.exec(pod, req, socket, head, info.query);
    else attach.upgrade(pod, req, socket, head, info.query);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => sendStatus(res, asStatus(err)));
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    upgrade(req, socket, head).catch((err: unknown) => {
      const e = asStatus(err);
      const body = JSON.stringify(e.body());
      socket.end(`HTTP/1.1 ${e.code} ${e.reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    });
  });
  return server;
}
