import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/env-values.ts";
import { kubeEnvSchema, loadKubeConfig, loadLocalClusterLayout } from "../../src/config/kube.ts";

const SELF_URL = "http://k8s-runner.telo-runner.svc:8063";

function refusal(env: NodeJS.ProcessEnv): string {
  try {
    loadKubeConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error("expected a ConfigError");
}

describe("loadKubeConfig", () => {
  it("reads the documented defaults when only RUNNER_SELF_URL is set", () => {
    const config = loadKubeConfig({ RUNNER_SELF_URL: SELF_URL });
    expect(config).toMatchObject({
      selfUrl: SELF_URL,
      bundlePort: 8063,
      simulatedCluster: false,
      startDeadlineMs: 120_000,
      identity: { displayName: "Telo Runner", description: "Runs the Telo application in a cloud environment" },
      defaultImage: "telorun/node:latest-slim",
      sessionPods: {
        namespace: "telo-sessions",
        managedBy: "telo-k8s-runner",
        ownerId: "default",
        initImage: "busybox:stable",
        imagePullSecret: undefined,
        runtimeClass: undefined,
      },
      runCeilings: { cpu: "500m", memory: "512Mi", ephemeralStorage: "1Gi", ttlSeconds: 3600 },
      appCeilings: { cpu: "500m", memory: "512Mi", ephemeralStorage: "1Gi", ttlSeconds: 21600 },
      routing: {
        mode: "auto",
        baseDomain: undefined,
        readyTimeoutSeconds: 60,
        sessionNamespace: "telo-sessions",
        ingressClass: undefined,
        tlsSecret: undefined,
        gatewayName: undefined,
        gatewayNamespace: "telo-sessions",
        gatewaySectionName: undefined,
      },
      baseImageCatalog: {
        enabled: true,
        repository: "telorun/node",
        defaultRef: "telorun/node:latest-slim",
        limit: 20,
        refreshSeconds: 3600,
        filter: { pinnedOnly: true, excludeSha: true, excludePrerelease: true, include: [], exclude: [] },
      },
      build: undefined,
    });
  });

  it("reads only backend variables, never the core's", () => {
    const names = Object.keys(kubeEnvSchema.entries);
    for (const core of ["PORT", "RUNNER_MAX_SESSIONS", "RUNNER_WATCH_SESSIONS", "RUNNER_APPS", "TELO_REGISTRY_URL", "LOG_LEVEL", "RUNNER_CORS_ORIGINS", "RUNNER_TERMS_BODY"]) {
      expect(names).not.toContain(core);
    }
  });

  it("reads the Telo-version settings, and refuses a bad one at start with its name", () => {
    expect(loadKubeConfig({ RUNNER_SELF_URL: SELF_URL }).kernelImages).toEqual({
      defaultImage: "telorun/node:latest-slim",
      teloVersions: true,
      teloRepository: "telorun/node",
      teloVariant: "slim",
      unreleasedImage: undefined,
      teloPullPolicy: "missing",
      defaultImageVersion: undefined,
      commentMarkerSince: "0.96.0",
    });
    expect(() => loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_PULL_POLICY: "sometimes" })).toThrow(
      "RUNNER_PULL_POLICY must be one of missing, always, never, got 'sometimes'.",
    );
    expect(() => loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_TELO_IMAGE_REPOSITORY: "telorun/node:1" })).toThrow(/RUNNER_TELO_IMAGE_REPOSITORY must be an image repository/);
    expect(() => loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_TELO_IMAGE_VARIANT: "a b" })).toThrow(/RUNNER_TELO_IMAGE_VARIANT must be usable in an image tag/);
    expect(() => loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_IMAGE_TELO_VERSION: "latest" })).toThrow("RUNNER_IMAGE_TELO_VERSION must be a Telo version such as 0.96.0, got 'latest'.");
    expect(loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_TELO_IMAGE_REPOSITORY: "registry.local:5000/acme/kernel", RUNNER_TELO_VERSIONS: "no" }).kernelImages).toMatchObject({
      teloRepository: "registry.local:5000/acme/kernel",
      teloVersions: false,
    });
  });

  it("is documented variable by variable in docs/operating.md's Kubernetes variables", () => {
    const page = readFileSync(new URL("../../docs/operating.md", import.meta.url), "utf8");
    const start = page.indexOf("### Kubernetes backend variables");
    const section = page.slice(start, page.indexOf("\n## ", start));
    expect(start).toBeGreaterThan(-1);
    for (const name of Object.keys(kubeEnvSchema.entries)) expect(section).toContain(`\`${name}\``);
  });

  it("hands out the shaped settings only, never the raw variables", () => {
    const config = loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_START_DEADLINE_SECONDS: "30", RUNNER_SIMULATED_CLUSTER: "yes" });
    expect(Object.keys(config).filter((key) => key in kubeEnvSchema.entries)).toEqual([]);
    expect(config).toMatchObject({ startDeadlineMs: 30_000, simulatedCluster: true });
  });

  it("brackets an IPv6 pod address in RUNNER_SELF_URL, as `http://$(POD_IP):8063` gives it, and refuses what is no http(s) URL", () => {
    expect(loadKubeConfig({ RUNNER_SELF_URL: "http://fd00:10:244::5:8063" }).selfUrl).toBe("http://[fd00:10:244::5]:8063");
    expect(loadKubeConfig({ RUNNER_SELF_URL: "http://[fd00:10:244::5]:8063/" }).selfUrl).toBe("http://[fd00:10:244::5]:8063");
    expect(loadKubeConfig({ RUNNER_SELF_URL: "http://10.0.0.5:8063" }).selfUrl).toBe("http://10.0.0.5:8063");
    expect(refusal({ RUNNER_SELF_URL: "k8s-runner.telo-runner.svc:8063" })).toContain("RUNNER_SELF_URL must be an http(s) URL");
    expect(refusal({ RUNNER_SELF_URL: "ftp://10.0.0.5:8063" })).toContain("RUNNER_SELF_URL must be an http(s) URL");
  });

  it("lays out a local cluster with the same defaults and checks, before RUNNER_SELF_URL exists", () => {
    expect(loadLocalClusterLayout({})).toEqual({ sessionNamespace: "telo-sessions", buildNamespace: "telo-builds", bundlePort: 8063, bundlePortIsDefault: true });
    expect(loadLocalClusterLayout({ RUNNER_SESSION_NAMESPACE: " s1 ", RUNNER_BUILD_NAMESPACE: "b1", RUNNER_BUNDLE_PORT: "9000" })).toEqual({
      sessionNamespace: "s1",
      buildNamespace: "b1",
      bundlePort: 9000,
      bundlePortIsDefault: false,
    });
    expect(() => loadLocalClusterLayout({ RUNNER_SESSION_NAMESPACE: "Not_A_Label" })).toThrow(ConfigError);
  });

  it("strips trailing slashes from RUNNER_SELF_URL and the registry locations", () => {
    const config = loadKubeConfig({
      RUNNER_SELF_URL: " http://runner.telo-runner.svc:8063// ",
      RUNNER_IMAGE_REPOSITORY: "registry.example.com/telo-sessions/",
      RUNNER_REGISTRY_API_URL: "https://registry.example.com/",
    });
    expect(config.selfUrl).toBe("http://runner.telo-runner.svc:8063");
    expect(config.build).toEqual({
      repository: "registry.example.com/telo-sessions",
      namespace: "telo-builds",
      builderImage: "gcr.io/kaniko-project/executor:latest",
      timeoutSeconds: 600,
      insecureRegistry: false,
      registryApiUrl: "https://registry.example.com",
      pushSecret: undefined,
    });
  });

  it("turns the build path on with RUNNER_IMAGE_REPOSITORY and reads its knobs", () => {
    const config = loadKubeConfig({
      RUNNER_SELF_URL: SELF_URL,
      RUNNER_IMAGE_REPOSITORY: "registry.example.com/telo-sessions",
      RUNNER_BUILD_NAMESPACE: "builds",
      RUNNER_BUILDER_IMAGE: "kaniko:v1",
      RUNNER_BUILD_TIMEOUT_SECONDS: "300",
      RUNNER_REGISTRY_INSECURE: "yes",
      RUNNER_REGISTRY_PUSH_SECRET: "push",
    });
    expect(config.build).toMatchObject({
      namespace: "builds",
      builderImage: "kaniko:v1",
      timeoutSeconds: 300,
      insecureRegistry: true,
      registryApiUrl: undefined,
      pushSecret: "push",
    });
  });

  it("defaults the Gateway namespace to the session namespace and reads the include/exclude regexes", () => {
    const config = loadKubeConfig({
      RUNNER_SELF_URL: SELF_URL,
      RUNNER_SESSION_NAMESPACE: "sessions",
      SESSION_ROUTING_MODE: "gateway",
      SESSION_GATEWAY_NAME: "public",
      RUNNER_BASE_IMAGE_INCLUDE: "-slim$",
      RUNNER_BASE_IMAGE_EXCLUDE: "^0\\.",
    });
    expect(config.routing).toMatchObject({ mode: "gateway", gatewayName: "public", gatewayNamespace: "sessions" });
    expect(config.baseImageCatalog.filter.include).toEqual([/-slim$/]);
    expect(config.baseImageCatalog.filter.exclude).toEqual([/^0\./]);
  });

  describe("startup refusals", () => {
    it("requires RUNNER_SELF_URL (blank counts as unset)", () => {
      const message =
        "RUNNER_SELF_URL env var is required. Set it to the runner's in-cluster base URL (e.g. http://k8s-runner.telo-runner.svc:8062) so session initContainers can fetch the bundle.";
      expect(refusal({})).toBe(message);
      expect(refusal({ RUNNER_SELF_URL: "  " })).toBe(message);
    });

    it("refuses a TLS secret in gateway mode", () => {
      expect(
        refusal({
          RUNNER_SELF_URL: SELF_URL,
          SESSION_ROUTING_MODE: "gateway",
          SESSION_GATEWAY_NAME: "public",
          SESSION_INGRESS_TLS_SECRET: "tls",
        }),
      ).toBe(
        "SESSION_INGRESS_TLS_SECRET is set but SESSION_ROUTING_MODE=gateway. Under Gateway API the origin certificate belongs to the Gateway listener's own `tls.certificateRefs`, not to the per-session route. Move the Secret reference to the Gateway and unset this.",
      );
    });

    it("refuses gateway mode without a Gateway name, naming the session namespace", () => {
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, SESSION_ROUTING_MODE: "gateway", RUNNER_SESSION_NAMESPACE: "sessions" })).toBe(
        "SESSION_ROUTING_MODE=gateway requires SESSION_GATEWAY_NAME — the Gateway each session's HTTPRoute attaches to. Set it (and SESSION_GATEWAY_NAMESPACE when the Gateway is not in 'sessions').",
      );
    });

    it("refuses an unknown routing mode with no silent fallback", () => {
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, SESSION_ROUTING_MODE: "istio" })).toBe(
        "SESSION_ROUTING_MODE must be one of auto | ingress | gateway | none (got 'istio').",
      );
    });

    it("refuses an invalid include or exclude regex", () => {
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_BASE_IMAGE_INCLUDE: "(" })).toBe(
        "RUNNER_BASE_IMAGE_INCLUDE is not a valid regular expression: Invalid regular expression: /(/: Unterminated group",
      );
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_BASE_IMAGE_EXCLUDE: "[a-" })).toBe(
        "RUNNER_BASE_IMAGE_EXCLUDE is not a valid regular expression: Invalid regular expression: /[a-/: Unterminated character class",
      );
    });

    it("refuses a ceiling that is not a positive Kubernetes quantity", () => {
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_MAX_CPU: "half" })).toBe(
        "RUNNER_MAX_CPU must be a positive Kubernetes quantity (e.g. 500m, 1), got 'half'.",
      );
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_APP_MAX_MEMORY: "512MB" })).toBe(
        "RUNNER_APP_MAX_MEMORY must be a positive Kubernetes quantity (e.g. 512Mi, 1Gi), got '512MB'.",
      );
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_MAX_EPHEMERAL_STORAGE: "0Gi" })).toBe(
        "RUNNER_MAX_EPHEMERAL_STORAGE must be a positive Kubernetes quantity (e.g. 512Mi, 1Gi), got '0Gi'.",
      );
    });

    it("refuses namespace names and a managed-by value Kubernetes would refuse", () => {
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_SESSION_NAMESPACE: "Telo_Sessions" })).toBe(
        "RUNNER_SESSION_NAMESPACE must be a Kubernetes namespace name (lowercase RFC 1123 label), got 'Telo_Sessions'.",
      );
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_BUILD_NAMESPACE: "-builds" })).toBe(
        "RUNNER_BUILD_NAMESPACE must be a Kubernetes namespace name (lowercase RFC 1123 label), got '-builds'.",
      );
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, SESSION_GATEWAY_NAMESPACE: "gateways.example" })).toBe(
        "SESSION_GATEWAY_NAMESPACE must be a Kubernetes namespace name (lowercase RFC 1123 label), got 'gateways.example'.",
      );
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_MANAGED_BY: "telo k8s runner" })).toBe(
        "RUNNER_MANAGED_BY must be a Kubernetes label value, got 'telo k8s runner'.",
      );
      expect(loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_MANAGED_BY: "Telo_Runner.v2" }).sessionPods.managedBy).toBe("Telo_Runner.v2");
    });

    it("refuses an owner id that is not a label value, and reads a valid one (blank is the default)", () => {
      for (const bad of ["runner a", "-runner", "runner/a", "r".repeat(64)]) {
        expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_OWNER_ID: bad })).toBe(
          `RUNNER_OWNER_ID must be a Kubernetes label value (at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit), got '${bad}'.`,
        );
      }
      expect(loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_OWNER_ID: " Replica_2.eu " }).sessionPods.ownerId).toBe("Replica_2.eu");
      expect(loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_OWNER_ID: " " }).sessionPods.ownerId).toBe("default");
    });

    it("accepts every quantity form the apiserver does", () => {
      for (const quantity of ["250m", "2", "0.5", ".5", "1.5Gi", "100M", "1k", "1e3", "1E-1", "+1Ki", "500u"]) {
        expect(loadKubeConfig({ RUNNER_SELF_URL: SELF_URL, RUNNER_MAX_CPU: quantity }).runCeilings.cpu).toBe(quantity);
      }
    });

    it("refuses invalid integers, booleans and ports in the shared wording", () => {
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_MAX_TTL_SECONDS: "0" })).toBe(
        "RUNNER_MAX_TTL_SECONDS must be a positive integer, got '0'.",
      );
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_BASE_IMAGE_PINNED_ONLY: "sure" })).toBe(
        "RUNNER_BASE_IMAGE_PINNED_ONLY must be a boolean (true/false), got 'sure'.",
      );
      expect(refusal({ RUNNER_SELF_URL: SELF_URL, RUNNER_BUNDLE_PORT: "70000" })).toBe(
        "RUNNER_BUNDLE_PORT must be an integer in 1..65535, got '70000'.",
      );
    });
  });
});
