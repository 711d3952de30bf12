/**
 * A replay buffer bounded by bytes (docs/api.md "The registry"): ids start at 1 and are never reused;
 * the oldest entries go first, but the newest entry is always kept even if it alone exceeds
 * the cap. Readers hold a cursor (the last id they consumed) rather than a queue of their
 * own, so a slow reader costs nothing beyond the shared buffer: if it falls behind the
 * oldest retained entry it sees a gap and resumes from there.
 */
export class ReplayRing<T> {
  // Slots before #head are evicted; they are released at once and compacted in bulk so
  // eviction stays O(1).
  #slots: ({ value: T; bytes: number } | undefined)[] = [];
  #head = 0;
  #oldestId: number;
  #totalBytes = 0;

  /** `firstId` is 1 for a new session; an adopted one starts past any id it had before. */
  constructor(
    readonly capBytes: number,
    firstId = 1,
  ) {
    this.#oldestId = firstId;
  }

  /** Appends and returns the new entry's id. */
  push(value: T, bytes: number): number {
    this.#slots.push({ value, bytes });
    this.#totalBytes += bytes;
    while (this.#totalBytes > this.capBytes && this.#slots.length - this.#head > 1) this.#evictOldest();
    if (this.#head > 1024 && this.#head * 2 > this.#slots.length) {
      this.#slots = this.#slots.slice(this.#head);
      this.#head = 0;
    }
    return this.nextId - 1;
  }

  /** Id the next pushed entry will get. */
  get nextId(): number {
    return this.#oldestId + this.#slots.length - this.#head;
  }

  /** Id of the oldest retained entry (equals nextId when empty). */
  get oldestId(): number {
    return this.#oldestId;
  }

  get retainedBytes(): number {
    return this.#totalBytes;
  }

  /** True when entries after `cursor` have already been evicted. */
  hasGapAfter(cursor: number): boolean {
    return cursor + 1 < this.#oldestId;
  }

  /** The entry with this id, if still retained. */
  get(id: number): T | undefined {
    if (id < this.#oldestId || id >= this.nextId) return undefined;
    return this.#slots[this.#head + id - this.#oldestId]?.value;
  }

  #evictOldest(): void {
    const oldest = this.#slots[this.#head];
    if (oldest) this.#totalBytes -= oldest.bytes;
    this.#slots[this.#head] = undefined;
    this.#head += 1;
    this.#oldestId += 1;
  }
}
