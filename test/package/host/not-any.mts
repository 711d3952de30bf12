// The declarations are real types, not `any` (a consumer's usual skipLibCheck would hide a
// declaration that failed to resolve): each line below must be a type error, and
// `@ts-expect-error` fails the check if it is not.
import { RunnerClient } from "k8s-runner/client";
import { SupervisorClient } from "k8s-runner";
import { startTestRunner } from "k8s-runner/testing";

// @ts-expect-error baseUrl is a string
export const url: number = new RunnerClient("http://localhost:8062").baseUrl;
// @ts-expect-error the socket path is a string
export const supervisor = new SupervisorClient(8062);
// @ts-expect-error startTimeoutMs is a number of milliseconds
export const started = startTestRunner({ startTimeoutMs: "soon" });
