/**
 * The dashboard's pictures, drawn as inline SVG by its own script (a part of assets.ts's script): an app's last
 * deploys as bars, a deploy's phases on a time axis. Every value goes in as text or a number, never as markup;
 * colours are classes the stylesheet gives (styles-charts.ts).
 */
export const CHARTS_JS = `  var SVG_NS = "http://www.w3.org/2000/svg";
  // An SVG element; as el(), attributes and text only.
  function svg(tag, attrs) {
    var node = document.createElementNS(SVG_NS, tag);
    for (var key in attrs || {}) {
      if (key === "text") node.textContent = shown(attrs[key]);
      else node.setAttribute(key, attrs[key]);
    }
    for (var i = 2; i < arguments.length; i++) if (arguments[i]) node.appendChild(arguments[i]);
    return node;
  }
  function seconds(ms) { return ms === null || ms === undefined ? "–" : (ms / 1000).toFixed(1) + " s"; }

  // The bars with their axes as text (readable at any width): the duration up the left (0 to the longest), the
  // time along the bottom (the oldest bar's start on the left, the newest's on the right).
  function deployChart(bars) {
    var longest = bars.reduce(function (most, bar) { return Math.max(most, bar.durationMs || 0); }, 0);
    var when = function (bar) { return new Date(bar.startedAt).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }); };
    var axis = el("div", { class: "x-axis" }, el("span", { text: when(bars[bars.length - 1]) }), el("span", { class: "x-name", text: "started →" }), el("span", { text: when(bars[0]) }));
    // As wide as the bars are (a few bars take a part of the width): its ends are the oldest and the newest bar.
    axis.style.width = (100 * bars.length / Math.max(bars.length, 12)).toFixed(2) + "%";
    return el("figure", { class: "barchart" },
      el("div", { class: "y-axis", "aria-hidden": "true" }, el("span", { text: seconds(longest) }), el("span", { class: "y-name", text: "duration" }), el("span", { text: "0 s" })),
      deployBars(bars), axis);
  }

  // The last deploys, oldest on the left: height the duration, colour the outcome, each a link to its deploy;
  // one over twice the median stands out (class "slow", and its title says so).
  function deployBars(bars) {
    var width = 600, height = 120, slot = width / Math.max(bars.length, 12), top = 4;
    var longest = bars.reduce(function (most, bar) { return Math.max(most, bar.durationMs || 0); }, 0) || 1;
    var chart = svg("svg", { class: "bars", viewBox: "0 0 " + width + " " + height, role: "group", "aria-label": "The last " + bars.length + " deploys, oldest first: height is the duration" });
    bars.slice().reverse().forEach(function (bar, index) {
      var tall = Math.max(3, Math.round((bar.durationMs || 0) / longest * (height - top)));
      var what = bar.id.slice(0, 8) + " " + bar.outcome.replace("_", " ") + ", " + seconds(bar.durationMs) + ", " + new Date(bar.startedAt).toLocaleString() + (bar.slow ? " (slow: over twice the median)" : "");
      chart.appendChild(svg("a", { href: root + "deploys/" + encodeURIComponent(bar.id), "aria-label": what, "data-id": bar.id },
        svg("rect", { class: "bar " + bar.outcome + (bar.slow ? " slow" : ""), "data-outcome": bar.outcome, x: String(index * slot + 1), y: String(height - tall), width: String(slot - 2), height: String(tall) },
          svg("title", { text: what }))));
    });
    return chart;
  }

  // A deploy's phases on one time axis, a row each: its name and duration as text (readable at any width, the
  // picture's words too), beside a bar placed by percentages on the row's track.
  function phaseTimeline(phases) {
    var start = phases.length ? Date.parse(phases[0].startedAt) : 0;
    var end = phases.reduce(function (last, phase) { return Math.max(last, Date.parse(phase.startedAt) + phase.ms); }, start);
    var total = Math.max(1, end - start);
    var said = phases.map(function (phase) { return phase.name + " " + seconds(phase.ms); }).join(", ");
    var chart = el("div", { class: "timeline", role: "img", "aria-label": "Phases: " + (said || "none yet") });
    phases.forEach(function (phase) {
      var bar = el("span", { class: "phase" });
      bar.style.left = ((Date.parse(phase.startedAt) - start) / total * 100).toFixed(2) + "%";
      bar.style.width = Math.max(0.5, phase.ms / total * 100).toFixed(2) + "%";
      chart.appendChild(el("div", { class: "row", "data-phase": phase.name },
        el("span", { class: "label", text: phase.name + " " + seconds(phase.ms) }), el("span", { class: "track" }, bar)));
    });
    chart.appendChild(el("div", { class: "row" }, el("span"), el("span", { class: "axis" }, el("span", { text: "0 s" }), el("span", { text: seconds(total) }))));
    return chart;
  }

  // A commit id as a link to the forge's page of it, when the app's forge is known (links from the API), else code.
  function commitLink(links, sha) {
    if (!sha) return el("code", { text: "–" });
    var known = links && /^https?:\\/\\//.test(links.commit) && /^[0-9a-f]{7,64}$/.test(sha);
    return known ? el("a", { href: links.commit.replace("{sha}", sha), rel: "noreferrer", class: "commit-link" }, el("code", { text: short(sha) }))
      : el("code", { text: short(sha) });
  }
  // "a → b", a link to the forge's comparison of the two when it is known.
  function compareLink(links, from, to) {
    var text = short(from) + " → " + short(to);
    var known = links && /^https?:\\/\\//.test(links.compare) && /^[0-9a-f]{7,64}$/.test(from || "") && /^[0-9a-f]{7,64}$/.test(to || "") && from !== to;
    return known ? el("a", { href: links.compare.replace("{from}", from).replace("{to}", to), rel: "noreferrer", class: "compare-link" }, el("code", { text: text }))
      : el("code", { text: text });
  }

`;
