/** The dashboard's history page and one deploy's page with its live log (a part of assets.ts's script). */
export const HISTORY_PAGES_JS = `  // query parameters are named, so a reload or a shared link shows the same deploys.
  function deploysPage() {
    var params = new URLSearchParams(location.search);
    var filters = { app: params.get("app") || "", outcome: params.get("outcome") || "", since: params.get("since") || "" };
    var failed = params.get("failed") === "1";
    function query() {
      var q = new URLSearchParams();
      ["app", "outcome", "since"].forEach(function (name) { if (filters[name]) q.set(name, filters[name]); });
      if (failed) q.set("failed", "1");
      return q.toString();
    }
    var refresh = null;
    function changed() {
      var q = query();
      history.replaceState(null, "", q ? "?" + q : location.pathname);
      refresh();
    }
    function option(node, value, text) { node.appendChild(el("option", { value: value, text: text })); }
    function select(name, label, options) {
      var node = el("select", { id: "filter-" + name });
      options.forEach(function (pair) { option(node, pair[0], pair[1]); });
      // A value from the URL that no option offers (since=2h) is shown as it is.
      if (filters[name] && options.every(function (pair) { return pair[0] !== filters[name]; })) option(node, filters[name], filters[name]);
      node.value = filters[name];
      node.addEventListener("change", function () { filters[name] = node.value; changed(); });
      return { node: node, field: el("span", { class: "filter" }, el("label", { for: "filter-" + name, text: label }), " ", node) };
    }
    var app = select("app", "App", [["", "All apps"]]);
    var outcome = select("outcome", "Outcome", [["", "Any outcome"], ["ok", "ok"], ["failed", "failed"], ["rolled_back", "rolled back"], ["cancelled", "cancelled"], ["refused", "refused"], ["superseded", "superseded"], ["running", "running"], ["interrupted", "interrupted"]]);
    var since = select("since", "Since", [["", "Any time"], ["1h", "Last hour"], ["24h", "Last 24 hours"], ["7d", "Last 7 days"], ["30d", "Last 30 days"]]);
    var toggle = el("input", { id: "failed-only", type: "checkbox" });
    toggle.checked = failed;
    var table = el("table", { class: "stack" });
    content.textContent = "";
    content.appendChild(el("p", { class: "filters" }, app.field, " ", outcome.field, " ", since.field, " ",
      el("span", { class: "filter" }, toggle, " ", el("label", { for: "failed-only", text: "Failed only" }))));
    content.appendChild(el("div", { class: "scroll" }, table));
    getJson("apps").then(function (data) {
      data.apps.forEach(function (entry) { if (entry.name !== filters.app) option(app.node, entry.name, entry.name); });
      app.node.value = filters.app;
    }, function () {});
    refresh = every(3000, function () {
      return getJson("deploys?limit=50" + (query() ? "&" + query() : "")).then(function (entries) {
        table.textContent = "";
        table.appendChild(el("thead", {}, el("tr", {}, el("th", { text: "Deploy" }), el("th", { text: "App" }), el("th", { text: "Trigger" }), el("th", { text: "By" }), el("th", { text: "Commit" }), el("th", { text: "Outcome" }), el("th", { text: "Started" }), el("th", { text: "Duration" }), el("th", { "data-act": "deploy", text: "Actions" }))));
        var rows = el("tbody");
        entries.forEach(function (entry) {
          var again = entry.status === "running" ? "" : el("button", { type: "button", "data-act": "deploy", text: "Deploy again", "aria-label": "Deploy again " + entry.id.slice(0, 8), onclick: function () {
            deployAgain(entry, entry.target || entry.commit, function (ack) { say("Deploy " + ack.id.slice(0, 8) + " " + ack.state + "."); refresh(); });
          } });
          var actor = entry.actor ? shown(entry.actor) : "";
          var tried = triedText(entry);
          rows.appendChild(el("tr", {}, el("td", { "data-label": "Deploy" }, deployLink(entry.id)), el("td", { "data-label": "App", text: entry.app || "default" }),
            el("td", { "data-label": "Trigger", text: entry.trigger || "" }),
            el("td", { class: "actor", "data-label": "By", title: actor }, el("span", { class: "clip", text: actor })),
            el("td", { class: "commit", "data-label": "Commit", title: shown(tried), text: tried }),
            el("td", { "data-label": "Outcome" }, badge(outcomeLabel(entry)), entry.reason ? " (" + entry.reason + ")" : "", entry.cancelledBy ? " by " + entry.cancelledBy : "", entry.forced ? " (forced)" : ""),
            el("td", { "data-label": "Started", text: age(entry.startedAt) }), el("td", { "data-label": "Duration", text: entry.durationMs === null ? "" : (entry.durationMs / 1000).toFixed(1) + " s" }),
            el("td", { "data-label": "Actions", "data-act": "deploy" }, again)));
        });
        var filtered = filters.app || filters.outcome || filters.since;
        var empty = filtered ? "No deploys match these filters." : failed ? "No failed deploys." : "No deploys yet.";
        if (entries.length === 0) rows.appendChild(el("tr", {}, el("td", { colspan: "9", text: empty })));
        table.appendChild(rows);
      });
    });
    toggle.addEventListener("change", function () {
      failed = toggle.checked;
      changed();
    });
  }

  // One deploy: its record, and its log followed live while it runs.
  function deployPage() {
    var ref = decodeURIComponent(location.pathname.split("/").pop());
    var info = el("dl");
    var outcome = el("p", { id: "outcome", role: "status" });
    var log = el("pre", { id: "log", tabindex: "0", "aria-label": "Deploy log" });
    var cancel = el("button", { type: "button", "data-act": "deploy", text: "Cancel this deploy", hidden: "" });
    var rollback = el("button", { type: "button", "data-act": "deploy", text: "Roll back to this deploy", hidden: "" });
    var again = el("button", { type: "button", "data-act": "deploy", text: "Deploy again", hidden: "" });
    var record = null;
    var links = null;
    var apps = null;
    var timeline = el("div", { class: "picture", id: "timeline" });
    content.textContent = "";
    content.appendChild(info);
    content.appendChild(el("div", { class: "actions" }, cancel, rollback, again));
    content.appendChild(outcome);
    content.appendChild(el("h2", { text: "Phases" }));
    content.appendChild(timeline);
    content.appendChild(el("h2", { text: "Log" }));
    content.appendChild(log);
    cancel.addEventListener("click", function () {
      cancelRunning(record.id, record.app || "default", function () { say("Cancelled."); load(); });
    });
    function open(ack) { location.href = root + "deploys/" + encodeURIComponent(ack.id); }
    // The question names the commit live now (from the app's state) and the one this deploy left.
    rollback.addEventListener("click", function () {
      var app = record.app || "default";
      var to = (record.result || {}).commit;
      getJson("apps").then(function (data) {
        return data.apps.filter(function (entry) { return entry.name === app; })[0];
      }).catch(function () {}).then(function (state) {
        var from = state && state.live ? named(state.live) : "what is live";
        ask("Roll back " + app + " from " + from + " to " + named(to) + ", the commit deploy " + short(record.id) + " left?", "Roll back", function () {
          deployAct("apps/" + encodeURIComponent(app) + "/rollback", { to: record.id }, open);
        });
      });
    });
    again.addEventListener("click", function () {
      var result = record.result || {};
      deployAgain(record, result.target || result.commit || { sha: (result.pull || {}).after }, open);
    });
    /** The gate's verdict: its outcome, then each required check with its state (and link). */
    function gateText(gate) {
      var span = el("span", { text: gate.outcome + (gate.reason && gate.outcome !== "open" ? ": " + gate.reason : "") });
      (gate.checks || []).forEach(function (check) {
        span.appendChild(el("span", { text: " · " + check.name + " " + check.state }));
        if (check.url && /^https?:/.test(check.url)) span.appendChild(el("a", { href: check.url, text: " ↗", rel: "noreferrer" }));
      });
      return span;
    }
    function show() {
      var app = (apps || []).filter(function (entry) { return entry.name === (record.app || "default"); })[0];
      links = app ? app.links : null;
      var result = record.result || {};
      var pull = result.pull || {};
      info.textContent = "";
      field(info, "Deploy", el("code", { text: record.id }));
      field(info, "App", record.app || "default");
      field(info, "Trigger", record.trigger || "");
      if (record.actor) field(info, "By", record.actor);
      if (record.ref) field(info, "Ref", el("code", { text: record.ref }));
      if (result.target && result.target.tag) field(info, "Tag", result.target.tag);
      if (record.forced) field(info, "Forced", "yes: it ran while deploys were paused");
      field(info, "Outcome", badge(outcomeLabel({ status: record.status, ok: result.ok, rolledBack: result.rolledBack })));
      field(info, "Started", record.startedAt ? new Date(record.startedAt).toLocaleString() + " (" + age(record.startedAt) + ")" : "");
      if (record.durationMs !== undefined && record.durationMs !== null) field(info, "Duration", (record.durationMs / 1000).toFixed(1) + " s");
      var before = result.previousCommit ? result.previousCommit.sha : pull.before;
      var tried = result.target ? result.target.sha : pull.after;
      if (before || tried) field(info, "Commits", compareLink(links, before, tried));
      if (result.target) field(info, "Tried commit", linkedCommit(result.target));
      if (result.commit) field(info, "Live commit", linkedCommit(result.commit));
      if (result.previousCommit) field(info, "Previous commit", linkedCommit(result.previousCommit));
      if (result.gate) field(info, "Gate", gateText(result.gate));
      if (record.status === "running" && record.waiting) field(info, "Waiting", "for " + record.waiting);
      if (record.cancel) field(info, "Cancelled", (record.cancel.by ? "by " + record.cancel.by + ", " : "") + new Date(record.cancel.at).toLocaleString());
      if (result.error) field(info, "Error", result.error);
      // Each notification's outcome, a failure with its reason ("email to ops@example.com: failed: 535 …").
      var notified = (record.outbound || []).filter(function (o) { return o.kind === "notify"; });
      if (notified.length) field(info, "Notifications", el.apply(null, ["ul", { class: "notifications" }].concat(notified.map(function (o) {
        return el("li", { text: o.target + ": " + (o.ok ? "sent" : "failed: " + o.detail) + " (" + o.what + ")" });
      }))));
      // The phases that ended: the record's while it runs, the result's once it ended.
      var phases = result.phases || record.phases || [];
      timeline.textContent = "";
      timeline.appendChild(phases.length ? phaseTimeline(phases) : el("p", { text: record.status === "running" ? "No phase has ended yet." : "No phases recorded." }));
      cancel.hidden = record.status !== "running";
      rollback.hidden = !(record.status === "done" && result.ok === true && !result.rolledBack);
      again.hidden = record.status === "running" || !pull.after;
    }
    // A commit in words, its id a link to the forge's page when the app's forge is known.
    function linkedCommit(commit) {
      return el("span", {}, commitLink(links, commit.sha), " " + commit.subject + (commit.author ? " (" + commit.author + ")" : ""));
    }
    function load() {
      return getJson("deploys/" + encodeURIComponent(ref)).then(function (data) { record = data; show(); return data; });
    }
    // The outcome panel, once the deploy has ended: said from its record (a rollback is no success).
    function finish() {
      var panel = outcomePanel(record);
      if (!panel) return;
      outcome.className = "done " + panel.tone;
      outcome.setAttribute("data-outcome", panel.outcome);
      outcome.textContent = panel.text;
    }
    // The log so far, then the rest as it is written; the stream ends when the deploy does.
    function follow() {
      return api("deploys/" + encodeURIComponent(ref) + "/log?follow=1").then(function (res) {
        if (!res.ok || !res.body) return res.text().then(function () { throw new Error("the log cannot be read (HTTP " + res.status + ")"); });
        var reader = res.body.getReader();
        var decoder = new TextDecoder();
        var text = "";
        log.textContent = "";
        function read() {
          return reader.read().then(function (chunk) {
            if (chunk.done) return text;
            var part = decoder.decode(chunk.value, { stream: true });
            text += part;
            var atEnd = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
            log.appendChild(document.createTextNode(part));
            if (atEnd) log.scrollTop = log.scrollHeight;
            return read();
          });
        }
        return read();
      });
    }
    // While it runs, the record is read again: its phase timeline grows as phases end.
    every(2000, function () { return record && record.status === "running" ? load() : Promise.resolve(); });
    // The app's forge, for links to its commits (none when the token does not see the app, or it has no forge).
    // Kept whole: the app is found once the record names it, whichever of the two answers comes first.
    getJson("apps").then(function (data) {
      apps = data.apps;
      if (record) show();
    }, function () {});
    var tries = 0;
    function start() {
      load().then(function () {
        return follow().then(function (text) {
          return load().then(function (data) { finish(); return data; });
        });
      }).then(function (data) {
        // A stream cut short while the deploy runs is picked up again.
        if (data.status === "running" && tries++ < 100) setTimeout(start, 1000);
      }, function (error) {
        if (error.message === "logged out") return;
        fail(error.message);
        if (tries++ < 100) setTimeout(start, 2000);
      });
    }
    start();
  }

`;
