/**
 * One replica's part in the coordination (docs/replicas.md): every retry period it renews its
 * member Lease, reads the live members, acquires or releases shards by the rendezvous plan and
 * tries for the duties Lease; it tells the supervisor which shards it gained and lost, and
 * answers where each shard's sessions live now (the placement the api forwards by).
 *
 * The periods do Lease calls only. What the supervisor does with moved shards (adopting their
 * sessions, letting them go, the duties' housekeeping) runs in a queue of its own: with thousands
 * of sessions it takes longer than a renew deadline, and a replica whose renewals waited on it
 * would lose every shard while taking over one.
 */
import { createHash } from "node:crypto";
import type { ReplicaSettings } from "../config/replicas.ts";
import type { Logger } from "../log.ts";
import { LeaseHolder } from "./lease-holder.ts";
import type { LeaseStore } from "./lease-store.ts";
import { type Member, MemberDirectory, ROLE_LABEL, leaseNames, memberMeta } from "./membership.ts";
import type { Writer } from "./fencing.ts";
import { shardOf } from "./rendezvous.ts";
import { ShardOwnership } from "./shards.ts";

/** What the supervisor does when the coordination moves sessions. */
export interface CoordinatorHooks {
  /**
   * Shards about to be released or already lapsed: stop acting on their sessions. `unhurried`:
   * the shards stay held until this is done (a planned move), so saving the sessions' stream
   * positions may take as long as it takes; otherwise (a lapse, an exit) it is bounded.
   */
  releasing(shards: number[], unhurried?: boolean): Promise<void>;
  /** Shards newly held: take over their sessions. */
  acquired(shards: number[]): Promise<void>;
  /** The singleton duties were gained. */
  dutiesGained(): Promise<void>;
  /** The singleton duties were lost (a lapse, another replica took them) or are about to be given up (a graceful exit). */
  dutiesLost(): void;
  /**
   * Shards changed hands: this replica released some (moved to a replica that joined, or all of
   * them at a graceful exit), or it took some and serves their sessions now. The live replicas at
   * these peer addresses are told, so that they run a period at once rather than at the next
   * retry: a new holder takes what was released, and every replica routes its api's requests to
   * the new holder without waiting to list the Leases again. Best effort: a replica not told
   * learns it at its next period.
   */
  shardsMoved(peerAddresses: string[]): Promise<void>;
}

/** How long a graceful exit waits for the work under way on moved shards before it hands everything over. */
const EXIT_WAIT_MS = 4_000;

/** Where each shard's sessions are served: a peer address, or null while nobody holds it. */
export type Placement = { identity: string; peerAddress: string; credential: string; owners: (string | null)[] };

/** Lease names are DNS subdomains: an owner id that is not one is named by its hash. */
export function leasePrefix(ownerId: string): string {
  if (/^[a-z0-9]([-a-z0-9]{0,28}[a-z0-9])?$/.test(ownerId)) return `telo-runner-${ownerId}`;
  return `telo-runner-${createHash("sha256").update(ownerId).digest("hex").slice(0, 12)}`;
}

export class ReplicaCoordinator {
  readonly #settings: ReplicaSettings;
  readonly #credential: string;
  readonly #hooks: CoordinatorHooks;
  readonly #log: Logger;
  readonly #member: LeaseHolder;
  readonly #duties: LeaseHolder;
  readonly #directory: MemberDirectory;
  readonly #shards: ShardOwnership;
  #members: Member[] = [];
  /** Shards taken as this replica's: their sessions adopted or being adopted, or being let go (`#leaving`). */
  readonly #held = new Set<number>();
  /** Held shards whose sessions have been adopted: only these are served and minted into. */
  readonly #serving = new Set<number>();
  /** Held shards the plan gives another replica, renewed until their sessions have been let go. */
  readonly #leaving = new Set<number>();
  /** Shards of `#leaving` whose sessions have been let go: released first thing in the next period. */
  #handedOff: number[] = [];
  /** Bumped whenever a shard is gained or lost, so an adoption that finishes late serves only what is still its own. */
  readonly #generation = new Map<number, number>();
  #hadDuties = false;
  #timer: NodeJS.Timeout | undefined;
  #period: Promise<void> | undefined;
  /** The supervisor's work on moved shards, one piece after another, apart from the periods. */
  #settling: Promise<void> = Promise.resolve();
  #stopped = false;
  readonly #now: () => number;

  constructor(options: {
    store: LeaseStore;
    settings: ReplicaSettings;
    ownerId: string;
    /** The peer credential, which the api presents to the other replicas' supervisors. */
    credential: string;
    hooks: CoordinatorHooks;
    log: Logger;
    now?: () => number;
  }) {
    const { store, settings, ownerId } = options;
    const now = options.now ?? Date.now;
    this.#now = now;
    const prefix = leasePrefix(ownerId);
    const names = leaseNames(prefix);
    this.#settings = settings;
    this.#credential = options.credential;
    this.#hooks = options.hooks;
    this.#log = options.log.child({ replica: settings.identity });
    const holder = (name: string, meta: { labels: Record<string, string>; annotations: Record<string, string> }) =>
      new LeaseHolder({ store, name, identity: settings.identity, timing: settings.timing, meta, now });
    this.#member = holder(names.member(settings.identity), memberMeta(ownerId, settings.peerAddress));
    this.#duties = holder(names.duties, { labels: { [ROLE_LABEL]: "duties", "app.kubernetes.io/instance": ownerId }, annotations: {} });
    this.#directory = new MemberDirectory(store, ownerId, now);
    this.#shards = new ShardOwnership({ store, prefix, installation: ownerId, identity: settings.identity, shardCount: settings.shardCount, timing: settings.timing, now });
  }

  get identity(): string {
    return this.#settings.identity;
  }

  /** Runs the first period and adopts what it gained, then runs one every retry period until `handOver`. */
  async start(): Promise<void> {
    // Through the chain: a nudge may come over the peer listener before the first period.
    this.#runNow();
    await this.#period;
    await this.#settling;
  }

  /** Shards changed hands between the other replicas: a period now (after the one in flight), not at the next retry. */
  nudge(): void {
    if (!this.#stopped) this.#runNow();
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

  shardOf(sessionId: string): number {
    return shardOf(sessionId, this.#settings.shardCount);
  }

  /**
   * Whether this replica serves the session now: its shard is held (within the renew deadline)
   * and its sessions adopted. Until then a request is answered "moving", never "not found".
   */
  owns(sessionId: string): boolean {
    const shard = this.shardOf(sessionId);
    return this.#serving.has(shard) && this.#shards.termOf(shard) !== undefined;
  }

  /**
   * A fresh session id whose shard this replica holds, so that the replica that admits a session
   * also owns it; undefined while it holds no shard.
   */
  mintSessionId(newId: () => string): string | undefined {
    // Bounded: a hold lapsing meanwhile must not spin forever.
    for (let attempt = 0; attempt < 64 * this.#settings.shardCount && this.#serving.size > 0; attempt++) {
      const id = newId();
      if (this.owns(id)) return id;
    }
    return undefined;
  }

  /** This replica's term on the session's shard while it holds it (the fence's writer), else undefined. */
  writerFor(sessionId: string): Writer | undefined {
    const term = this.#shards.termOf(this.shardOf(sessionId));
    return term === undefined ? undefined : { holder: this.#settings.identity, term };
  }

  /**
   * A fenced write found the session's pod another replica's: the shard's sessions are let go
   * at once, as on a lapse. If the shard's Lease is still held at the next period, the shard
   * counts as gained again and its sessions are adopted again (their pods stamped anew, where a
   * newer term refuses the stamp); a successor's newer term means the renew is lost anyway.
   */
  fenceLost(sessionId: string): void {
    const shard = this.shardOf(sessionId);
    if (this.#leaving.has(shard) || !this.#held.delete(shard)) return;
    this.#serving.delete(shard);
    this.#bump(shard);
    this.#log.warn("a fenced write was refused; the shard's sessions are let go", { shard });
    this.#hooks.releasing([shard]).catch((error: unknown) => this.#log.warn("letting a fenced-out shard go failed", { shard, error }));
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

  placement(): Placement {
    const addresses = new Map(this.#members.map((member) => [member.identity, member.peerAddress]));
    addresses.set(this.#settings.identity, this.#settings.peerAddress);
    const owners = Array.from({ length: this.#settings.shardCount }, (_, shard) => {
      const holder = this.#shards.holderOf(shard);
      return holder === undefined ? null : (addresses.get(holder) ?? null);
    });
    return { identity: this.#settings.identity, peerAddress: this.#settings.peerAddress, credential: this.#credential, owners };
  }

  /**
   * A graceful exit: no more periods; this replica's sessions let go; every shard, the duties
   * and the member Lease given up, and the others told, so they take the shards at once.
   */
  async handOver(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#period;
    // Work under way on moved shards (an adoption, a planned hand-off saving positions) finishes
    // first, so its sessions are let go with the rest; bounded, so that the exit's own hand-off
    // and releases still fit in the shutdown's time however long that work would take.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#settling, new Promise((resolve) => (timer = setTimeout(resolve, EXIT_WAIT_MS)))]).finally(() => clearTimeout(timer));
    this.#serving.clear();
    if (this.#hadDuties) this.#hooks.dutiesLost();
    this.#hadDuties = false;
    await this.#hooks.releasing([...this.#held]);
    this.#held.clear();
    await this.#shards.releaseAll();
    await Promise.allSettled([this.#duties.release(), this.#member.remove()]);
    await this.#tellShardsMoved();
  }

  #tellShardsMoved(): Promise<void> {
    return this.#hooks.shardsMoved(this.#peerAddresses()).catch((error: unknown) => this.#log.warn("telling the other replicas of moved shards failed", { error }));
  }

  /** The live members' peer addresses, this replica's own left out. */
  #peerAddresses(): string[] {
    return this.#members.filter((member) => member.identity !== this.#settings.identity).map((member) => member.peerAddress);
  }

  async #runPeriod(): Promise<void> {
    try {
      const handedOff = this.#handedOff.splice(0);
      // Every renewal in the first round, so a slow apiserver delays them by one answer only;
      // each call's failure is its own (a failed renew decays on its own clock).
      const failed = (what: string) => (error: unknown) => void this.#log.warn(`${what} failed; the next period tries again`, { error });
      const [, members, , , duties] = await Promise.all([
        this.#member.step().catch(failed("renewing this replica's member Lease")),
        this.#directory.refresh().catch(() => this.#directory.live()),
        this.#shards.release(handedOff),
        this.#shards.renew(handedOff),
        this.#duties.step().catch(failed("stepping the duties Lease")),
      ]);
      const dutiesHeld = duties ? duties.held : this.#duties.holds();
      this.#members = members;
      for (const shard of handedOff) {
        this.#leaving.delete(shard);
        this.#held.delete(shard);
        this.#serving.delete(shard);
      }
      if (handedOff.length > 0) {
        this.#log.info("shards released to the replicas that won them", { shards: handedOff });
        void this.#tellShardsMoved();
      }
      const moving = await this.#shards.acquire(members.map((member) => member.identity), this.#leaving);
      if (moving.length > 0) this.#letGo(moving);
      this.#settle();
      if (dutiesHeld && !this.#hadDuties) this.#takeUpDuties();
      if (!dutiesHeld && this.#hadDuties) this.#hooks.dutiesLost();
      this.#hadDuties = dutiesHeld;
    } catch (error) {
      this.#log.warn("a replica coordination period failed; the next one retries", { error });
    }
  }

  /**
   * Shards the plan moved away stop being served now; they are released, at the period after
   * their sessions have been let go (handed over with the ids they gave out), never before.
   */
  #letGo(shards: number[]): void {
    this.#log.info("shards moving to another replica; their sessions are being handed off", { shards });
    for (const shard of shards) {
      this.#serving.delete(shard);
      this.#leaving.add(shard);
      // An adoption of it still queued must not serve it when it finishes.
      this.#bump(shard);
    }
    this.#enqueue("handing sessions to another replica", async () => {
      try {
        await this.#hooks.releasing(shards, true);
      } finally {
        this.#handedOff.push(...shards);
        this.nudge();
      }
    });
  }

  /** After a period: lapsed shards let go, new ones taken over, each in the queue. */
  #settle(): void {
    const now = new Set(this.#shards.held().keys());
    const lost = [...this.#held].filter((shard) => !now.has(shard) && !this.#leaving.has(shard));
    const gained = [...now].filter((shard) => !this.#held.has(shard));
    for (const shard of lost) {
      this.#held.delete(shard);
      this.#serving.delete(shard);
      this.#bump(shard);
    }
    if (lost.length > 0) {
      this.#log.warn("shards lapsed; their sessions are let go", { shards: lost });
      this.#enqueue("letting lapsed shards go", () => this.#hooks.releasing(lost));
    }
    if (gained.length === 0) return;
    const generations = gained.map((shard) => {
      this.#held.add(shard);
      return this.#bump(shard);
    });
    const unchanged = (shard: number, index: number) => this.#generation.get(shard) === generations[index];
    this.#log.info("shards acquired", { shards: gained });
    this.#enqueue("adopting the sessions of acquired shards", async () => {
      try {
        await this.#hooks.acquired(gained);
      } catch (error) {
        // Not served until adopted: the next period sees them as gained again and retries.
        gained.forEach((shard, index) => unchanged(shard, index) && this.#held.delete(shard));
        throw error;
      }
      gained.forEach((shard, index) => unchanged(shard, index) && this.#shards.termOf(shard) !== undefined && this.#serving.add(shard));
      // The others forward by the holders they listed last: told, they route here now, not up
      // to a retry period later (answering "moving" meanwhile).
      void this.#tellShardsMoved();
    });
  }

  /** The duties' first housekeeping, in the queue; if it fails, the next period that holds the duties tries again. */
  #takeUpDuties(): void {
    this.#enqueue("taking up the singleton duties", async () => {
      // Lost again while queued: dutiesLost has run already, so nothing is started after it.
      if (!this.#hadDuties) return;
      try {
        await this.#hooks.dutiesGained();
      } catch (error) {
        this.#hadDuties = false;
        throw error;
      }
    });
  }

  #bump(shard: number): number {
    const next = (this.#generation.get(shard) ?? 0) + 1;
    this.#generation.set(shard, next);
    return next;
  }

  /** Queues the supervisor's work on moved shards; a failure is logged, and the queue goes on. */
  #enqueue(what: string, work: () => Promise<void>): void {
    this.#settling = this.#settling.then(work).catch((error: unknown) => this.#log.warn(`${what} failed; the next period retries`, { error }));
  }
}
