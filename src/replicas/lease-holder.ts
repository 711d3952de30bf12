/**
 * One replica's hold on one named Lease: a member Lease, a shard Lease or the duties Lease
 * (docs/replicas.md). `step()` is one attempt to acquire or renew, the way client-go's
 * tryAcquireOrRenew goes: read, judge on the local clock, write conditionally; the coordinator's
 * periods repeat it; `release()` hands the Lease over on a graceful exit. The holder counts as
 * holding only within the renew deadline of its last successful write, measured from before that
 * write was sent, so it stops acting before any observer may call the Lease expired.
 */
import { isHeld, nextStep, observe, releaseSpec, stillHolds, timingProblem, viewOf, type Lease, type LeaseTiming, type Observation } from "./lease-rules.ts";
import type { LeaseMeta, LeaseStore } from "./lease-store.ts";

export interface LeaseHolderOptions {
  store: LeaseStore;
  name: string;
  identity: string;
  timing: LeaseTiming;
  meta: LeaseMeta;
  /** The local clock, epoch milliseconds. */
  now: () => number;
}

/** What one step found: held under a term, or held by someone else (or nobody) until a time. */
export type HoldState = { held: true; term: number } | { held: false; holder: string };

export class LeaseHolder {
  readonly name: string;
  readonly #options: LeaseHolderOptions;
  #lease: Lease | undefined;
  #observation: Observation | undefined;
  #renewedAt: number | undefined;
  #term: number | undefined;
  /** A step's calls are in flight: what a list shows meanwhile may be older than what it writes. */
  #stepping = false;
  /** A list showed the Lease since the last step: that step needs no read of its own. */
  #witnessed = false;

  constructor(options: LeaseHolderOptions) {
    const problem = timingProblem(options.timing);
    if (problem) throw new RangeError(problem);
    this.#options = options;
    this.name = options.name;
  }

  /** Whether this replica may act as the holder now. */
  holds(): boolean {
    return stillHolds(this.#renewedAt, this.#options.timing, this.#options.now());
  }

  /** The term (leaseTransitions) under which it holds the Lease, while it does. */
  term(): number | undefined {
    return this.holds() ? this.#term : undefined;
  }

  /** When its last successful acquire or renew was sent, while it holds the Lease. */
  renewedAt(): number | undefined {
    return this.holds() ? this.#renewedAt : undefined;
  }

  /**
   * Who holds the Lease as this replica sees it now: itself while it holds, else the holder of
   * the last version seen if that has not expired on this clock; undefined = nobody.
   */
  holderNow(): string | undefined {
    if (this.holds()) return this.#options.identity;
    const observation = this.#observation;
    return observation && isHeld(observation, this.#options.now()) && observation.lease.holder !== this.#options.identity ? observation.lease.holder : undefined;
  }

  /**
   * A version of the Lease seen elsewhere (a list of all shard Leases): starts this observer's
   * clock on it, so a takeover waits one duration from the last change seen, not from the
   * first step on the Lease. Ignored while this replica holds the Lease or is writing it: a list
   * made beside its own renew may show the version before it, and the conditional renew is what
   * finds out about another writer.
   */
  witness(lease: Lease): void {
    if (this.#stepping || this.holds()) return;
    this.#witnessed = true;
    if (lease.metadata.resourceVersion === this.#lease?.metadata.resourceVersion) return;
    this.#see(lease);
    if (viewOf(lease).holder !== this.#options.identity) this.#lose("");
  }

  /** One attempt to acquire or renew. A failed call keeps the state: holding decays on its own. */
  async step(): Promise<HoldState> {
    this.#stepping = true;
    try {
      return await this.#step();
    } finally {
      this.#stepping = false;
    }
  }

  async #step(): Promise<HoldState> {
    const { store, name, identity, timing, meta, now } = this.#options;
    // While it holds, the Lease it last wrote is current unless someone else wrote since, which
    // the conditional write finds out: the steady state is one write per period and no read.
    // A Lease a list has just shown is taken over with no read either (a released shard: one
    // write); if it changed since, the conditional write loses and the next step reads.
    const witnessed = this.#witnessed;
    this.#witnessed = false;
    if (!this.holds() || !this.#lease) {
      if (!witnessed || !this.#lease) this.#see(await store.read(name));
    }
    const started = now();
    const step = nextStep(this.#observation, identity, timing.durationSeconds, started);
    if (step.kind === "wait") return this.#lose(step.holder);
    const written = step.kind === "create" ? await store.create(name, meta, step.spec) : await store.replace(this.#lease!, meta, step.spec);
    if (!written) {
      // Another replica wrote first: read again on the next step, acting on nothing meanwhile.
      this.#lease = undefined;
      return this.#lose("");
    }
    this.#see(written);
    this.#renewedAt = started;
    this.#term = written.spec?.leaseTransitions ?? 0;
    return { held: true, term: this.#term };
  }

  /**
   * Gives the Lease up: no holder, the term kept, so a successor acquires it on its next step
   * instead of waiting out the duration. Also when this replica's renew deadline has passed but
   * the Lease it last wrote still names it: the write is conditional on that version, so it
   * cannot undo a successor's.
   */
  async release(): Promise<void> {
    const lease = this.#lease;
    this.#lose("");
    if (!lease || viewOf(lease).holder !== this.#options.identity) return;
    await this.#options.store.replace(lease, this.#options.meta, releaseSpec(viewOf(lease), this.#options.now()));
  }

  /** Deletes the Lease if it is still as this replica last wrote it (a member leaving for good). */
  async remove(): Promise<void> {
    const lease = this.#lease;
    this.#lose("");
    if (lease) await this.#options.store.remove(lease);
  }

  #see(lease: Lease | undefined): void {
    this.#lease = lease;
    this.#observation = lease ? observe(this.#observation, viewOf(lease), this.#options.now()) : undefined;
  }

  #lose(holder: string): HoldState {
    this.#renewedAt = undefined;
    this.#term = undefined;
    return { held: false, holder };
  }
}
