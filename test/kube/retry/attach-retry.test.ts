import { describe, expect, it } from "vitest";
import { ATTACH_ATTEMPTS, SHORT_LIVED_ATTACH_MS, attachRetryPause, closedAtOnceReason, reattachAfterClose } from "../../../src/kube/retry/attach-retry.ts";

const apiError = (code: number) => Object.assign(new Error(`attach refused with HTTP ${code}`), { code });

describe("attachRetryPause", () => {
  it("retries what a restarting control plane answers, with a doubling pause up to eight times the first", () => {
    expect(attachRetryPause(apiError(403), 1, 1000)).toBe(1000);
    expect(attachRetryPause(apiError(401), 1, 1000)).toBe(1000);
    expect(attachRetryPause(apiError(500), 2, 1000)).toBe(2000);
    expect(attachRetryPause(apiError(503), 3, 1000)).toBe(4000);
    expect(attachRetryPause(apiError(429), 4, 1000)).toBe(8000);
    expect(attachRetryPause(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), 5, 1000)).toBe(8000);
  });

  it("never retries a refusal that says the container or pod is no more", () => {
    for (const code of [400, 404, 409, 422]) expect(attachRetryPause(apiError(code), 1, 1000)).toBeUndefined();
  });

  it("gives up after the last attempt", () => {
    expect(attachRetryPause(apiError(403), ATTACH_ATTEMPTS - 1, 1000)).toBe(8000);
    expect(attachRetryPause(apiError(403), ATTACH_ATTEMPTS, 1000)).toBeUndefined();
  });
});

describe("reattachAfterClose", () => {
  const refused = { status: { metadata: {}, status: "Failure", reason: "InternalError", code: 500 } };
  const opened = 1_000_000;

  it("re-attaches a stream that had stayed open after the first pause, as a first attempt again", () => {
    expect(reattachAfterClose({}, opened, opened + SHORT_LIVED_ATTACH_MS, 7, 1000)).toEqual({ attempt: 1, pauseMs: 1000 });
    expect(reattachAfterClose(refused, opened, opened + 3_600_000, ATTACH_ATTEMPTS, 1000)).toEqual({ attempt: 1, pauseMs: 1000 });
  });

  it("counts a stream that closed at once as a failed attempt, with the refusals' doubling pause", () => {
    expect(reattachAfterClose(refused, opened, opened + 3, 1, 1000)).toEqual({ attempt: 2, pauseMs: 1000 });
    expect(reattachAfterClose(refused, opened, opened + 3, 2, 1000)).toEqual({ attempt: 3, pauseMs: 2000 });
    expect(reattachAfterClose({}, opened, opened + SHORT_LIVED_ATTACH_MS - 1, 4, 1000)).toEqual({ attempt: 5, pauseMs: 8000 });
    expect(reattachAfterClose({ error: new Error("read ECONNRESET") }, opened, opened + 10, 6, 1000)).toEqual({ attempt: 7, pauseMs: 8000 });
  });

  it("gives up after the last attempt, or at once when the stream's Status says the container is no more", () => {
    expect(reattachAfterClose(refused, opened, opened + 3, ATTACH_ATTEMPTS - 1, 1000).pauseMs).toBe(8000);
    expect(reattachAfterClose(refused, opened, opened + 3, ATTACH_ATTEMPTS, 1000)).toEqual({ attempt: ATTACH_ATTEMPTS + 1, pauseMs: undefined });
    expect(reattachAfterClose({ status: { status: "Failure", reason: "NotFound", code: 404 } }, opened, opened + 3, 1, 1000).pauseMs).toBeUndefined();
  });
});

describe("closedAtOnceReason", () => {
  it("says the stream closed, with its Status's reason and code but never its message", () => {
    const status = { status: "Failure", reason: "InternalError", code: 500, message: "Internal error occurred: dial tcp 10.0.0.7:10250: connect: connection refused" };
    expect(closedAtOnceReason({ status })).toBe("the Kubernetes API closed the attach stream as soon as it opened (InternalError, HTTP 500)");
    expect(closedAtOnceReason({ status: { status: "Failure", code: 503 } })).toBe("the Kubernetes API closed the attach stream as soon as it opened (HTTP 503)");
    expect(closedAtOnceReason({ status: { status: "Failure", code: "x", reason: 7 } })).toBe("the attach stream closed as soon as it opened");
    expect(closedAtOnceReason({ error: new Error("read ECONNRESET") })).toBe("the attach stream closed as soon as it opened");
  });
});
