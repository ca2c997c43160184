import { defineCommand } from "citty";
import { resolveApps } from "../config/apps.ts";
import { loadConfig } from "../config/load.ts";
import { selectApps } from "../control/status.ts";
import { DORA_DAYS, type DoraFigure, type DoraFigures } from "../history/dora.ts";
import { readDora } from "../history/dora-read.ts";
import { shown } from "../system/shown.ts";
import { controlDir, cwdArg } from "./_cwd.ts";

export const statsCommand = defineCommand({
  meta: {
    name: "stats",
    description:
      "Per app: the four DORA figures (deploy frequency, lead time, change failure rate, time to restore) over the " +
      "last days, each with its band after DORA 2024 and the deploys it rests on.",
  },
  args: {
    app: { type: "string", description: "Multi-app mode: only this app (default: every app)" },
    days: { type: "string", valueHint: "7|30|90", description: "The window, in days (default 30)" },
    json: { type: "boolean", description: "Print the figures as JSON (a list, one object per app), for scripts" },
    cwd: cwdArg,
  },
  run({ args }) {
    const days = daysOf(args.days);
    const cwd = controlDir(args.cwd);
    const apps = selectApps(resolveApps(loadConfig({ cwd }), cwd), args.app).map((app) => app.name ?? "default");
    const { figures, partial } = readDora(cwd, apps, days);
    if (args.json) {
      process.stdout.write(`${JSON.stringify(partial ? figures.map((f) => ({ ...f, partial })) : figures, null, 2)}\n`);
      return;
    }
    const note = partial ? "(more deploys than are read at once: the newest only)\n" : "";
    process.stdout.write(`${note}${figures.map(describe).join("\n")}`);
  },
});

/** `--days`: 7, 30 or 90. */
function daysOf(text: string | undefined): number {
  if (text === undefined) return 30;
  const days = Number(text);
  if (!(DORA_DAYS as readonly number[]).includes(days))
    throw new Error(`--days ${shown(text.slice(0, 20))}: expected 7, 30 or 90`);
  return days;
}

/** A duration in seconds as a person reads it. */
export function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}

function frequency(perDay: number): string {
  if (perDay >= 1) return `${perDay.toFixed(1)} a day`;
  if (perDay * 7 >= 1) return `${(perDay * 7).toFixed(1)} a week`;
  return `${(perDay * 30).toFixed(1)} a month`;
}

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

function row(name: string, figure: DoraFigure, value: string, more = ""): string {
  const shownValue = figure.value === null ? "-" : value;
  return `  ${name.padEnd(20)} ${shownValue.padEnd(14)} ${figure.band.padEnd(16)} (${plural(figure.deploys, "deploy")}${more})`;
}

function describe(f: DoraFigures): string {
  const { leadTime: lead, timeToRestore: restore, changeFailureRate: rate } = f;
  return `${[
    `app ${f.app}, last ${f.days} days: ${plural(f.counted, "deploy")} counted, ${f.failed} failed`,
    row("deploy frequency", f.deployFrequency, frequency(f.deployFrequency.value ?? 0)),
    row("lead time", lead, duration(lead.value ?? 0), lead.withoutLead ? `; ${lead.withoutLead} without lead` : ""),
    row("change failure rate", rate, `${((rate.value ?? 0) * 100).toFixed(1)} %`),
    row(
      "time to restore",
      restore,
      duration(restore.value ?? 0),
      restore.unrestored ? `; ${restore.unrestored} not restored yet` : "",
    ),
  ].join("\n")}\n`;
}
