/**
 * Session ownership by shards (docs/replicas.md): a session's shard is fixed at its start and
 * stamped on its pod; each shard has a Lease; the live members agree, by rendezvous hashing,
 * which of them should hold each shard; a replica acquires the shards it should hold and releases
 * the ones it should no longer hold (a member joined and won them), and acts only on sessions
 * of shards it holds, under the shard Lease's term (fencing.ts).
 */
import { LeaseHolder } from "./lease-holder.ts";
import type { LeaseTiming } from "./lease-rules.ts";
import type { LeaseMeta, LeaseStore } from "./lease-store.ts";
import { ROLE_LABEL, leaseNames } from "./membership.ts";
import { ownerOf } from "./rendezvous.ts";

/**
 * What `me` should do with the shards: acquire those the live members assign to it and it does
 * not hold, release those it holds that are assigned to another. `me` always counts as live in
 * its own plan (its member Lease is its own), so a replica alone holds every shard.
 */
export function planShards(shardCount: number, me: string, live: readonly string[], held: ReadonlySet<number>): { acquire: number[]; release: number[] } {
  const members = live.includes(me) ? live : [...live, me];
  const acquire: number[] = [];
  const release: number[] = [];
  for (let shard = 0; shard < shardCount; shard++) {
    const mine = ownerOf(shard, members) === me;
    if (mine && !held.has(shard)) acquire.push(shard);
    if (!mine && held.has(shard)) release.push(shard);
  }
  return { acquire, release };
}

export interface ShardOwnershipOptions {
  store: LeaseStore;
  prefix: string;
  installation: string;
  identity: string;
  shardCount: number;
  timing: LeaseTiming;
  now: () => number;
}

export class ShardOwnership {
  readonly #options: ShardOwnershipOptions;
  readonly #holders = new Map<number, LeaseHolder>();

  constructor(options: ShardOwnershipOptions) {
    this.#options = options;
  }

  /** The shards held now, with the term of each. */
  held(): Map<number, number> {
    const out = new Map<number, number>();
    for (const [shard, holder] of this.#holders) {
      const term = holder.term();
      if (term !== undefined) out.set(shard, term);
    }
    return out;
  }

  /** The term under which this replica holds `shard` now, and when it last wrote its Lease; undefined when it does not. */
  holdOf(shard: number): { term: number; renewedAt: number } | undefined {
    const holder = this.#holders.get(shard);
    const term = holder?.term();
    const renewedAt = holder?.renewedAt();
    return term === undefined || renewedAt === undefined ? undefined : { term, renewedAt };
  }

  /** Who holds `shard` as this replica sees it (its own identity included); undefined = nobody. */
  holderOf(shard: number): string | undefined {
    return this.#holders.get(shard)?.holderNow();
  }

  /**
   * The first round of a period: every held shard renewed (`except` those being released), and
   * beside the renewals one list of all shard Leases, which starts this replica's clock on those
   * it does not hold. Each shard's failure is its own: one failed call does not stop the others.
   */
  async renew(except: readonly number[] = []): Promise<void> {
    const skipped = new Set(except);
    const held = [...this.held().keys()].filter((shard) => !skipped.has(shard));
    await Promise.allSettled([this.#witnessAll(), ...held.map((shard) => this.#holder(shard).step())]);
  }

  /**
   * The second round, once the live members are known: the shards the plan gives this replica
   * acquired (`leaving` left out: still this replica's, being let go). Returns the held shards the
   * plan now gives another replica, `leaving` left out: they stay held, and renewed, until the
   * caller has let their sessions go and `release`s them, so that a successor never acts on a
   * session this replica still serves, and letting go may take longer than a renew deadline.
   */
  async acquire(live: readonly string[], leaving: ReadonlySet<number> = new Set()): Promise<number[]> {
    const { shardCount, identity } = this.#options;
    const plan = planShards(shardCount, identity, live, new Set(this.held().keys()));
    await Promise.allSettled(plan.acquire.filter((shard) => !leaving.has(shard)).map((shard) => this.#holder(shard).step()));
    return plan.release.filter((shard) => !leaving.has(shard));
  }

  /** Shards whose sessions have been let go, released so their successor acquires them at once. */
  async release(shards: readonly number[]): Promise<void> {
    await Promise.allSettled(shards.map((shard) => this.#holder(shard).release()));
  }

  /** A graceful exit: every held shard released, so the others take them on their next period. */
  async releaseAll(): Promise<void> {
    await Promise.allSettled([...this.#holders.values()].map((holder) => holder.release()));
  }

  /**
   * One list of every shard Lease per period, so that each replica's clock on a shard it does not
   * hold starts at the last change: a crashed holder's shards are taken one lease duration after
   * its last renew, not one duration after a survivor first looks at them. A failed list only
   * delays that; the steps that follow read what they need. The shards it holds ignore the list
   * (`LeaseHolder.witness`).
   */
  async #witnessAll(): Promise<void> {
    const { store, installation, prefix, shardCount } = this.#options;
    let leases;
    try {
      leases = await store.list(`${ROLE_LABEL}=shard,app.kubernetes.io/instance=${installation}`);
    } catch {
      return;
    }
    const names = leaseNames(prefix);
    for (let shard = 0; shard < shardCount; shard++) {
      const lease = leases.find((l) => l.metadata.name === names.shard(shard));
      if (lease) this.#holder(shard).witness(lease);
    }
  }

  #holder(shard: number): LeaseHolder {
    let holder = this.#holders.get(shard);
    if (!holder) {
      const { store, prefix, installation, identity, timing, now } = this.#options;
      const meta: LeaseMeta = { labels: { [ROLE_LABEL]: "shard", "app.kubernetes.io/instance": installation }, annotations: {} };
      holder = new LeaseHolder({ store, name: leaseNames(prefix).shard(shard), identity, timing, meta, now });
      this.#holders.set(shard, holder);
    }
    return holder;
  }
}
