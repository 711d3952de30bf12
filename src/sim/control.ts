// The HTTP control endpoint (`/_sim/...` on the API port) so scripts drive the same knobs as the
// TypeScript API. Bodies are valibot-checked; answers are JSON.
import type { IncomingMessage, ServerResponse } from "node:http";
import * as v from "valibot";
import type { Faults } from "./fault-api.ts";
import { LostDownloadRuleSchema } from "./download.ts";
import { FailRuleSchema, LagWatchesRuleSchema, LatencyRuleSchema, LostAnswerRuleSchema } from "./faults.ts";
import { readBody, sendJson } from "./http-util.ts";

const DropWatches = v.object({ resource: v.optional(v.string()) });
const CutAttach = v.object({ namespace: v.optional(v.string()), pod: v.optional(v.string()) });
const PodRef = v.object({ namespace: v.string(), name: v.string() });
const PodExit = v.object({
  namespace: v.string(),
  name: v.string(),
  exitCode: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(255))),
  container: v.optional(v.string()),
});

export interface ControlTarget {
  faults: Faults;
  counters(): { requests: Record<string, number>; openWatches: number };
  resetCounters(): void;
  recordedRequests(): unknown[];
  audit(): unknown[];
}

export const CONTROL_PREFIX = "/_sim/";

export async function handleControl(target: ControlTarget, req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
  const route = `${req.method} ${path.slice(CONTROL_PREFIX.length - 1)}`;
  const body = async <S extends v.GenericSchema>(schema: S): Promise<v.InferOutput<S>> => {
    const text = await readBody(req);
    return v.parse(schema, text.trim() === "" ? {} : JSON.parse(text));
  };
  const f = target.faults;
  try {
    switch (route) {
      case "GET /counters":
        return sendJson(res, 200, target.counters());
      case "POST /counters/reset":
        target.resetCounters();
        return sendJson(res, 200, { ok: true });
      case "GET /requests":
        return sendJson(res, 200, target.recordedRequests());
      case "GET /audit":
        return sendJson(res, 200, target.audit());
      case "POST /faults/fail":
        f.failNext(await body(FailRuleSchema));
        return sendJson(res, 200, { ok: true });
      case "POST /faults/lose-answers":
        f.loseAnswers(await body(LostAnswerRuleSchema));
        return sendJson(res, 200, { ok: true });
      case "POST /faults/latency":
        f.addLatency(await body(LatencyRuleSchema));
        return sendJson(res, 200, { ok: true });
      case "POST /faults/clear":
        f.clear();
        return sendJson(res, 200, { ok: true });
      case "POST /faults/drop-watches":
        return sendJson(res, 200, { dropped: f.dropWatches((await body(DropWatches)).resource) });
      case "POST /faults/expire-resource-versions":
        f.expireResourceVersions();
        return sendJson(res, 200, { ok: true });
      case "POST /faults/lose-downloads":
        f.loseDownloads(await body(LostDownloadRuleSchema));
        return sendJson(res, 200, { ok: true });
      case "POST /faults/lag-watches":
        f.lagWatches(await body(LagWatchesRuleSchema));
        return sendJson(res, 200, { ok: true });
      case "POST /faults/cut-attach":
        return sendJson(res, 200, { cut: f.cutAttachStreams(await body(CutAttach)) });
      case "POST /pods/exit": {
        const b = await body(PodExit);
        return sendJson(res, 200, { exited: f.exitPod(b.namespace, b.name, b) });
      }
      case "POST /pods/delete": {
        const b = await body(PodRef);
        return sendJson(res, 200, { deleted: f.deletePod(b.namespace, b.name) });
      }
      default:
        return sendJson(res, 404, { error: `no control route ${route}` });
    }
  } catch (err) {
    const message = err instanceof v.ValiError ? err.issues.map((i) => `${v.getDotPath(i) ?? "body"}: ${i.message}`).join("; ") : (err as Error).message;
    sendJson(res, 400, { error: message });
  }
}
