/**
 * The app page's panel of what decides its deploys (a part of assets.ts's script), from the `rules` of
 * GET /api/apps/<name>/stats (app-rules.ts): every value as text.
 */
export const RULES_JS = `  function bytes(n) { return n >= 1073741824 ? (n / 1073741824).toFixed(1) + " GiB" : n >= 1048576 ? Math.round(n / 1048576) + " MiB" : n + " B"; }
  function span(ms) { return ms >= 3600000 ? (ms / 3600000).toFixed(1) + " h" : ms >= 60000 ? Math.round(ms / 60000) + " min" : Math.round(ms / 1000) + " s"; }
  function list(items) {
    var ul = el("ul", { class: "plain" });
    items.forEach(function (item) { ul.appendChild(el("li", {}, item)); });
    return ul;
  }
  function appRules(dl, rules, state) {
    dl.textContent = "";
    var paused = state && state.paused;
    field(dl, "Now", paused ? "paused: " + paused.reason + " (by " + paused.by + ")"
      : rules.freeze.frozen ? "frozen until " + rules.freeze.frozen.until + ": " + rules.freeze.frozen.reason
      : state && state.running ? "deploying" : "deploys as pushes come");
    if (rules.repoPath) field(dl, "Repository", el("code", { text: rules.repoPath }));
    var refs = [rules.branch ? "branch " + rules.branch : "any branch"];
    if (rules.tags) refs.push("tags " + rules.tags);
    if (rules.deployRefs) refs.push("refs by hand: " + rules.deployRefs.join(", "));
    if (rules.events) refs.push("events: " + rules.events.join(", "));
    field(dl, "Deploys", refs.join(" · "));
    field(dl, "Gate", rules.gate ? el("span", {}, "checks ", rules.gate.checks.map(function (c) { return typeof c === "string" ? c : c.name + " (by " + c.by + ")"; }).join(", "),
      " · waits up to " + span(rules.gate.waitMs) + (rules.gate.bakeMs ? " · bakes " + span(rules.gate.bakeMs) : "")) : "none: deploys without waiting for checks");
    var windows = rules.freeze.windows.map(function (w) { return w.reason + ": " + w.from + " → " + w.to + " (" + w.timeZone + ")"; });
    field(dl, "Freeze windows", windows.length ? list(windows) : "none");
    if (rules.freeze.nextFreeze) field(dl, "Next freeze", rules.freeze.nextFreeze.reason + ": " + new Date(rules.freeze.nextFreeze.start).toLocaleString() + " until " + rules.freeze.nextFreeze.until);
    if (rules.catchUp) field(dl, "Catch-up", "the newest push refused during a pause or freeze deploys when it ends");
    var limits = rules.limits ? [
      rules.limits.memory !== undefined && "memory " + bytes(rules.limits.memory),
      rules.limits.cpu !== undefined && "cpu " + rules.limits.cpu,
      rules.limits.tasks !== undefined && "tasks " + rules.limits.tasks,
      rules.limits.nice !== undefined && "nice " + rules.limits.nice,
      rules.limits.ioNice !== undefined && "io " + rules.limits.ioNice,
      rules.limits.leftovers !== undefined && "leftovers " + rules.limits.leftovers,
    ].filter(Boolean) : [];
    field(dl, "Limits", (limits.length ? limits.join(" · ") : "none") + " · run timeout " + span(rules.runTimeoutMs));
    field(dl, "Paths", rules.paths ? el("span", {}, "deploys a push that touches ", el("code", { text: rules.paths.join(" ") })) : "every push");
    if (rules.skipMarkers) field(dl, "Skip markers", rules.skipMarkers === true ? "[skip deploy] and the like in the head commit skip it" : rules.skipMarkers.join(", "));
    field(dl, "On failure", rules.rollbackOnFailure ? "rolls back" : "stays as it is (no rollback)");
    if (rules.releases) field(dl, "Releases", "keeps " + rules.releases.keep + (rules.releases.path ? " in " + rules.releases.path : ""));
  }

`;
