/** The dashboard's page of one app, `/apps/<name>`: its last deploys as bars, its rates and medians, its DORA figures, its previews (a part of assets.ts's script). */
export const APP_PAGE_JS = `  // One app: GET /api/apps/<name>/stats, drawn again every 5 s while the tab is visible.
  function appPage() {
    var name = decodeURIComponent(location.pathname.split("/").pop());
    var figures = el("dl", { class: "figures" });
    var dora = el("dl", { class: "figures", id: "dora" });
    var picture = el("div", { class: "picture", id: "bars" });
    var legend = el("p", { class: "hint" });
    var rules = el("dl", { class: "figures", id: "rules" });
    var watched = el("ul", { class: "plain", id: "watches" });
    var previewsPart = el("section", { id: "previews", "aria-labelledby": "previews-title" }, el("h2", { id: "previews-title", text: "Previews of pull requests" }));
    var previews = el("div");
    previewsPart.appendChild(previews);
    previewsPart.hidden = true;
    content.textContent = "";
    content.appendChild(el("h2", { text: "Success rate and median duration" }));
    content.appendChild(figures);
    content.appendChild(el("h2", { text: "DORA figures, last 30 days (bands after DORA 2024)" }));
    content.appendChild(dora);
    content.appendChild(el("h2", { text: "Last deploys" }));
    content.appendChild(picture);
    content.appendChild(legend);
    content.appendChild(el("h2", { text: "Recent watch values" }));
    content.appendChild(watched);
    content.appendChild(previewsPart);
    content.appendChild(el("h2", { text: "What decides its deploys" }));
    content.appendChild(rules);
    content.appendChild(el("p", {}, el("a", { href: root + "deploys?app=" + encodeURIComponent(name), text: "The history of " + name })));
    var refresh = every(5000, function () {
      // Its state now (paused, running) from the apps' list, beside its stats.
      var state = getJson("apps").then(function (data) { return data.apps.filter(function (app) { return app.name === name; })[0]; }, function () { return null; });
      return Promise.all([getJson("apps/" + encodeURIComponent(name) + "/stats"), state]).then(function (both) {
        var stats = both[0];
        if (stats.rules) appRules(rules, stats.rules, both[1]);
        if (stats.watches) watchValues(watched, stats.watches);
        figures.textContent = "";
        stats.windows.forEach(function (window) {
          var rate = window.successRate === null ? "no deploy" : Math.round(window.successRate * 100) + " % ok (" + window.ok + " of " + window.deploys + ")";
          field(figures, "Last " + window.days + " days", el("span", { "data-days": String(window.days) },
            el("span", { class: "rate", text: rate }), ", median ", el("span", { class: "median", text: seconds(window.medianMs) })));
        });
        if (stats.dora) doraFigures(dora, stats.dora);
        if (stats.partial) field(figures, "Note", "only the newest records were read: the figures cover fewer days");
        picture.textContent = "";
        picture.appendChild(stats.bars.length ? deployChart(stats.bars) : el("p", { text: "No deploys yet." }));
        var slow = stats.bars.filter(function (bar) { return bar.slow; }).length;
        // An app with previews says how many it keeps (GET /api/apps): then its list, with their actions.
        var withPreviews = both[1] && typeof both[1].previews === "number";
        previewsPart.hidden = !withPreviews;
        var listed = withPreviews ? appPreviews(previews, name, function () { refresh(); }) : null;
        legend.textContent = "Height: duration; colour: outcome (ok green, failed red, rolled back amber, others grey); outlined: over twice the 30-day median" + (slow ? " (" + slow + " here)" : "") + ". Each bar links to its deploy.";
        return listed;
      });
    });
  }

`;
