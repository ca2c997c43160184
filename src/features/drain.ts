/**
 * A stopping server's drain (docs/reliability.md "Shutdown and crashes"): what starts deploys stops, waiting deploys
 * are cancelled, the running ones finish (or, forced, are killed); then the outbound calls in flight get their grace
 * and the ended deploys their retention.
 */
import { retentionDone } from "../deploy/after-done.ts";
import type { Deployer } from "../deploy/deployer.ts";
import type { LazyOutbound, PollingWhenConfigured } from "./optional.ts";
import type { ServerRequests } from "./requests.ts";

/** How long a stopping service waits for commit statuses and notifications still in flight. */
const OUTBOUND_GRACE_MS = 3_000;

/** The parts of a server its drain stops and waits for. */
export interface Drained {
  deployer: Deployer;
  polling: PollingWhenConfigured;
  requests: ServerRequests;
  outbound: LazyOutbound;
  /** Resolves once every deploy the server started has ended. */
  settleDeploys: () => Promise<void>;
}

export async function drain(parts: Drained, force: boolean): Promise<void> {
  const { deployer } = parts;
  parts.polling.stop();
  parts.requests.stop();
  deployer.cancelWaiting("the service is shutting down");
  deployer.endWatches();
  if (force) deployer.processes.stopAll("SIGKILL");
  try {
    await parts.settleDeploys();
  } finally {
    if (force) deployer.processes.resume();
  }
  // Commit statuses and notifications still in flight get a short grace; the rest are recorded as not sent.
  await parts.outbound.settle(force ? 0 : OUTBOUND_GRACE_MS);
  // The retention of the deploys that ended (it runs after their `[done]` lines).
  await retentionDone();
}
