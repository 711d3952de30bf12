/**
 * The routes that exist only on a watch session (docs/api.md "Watch sessions"): the workspace
 * passed through to the live workload, reloads, app-set changes and the resume. Each answers
 * with its result or raises a Problem.
 */
import { invalidPathMessage, normaliseRelativePath } from "../contract/paths.ts";
import { Problem } from "../contract/problem.ts";
import { publicFailure } from "../contract/public-error.ts";
import type { SetAppsBody, WorkspaceChangeSetBody } from "../contract/requests.ts";
import type { AppsChanged, Reloaded, Resumed } from "../contract/responses.ts";
import type { WorkspaceApplyResult, WorkspaceFile, WorkspaceTree } from "../contract/wire.ts";
import { resolveAppSet } from "../sessions/admission.ts";
import type { Backend, WorkspaceClient } from "../sessions/backend-seam.ts";
import type { Registry } from "../sessions/registry.ts";
import type { Session } from "../sessions/session.ts";
import { noLiveWorkload, noLiveWorkspace, notAWatchSession, sessionNotFound, workspaceFailure } from "./problems.ts";
import type { SessionLauncher } from "./session-launch.ts";

const invalidPath = (message: string) => new Problem("invalid", "invalid_path", message);

/** Runs a backend call; its failure is the framework's 500 answer. */
async function passThrough<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw workspaceFailure(error);
  }
}

export class WatchSurface {
  constructor(
    readonly registry: Registry,
    readonly backend: Backend,
    readonly launcher: SessionLauncher,
    readonly reloadLimit: number,
  ) {}

  workspaceTree(id: string): Promise<WorkspaceTree> {
    const workspace = this.#workspace(this.#watchSession(id));
    return passThrough(() => workspace.tree());
  }

  workspaceApply(id: string, changes: WorkspaceChangeSetBody): Promise<WorkspaceApplyResult> {
    const session = this.#watchSession(id);
    this.#spendBudget(session, "workspace writes");
    const workspace = this.#workspace(session);
    for (const path of [...(changes.write ?? []).map((write) => write.path), ...(changes.delete ?? [])]) {
      if (normaliseRelativePath(path) === undefined) throw invalidPath(invalidPathMessage(path));
    }
    // Forwarded as sent: paths are validated, not rewritten (docs/api.md "Watch sessions").
    return passThrough(() => workspace.apply(changes));
  }

  workspaceFile(id: string, rawPath: string | undefined): Promise<WorkspaceFile> {
    const workspace = this.#workspace(this.#watchSession(id));
    const path = rawPath?.trim() ?? "";
    if (path === "") throw invalidPath("?path= is required");
    if (normaliseRelativePath(path) === undefined) throw invalidPath(invalidPathMessage(path));
    return passThrough(() => workspace.file(path));
  }

  async reload(id: string, appName: string | undefined): Promise<Reloaded> {
    const session = this.#watchSession(id);
    const workload = session.workload;
    if (!workload?.reload) throw noLiveWorkload();
    this.#spendBudget(session, "reloads");
    if (appName !== undefined && !session.apps.has(appName)) {
      throw new Problem("not_found", "unknown_app", `session runs no app named '${appName}'`);
    }
    const targets = appName !== undefined ? [appName] : [...session.apps.keys()];
    session.setNextTrigger("manual", targets);
    await passThrough(async () => {
      for (const target of targets) await workload.reload?.(target);
    });
    return { reloaded: targets };
  }

  async setApps(id: string, body: SetAppsBody): Promise<AppsChanged> {
    const session = this.#watchSession(id);
    const workload = session.workload;
    if (!workload?.setApps) throw noLiveWorkload();
    const apps = resolveAppSet(
      body.apps,
      { io: this.backend.describe().io, validateAppName: this.backend.validateAppName?.bind(this.backend), supplyTelo: this.backend.supplyTelo?.bind(this.backend) },
      session.launch.config,
    );
    const added = apps.filter((app) => !session.apps.has(app.name));
    for (const app of added) session.addApp(app, "resume");
    session.setNextTrigger("resume");
    try {
      await workload.setApps(apps);
    } catch (error) {
      session.removeApps(added.map((app) => app.name));
      this.launcher.logFor(session).warn("changing the app set failed", { error });
      const message = publicFailure("changing the app set", error);
      this.launcher.emitStatus(session, { kind: "failed", message });
      throw new Problem("failed", "set_apps_failed", message);
    }
    session.replaceApps(apps);
    return { apps: apps.map((app) => app.name) };
  }

  resume(id: string): Resumed {
    const session = this.registry.get(id);
    if (!session || session.status.kind !== "suspended") {
      throw new Problem("not_found", "not_suspended", `session '${id}' is not suspended`);
    }
    if (!session.checkpoint) {
      throw new Problem("conflict", "no_checkpoint", `session '${id}' has no checkpoint to resume from`);
    }
    session.prepareResume(session.checkpoint, Date.now());
    this.launcher.emitStatus(session, { kind: "starting" });
    void this.launcher.launch(session);
    return { sessionId: id };
  }

  #watchSession(id: string): Session {
    const session = this.registry.get(id);
    if (!session) throw sessionNotFound(id);
    if (session.mode !== "watch") throw notAWatchSession();
    return session;
  }

  #workspace(session: Session): WorkspaceClient {
    const workspace = session.workload?.workspace;
    if (!workspace) throw noLiveWorkspace();
    return workspace;
  }

  /** Reloads and workspace writes share one budget per session (docs/api.md "Watch sessions"). */
  #spendBudget(session: Session, what: string): void {
    if (!session.reloadBudget.tryAdmit(Date.now())) {
      throw new Problem("rate_limited", "reload_rate_limited", `more than ${this.reloadLimit} ${what} in the last minute`);
    }
  }
}
