/**
 * An append-only log of events with waiters, shared by the SDK and RPC parent drivers.
 * Waiting never depends on timing: a predicate is checked against events already seen (from an
 * index) and then against each new one; the timeout only turns a hang into a readable failure.
 */
export interface WaitOptions {
  /** Fail after this long (default 30 s). */
  timeoutMs?: number;
  /** Only consider events at or after this index of the log (default 0: the whole log). */
  from?: number;
}

interface Waiter<T> {
  predicate: (event: T, index: number) => boolean;
  resolve: (event: T) => void;
}

export class EventLog<T extends { type: string }> {
  readonly events: T[] = [];
  private waiters: Waiter<T>[] = [];

  push(event: T): void {
    const index = this.events.length;
    this.events.push(event);
    this.waiters = this.waiters.filter((w) => {
      if (!w.predicate(event, index)) return true;
      w.resolve(event);
      return false;
    });
  }

  /** Number of events of `type` so far. */
  count(type: string): number {
    return this.events.filter((e) => e.type === type).length;
  }

  /** Events of `type` so far. */
  ofType<K extends T["type"]>(type: K): Extract<T, { type: K }>[] {
    return this.events.filter((e) => e.type === type) as Extract<T, { type: K }>[];
  }

  /** The first event (at or after `from`) matching `predicate`, past or future. */
  waitFor(predicate: (event: T, index: number) => boolean, options: WaitOptions = {}): Promise<T> {
    const from = options.from ?? 0;
    for (let i = from; i < this.events.length; i++) {
      const event = this.events[i] as T;
      if (predicate(event, i)) return Promise.resolve(event);
    }
    const timeoutMs = options.timeoutMs ?? 30_000;
    return new Promise((resolve, reject) => {
      const waiter: Waiter<T> = {
        predicate: (event, index) => index >= from && predicate(event, index),
        resolve: (event) => {
          clearTimeout(timer);
          resolve(event);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        const seen = this.events.map((e) => e.type).join(", ");
        reject(new Error(`waitFor: no matching event within ${timeoutMs} ms; seen: ${seen.slice(-2000)}`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** Resolve with the n-th event of `type` (1-based, counted over the whole log), past or future. */
  waitForCount(type: string, n: number, options: Omit<WaitOptions, "from"> = {}): Promise<T> {
    let seen = 0;
    return this.waitFor((event) => event.type === type && ++seen >= n, options);
  }
}
