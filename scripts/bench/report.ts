/** The figures of a bench run, each against its target, printed as an aligned table and then as Markdown. */

type Verdict = "PASS" | "MISS" | "n/a" | "info";

interface Row {
  figure: string;
  target: string;
  ours: string;
  peer: string;
  ratio: string;
  result: Verdict;
}

export class Report {
  readonly rows: Row[] = [];
  readonly notes: string[] = [];

  /** A figure; `pass` undefined makes it information only. */
  row(figure: string, target: string, ours: string, peer: string, ratio: string, pass: boolean | undefined): void {
    this.rows.push({ figure, target, ours, peer, ratio, result: pass === undefined ? "info" : pass ? "PASS" : "MISS" });
  }

  /** A figure that could not be measured here, and why. */
  na(figure: string, target: string, why: string): void {
    this.rows.push({ figure, target, ours: "n/a", peer: "n/a", ratio: "n/a", result: "n/a" });
    this.notes.push(`${figure}: ${why}`);
  }

  note(text: string): void {
    this.notes.push(text);
  }

  /** A case that could not run: a row saying so (the run then exits non-zero). */
  failed(name: string, message: string): void {
    this.rows.push({ figure: name, target: "", ours: "error", peer: "", ratio: "", result: "MISS" });
    this.notes.push(`${name}: failed: ${message.split("\n")[0]}`);
  }

  /** A MISS is a result, not a failure; a case that could not run is. */
  get anyFailed(): boolean {
    return this.rows.some((r) => r.ours === "error");
  }

  print(header: string[]): void {
    const { rows, notes } = this;
    const columns = ["figure", "target", "ours", "peer", "ratio", "result"] as const;
    const titles = {
      figure: "figure",
      target: "target",
      ours: "service",
      peer: "peer (webhook / bare sh)",
      ratio: "ratio",
      result: "result",
    };
    const widths = columns.map((c) => Math.max(titles[c].length, ...rows.map((r) => r[c].length)));
    const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ");
    const out: string[] = [
      "",
      ...header,
      "",
      line(columns.map((c) => titles[c])),
      line(widths.map((w) => "-".repeat(w))),
    ];
    for (const r of rows) out.push(line(columns.map((c) => r[c])));
    if (notes.length) out.push("", ...notes.map((n) => `- ${n}`));
    const escapeCell = (cell: string) => cell.replaceAll("|", "\\|");
    out.push("", "Markdown:", "", ...header.map((h) => `${h}  `), "");
    out.push(`| ${columns.map((c) => titles[c]).join(" | ")} |`, `|${columns.map(() => "---").join("|")}|`);
    for (const r of rows) out.push(`| ${columns.map((c) => escapeCell(r[c] || "")).join(" | ")} |`);
    if (notes.length) out.push("", ...notes.map((n) => `- ${escapeCell(n)}`));
    console.log(out.join("\n"));
  }
}
