// The requests one server has in flight, from the uWS callback that receives each until its reply is
// written or its client has gone, and whether the server is draining (shutting down): what
// stopAccepting() and drain() act on.

/** Per-request state the uWS callbacks share. */
export interface Pending {
  aborted: boolean;
  done: boolean;
  onAbort: (() => void) | null;
}

export class Traffic {
  /** Requests being handled right now. */
  inFlight = 0;
  /** Set once the server stops accepting: every reply from then on closes its connection. */
  draining = false;
  readonly #idleWaiters: (() => void)[] = [];

  /** A request ended (answered, or its client gone). */
  finish(): void {
    this.inFlight--;
    if (this.inFlight === 0) for (const w of this.#idleWaiters.splice(0)) w();
  }

  /** Resolves when no request is in flight, or after `timeoutMs`. Returns the number still in flight. */
  drain(timeoutMs: number): Promise<number> {
    if (this.inFlight === 0) return Promise.resolve(0);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.inFlight), timeoutMs);
      this.#idleWaiters.push(() => { clearTimeout(timer); resolve(0); });
    });
  }
}
