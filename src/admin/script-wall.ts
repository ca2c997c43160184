/**
 * The wall (`/wall`, wall.ts): a tile per app from `GET /api/apps`, drawn again every 2 s while the tab is visible
 * (a part of assets.ts's script). Each tile says the app's state in words and by its `data-state` (idle,
 * deploying, waiting, watching, frozen, paused), its live commit and tag, its last outcome and age, and the
 * catch-ups waiting. Every value goes in as text.
 */
export const WALL_PAGE_JS = `  // The wall: tiles built once per app, their text replaced at each refresh (no flicker, no lost focus).
  function wallPage() {
    var kiosk = document.querySelector("main.wall").hasAttribute("data-kiosk");
    var updated = document.getElementById("updated");
    var grid = el("div", { class: "tiles" });
    var tiles = {};
    content.textContent = "";
    content.appendChild(grid);
    every(2000, function () {
      return getJson("apps").then(function (data) {
        var names = {};
        data.apps.forEach(function (app) {
          names[app.name] = true;
          var tile = tiles[app.name] || (tiles[app.name] = wallTile(app.name, grid, kiosk));
          tile.update(app);
        });
        for (var name in tiles) if (!names[name]) { grid.removeChild(tiles[name].node); delete tiles[name]; }
        if (!data.apps.length) grid.textContent = "No app.";
        updated.textContent = "· " + new Date().toLocaleTimeString();
      });
    });
  }
  function minutes(ms) { return ms < 60000 ? Math.round(ms / 1000) + " s" : Math.round(ms / 60000) + " min"; }
  // The state that says most: watching, waiting, deploying (its phase), paused, frozen, else idle.
  function wallState(app) {
    var run = app.running;
    if (app.watching) {
      var w = app.watching;
      return { state: "watching", text: "watching (" + minutes(w.elapsedMs) + " of " + minutes(w.forMs) + ")", watch: w };
    }
    if (run && run.waiting) return { state: "waiting", text: "waiting for " + (run.waiting === "slot" ? "a build slot" : run.waiting) };
    if (run) return { state: "deploying", text: "deploying" + (run.phase ? ": " + run.phase : "") + " (" + age(run.since).replace(" ago", "") + ")" };
    if (app.paused) return { state: "paused", text: "paused: " + app.paused.reason };
    if (app.frozen) return { state: "frozen", text: "frozen until " + app.frozen.until + ": " + app.frozen.reason };
    return { state: "idle", text: "idle" };
  }
  function wallTile(name, grid, kiosk) {
    var id = "tile-" + grid.children.length;
    var state = el("p", { class: "state" });
    var live = el("p", { class: "live" });
    var last = el("p", { class: "last" });
    var extra = el("p", { class: "extra" });
    var meter = el("progress", { "aria-labelledby": id + "-name" });
    var heading = el("h2", { id: id + "-name" }, kiosk ? name : el("a", { href: root + "apps/" + encodeURIComponent(name), text: name }));
    var node = el("section", { class: "tile", "aria-labelledby": id + "-name", "data-app": name }, heading, state, meter, live, last, extra);
    grid.appendChild(node);
    return {
      node: node,
      update: function (app) {
        var now = wallState(app);
        node.setAttribute("data-state", now.state);
        node.setAttribute("data-last", app.last ? app.last.outcome : "none");
        state.textContent = shown(now.text);
        meter.hidden = !now.watch;
        if (now.watch) {
          meter.max = Math.max(1, now.watch.forMs);
          meter.value = Math.min(now.watch.forMs, now.watch.elapsedMs);
          state.textContent = shown(now.text + ", " + now.watch.checks + " checks, " + now.watch.failures + " failed" + (now.watch.lastValue === null || now.watch.lastValue === undefined ? "" : ", now " + now.watch.lastValue));
        }
        live.textContent = "";
        live.appendChild(app.live ? el("span", {}, el("code", { text: short(app.live.sha) }), " " + app.live.subject + (app.liveTag ? " · tag " + app.liveTag : "")) : document.createTextNode("no live commit known"));
        last.textContent = "";
        if (app.last) last.appendChild(el("span", {}, "last ", badge(app.last.outcome), " " + age(app.last.startedAt)));
        else last.textContent = "no deploy yet";
        var notes = [];
        if (app.catchUp) notes.push(app.catchUp.requests.length + " waiting: " + app.catchUp.text);
        if (app.running && app.paused) notes.push("paused: " + app.paused.reason);
        if (app.running && app.frozen) notes.push("frozen until " + app.frozen.until);
        if (app.waiting) notes.push(app.waiting + " in the queue");
        extra.textContent = shown(notes.join(" · "));
        extra.hidden = !notes.length;
      },
    };
  }

`;
