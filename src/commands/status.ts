import { defineCommand } from "citty";
import { resolveApps } from "../config/apps.ts";
import { loadConfig } from "../config/load.ts";
import { short } from "../system/git.ts";
import { shown } from "../system/shown.ts";
import { slotText } from "../queue/slots.ts";
import { readStatus, selectApps, type AppStatus } from "../control/status.ts";
import { controlDir, cwdArg } from "./_cwd.ts";
import { watchingLabel } from "../history/watching.ts";

export const statusCommand = defineCommand({
  meta: {
    name: "status",
    description:
      "Per app: the live commit, the pause, the running deploy, how many wait, and the last deploy's outcome.",
  },
  args: {
    app: { type: "string", description: "Multi-app mode: only this app (default: every app)" },
    json: { type: "boolean", description: "Print the status as JSON (a list, one object per app), for scripts" },
    cwd: cwdArg,
  },
  async run({ args }) {
    const cwd = controlDir(args.cwd);
    const apps = selectApps(resolveApps(loadConfig({ cwd }), cwd), args.app);
    const status = await readStatus(cwd, apps);
    process.stdout.write(
      args.json ? `${JSON.stringify(status, null, 2)}\n` : [slotsLine(status), ...status.map(describe)].join("\n"),
    );
  },
});

/** The service's build slots, one line above the apps: they are shared by all of them. */
function slotsLine(status: AppStatus[]): string {
  const slots = status[0]?.slots;
  return slots ? `slots: ${slotText(slots)}\n` : "";
}

function age(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s ago`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min ago`;
  if (ms < 172_800_000) return `${Math.round(ms / 3_600_000)} h ago`;
  return `${Math.round(ms / 86_400_000)} days ago`;
}

function describePoll(poll: NonNullable<AppStatus["poll"]>): string {
  const every = `every ${Math.round(poll.intervalMs / 1000)} s`;
  const last = poll.last;
  if (!last) return `${every}, no poll recorded yet`;
  const failing = last.failures > 1 ? ` (${last.failures} in a row)` : "";
  return `${every}, last ${last.result} ${age(last.ageMs)}${last.detail ? `: ${last.detail}` : ""}${failing}`;
}

/** Whether it is paused, since when, by whom and why; or when and by whom the last pause was lifted. */
function pausedText({ paused, resumed }: AppStatus): string {
  if (paused) return `yes, since ${paused.since} by ${paused.by}${paused.reason ? ` (${paused.reason})` : ""}`;
  if (!resumed) return "no";
  return `no (resumed ${resumed.at} by ${resumed.by}; paused by ${resumed.pause.by}: ${resumed.pause.reason})`;
}

/** The live commit: its short hash, subject, author and age, and the deploy that made it live. */
function liveText(status: AppStatus): string {
  const { live } = status;
  if (!live) return "none known (no deploy yet, and no commit checked out)";
  const words = live.subject ? ` "${live.subject}"` : "";
  const by = live.author ? ` by ${live.author}` : "";
  const when = live.date ? `, ${age(Math.max(0, Date.now() - Date.parse(live.date)))}` : "";
  const how = live.deployId
    ? ` (deploy ${live.deployId.slice(0, 8)})`
    : live.beforeDeploy
      ? ` (checked out before the first deploy, ${live.beforeDeploy.slice(0, 8)}; none left a commit live yet)`
      : " (found checked out; no deploy on record)";
  const tag = status.liveTag ? ` (tag ${status.liveTag})` : "";
  return `${short(live.sha)}${words}${by}${when}${how}${tag}`;
}

/** What a running deploy waits for, in words: `checks` at its gate, `slot` for a build slot. */
function waitingText(what: string): string {
  return what === "slot" ? "a build slot" : what;
}

/** One app as a few aligned lines. */
function describe(status: AppStatus): string {
  const { running, last } = status;
  const rows = [
    ["live", liveText(status)],
    ...(status.checkedOut !== status.commit ? [["clone", `${short(status.checkedOut)} checked out (not live)`]] : []),
    ["paused", pausedText(status)],
    ...(status.frozen ? [["frozen", `until ${status.frozen.until}: ${status.frozen.reason}`]] : []),
    ...(status.nextFreeze
      ? [["next freeze", `${status.nextFreeze.start} until ${status.nextFreeze.until}: ${status.nextFreeze.reason}`]]
      : []),
    [
      "running",
      running
        ? `${running.id} (${running.trigger ?? "?"}${running.actor ? ` by ${running.actor}` : ""}) since ${running.since}${running.waiting ? `, waiting for ${waitingText(running.waiting)}` : ""}${status.watching ? `, ${watchingLabel(status.watching)}` : ""}`
        : "none",
    ],
    ["waiting", String(status.waiting)],
    ["last", last ? `${last.outcome} ${last.id} ${age(last.ageMs)}` : "none"],
    ...(status.poll ? [["polling", describePoll(status.poll)]] : []),
    ...(status.lastSkipped ? [["last skipped push", `${status.lastSkipped.at}: ${status.lastSkipped.text}`]] : []),
    ...(status.catchUp ? [["catch-up", status.catchUp.text]] : []),
    ...(status.releases ? describeReleases(status.releases) : []),
  ];
  const title = status.app ? `app ${status.app} (${status.repoPath})` : `repo ${status.repoPath}`;
  // Actors, pause reasons, poll details come from outside: shown without the marks that reorder or hide text.
  return `${shown(title)}\n${rows.map(([key, value]) => `  ${(key ? `${key}:` : "").padEnd(Math.max(9, (key ?? "").length + 2))}${shown(value!)}`).join("\n")}\n`;
}

/** The live release, then every kept one (newest first) with its commit and the deploy that built it. */
function describeReleases(view: NonNullable<AppStatus["releases"]>): string[][] {
  const { live } = view;
  const rows = [
    ["release", live ? `${live.id} (live)` : `none live yet in ${view.path}`],
    ["kept", `${view.kept.length} in ${view.path}/releases (keep ${view.keep})`],
  ];
  for (const release of view.kept) {
    const deploy = release.deployId ? `deploy ${release.deployId.slice(0, 8)}` : "not made by a deploy";
    rows.push(["", `${release.live ? "* " : "  "}${release.id}  ${short(release.commit)}  ${deploy}`]);
  }
  return rows;
}
