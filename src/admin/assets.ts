/**
 * The dashboard's one script, embedded so the binary serves it itself and a page needs no other host. Plain
 * browser JavaScript: no build step, no framework (see docs/admin.md "The admin listener"). Its stylesheet: styles.ts.
 */
export const DASHBOARD_JS = `"use strict";
(function () {
  var body = document.body;
  var root = body.getAttribute("data-root") || "./";
  var page = body.getAttribute("data-page");
  var content = document.getElementById("content");
  var notice = document.getElementById("notice");
  var problem = document.getElementById("problem");

  // Every value goes in as a text node: names, commit messages and log text never become markup.
  function el(tag, attrs) {
    var node = document.createElement(tag);
    for (var key in attrs || {}) {
      if (key === "text") node.textContent = attrs[key];
      else if (key === "onclick") node.addEventListener("click", attrs[key]);
      else node.setAttribute(key, attrs[key]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  function say(text) { problem.textContent = ""; notice.textContent = text; }
  function fail(text) { notice.textContent = ""; problem.textContent = text; }

  function api(path, options) {
    return fetch(root + "api/" + path, Object.assign({ credentials: "same-origin", cache: "no-store" }, options || {})).then(function (res) {
      if (res.status === 401) { location.reload(); throw new Error("logged out"); }
      return res;
    });
  }
  function getJson(path) {
    return api(path).then(function (res) {
      return res.json().then(function (data) {
        if (!res.ok) throw new Error(data.message || data.error || "HTTP " + res.status);
        return data;
      });
    });
  }
  function post(path, data) {
    return api(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(data || {}) }).then(function (res) {
      return res.json().then(function (answer) {
        if (!res.ok) {
          var error = new Error(answer.message || answer.error || "HTTP " + res.status);
          error.code = answer.error;
          error.paused = answer.paused;
          throw error;
        }
        return answer;
      });
    });
  }
  function act(path, data, done) {
    return post(path, data).then(done, function (error) { fail(error.message); });
  }
  // A deploy or a rollback while paused is refused (409 "paused"): asked again, it is sent with force.
  function deployAct(path, data, done) {
    return post(path, data).then(done, function (error) {
      var paused = error.code === "paused" && error.paused;
      var question = paused && "Deploys are paused: " + paused.reason + " (by " + paused.by + ", since " + new Date(paused.since).toLocaleString() + "). Deploy anyway?";
      if (!paused || !window.confirm(question)) return fail(error.message);
      return act(path, Object.assign({}, data, { force: true }), done);
    });
  }

  function age(iso) {
    var seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
    if (seconds < 60) return seconds + " s ago";
    if (seconds < 3600) return Math.round(seconds / 60) + " min ago";
    if (seconds < 86400) return Math.round(seconds / 3600) + " h ago";
    return Math.round(seconds / 86400) + " d ago";
  }
  function short(commit) { return commit ? String(commit).slice(0, 8) : "–"; }
  function deployLink(id, text) { return el("a", { href: root + "deploys/" + encodeURIComponent(id), text: text || id.slice(0, 8) }); }
  function outcomeLabel(entry) {
    if (entry.status === "running") return "running";
    if (entry.status === "cancelled") return "cancelled";
    if (entry.status !== "done") return entry.status;
    if (entry.rolledBack) return "rolled_back";
    return entry.ok ? "ok" : "failed";
  }
  function badge(outcome) { return el("span", { class: "badge " + outcome, text: outcome.replace("_", " ") }); }
  // A commit in words: its short hash, subject and author (all text).
  function commitText(commit) {
    if (!commit) return "–";
    return short(commit.sha) + " " + commit.subject + (commit.author ? " (" + commit.author + ")" : "");
  }
  function deployAgain(entry, done) {
    deployAct("apps/" + encodeURIComponent(entry.app || "default") + "/deploy", { ref: entry.id }, done);
  }
  function field(dl, name, value) { dl.appendChild(el("dt", { text: name })); dl.appendChild(el("dd", {}, value)); }

  // Polling keeps the pages current: bounded (one request at a time), and paused while the tab is hidden.
  function every(ms, refresh) {
    var busy = false;
    function tick() {
      if (busy || document.hidden) return;
      busy = true;
      refresh().catch(function (error) { if (error.message !== "logged out") fail(error.message); }).then(function () { busy = false; });
    }
    tick();
    setInterval(tick, ms);
    return tick;
  }

  // The apps: each app's card is built once, so a reason being typed survives the refreshes.
  function appsPage() {
    var cards = {};
    content.textContent = "";
    var list = el("div", { class: "apps" });
    content.appendChild(list);
    var refresh = every(2000, function () {
      return getJson("apps").then(function (data) {
        data.apps.forEach(function (app) {
          var card = cards[app.name] || (cards[app.name] = appCard(app.name, list, function () { refresh(); }));
          card.update(app);
        });
      });
    });
  }
  function appCard(name, list, refresh) {
    var path = "apps/" + encodeURIComponent(name) + "/";
    var id = "app-" + list.children.length;
    var info = el("dl");
    var running = null;
    var ref = el("input", { id: id + "-ref", type: "text", maxlength: "250", placeholder: "empty: pull; or a tag, branch, commit" });
    var deploy = el("button", { type: "button", text: "Deploy now", onclick: function () {
      var wanted = ref.value.trim();
      deployAct(path + "deploy", wanted ? { ref: wanted } : {}, function (ack) {
        ref.value = "";
        say("Deploy " + ack.id.slice(0, 8) + " " + ack.state + ".");
        refresh();
      });
    } });
    var cancel = el("button", { type: "button", text: "Cancel running deploy", onclick: function () {
      if (running) act("deploys/" + running.id + "/cancel", {}, function () { say("Deploy " + running.id.slice(0, 8) + " cancelled."); refresh(); });
    } });
    var reason = el("input", { id: id + "-reason", type: "text", maxlength: "200", placeholder: "e.g. release freeze" });
    var pause = el("button", { type: "button", text: "Pause", onclick: function () {
      act(path + "pause", { reason: reason.value }, function () { reason.value = ""; say("Deploys of " + name + " paused."); refresh(); });
    } });
    var resume = el("button", { type: "button", text: "Resume", onclick: function () {
      act(path + "resume", {}, function () { say("Deploys of " + name + " resumed."); refresh(); });
    } });
    var pauseForm = el("div", { class: "pause" }, el("label", { for: id + "-reason", text: "Reason to pause " + name }), reason, pause);
    // With releases: each kept one, the live one marked, the others with a "switch back" (a rollback to that release).
    var releases = el("div", { class: "releases" });
    var refForm = el("div", { class: "pause" }, el("label", { for: id + "-ref", text: "Ref to deploy for " + name }), ref);
    var card = el("section", { class: "app", "aria-labelledby": id + "-name" },
      el("h2", { id: id + "-name", text: name }), info, refForm,
      el("div", { class: "actions" }, deploy, cancel, resume), pauseForm, releases);
    function switchBack(release) {
      act(path + "rollback", { to: release.id }, function (ack) { say("Switch back to release " + release.id + ": deploy " + ack.id.slice(0, 8) + " " + ack.state + "."); refresh(); });
    }
    function showReleases(view) {
      releases.textContent = "";
      releases.hidden = !view;
      if (!view) return;
      var rows = el("tbody");
      view.kept.forEach(function (release) {
        var action = release.live ? el("span", { class: "badge ok", text: "live" })
          : release.commit ? el("button", { type: "button", text: "Switch back", "aria-label": "Switch back to release " + release.id, onclick: function () { switchBack(release); } }) : "";
        rows.appendChild(el("tr", {}, el("td", {}, el("code", { text: release.id })), el("td", {}, el("code", { text: short(release.commit) })),
          el("td", {}, release.deployId ? deployLink(release.deployId) : "–"), el("td", {}, action)));
      });
      if (view.kept.length === 0) rows.appendChild(el("tr", {}, el("td", { colspan: "4", text: "No release yet." })));
      releases.appendChild(el("h3", { text: "Releases (keep " + view.keep + ")" }));
      releases.appendChild(el("div", { class: "scroll" }, el("table", {},
        el("thead", {}, el("tr", {}, el("th", { text: "Release" }), el("th", { text: "Commit" }), el("th", { text: "Deploy" }), el("th", { text: "" }))), rows)));
    }
    list.appendChild(card);
    return {
      update: function (app) {
        running = app.running;
        info.textContent = "";
        field(info, "Deployed commit", el("code", { text: short(app.commit) }));
        field(info, "State", app.paused ? el("span", {}, el("span", { class: "badge paused", text: "paused: " + app.paused.reason }), " by " + app.paused.by) : app.running ? badge("running") : "idle");
        field(info, "Running", app.running ? el("span", {}, deployLink(app.running.id), " (" + app.running.trigger + (app.running.actor ? ", by " + app.running.actor : "") + ", " + age(app.running.since) + ")") : "none");
        field(info, "Waiting", String(app.waiting));
        field(info, "Last deploy", app.last ? el("span", {}, badge(app.last.outcome), " ", deployLink(app.last.id), " " + age(app.last.startedAt)) : "none yet");
        if (app.releases) field(info, "Live release", app.releases.live ? el("code", { text: app.releases.live.id }) : "none yet");
        showReleases(app.releases);
        cancel.hidden = !app.running;
        resume.hidden = !app.paused;
        pauseForm.hidden = !!app.paused;
      },
    };
  }

  // The history, newest first; its filters (app, outcome, since, failed only) are kept in the URL, as the API's
  // query parameters are named, so a reload or a shared link shows the same deploys.
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
    var outcome = select("outcome", "Outcome", [["", "Any outcome"], ["ok", "ok"], ["failed", "failed"], ["rolled_back", "rolled back"], ["cancelled", "cancelled"], ["running", "running"], ["interrupted", "interrupted"]]);
    var since = select("since", "Since", [["", "Any time"], ["1h", "Last hour"], ["24h", "Last 24 hours"], ["7d", "Last 7 days"], ["30d", "Last 30 days"]]);
    var toggle = el("input", { id: "failed-only", type: "checkbox" });
    toggle.checked = failed;
    var table = el("table");
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
        table.appendChild(el("thead", {}, el("tr", {}, el("th", { text: "Deploy" }), el("th", { text: "App" }), el("th", { text: "Trigger" }), el("th", { text: "By" }), el("th", { text: "Commit" }), el("th", { text: "Outcome" }), el("th", { text: "Started" }), el("th", { text: "Duration" }), el("th", { text: "Actions" }))));
        var rows = el("tbody");
        entries.forEach(function (entry) {
          var again = entry.status === "running" ? "" : el("button", { type: "button", text: "Deploy again", "aria-label": "Deploy again " + entry.id.slice(0, 8), onclick: function () {
            deployAgain(entry, function (ack) { say("Deploy " + ack.id.slice(0, 8) + " " + ack.state + "."); refresh(); });
          } });
          rows.appendChild(el("tr", {}, el("td", {}, deployLink(entry.id)), el("td", { text: entry.app || "default" }), el("td", { text: entry.trigger || "" }),
            el("td", { class: "actor", text: entry.actor || "" }), el("td", { class: "commit", text: commitText(entry.commit) }),
            el("td", {}, badge(outcomeLabel(entry)), entry.cancelledBy ? " by " + entry.cancelledBy : "", entry.forced ? " (forced)" : ""),
            el("td", { text: age(entry.startedAt) }), el("td", { text: entry.durationMs === null ? "" : (entry.durationMs / 1000).toFixed(1) + " s" }), el("td", {}, again)));
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
    var cancel = el("button", { type: "button", text: "Cancel this deploy", hidden: "" });
    var rollback = el("button", { type: "button", text: "Roll back to this deploy", hidden: "" });
    var again = el("button", { type: "button", text: "Deploy again", hidden: "" });
    var record = null;
    content.textContent = "";
    content.appendChild(info);
    content.appendChild(el("div", { class: "actions" }, cancel, rollback, again));
    content.appendChild(outcome);
    content.appendChild(el("h2", { text: "Log" }));
    content.appendChild(log);
    cancel.addEventListener("click", function () {
      act("deploys/" + record.id + "/cancel", {}, function () { say("Cancelled."); load(); });
    });
    function open(ack) { location.href = root + "deploys/" + encodeURIComponent(ack.id); }
    rollback.addEventListener("click", function () {
      deployAct("apps/" + encodeURIComponent(record.app || "default") + "/rollback", { to: record.id }, open);
    });
    again.addEventListener("click", function () { deployAgain(record, open); });
    function show() {
      var result = record.result || {};
      var pull = result.pull || {};
      info.textContent = "";
      field(info, "Deploy", el("code", { text: record.id }));
      field(info, "App", record.app || "default");
      field(info, "Trigger", record.trigger || "");
      if (record.actor) field(info, "By", record.actor);
      if (record.ref) field(info, "Ref", el("code", { text: record.ref }));
      if (record.forced) field(info, "Forced", "yes: it ran while deploys were paused");
      field(info, "Outcome", badge(outcomeLabel({ status: record.status, ok: result.ok, rolledBack: result.rolledBack })));
      field(info, "Started", record.startedAt ? new Date(record.startedAt).toLocaleString() + " (" + age(record.startedAt) + ")" : "");
      if (record.durationMs !== undefined && record.durationMs !== null) field(info, "Duration", (record.durationMs / 1000).toFixed(1) + " s");
      if (pull.before || pull.after) field(info, "Commits", el("code", { text: short(pull.before) + " → " + short(pull.after) }));
      if (result.commit) field(info, "Live commit", commitText(result.commit));
      if (result.previousCommit) field(info, "Previous commit", commitText(result.previousCommit));
      if (record.cancel) field(info, "Cancelled", (record.cancel.by ? "by " + record.cancel.by + ", " : "") + new Date(record.cancel.at).toLocaleString());
      if (result.error) field(info, "Error", result.error);
      cancel.hidden = record.status !== "running";
      rollback.hidden = !(record.status === "done" && result.ok === true && !result.rolledBack);
      again.hidden = record.status === "running" || !pull.after;
    }
    function load() {
      return getJson("deploys/" + encodeURIComponent(ref)).then(function (data) { record = data; show(); return data; });
    }
    function finish(text) {
      var match = /\\[done\\] ok=(true|false) exitCode=(\\S+)\\s*$/.exec(text);
      if (!match) return;
      outcome.className = match[1] === "true" ? "done ok" : "done failed";
      outcome.textContent = match[1] === "true" ? "Succeeded (exit code " + match[2] + ")" : "Failed (exit code " + match[2] + ")";
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
    var tries = 0;
    function start() {
      load().then(function () {
        return follow().then(function (text) {
          finish(text);
          return load();
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

  if (page === "apps") appsPage();
  else if (page === "deploys") deploysPage();
  else if (page === "deploy") deployPage();
})();
`;
