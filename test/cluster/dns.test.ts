/**
 * The tier's cluster DNS (CoreDNS behind `kube-dns`, test/cluster/fixture/addons.ts) as pods meet
 * it: a Service's name in the `<service>.<namespace>.svc` form the manifests' RUNNER_SELF_URL
 * uses resolves through the kubelet's search list, to the Service's ClusterIP, and the request
 * reaches the pod behind it through kube-proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyObjects, deleteNamespace, dnsKnows, kubectl, makeNamespace, readyPodIp, runToEnd, shellPod } from "./pods.ts";

const NS = "k8s-runner-dns-check";

describe("cluster DNS in the real-cluster tier", () => {
  let clusterIp: string;
  beforeAll(async () => {
    await makeNamespace(NS);
    await applyObjects([
      shellPod({ name: "server", namespace: NS, script: "mkdir -p /tmp/www && echo served-by-name > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www", labels: { app: "server" }, port: 8080 }),
      { apiVersion: "v1", kind: "Service", metadata: { name: "server", namespace: NS }, spec: { selector: { app: "server" }, ports: [{ port: 8080 }] } },
    ]);
    await readyPodIp(NS, "server");
    clusterIp = (await kubectl(["-n", NS, "get", "service", "server", "-o", "jsonpath={.spec.clusterIP}"])).trim();
    await dnsKnows(`server.${NS}.svc.cluster.local`, clusterIp);
  }, 120_000);
  afterAll(async () => {
    await deleteNamespace(NS);
  }, 150_000);

  it("resolves a Service's fully qualified name to its ClusterIP", async () => {
    const { phase, log } = await runToEnd({ name: "lookup", namespace: NS, script: `nslookup server.${NS}.svc.cluster.local` });
    expect(phase).toBe("Succeeded");
    expect(log).toContain(clusterIp);
  });

  it("reaches a Service by `<name>.<namespace>.svc` through the pod's search list", async () => {
    const { phase, log } = await runToEnd({ name: "fetch", namespace: NS, script: `wget -q -O - http://server.${NS}.svc:8080/` });
    expect(log.trim()).toBe("served-by-name");
    expect(phase).toBe("Succeeded");
  });
});
