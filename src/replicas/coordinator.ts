/**
 * The ownership of a runner among several replicas (docs/replicas.md), behind the ownership seam:
 * every retry period it renews its member Lease, reads the live members, acquires or releases
 * shards by the rendezvous plan and tries for the duties Lease. What each shard is to this replica
 * is one state, moved by the pure transition of shard-state.ts; the effects it returns (take a
 * shard's sessions over, let them go, tell the others) are carried out here.
 *
 * The periods do Lease calls only. The supervisor's work on moved shards (taking sessions over,
 * letting them go, the duties' housekeeping) runs in a queue of its own: with thousands of
 * sessions it takes longer than a renew deadline, and a replica whose renewals waited on it would
 * lose every shard while taking over one.
 */
import { createHash } from "node:crypto";
import type { ReplicaSettings } from "../config/replicas.ts";
import type { PlacementAnswer } from "../contract/responses.ts";
import { EXIT_BUDGET, within } from "../launch/shutdown.ts";
import type { Logger } from "../log.ts";
import { leaseRenewFailed, observeReplica, shardsMoved } from "../metrics/replica-figures.ts";
import type { OwnershipHooks, SessionOwnership, Writer } from "../sessions/ownership-seam.ts";
import { monotonicNow } from "./clock.ts";
import { LeaseHolder } from "./lease-holder.ts";
import type { LeaseStore } from "./lease-store.ts";
import { type Member, MemberDirectory, ROLE_LABEL, leaseNames, memberMeta } from "./membership.ts";
import { shardOf } from "../contract/ids.ts";
import { FREE, type ShardEffect, type ShardObservation, type ShardState, holdsAt, servesAt, shardStep, termAt } from "./shard-state.ts";
import { ShardOwnership } from "./shards.ts";

/** Lease names are DNS subdomains: an owner id that is not one is named by its hash. */
export function leasePrefix(ownerId: string): string {
  if (/^[a-z0-9]([-a-z0-9]{0,28}[a-z0-9])?$/.test(ownerId)) return `telo-runner-${ownerId}`;
  return `telo-runner-${createHash("sha256").update(ownerId).digest("hex").slice(0, 12)}`;
}

export type CoordinatorOptions = {
  store: LeaseStore;
  settings: ReplicaSettings;
  ownerId: string;
  /** The peer credential, which the api presents to the other replicas' supervisors. */
  credential: string;
  /**
   * Tells the live replicas at these peer addresses that shards changed hands, so that they run
   * a period at once: a new holder takes what was released, and every replica routes to the new
   * holder without waiting to list the Leases again. Best effort and bounded.
   */
  tellShardsMoved(peerAddresses: string[]): Promise<void>;
  log: Logger;
  /** The monotonic clock every hold is judged on. */
  now?: () => number;
};

type Owners = (string | null)[];

export class ReplicaCoordinator implements SessionOwnership {
  readonly #settings: ReplicaSettings;
  readonly #options: CoordinatorOptions;
  readonly #log: Logger;
  readonly #member: LeaseHolder;
  readonly #duties: LeaseHolder;
  readonly #directory: MemberDirectory;
  readonly #shards: ShardOwnership;
  readonly #states: ShardState[];
  readonly #now: () => number;
  #members: Member[] = [];
  #hooks: OwnershipHooks | undefined;
  #hadDuties = false;
  #timer: NodeJS.Timeout | undefined;
  #period: Promise<void> | undefined;
  /** The supervisor's work on moved shards, one piece after another, apart from the periods. */
  #settling: Promise<void> = Promise.resolve();
  #stopped = false;
  #placement: { version: number; owners: Owners } = { version: 0, owners: [] };
  readonly #placementListeners = new Set<() => void>();

  constructor(options: CoordinatorOptions) {
    const { store, settings, ownerId } = options;
    const now = options.now ?? monotonicNow;
    this.#now = now;
    this.#options = options;
    this.#settings = settings;
    this.#log = options.log.child({ replica: settings.identity });
    const prefix = leasePrefix(ownerId);
    const names = leaseNames(prefix);
    const holder = (name: string, meta: { labels: Record<string, string>; annotations: Record<string, string> }) =>
      new LeaseHolder({ store, name, identity: settings.identity, timing: settings.timing, meta, now });
    this.#member = holder(names.member(settings.identity), memberMeta(ownerId, settings.peerAddress));
    this.#duties = holder(names.duties, { labels: { [ROLE_LABEL]: "duties", "app.kubernetes.io/instance": ownerId }, annotations: {} });
    this.#directory = new MemberDirectory(store, ownerId, now);
    this.#shards = new ShardOwnership({ store, prefix, installation: ownerId, identity: settings.identity, shardCount: settings.shardCount, timing: settings.timing, now });
    this.#states = Array.from({ length: settings.shardCount }, () => FREE);
    observeReplica(() => ({ member: this.#member.holds(), duties: this.#duties.holds(), shardsServed: this.#shardsWhere((state) => servesAt(state, this.#now(), settings.timing)).length, shards: settings.shardCount }));
  }

  get identity(): string {
    return this.#settings.identity;
  }

  shardOf(sessionId: string): number {
    return shardOf(sessionId, this.#settings.shardCount);
  }

  #stateOf(sessionId: string): ShardState {
    return this.#states[this.shardOf(sessionId)] ?? FREE;
  }

  serves(sessionId: string): boolean {
    return servesAt(this.#stateOf(sessionId), this.#now(), this.#settings.timing);
  }

  holds(sessionId: string): boolean {
    return holdsAt(this.#stateOf(sessionId), this.#now(), this.#settings.timing);
  }

  writerFor(sessionId: string): Writer | undefined {
    const term = termAt(this.#stateOf(sessionId), this.#now(), this.#settings.timing);
    return term === undefined ? undefined : { holder: this.#settings.identity, term };
  }

  lost(sessionId: string): void {
    const shard = this.shardOf(sessionId);
    if (this.#states[shard]?.kind === "serving" || this.#states[shard]?.kind === "adopting") {
      this.#log.warn("a fenced write was refused; the shard's sessions are let go", { shard });
    }
    this.#observe([shard], { kind: "fenceLost" });
  }

  mintSessionId(newId: () => string): string | undefined {
    // Bounded: a hold lapsing meanwhile must not spin forever.
    for (let attempt = 0; attempt < 64 * this.#settings.shardCount && this.#states.some((state) => state.kind === "serving"); attempt++) {
      const id = newId();
      if (this.serves(id)) return id;
    }
    return undefined;
  }

  /** The identities of the live members as judged now, this replica's own included. */
  liveMembers(): Set<string> {
    return new Set([this.#settings.identity, ...this.#directory.live().map((member) => member.identity)]);
  }

  /** A live member's peer address, or undefined for one not (or no longer) live. */
  peerAddressOf(identity: string): string | undefined {
    if (identity === this.#settings.identity) return this.#settings.peerAddress;
    return this.#directory.live().find((member) => member.identity === identity)?.peerAddress;
  }

  placement(): PlacementAnswer {
    const { identity, peerAddress } = this.#settings;
    return { shared: true, identity, peerAddress, credential: this.#options.credential, version: this.#placement.version, owners: this.#placement.owners };
  }

  onPlacementChange(listener: () => void): () => void {
    this.#placementListeners.add(listener);
    return () => this.#placementListeners.delete(listener);
  }

  nudge(): void {
    if (this.#hooks && !this.#stopped) this.#runNow();
  }

  /** Runs the first period and takes over what it gained, then runs one every retry period until `leave`. */
  async start(hooks: OwnershipHooks): Promise<void> {
    this.#hooks = hooks;
    this.#runNow();
    await this.#period;
    await this.#settling;
  }

  /**
   * A graceful exit: no more periods; this replica's sessions let go; every shard, the duties and
   * the member Lease given up, and the others told, so they take the shards at once.
   */
  async leave(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    // Each step bounded by the exit budget, so that the whole fits the supervisor's shutdown bound.
    await within(EXIT_BUDGET.periodMs, this.#period ?? Promise.resolve());
    // Work under way on moved shards (a takeover, a planned move saving positions) finishes
    // first, so its sessions are let go with the rest.
    await within(EXIT_BUDGET.settleMs, this.#settling);
    if (this.#hadDuties) this.#hooks?.dutiesLost();
    this.#hadDuties = false;
    // Served no more, but still held while the sessions are let go: their stream positions are
    // saved on their pods under this replica's term, and its terminals send what they hold.
    const held = this.#shardsWhere((state) => state.kind !== "free");
    this.#states.forEach((state, shard) => (this.#states[shard] = state.kind === "free" ? state : { ...state, kind: "leaving", generation: state.generation + 1 }));
    await within(EXIT_BUDGET.letGoMs, this.#hooks?.letGo(this.#inShards(held), false) ?? Promise.resolve());
    this.#states.forEach((state, shard) => (this.#states[shard] = { kind: "free", generation: state.generation + 1 }));
    await within(EXIT_BUDGET.releaseMs, Promise.allSettled([this.#shards.releaseAll(), this.#duties.release(), this.#member.remove()]));
    this.#announcePlacement();
    await within(EXIT_BUDGET.tellMs, this.#tellShardsMoved());
  }

  /** The next period one retry period after this one began (at once if it took longer): renewals keep their rate when answers are slow. */
  #schedule(startedAt: number): void {
    clearTimeout(this.#timer);
    const wait = Math.max(0, startedAt + this.#settings.timing.retryMs - this.#now());
    if (!this.#stopped) this.#timer = setTimeout(() => this.#runNow(), wait);
  }

  /** Periods never overlap: each runs after the one before. */
  #runNow(): void {
    clearTimeout(this.#timer);
    const before = this.#period ?? Promise.resolve();
    this.#period = before.then(async () => {
      const startedAt = this.#now();
      if (!this.#stopped) await this.#runPeriod();
      this.#schedule(startedAt);
    });
  }

  async #runPeriod(): Promise<void> {
    try {
      // A pause longer than the renew deadline is found before anything is written.
      this.#observe(this.#shardsWhere(() => true), { kind: "tick" });
      const letGone = this.#shardsWhere((state) => state.kind === "letGone");
      // Every renewal in the first round, so a slow apiserver delays them by one answer only;
      // each call's failure is its own (a failed renew decays on its own clock).
      const failed = (what: string, lease: "member" | "duties") => (error: unknown) => {
        leaseRenewFailed(lease);
        this.#log.warn(`${what} failed; the next period tries again`, { error });
      };
      const [, members, , , duties] = await Promise.all([
        this.#member.step().catch(failed("renewing this replica's member Lease", "member")),
        this.#directory.refresh().catch(() => this.#directory.live()),
        this.#shards.release(letGone),
        this.#shards.renew(letGone),
        this.#duties.step().catch(failed("stepping the duties Lease", "duties")),
      ]);
      this.#members = members;
      if (letGone.length > 0) this.#log.info("shards released to the replicas that won them", { shards: letGone });
      this.#observe(letGone, { kind: "released" });
      const moving = this.#shardsWhere((state) => state.kind === "leaving" || state.kind === "letGone");
      const planElsewhere = await this.#shards.acquire(members.map((member) => member.identity), new Set(moving));
      this.#observe(this.#shardsWhere(() => true), (shard) => {
        const hold = this.#shards.holdOf(shard);
        return hold ? { kind: "renewed", term: hold.term, at: hold.renewedAt } : { kind: "notHeld" };
      });
      this.#observe(planElsewhere, { kind: "planElsewhere" });
      this.#stepDuties(duties ? duties.held : this.#duties.holds());
      this.#announcePlacement();
    } catch (error) {
      this.#log.warn("a replica coordination period failed; the next one retries", { error });
    }
  }

  #stepDuties(held: boolean): void {
    if (held && !this.#hadDuties) this.#enqueue("taking up the singleton duties", async () => {
      // Lost again while queued: dutiesLost has run already, so nothing is started after it.
      if (!this.#hadDuties) return;
      try {
        await this.#hooks?.dutiesGained();
      } catch (error) {
        this.#hadDuties = false;
        throw error;
      }
    });
    if (!held && this.#hadDuties) this.#hooks?.dutiesLost();
    this.#hadDuties = held;
  }

  /** Each shard's state moved by `observation`, then the effects carried out, those of a kind together. */
  #observe(shards: readonly number[], observation: ShardObservation | ((shard: number) => ShardObservation)): void {
    const now = this.#now();
    const effects = new Map<ShardEffect, { shards: number[]; generations: number[] }>();
    for (const shard of shards) {
      const step = shardStep(this.#states[shard] ?? FREE, typeof observation === "function" ? observation(shard) : observation, now, this.#settings.timing);
      this.#states[shard] = step.state;
      for (const effect of step.effects) {
        const group = effects.get(effect) ?? { shards: [], generations: [] };
        group.shards.push(shard);
        group.generations.push(step.state.generation);
        effects.set(effect, group);
      }
    }
    for (const [effect, { shards: affected, generations }] of effects) this.#carryOut(effect, affected, generations);
  }

  #carryOut(effect: ShardEffect, shards: number[], generations: number[]): void {
    const hooks = this.#hooks;
    if (!hooks) return;
    const which = this.#inShards(shards);
    switch (effect) {
      case "takeOver":
        this.#log.info("shards acquired", { shards });
        shardsMoved("acquired", shards.length);
        return this.#enqueue("taking over the sessions of acquired shards", async () => {
          let ok = false;
          try {
            await hooks.takeOver(which);
            ok = true;
          } finally {
            shards.forEach((shard, index) => this.#observe([shard], { kind: "takenOver", generation: generations[index]!, ok }));
            this.#announcePlacement();
          }
        });
      case "letGo":
        this.#log.warn("shards lapsed or fenced out; their sessions are let go", { shards });
        shardsMoved("lapsed", shards.length);
        this.#announcePlacement();
        return this.#enqueue("letting lapsed shards go", () => hooks.letGo(which, false));
      case "letGoUnhurried":
        this.#log.info("shards moving to another replica; their sessions are being handed off", { shards });
        shardsMoved("handed_off", shards.length);
        this.#announcePlacement();
        return this.#enqueue("handing sessions to another replica", async () => {
          try {
            await hooks.letGo(which, true);
          } finally {
            shards.forEach((shard, index) => this.#observe([shard], { kind: "letGo", generation: generations[index]! }));
            // Released at the period this starts, rather than up to a retry period later.
            this.nudge();
          }
        });
      case "tellMoved":
        return void this.#tellShardsMoved();
    }
  }

  #shardsWhere(predicate: (state: ShardState) => boolean): number[] {
    return this.#states.flatMap((state, shard) => (predicate(state) ? [shard] : []));
  }

  #inShards(shards: readonly number[]): (sessionId: string) => boolean {
    const set = new Set(shards);
    return (sessionId) => set.has(this.shardOf(sessionId));
  }

  /** The holder of each shard as this replica sees it, by peer address; its listeners told when that changed. */
  #announcePlacement(): void {
    const addresses = new Map(this.#members.map((member) => [member.identity, member.peerAddress]));
    addresses.set(this.#settings.identity, this.#settings.peerAddress);
    const now = this.#now();
    const owners = this.#states.map((state, shard) => {
      // This replica names itself only for what it serves; a shard it holds but does not serve yet is nobody's to its api.
      if (state.kind !== "free") return servesAt(state, now, this.#settings.timing) ? this.#settings.peerAddress : null;
      const holder = this.#shards.holderOf(shard);
      return holder === undefined || holder === this.#settings.identity ? null : (addresses.get(holder) ?? null);
    });
    const before = this.#placement.owners;
    if (owners.length === before.length && owners.every((owner, shard) => owner === before[shard])) return;
    this.#placement = { version: this.#placement.version + 1, owners };
    for (const listener of this.#placementListeners) listener();
  }

  #tellShardsMoved(): Promise<void> {
    const peers = this.#members.filter((member) => member.identity !== this.#settings.identity).map((member) => member.peerAddress);
    return this.#options.tellShardsMoved(peers).catch((error: unknown) => this.#log.warn("telling the other replicas of moved shards failed", { error }));
  }

  /** Queues the supervisor's work on moved shards; a failure is logged, and the queue goes on. */
  #enqueue(what: string, work: () => Promise<void>): void {
    this.#settling = this.#settling.then(work).catch((error: unknown) => this.#log.warn(`${what} failed; the next period retries`, { error }));
  }
}
