/**
 * The DORA figures on `/metrics` (docs/admin.md "Metrics"): four gauges per app over the last 30 days, computed
 * from the records when `/metrics` is read (history/dora-read.ts) and kept for a few seconds, so a scrape every
 * second reads the history once in CACHE_MS.
 */
import { readDora } from "../history/dora-read.ts";

/** The window of the gauges, in days. */
export const GAUGE_DAYS = 30;
/** How long one reading of the history answers. */
export const CACHE_MS = 5000;

const FAMILIES = [
  ["service_dora_deploys_per_day", "Ok counted deploys per day over the last 30 days (DORA deploy frequency)."],
  ["service_dora_lead_time_seconds", "Median lead time of the changes deployed in the last 30 days, in seconds."],
  ["service_dora_change_failure_ratio", "Failed counted deploys / counted deploys over the last 30 days."],
  ["service_dora_time_to_restore_seconds", "Median time to restore after a failed deploy in the last 30 days."],
] as const;

/** One listener's gauges and their last reading. */
export class DoraGauges {
  private cached: { at: number; key: string; text: string } | undefined;

  constructor(private readonly cwd: string) {}

  /** The four families for `apps`, from a reading at most CACHE_MS old. */
  render(apps: string[], now = Date.now()): string {
    const key = apps.join("\0");
    const { cached } = this;
    if (cached && cached.key === key && now - cached.at < CACHE_MS && now >= cached.at) return cached.text;
    const text = this.read(apps, now);
    this.cached = { at: now, key, text };
    return text;
  }

  private read(apps: string[], now: number): string {
    const { figures } = readDora(this.cwd, apps, GAUGE_DAYS, now);
    const out: string[] = [];
    FAMILIES.forEach(([name, help], i) => {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
      for (const f of figures) {
        const figure = [f.deployFrequency, f.leadTime, f.changeFailureRate, f.timeToRestore][i]!;
        // No value (no deploy with a lead, no failure restored): no sample, rather than a made-up 0.
        if (figure.value !== null) out.push(`${name}{app="${escapeLabel(f.app)}"} ${figure.value}`);
      }
    });
    return `${out.join("\n")}\n`;
  }
}

const escapeLabel = (value: string) => value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
