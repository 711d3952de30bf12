/**
 * A recording proxy in front of a runner's api port: every request passes through unchanged
 * (WebSocket upgrades as raw bytes), and every answer is checked against the OpenAPI document
 * the runner serves, with ajv: a JSON answer against the operation's schema for its status, an
 * event stream event by event against RunEvent. The contract tests talk to the runner through
 * it, so the document is held to every answer they receive.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer, request as httpRequest } from "node:http";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { type RouteSpec, V1_PREFIX, matchPath, routes } from "../../src/contract/routes.ts";
import { SseParser } from "../../src/contract/sse.ts";

export type AnswerTap = {
  url: string;
  /** Answers checked so far, and what did not match the document. */
  readonly checked: number;
  readonly violations: string[];
  close(): Promise<void>;
};

type Document = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };

/** JSON Pointer escaping of one path segment (`/` → `~1`). */
const pointer = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1");
const openApiPath = (spec: RouteSpec) => V1_PREFIX + spec.path.replace(/:([A-Za-z]+)/g, "{$1}");

function operationOf(method: string, pathname: string): RouteSpec | undefined {
  return Object.values(routes as Record<string, RouteSpec>).find(
    (spec) => spec.kind !== "internal" && spec.method === method && matchPath(V1_PREFIX, spec, pathname),
  );
}

export async function startAnswerTap(upstreamPort: number, document: unknown): Promise<AnswerTap> {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  ajv.addSchema(document as object, "openapi");
  const compiled = new Map<string, ValidateFunction>();
  const validator = (ref: string) => {
    let validate = compiled.get(ref);
    if (!validate) compiled.set(ref, (validate = ajv.compile({ $ref: `openapi#${ref}` })));
    return validate;
  };
  const paths = (document as Document).paths;
  const violations: string[] = [];
  let checked = 0;

  const check = (what: string, ref: string, value: unknown) => {
    checked += 1;
    const validate = validator(ref);
    if (!validate(value)) violations.push(`${what}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(value).slice(0, 300)}`);
  };

  /** The schema reference of an answer: its operation's response for the status, else `default`. */
  const answerRef = (spec: RouteSpec | undefined, status: number): string => {
    if (!spec) return "/components/schemas/ErrorAnswer";
    const responses = paths[openApiPath(spec)]?.[spec.method.toLowerCase()]?.responses ?? {};
    const key = String(status) in responses ? String(status) : "default";
    return `/paths/${pointer(openApiPath(spec))}/${spec.method.toLowerCase()}/responses/${key}/content/${pointer("application/json")}/schema`;
  };

  const observe = (request: IncomingMessage, answer: IncomingMessage) => {
    const method = request.method ?? "GET";
    const pathname = new URL(request.url ?? "/", "http://tap").pathname;
    // CORS preflights are the cors middleware's, and /metrics and /console are outside /v1:
    // neither is the contract's.
    if (method === "OPTIONS" || !pathname.startsWith(`${V1_PREFIX}/`)) return;
    const spec = operationOf(method, pathname);
    const what = `${method} ${pathname} → ${answer.statusCode}`;
    const type = answer.headers["content-type"] ?? "";
    if (type.startsWith("text/event-stream")) {
      const parser = new SseParser();
      answer.setEncoding("utf8");
      answer.on("data", (text: string) => {
        for (const message of parser.push(text)) {
          if (message.event !== "gap") check(`${what} event ${message.id}`, "/components/schemas/RunEvent", JSON.parse(message.data));
        }
      });
      return;
    }
    const chunks: Buffer[] = [];
    answer.on("data", (chunk: Buffer) => chunks.push(chunk));
    answer.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const status = answer.statusCode ?? 0;
      if (text === "") {
        // Only a 204 is documented without a body.
        checked += 1;
        if (status !== 204) violations.push(`${what}: an empty answer`);
        return;
      }
      check(what, answerRef(spec, status), JSON.parse(text));
    });
  };

  const forward = (request: IncomingMessage, response: ServerResponse) => {
    const upstream = httpRequest(
      { host: "127.0.0.1", port: upstreamPort, method: request.method, path: request.url, headers: request.headers, agent: false },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        observe(request, answer);
        answer.pipe(response);
        answer.on("error", () => response.destroy());
        answer.on("aborted", () => response.destroy());
      },
    );
    // The api going away looks to the client as it would without the tap: a dropped connection.
    // An api that answered before reading the whole body (a 413) closes its side while the tap
    // still sends: that answer is relayed, not cut.
    upstream.on("error", () => {
      if (!response.headersSent) response.destroy();
    });
    response.on("close", () => upstream.destroy());
    request.pipe(upstream);
  };

  const server: Server = createServer(forward);
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const upstream = connect(upstreamPort, "127.0.0.1", () => {
      const lines = [`${request.method} ${request.url} HTTP/1.1`];
      for (let index = 0; index < request.rawHeaders.length; index += 2) lines.push(`${request.rawHeaders[index]}: ${request.rawHeaders[index + 1]}`);
      upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.byteLength > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
    upstream.on("close", () => socket.destroy());
    socket.on("close", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get checked() {
      return checked;
    },
    violations,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
