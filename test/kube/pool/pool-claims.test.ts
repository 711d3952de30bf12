/**
 * The warm pool's claim route on the bundle listener, through a real socket: a pod's poll gets
 * its claim once, "not yet" after the hold, nothing for a wrong pod or token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BundleStore } from "../../../src/kube/bundle/bundle-store.ts";
import { startBundleServer } from "../../../src/kube/bundle/bundle-server.ts";
import { PoolClaims } from "../../../src/kube/pool/pool-claims.ts";

describe("the claim route", () => {
  let listener: Awaited<ReturnType<typeof startBundleServer>>;
  let claims: PoolClaims;
  let base: string;
  beforeAll(async () => {
    claims = new PoolClaims("http://runner:8063", 100);
    listener = await startBundleServer(new BundleStore("http://runner:8063"), 0, "127.0.0.1", claims);
    base = `http://127.0.0.1:${listener.port}`;
  });
  afterAll(async () => {
    await listener.close();
  });

  /** The URL a pod's shell would poll, on this test's listener. */
  const local = (url: string) => url.replace("http://runner:8063", base);

  it("answers the pod's poll with its claim once; the token is then spent", async () => {
    const url = claims.register("telo-pool-aaaaaaaaaaaa");
    expect(url).toMatch(/^http:\/\/runner:8063\/internal\/pool\/telo-pool-aaaaaaaaaaaa\?token=[0-9a-f]{48}$/);
    expect(claims.polled("telo-pool-aaaaaaaaaaaa")).toBe(false);
    const held = fetch(local(url));
    await expect.poll(() => claims.polled("telo-pool-aaaaaaaaaaaa")).toBe(true);
    claims.deliver("telo-pool-aaaaaaaaaaaa", Buffer.from("exec telo run /app/telo.yaml\n"));
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(await answer.text()).toBe("exec telo run /app/telo.yaml\n");
    expect((await fetch(local(url))).status).toBe(404);
  });

  it("keeps a claim delivered between polls for the next one, and says 'not yet' after the hold", async () => {
    const url = claims.register("telo-pool-bbbbbbbbbbbb");
    const notYet = await fetch(local(url));
    expect(notYet.status).toBe(408);
    claims.deliver("telo-pool-bbbbbbbbbbbb", Buffer.from("claim"));
    expect(await (await fetch(local(url))).text()).toBe("claim");
  });

  it("serves a claim again to a later poll until the pod acknowledges it, then spends the token", async () => {
    const url = claims.register("telo-pool-ffffffffffff");
    let acknowledged = false;
    claims.deliver("telo-pool-ffffffffffff", Buffer.from("claim"), () => !acknowledged);
    // The first answer was lost on its way: the pod polls again and gets the same claim.
    expect(await (await fetch(local(url))).text()).toBe("claim");
    expect(await (await fetch(local(url))).text()).toBe("claim");
    acknowledged = true;
    expect((await fetch(local(url))).status).toBe(404);
    expect((await fetch(local(url))).status).toBe(404);
  });

  // One of two would be a poll on a connection that died unnoticed: it must not hold the answer back.
  it("answers two polls at once with the claim while it is unacknowledged", async () => {
    const url = claims.register("telo-pool-gggggggggggg");
    const held = [fetch(local(url)), fetch(local(url))];
    await expect.poll(() => claims.polled("telo-pool-gggggggggggg")).toBe(true);
    claims.deliver("telo-pool-gggggggggggg", Buffer.from("claim"), () => true);
    expect(await Promise.all(held.map(async (answer) => (await answer).text()))).toEqual(["claim", "claim"]);
  });

  it("refuses a wrong token, another pod's token, a missing token and an unknown pod alike", async () => {
    const url = claims.register("telo-pool-cccccccccccc");
    const other = claims.register("telo-pool-dddddddddddd");
    const token = new URL(url).searchParams.get("token")!;
    for (const path of [
      `/internal/pool/telo-pool-cccccccccccc?token=${"0".repeat(48)}`,
      `/internal/pool/telo-pool-cccccccccccc?token=${new URL(other).searchParams.get("token")}`,
      `/internal/pool/telo-pool-cccccccccccc?token=${token.slice(1)}`,
      "/internal/pool/telo-pool-cccccccccccc",
      `/internal/pool/telo-pool-eeeeeeeeeeee?token=${token}`,
    ]) {
      expect((await fetch(`${base}${path}`)).status, path).toBe(404);
    }
    // A forgotten pod's token is gone too; an adopted one is known again from its URL.
    claims.forget("telo-pool-cccccccccccc");
    expect((await fetch(local(url))).status).toBe(404);
    expect(claims.adopt("telo-pool-cccccccccccc", url)).toBe(true);
    expect(claims.adopt("telo-pool-cccccccccccc", url.replace("runner:8063", "elsewhere:8063"))).toBe(false);
  });
});
