/** The dashboard's Audit page (docs/audit.md), for the admin role over every app (a part of assets.ts's script). */
export const AUDIT_PAGE_JS = `  // The trail's newest lines, newest first; filtered by since, actor and app as the URL names them.
  function auditPage() {
    var params = new URLSearchParams(location.search);
    var filters = { since: params.get("since") || "7d", actor: params.get("actor") || "", app: params.get("app") || "" };
    var table = el("table", { class: "stack audit" });
    function input(name, label) {
      var node = el("input", { id: "audit-" + name, type: "text", value: filters[name], size: "14" });
      node.addEventListener("change", function () { filters[name] = node.value.trim(); refresh(); });
      return el("span", { class: "filter" }, el("label", { for: "audit-" + name, text: label }), " ", node);
    }
    content.textContent = "";
    content.appendChild(el("p", { class: "filters" }, input("since", "Since"), " ", input("actor", "Who"), " ", input("app", "App")));
    content.appendChild(el("div", { class: "scroll" }, table));
    function what(line) {
      return [line.target, line.deploy ? "deploy " + line.deploy.slice(0, 8) : "", line.method ? "(" + line.method + ")" : "",
        line.via ? "via " + line.via : "", line.force ? "force" : "", line.skipGate ? "skip gate" : "",
        line.keys ? "keys: " + line.keys.join(", ") : ""].filter(Boolean).join(" ");
    }
    var refresh = every(5000, function () {
      var q = new URLSearchParams({ limit: "200" });
      ["since", "actor", "app"].forEach(function (name) { if (filters[name]) q.set(name, filters[name]); });
      history.replaceState(null, "", "?" + q.toString().replace(/(^|&)limit=200/, ""));
      return getJson("audit?" + q.toString()).then(function (lines) {
        table.textContent = "";
        table.appendChild(el("thead", {}, el("tr", {}, el("th", { text: "Time" }), el("th", { text: "Who" }), el("th", { text: "Action" }),
          el("th", { text: "App" }), el("th", { text: "What" }), el("th", { text: "Outcome" }))));
        var rows = el("tbody");
        lines.slice().reverse().forEach(function (line) {
          var who = line.address ? line.actor + "@" + line.address : line.actor;
          var outcome = line.outcome === "ok" ? "ok" : "failed";
          rows.appendChild(el("tr", {}, el("td", { "data-label": "Time", title: line.time, text: new Date(line.time).toLocaleString() }),
            el("td", { class: "actor", "data-label": "Who", title: shown(who) }, el("span", { class: "clip", text: who })),
            el("td", { "data-label": "Action", text: line.action }), el("td", { "data-label": "App", text: line.app || "" }),
            el("td", { "data-label": "What", text: what(line) }),
            el("td", { "data-label": "Outcome" }, el("span", { class: "badge " + outcome, text: line.outcome }), line.reason ? " " + line.reason : "")));
        });
        if (lines.length === 0) rows.appendChild(el("tr", {}, el("td", { colspan: "6", text: "No audit lines." })));
        table.appendChild(rows);
      });
    });
  }
`;
