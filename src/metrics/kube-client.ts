/**
 * Counting every typed Kubernetes API call at one place: the clients are built on a
 * configuration whose HTTP library is client-node's own, wrapped to count each request by
 * verb and resource as it settles (runner_kube_requests_total / _errors_total), and, inside a
 * traced operation, to make it a client span (docs/tracing.md).
 */
import {
  type Configuration,
  type HttpLibrary,
  IsomorphicFetchHttpLibrary,
  type KubeConfig,
  Observable,
  type RequestContext,
  type ResponseContext,
  type SecurityAuthentication,
  ServerConfiguration,
  createConfiguration,
} from "@kubernetes/client-node";
import { type Span, SpanKind, failSpan, stepSpan } from "../observability/tracing.ts";
import { type KubeRequestLabels, kubeRequestMade } from "./figures.ts";

/**
 * `kubeConfig.makeApiClient(type)`, with every request counted; `authentication` (the
 * kubeconfig's own by default) is how each request is authenticated and which agent it uses;
 * `userAgent`, when given, names the client in the apiserver's audit log.
 */
export function countedApiClient<T>(
  kubeConfig: KubeConfig,
  type: new (configuration: Configuration) => T,
  authentication: SecurityAuthentication = kubeConfig,
  userAgent?: string,
): T {
  const cluster = kubeConfig.getCurrentCluster();
  if (!cluster) throw new Error("no current cluster in the kubeconfig");
  return new type(
    createConfiguration({
      baseServer: new ServerConfiguration(cluster.server, {}),
      authMethods: { default: authentication },
      httpApi: counting(new IsomorphicFetchHttpLibrary(), userAgent),
    }),
  );
}

function counting(inner: HttpLibrary, userAgent: string | undefined): HttpLibrary {
  return {
    send(request: RequestContext): Observable<ResponseContext> {
      if (userAgent !== undefined) request.setHeaderParam("User-Agent", userAgent);
      const labels = kubeRequestLabels(request.getHttpMethod(), request.getUrl());
      const span = stepSpan(`kube ${labels.verb} ${labels.resource}`, SpanKind.CLIENT, () => ({
        "http.request.method": request.getHttpMethod(),
        "k8s_runner.kube.verb": labels.verb,
        "k8s_runner.kube.resource": labels.resource,
        "url.path": new URL(request.getUrl()).pathname,
      }));
      const settled = inner
        .send(request)
        .toPromise()
        .then(
          (response) => {
            kubeRequestMade(labels, response.httpStatusCode >= 400 ? response.httpStatusCode : undefined);
            if (span) kubeSpanEnded(span, response.httpStatusCode);
            return response;
          },
          (error: unknown) => {
            kubeRequestMade(labels, "network");
            if (span) {
              failSpan(span, error);
              span.end();
            }
            throw error;
          },
        );
      return new Observable(settled);
    },
  };
}

/** A Kubernetes call's span ended with its answer's status; 4xx and 5xx mark it failed. */
function kubeSpanEnded(span: Span, status: number): void {
  span.setAttribute("http.response.status_code", status);
  if (status >= 400) failSpan(span, new Error(`the apiserver answered ${status}`));
  span.end();
}

/**
 * The Kubernetes verb and resource of a request, from its method and URL:
 * `/api/v1/namespaces/ns/pods/name/log` is `get` `pods/log`, `/apis/batch/v1/namespaces/ns/jobs` is `list` or `create` `jobs`.
 */
export function kubeRequestLabels(method: string, url: string): KubeRequestLabels {
  const parsed = new URL(url, "http://cluster");
  const parts = parsed.pathname.split("/").filter((part) => part !== "");
  // /api/v1/… or /apis/<group>/<version>/…; shorter paths are discovery.
  let rest = parts[0] === "api" ? parts.slice(2) : parts[0] === "apis" ? parts.slice(3) : [];
  if (rest[0] === "namespaces" && rest.length >= 3) rest = rest.slice(2);
  const [resource, name, subresource] = rest;
  return {
    verb: kubeVerb(method.toUpperCase(), name !== undefined, parsed.searchParams.get("watch") === "true"),
    resource: resource === undefined ? "discovery" : subresource !== undefined ? `${resource}/${subresource}` : resource,
  };
}

function kubeVerb(method: string, named: boolean, watch: boolean): string {
  switch (method) {
    case "GET":
      return named ? "get" : watch ? "watch" : "list";
    case "POST":
      return "create";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return named ? "delete" : "deletecollection";
    default:
      return method.toLowerCase();
  }
}
