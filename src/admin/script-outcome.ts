/** How a deploy's page says the way it ended, from its record (a part of assets.ts's script). */

/** How every freeze refusal's error begins (deploy/frozen.ts `frozenText`). */
const FROZEN = "frozen until ";

export const OUTCOME_JS = `  // What refused a deploy before it changed anything, and why: its signature, its gate, a freeze; null when none did.
  function refusalOf(result) {
    if (result.verify && result.verify.ok === false) return ["its signature", result.verify.reason || "no good signature"];
    var gate = result.gate;
    if (gate && (gate.outcome === "shut" || gate.outcome === "timeout")) return ["the gate", (gate.outcome === "timeout" ? "timed out" : "shut") + (gate.reason ? ": " + gate.reason : "")];
    if (typeof result.error === "string" && result.error.indexOf(${JSON.stringify(FROZEN)}) === 0) return ["a freeze", result.error];
    return null;
  }
  // The step a failed deploy failed at: what its result says failed (the pull, the run script, the activate
  // script, the health check), else the last phase it reached before a rollback.
  function failedStep(result) {
    var run = result.run || {};
    var activate = (result.release || {}).activate;
    if (result.pull && result.pull.success === false) return "pull";
    if (run.timedOut || (run.exitCode !== null && run.exitCode !== undefined && run.exitCode !== 0)) return "run";
    if (activate && activate.exitCode !== 0) return "activate";
    if (result.healthCheck && result.healthCheck.ok === false) return "health";
    var phases = (result.phases || []).filter(function (phase) { return ["queue", "slot", "rollback", "switch back"].indexOf(phase.name) < 0 && phase.name.indexOf("health after") !== 0; });
    return phases.length ? phases[phases.length - 1].name : "";
  }
  // The outcome panel: its outcome (data-outcome), its tone (the class: ok green, failed red, rolled-back amber,
  // stopped grey) and its words; null while the deploy runs. A rollback is no success.
  function outcomePanel(record) {
    var result = record.result || {};
    var run = result.run || {};
    var health = result.healthCheck && !result.healthCheck.ok ? result.healthCheck.error : "";
    var why = result.error || health || (run.exitCode ? "the run script exited with " + run.exitCode : "");
    var reason = why ? ": " + why : "";
    if (record.status === "cancelled")
      return { outcome: "cancelled", tone: "stopped", text: "Cancelled" + (record.cancel && record.cancel.by ? " by " + record.cancel.by : "") + reason };
    if (record.status === "interrupted") return { outcome: "interrupted", tone: "stopped", text: "Interrupted: the service stopped while it ran" };
    if (record.status === "superseded") return { outcome: "superseded", tone: "stopped", text: "Superseded: " + (record.reason || "a newer request") + "; nothing ran" };
    if (record.status === "refused") {
      var why = refusalOf(result);
      return { outcome: "refused", tone: "stopped", text: why ? "Refused by " + why[0] + ": " + why[1] : "Refused: " + (record.reason || "") };
    }
    if (record.status !== "done") return null;
    var refused = refusalOf(result);
    if (refused) return { outcome: "refused", tone: "stopped", text: "Refused by " + refused[0] + ": " + refused[1] };
    if (result.rolledBack)
      return { outcome: "rolled_back", tone: "rolled-back", text: "Rolled back: " + (result.commit ? commitText(result.commit) : "the commit from before") + " stays live" + reason };
    if (result.ok) return { outcome: "ok", tone: "ok", text: "Succeeded (exit code " + (result.run ? result.run.exitCode : "?") + ")" };
    var step = failedStep(result);
    return { outcome: "failed", tone: "failed", text: "Failed" + (step ? " at " + step : "") + reason };
  }

`;
