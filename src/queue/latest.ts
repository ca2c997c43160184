import type { DeployEvent, DeployResult, DeploySink, Served } from "../types.ts";

/** A record lists at most this many delivery ids; `requests` still counts every request served. */
const MAX_SERVED_DELIVERIES = 100;
/** A delivery id longer than this is not one a forge sends: it is cut. */
const MAX_DELIVERY_LENGTH = 200;

interface Waiting {
  key: string;
  id: string;
  position: number;
  result: Promise<DeployResult>;
  served: Served;
  joiners: DeploySink[];
}

/**
 * `queuePolicy: latest` (docs/deploy-control.md "Queue"): a request that arrives while a deploy of the same repository waits in
 * this server joins that deploy instead of queueing one more: the waiting deploy pulls the newest commit anyway.
 * Every joined client gets the joined deploy's position, then its whole output and its `[done]` line. A deploy
 * can be joined only while it waits: once it started, it may have pulled before the newer push; a deploy waiting at
 * its gate has pulled nothing yet, and is joined again (the gate then waits for the newer commit: gate/stage.ts).
 */
export class LatestDeploys {
  private readonly waiting = new Map<string, Waiting>();
  private readonly byId = new Map<string, Waiting>();

  /** Joins the deploy waiting for `key`, if there is one: `sink` hears its position now and every event after. */
  join(
    key: string,
    delivery: string | null | undefined,
    sink: DeploySink,
    actor: string | null = null,
  ): { id: string; position: number; result: Promise<DeployResult> } | undefined {
    const waiting = this.waiting.get(key);
    if (!waiting) return undefined;
    waiting.joiners.push(sink);
    addServed(waiting.served, delivery);
    // The record lists who it replaced: each request it serves is someone's, never lost in a count.
    const replaces = (waiting.served.replaces ??= []);
    if (replaces.length < MAX_SERVED_DELIVERIES)
      replaces.push({
        actor: actor?.slice(0, MAX_DELIVERY_LENGTH) ?? null,
        delivery: delivery?.slice(0, MAX_DELIVERY_LENGTH) ?? null,
        at: new Date().toISOString(),
      });
    deliver(sink, { type: "queued", position: waiting.position });
    return waiting;
  }

  /** The record of requests a new deploy serves (its own first), to give to the deploy. */
  served(delivery: string | null | undefined): Served {
    const served: Served = { requests: 0, deliveries: [] };
    addServed(served, delivery);
    return served;
  }

  /** The events of deploy `id`, for the clients that joined it; call it from the deploy's own sink. */
  forward(id: string, event: DeployEvent): void {
    const waiting = this.byId.get(id);
    if (!waiting) return;
    for (const sink of waiting.joiners) deliver(sink, event);
    if (event.type === "waiting" && event.for !== null && !this.waiting.has(waiting.key))
      this.waiting.set(waiting.key, waiting);
    else if (event.type === "start" || event.type === "done" || event.type === "waiting") this.unjoinable(waiting);
    if (event.type === "done") this.byId.delete(id);
  }

  /**
   * Deploy `id` for `key` was queued at `position`: requests for `key` join it while it waits in the queue (a
   * position above 0) or at its gate.
   */
  offer(key: string, deploy: { id: string; position: number; result: Promise<DeployResult>; served: Served }): void {
    const waiting: Waiting = { key, ...deploy, joiners: [] };
    if (deploy.position > 0) this.waiting.set(key, waiting);
    this.byId.set(deploy.id, waiting);
    // A deploy that ends without a `done` event (an internal error) must not stay joinable, nor be remembered.
    void deploy.result
      .catch(() => {})
      .finally(() => {
        this.unjoinable(waiting);
        this.byId.delete(deploy.id);
      });
  }

  private unjoinable(waiting: Waiting): void {
    for (const [key, each] of this.waiting) if (each === waiting) this.waiting.delete(key);
  }
}

function addServed(served: Served, delivery: string | null | undefined): void {
  served.requests++;
  if (delivery && served.deliveries.length < MAX_SERVED_DELIVERIES)
    served.deliveries.push(delivery.slice(0, MAX_DELIVERY_LENGTH));
}

function deliver(sink: DeploySink, event: DeployEvent): void {
  try {
    sink(event);
  } catch {
    // A client gone never touches the deploy nor the other clients.
  }
}
