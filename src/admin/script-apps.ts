/** The dashboard's apps page: a card per app with its state, actions and releases (a part of assets.ts's script). */
export const APPS_PAGE_JS = `  // The apps: each app's card is built once, so a reason being typed survives the refreshes.
  function appsPage() {
    var cards = {};
    content.textContent = "";
    var slots = el("p", { class: "slots" });
    var list = el("div", { class: "apps" });
    content.appendChild(slots);
    content.appendChild(list);
    var refresh = every(2000, function () {
      return getJson("apps").then(function (data) {
        // The service's build slots: how many deploys do their work now, and whose (the apps this token sees).
        var use = data.slots;
        slots.textContent = use && use.limit > 0 ? shown("Build slots: " + use.inUse + " of " + use.limit + " in use" + (use.holders.length ? " (" + use.holders.map(function (h) { return h.app || h.id.slice(0, 8); }).join(", ") + ")" : "")) : "";
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
    var current = null;
    var ref = el("input", { id: id + "-ref", type: "text", maxlength: "250", placeholder: "empty: pull; or a tag, branch, commit" });
    var deploy = el("button", { type: "button", "data-act": "deploy", text: "Deploy now", onclick: function () {
      var wanted = ref.value.trim();
      var what = wanted ? "at " + wanted : "(pull " + (current && current.branch ? current.branch : "its branch") + ")";
      var live = current && current.live ? " Live now: " + named(current.live) + "." : "";
      ask("Deploy " + name + " " + what + "?" + live, "Deploy", function () {
        deployAct(path + "deploy", wanted ? { ref: wanted } : {}, function (ack) {
          ref.value = "";
          say("Deploy " + ack.id.slice(0, 8) + " " + ack.state + ".");
          refresh();
        });
      });
    } });
    var cancel = el("button", { type: "button", "data-act": "deploy", text: "Cancel running deploy", onclick: function () {
      var id = running && running.id;
      if (id) cancelRunning(id, name, function () { say("Deploy " + id.slice(0, 8) + " cancelled."); refresh(); });
    } });
    var reason = el("input", { id: id + "-reason", type: "text", maxlength: "200", placeholder: "e.g. release freeze" });
    var pause = el("button", { type: "button", text: "Pause", onclick: function () {
      act(path + "pause", { reason: reason.value }, function () { reason.value = ""; say("Deploys of " + name + " paused."); refresh(); });
    } });
    var resume = el("button", { type: "button", "data-act": "admin", text: "Resume", onclick: function () {
      ask("Resume deploys of " + name + "? Pushes deploy it again from now on.", "Resume", function () {
        act(path + "resume", {}, function () { say("Deploys of " + name + " resumed."); refresh(); });
      });
    } });
    var pauseForm = el("div", { class: "pause", "data-act": "admin" }, el("label", { for: id + "-reason", text: "Reason to pause " + name }), reason, pause);
    // With releases: each kept one, the live one marked, the others with a "switch back" (a rollback to that release).
    var releases = el("div", { class: "releases" });
    var refForm = el("div", { class: "pause", "data-act": "deploy" }, el("label", { for: id + "-ref", text: "Ref to deploy for " + name }), ref);
    var card = el("section", { class: "app", "aria-labelledby": id + "-name" },
      el("h2", { id: id + "-name" }, el("a", { href: root + "apps/" + encodeURIComponent(name), text: name })), info, refForm,
      el("div", { class: "actions" }, deploy, cancel, resume), pauseForm, releases);
    // The question names both commits: the live one, and the release's (its subject from the deploy that built it).
    function switchBack(release) {
      var from = current && current.live ? named(current.live) : "the live release";
      var built = release.deployId ? getJson("deploys/" + encodeURIComponent(release.deployId)) : Promise.reject();
      built.then(function (record) {
        var result = record.result || {};
        return [result.target, result.commit].filter(function (commit) { return commit && commit.sha === release.commit; })[0];
      }).catch(function () {}).then(function (commit) {
        ask("Switch " + name + " from " + from + " to " + named(commit || { sha: release.commit }) + " (release " + release.id + ")?", "Switch back", function () {
          act(path + "rollback", { to: release.id }, function (ack) { say("Switch back to release " + release.id + ": deploy " + ack.id.slice(0, 8) + " " + ack.state + "."); refresh(); });
        });
      });
    }
    function showReleases(view) {
      releases.textContent = "";
      releases.hidden = !view;
      if (!view) return;
      var rows = el("tbody");
      view.kept.forEach(function (release) {
        var action = release.live ? el("span", { class: "badge ok", text: "live" })
          : release.commit ? el("button", { type: "button", "data-act": "deploy", text: "Switch back", "aria-label": "Switch back to release " + release.id, onclick: function () { switchBack(release); } }) : "";
        rows.appendChild(el("tr", {}, el("td", { "data-label": "Release" }, el("code", { text: release.id })), el("td", { "data-label": "Commit" }, commitLink(current && current.links, release.commit)),
          el("td", { "data-label": "Deploy" }, release.deployId ? deployLink(release.deployId) : "–"), el("td", { "data-label": "Live" }, action)));
      });
      if (view.kept.length === 0) rows.appendChild(el("tr", {}, el("td", { colspan: "4", text: "No release yet." })));
      releases.appendChild(el("h3", { text: "Releases (keep " + view.keep + ")" }));
      releases.appendChild(el("div", { class: "scroll" }, el("table", { class: "stack" },
        el("thead", {}, el("tr", {}, el("th", { text: "Release" }), el("th", { text: "Commit" }), el("th", { text: "Deploy" }), el("th", { text: "Live" }))), rows)));
    }
    list.appendChild(card);
    return {
      update: function (app) {
        // docs/watch.md: "watching (2 of 5 min)", its last value and failed checks in a row.
        function watchingText(w) {
          var minutes = w.forMs >= 120000;
          var unit = minutes ? 60000 : 1000;
          var shown = function (ms) { var n = ms / unit; return n % 1 === 0 ? String(n) : n.toFixed(1); };
          return "watching (" + shown(Math.min(w.elapsedMs, w.forMs)) + " of " + shown(w.forMs) + (minutes ? " min" : " s") + ")" +
            (w.lastValue !== null ? ", last " + w.lastValue : "") + (w.failures ? ", " + w.failures + " failed in a row" : "");
        }
        running = app.running;
        current = app;
        info.textContent = "";
        field(info, "Live commit", app.live ? el("span", {}, commitLink(app.links, app.live.sha), " " + app.live.subject + (app.live.author ? " (" + app.live.author + (app.live.date ? ", " + age(app.live.date) : "") + ")" : "") + (app.liveTag ? " · tag " + app.liveTag : "")) : "none known");
        if (app.checkedOut && app.checkedOut !== app.commit) field(info, "Checked out", el("span", {}, commitLink(app.links, app.checkedOut), " in the clone (not live)"));
        field(info, "State", app.paused ? el("span", {}, el("span", { class: "badge paused", text: "paused: " + app.paused.reason }), " by " + app.paused.by) : app.running ? (app.watching ? el("span", { class: "badge running", text: watchingText(app.watching) }) : app.running.waiting ? el("span", { class: "badge running", text: "waiting for " + (app.running.waiting === "slot" ? "a build slot" : app.running.waiting) }) : badge("running")) : "idle");
        if (app.frozen) field(info, "Frozen", el("span", {}, el("span", { class: "badge paused", text: app.frozen.reason }), " until " + app.frozen.until));
        if (app.catchUp) field(info, "Catch-up", app.catchUp.text);
        if (typeof app.previews === "number") field(info, "Previews", el("a", { href: root + "apps/" + encodeURIComponent(name) + "#previews", text: app.previews + (app.previews === 1 ? " preview" : " previews") + " of pull requests" }));
        if (app.nextFreeze) field(info, "Next freeze", app.nextFreeze.reason + ": " + new Date(app.nextFreeze.start).toLocaleString() + " until " + app.nextFreeze.until);
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
`;
