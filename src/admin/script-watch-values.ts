/**
 * The app page's recent watch values (a part of assets.ts's script), from the `watches` of
 * GET /api/apps/<name>/stats (history/watch-values.ts): one line a watched deploy, newest first, every value as text.
 */
export const WATCH_VALUES_JS = `  function watchValues(ul, watches) {
    ul.textContent = "";
    if (!watches.length) { ul.appendChild(el("li", { text: "No watched deploy yet." })); return; }
    watches.forEach(function (item) {
      var w = item.watch;
      var end = w.breach ? "breach" : w.cancelled ? "ended by a cancel" : w.interrupted ? "not finished" : "passed";
      var value = w.value === null ? (w.reason ? "no value: " + w.reason : "no value") : w.value + (w.threshold === null ? "" : " (bound " + w.threshold + ")");
      ul.appendChild(el("li", {}, el("a", { href: root + "deploys/" + encodeURIComponent(item.id), text: age(item.startedAt) }), " ", badge(item.outcome),
        " " + shown(end + ": " + value + ", " + w.checks + " checks over " + Math.round(w.at / 1000) + " s · "), el("code", { text: shown(w.query || w.command || "") })));
    });
  }

`;
