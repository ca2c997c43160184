/**
 * The dashboard's one script, embedded so the binary serves it itself and a page needs no other host. Plain
 * browser JavaScript: no build step, no framework (see docs/admin.md "The admin listener"). Its stylesheet: styles.ts.
 */
import { BREAKS, HIDDEN } from "../system/shown.ts";
import { APP_PAGE_JS } from "./script-app.ts";
import { APPS_PAGE_JS } from "./script-apps.ts";
import { CHARTS_JS } from "./script-charts.ts";
import { DORA_JS } from "./script-dora.ts";
import { HISTORY_PAGES_JS } from "./script-history.ts";
import { AUDIT_PAGE_JS } from "./script-audit.ts";
import { OUTCOME_JS } from "./script-outcome.ts";
import { PREVIEWS_JS } from "./script-previews.ts";
import { RULES_JS } from "./script-rules.ts";
import { WALL_PAGE_JS } from "./script-wall.ts";
import { WATCH_VALUES_JS } from "./script-watch-values.ts";

/** The helpers every page uses: text-only elements, the API, the polling loop. */
const COMMON_JS = `"use strict";
(function () {
  var body = document.body;
  var root = body.getAttribute("data-root") || "./";
  var page = body.getAttribute("data-page");
  var content = document.getElementById("content");
  var notice = document.getElementById("notice");
  var problem = document.getElementById("problem");

  // Text from outside (refs, actors, subjects, reasons) without the marks that reorder or hide it: the CLI's rule.
  function shown(text) { return String(text).replace(/${BREAKS.source}/gu, " ").replace(/${HIDDEN.source}/gu, ""); }

  // Every value goes in as a text node: names, commit messages and log text never become markup.
  function el(tag, attrs) {
    var node = document.createElement(tag);
    for (var key in attrs || {}) {
      if (key === "text") node.textContent = shown(attrs[key]);
      else if (key === "onclick") node.addEventListener("click", attrs[key]);
      else node.setAttribute(key, attrs[key]);
    }
    for (var i = 2; i < arguments.length; i++) {
      var child = arguments[i];
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(shown(child)) : child);
    }
    return node;
  }
  function say(text) { problem.textContent = ""; notice.textContent = shown(text); }
  function fail(text) { notice.textContent = ""; problem.textContent = shown(text); }

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
          error.frozen = answer.frozen;
          throw error;
        }
        return answer;
      });
    });
  }
  function act(path, data, done) {
    return post(path, data).then(done, function (error) { fail(error.message); });
  }
  // A deploy or a rollback while paused, or a deploy while frozen, is refused (409 "paused", "frozen"): asked
  // again, it is sent with force.
  function deployAct(path, data, done) {
    return post(path, data).then(done, function (error) {
      var paused = error.code === "paused" && error.paused;
      var frozen = error.code === "frozen" && error.frozen;
      var question = paused ? "Deploys are paused: " + paused.reason + " (by " + paused.by + ", since " + new Date(paused.since).toLocaleString() + "). Deploy anyway?"
        : frozen && "Deploys are frozen until " + frozen.until + ": " + frozen.reason + ". Deploy anyway?";
      if (!question || !window.confirm(question)) return fail(error.message);
      return act(path, Object.assign({}, data, { force: true }), done);
    });
  }

  // One question before an action that changes what is live or stops a deploy: a modal <dialog> naming what will
  // happen. Its first button, focused when it opens, goes back; going back (or Escape) sends nothing.
  var dialog = null;
  function ask(question, yes, then) {
    if (!dialog) {
      dialog = el("dialog", { class: "confirm", "aria-labelledby": "confirm-question" }, el("p", { id: "confirm-question" }),
        el("div", { class: "actions" }, el("button", { type: "button", text: "Go back", onclick: function () { dialog.close(""); } }),
          el("button", { type: "button", class: "yes", "data-answer": "yes", onclick: function () { dialog.close("yes"); } })));
      body.appendChild(dialog);
    }
    if (dialog.open) return;
    dialog.querySelector("p").textContent = shown(question);
    dialog.querySelector(".yes").textContent = yes;
    dialog.returnValue = "";
    dialog.onclose = function () { if (dialog.returnValue === "yes") then(); };
    dialog.showModal();
  }
  // A commit as a question names it: its short hash and 'subject'.
  function named(commit) { return commit ? short(commit.sha) + (commit.subject ? " '" + commit.subject + "'" : "") : "no commit"; }

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
  // The commit a deploy tried, the tag or ref it was asked as, and the one live after it when that is another.
  function triedText(entry) {
    var tried = entry.target || entry.commit;
    var live = entry.commit && tried && entry.commit.sha !== tried.sha ? " · live: " + short(entry.commit.sha) : "";
    var ref = entry.ref ? (entry.ref.indexOf("refs/tags/") === 0 ? " · tag " + entry.ref.slice(10) : " · ref " + entry.ref) : "";
    return commitText(tried) + ref + live;
  }
  // Deploy again: the commit the deploy tried (an entry of the history, or a deploy's record), once confirmed.
  function deployAgain(entry, commit, done) {
    var app = entry.app || "default";
    ask("Deploy " + app + " again at " + named(commit) + ", the commit of deploy " + short(entry.id) + "?", "Deploy", function () {
      deployAct("apps/" + encodeURIComponent(app) + "/deploy", { ref: entry.id }, done);
    });
  }
  function cancelRunning(id, app, done) {
    ask("Cancel the running deploy " + short(id) + " of " + app + "?", "Cancel the deploy", function () { act("deploys/" + id + "/cancel", {}, done); });
  }
  function field(dl, name, value) { dl.appendChild(el("dt", { text: name })); dl.appendChild(el("dd", {}, value)); }

  // The token's role: a read token's pages show no action, a deploy token's no pause or resume (styles.ts hides
  // what data-act names until the role is known); the API refuses them all the same.
  // The Audit page is the admin role's over every app: its link shows for that role only.
  // The wall asks nothing but its feed (a kiosk session opens nothing else).
  if (page !== "wall") getJson("whoami").then(function (who) {
    body.setAttribute("data-role", who.role);
    if (who.role === "admin" && !who.apps) body.setAttribute("data-audit", "");
  }, function () {});

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

`;

export const DASHBOARD_JS = `${COMMON_JS}${CHARTS_JS}${OUTCOME_JS}${APPS_PAGE_JS}${DORA_JS}${RULES_JS}${WATCH_VALUES_JS}${PREVIEWS_JS}${APP_PAGE_JS}${HISTORY_PAGES_JS}${AUDIT_PAGE_JS}${WALL_PAGE_JS}
  if (page === "apps") appsPage();
  else if (page === "app") appPage();
  else if (page === "deploys") deploysPage();
  else if (page === "deploy") deployPage();
  else if (page === "audit") auditPage();
  else if (page === "wall") wallPage();
})();
`;
