/** The words of a deploy's record that come from outside (forge ids, actors, commits), redacted like its output. */
import type { CommitInfo, ForgeDelivery } from "../types.ts";
import { cleanActor } from "../system/actor.ts";
import type { Redaction } from "../system/redact.ts";
import type { DeployOptions } from "./types.ts";

/** The forge event and delivery id, redacted like every other text of a deploy, null when absent. */
export function forgeOf(options: DeployOptions, redaction: Redaction): ForgeDelivery {
  return {
    event: options.event ? redaction.text(options.event) : null,
    delivery: options.delivery ? redaction.text(options.delivery) : null,
  };
}

/** The requests a deploy served, their delivery ids redacted like its own (a copy: it is fixed once the deploy starts). */
export function servedOf(options: DeployOptions, redaction: Redaction): DeployOptions["served"] {
  const { served } = options;
  if (!served) return undefined;
  const replaces = served.replaces?.map((each) => ({
    ...each,
    actor: each.actor && redaction.text(cleanActor(each.actor) ?? each.actor),
    delivery: each.delivery && redaction.text(each.delivery),
  }));
  return {
    requests: served.requests,
    deliveries: served.deliveries.map((d) => redaction.text(d)),
    ...(replaces?.length ? { replaces } : {}),
  };
}

/** A commit's words redacted like the deploy's output: a message may quote a secret. */
export function redactedCommit<T extends CommitInfo>(commit: T | null, redaction: Redaction): T | null {
  return commit && { ...commit, subject: redaction.text(commit.subject), author: redaction.text(commit.author) };
}
