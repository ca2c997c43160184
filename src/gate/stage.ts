/**
 * The gate stage (docs/configuration.md "gate"): before anything live moves, the commit to deploy is learnt by a
 * fetch, and the deploy waits until the forge's statuses and check runs named in `gate.checks` are success on it
 * (then for `bakeMs`). It shuts on a failed check, on a forge that refuses (401, 403, 404), and when `waitMs`
 * passes; it never opens on an error. `service cancel` ends the wait.
 */
import { statusTarget, type StatusTarget } from "../config/forge.ts";
import type { GateSettings } from "../config/gate.ts";
import { captures } from "../steps/capture.ts";
import type { Asked, DeployContext } from "../steps/context.ts";
import { fetchBranchTip } from "../steps/pull.ts";
import { inspectRepo, originUrl, short } from "../system/git.ts";
import type { GateResult, Served } from "../types.ts";
import { gateVerdict, shutText, successText, waitingText } from "./checks.ts";
import { readChecks } from "./forges.ts";
import type { GateEntry, GateVerdict } from "./types.ts";

/** The forge is asked again after 5 s, doubling to 60 s. */
const FIRST_DELAY_MS = 5_000;
const MAX_DELAY_MS = 60_000;
/** A waiting line is said when it changes, and not more often than this. */
const SAY_EVERY_MS = 10_000;
/** One read of the forge (every page of it) may take this long. */
const READ_TIMEOUT_MS = 30_000;

/** What the gate stage gives the pipeline: the verdict, and the commit to move to when it opened. */
export interface Gated {
  result: GateResult;
  /** Set when the gate opened: the pull (or the release) moves exactly to it. */
  commit?: string;
}

/** The gate's entries as the verdict reads them. */
export function gateEntries(gate: GateSettings): GateEntry[] {
  return gate.checks.map((check) => (typeof check === "string" ? { name: check } : check));
}

/** Waits at the gate; never throws (whatever goes wrong shuts it, with the reason). */
export async function gateStage(
  ctx: DeployContext,
  gate: GateSettings,
  asked: Asked & { served?: Served },
): Promise<Gated> {
  const { run } = ctx;
  const commit = await commitToGate(ctx, asked);
  if ("error" in commit) return shut(ctx, null, [], "shut", `the commit to deploy cannot be learnt: ${commit.error}`);
  const origin = await originUrl(ctx.config.repoPath, ctx.env);
  const target = ctx.config.status
    ? statusTarget(ctx.config.status, origin, ctx.app, ctx.cwd, ctx.processEnv)
    : { problem: "gate: set status (provider, token): the gate reads the forge it names" };
  if ("problem" in target) return shut(ctx, commit.sha, [], "shut", target.problem);
  run.step(
    "gate",
    `checking ${describeEntries(gate)} on ${short(commit.sha)} (${target.provider}, up to ${minutes(gate.waitMs)})`,
  );
  run.waiting?.("checks");
  try {
    return await wait(ctx, gate, target, commit.sha, asked);
  } finally {
    run.waiting?.(undefined);
  }
}

/**
 * The commit the deploy will move to: a ref's commit as resolved, else the remote branch's tip as a fetch finds it
 * (the working tree and HEAD untouched); a clone without a remote deploys what it has checked out.
 */
async function commitToGate(ctx: DeployContext, asked: Asked): Promise<{ sha: string } | { error: string }> {
  if (asked.target) return { sha: asked.target.commit };
  const { config, env } = ctx;
  const repo = await inspectRepo(config.repoPath, env).catch(() => undefined);
  if (!repo?.workTree) return { error: `repoPath ${config.repoPath} is not a git repository` };
  if (!repo.hasRemote) return repo.head ? { sha: repo.head } : { error: "the clone has no commit" };
  const fetched = await fetchBranchTip(ctx, ctx.run.output("gate", captures()), "gate");
  return "error" in fetched ? fetched : { sha: fetched.tip };
}

async function wait(
  ctx: DeployContext,
  gate: GateSettings,
  target: StatusTarget,
  first: string,
  asked: Asked & { served?: Served },
): Promise<Gated> {
  const { run } = ctx;
  const entries = gateEntries(gate);
  let sha = first;
  let deadline = Date.now() + gate.waitMs;
  /** With `queuePolicy: latest`, the requests this deploy serves: one more is a newer push that joined the wait. */
  let requests = asked.served?.requests ?? 0;
  const sleeper = new Sleeper(ctx);
  let delay = FIRST_DELAY_MS;
  let said = { text: "", at: 0 };
  let lastError: string | undefined;
  let verdict: GateVerdict | undefined;
  /** When the checks were first seen all success (this server's clock): the bake ends at most bakeMs after it. */
  let openSince: number | undefined;
  const say = (text: string) => {
    const now = Date.now();
    if (text === said.text || now - said.at < SAY_EVERY_MS) return;
    said = { text, at: now };
    run.step("gate", text);
  };
  for (;;) {
    if (ctx.cancelled()) return shut(ctx, sha, verdict?.checks ?? [], "cancelled", `cancelled ${ctx.cancelled()}`);
    if (asked.served && asked.served.requests !== requests && !asked.target) {
      // A newer push joined the wait: the gate waits for the branch's tip now, from the start (bake included).
      requests = asked.served.requests;
      const newer = await commitToGate(ctx, asked);
      if ("sha" in newer && newer.sha !== sha) {
        sha = newer.sha;
        deadline = Date.now() + gate.waitMs;
        openSince = undefined;
        verdict = undefined;
        delay = FIRST_DELAY_MS;
        said = { text: "", at: 0 };
        run.step("gate", `a newer push joined: checking ${short(sha)} instead`);
      }
    }
    const read = await readChecks(target, sha, {
      timeoutMs: Math.max(1_000, Math.min(READ_TIMEOUT_MS, deadline - Date.now())),
      signal: sleeper.signal,
    });
    if (ctx.cancelled()) return shut(ctx, sha, verdict?.checks ?? [], "cancelled", `cancelled ${ctx.cancelled()}`);
    let until = deadline;
    if (!read.ok) {
      if (read.fatal) return shut(ctx, sha, verdict?.checks ?? [], "shut", read.error);
      lastError = read.error;
      say(`the forge cannot be read: ${read.error}; asking again`);
    } else {
      lastError = undefined;
      verdict = gateVerdict(entries, read.checks, target.context);
      if (verdict.state === "shut")
        return shut(ctx, sha, verdict.checks, "shut", `${shutText(verdict)} on ${short(sha)}`);
      if (verdict.state === "open") {
        const now = Date.now();
        openSince ??= now;
        const turned = verdict.lastSuccessAt ? Date.parse(verdict.lastSuccessAt) : Number.NaN;
        const bakeEnd = Math.min(openSince, Number.isNaN(turned) ? openSince : turned) + gate.bakeMs;
        if (now >= bakeEnd || gate.bakeMs === 0) {
          const baked = gate.bakeMs > 0 ? `; baked ${Math.round(gate.bakeMs / 1000)} s` : "";
          run.step("gate", `${successText(verdict)} on ${short(sha)}${baked}`);
          return {
            result: {
              ok: true,
              outcome: "open",
              commit: sha,
              checks: verdict.checks,
              ...(gate.bakeMs > 0 ? { bakedMs: gate.bakeMs } : {}),
            },
            commit: sha,
          };
        }
        say(`${successText(verdict)} on ${short(sha)}; baking ${Math.ceil((bakeEnd - now) / 1000)} s more`);
        // The bake is a known time, not a wait for checks: waitMs does not cut it short.
        until = bakeEnd;
      } else {
        openSince = undefined;
        say(waitingText(verdict));
      }
    }
    const now = Date.now();
    if (verdict?.state !== "open" && now >= deadline) {
      const why = lastError
        ? `the forge could not be read within ${minutes(gate.waitMs)}: ${lastError}`
        : `waited ${minutes(gate.waitMs)}: ${verdict ? waitingText(verdict) : "no answer"}`;
      return shut(ctx, sha, verdict?.checks ?? [], "timeout", why);
    }
    await sleeper.sleep(Math.max(0, Math.min(delay, until - now)));
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}

/** A gate that did not open: said, and nothing runs. */
function shut(
  ctx: DeployContext,
  commit: string | null,
  checks: GateResult["checks"],
  outcome: "shut" | "timeout" | "cancelled",
  reason: string,
): Gated {
  const word = outcome === "timeout" ? "timed out" : outcome;
  if (outcome !== "cancelled") ctx.run.step("gate", `${word}: ${reason}; nothing runs`);
  return { result: { ok: false, outcome, commit, checks, reason } };
}

/** A sleep that a cancel ends at once, and the signal that aborts a read of the forge in flight then. */
class Sleeper {
  private readonly aborter = new AbortController();
  private wake: (() => void) | undefined;
  readonly signal = this.aborter.signal;

  constructor(ctx: DeployContext) {
    ctx.onCancel(() => {
      this.aborter.abort();
      this.wake?.();
    });
  }

  sleep(ms: number): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

function describeEntries(gate: GateSettings): string {
  return gateEntries(gate)
    .map((entry) => (entry.by ? `${entry.name} (by ${entry.by})` : entry.name))
    .join(", ");
}

function minutes(ms: number): string {
  return ms >= 120_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}
