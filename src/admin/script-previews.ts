/**
 * An app's previews of pull requests on its page (docs/previews.md "Operating"): each preview with Deploy again and
 * Tear down, asked once (a part of assets.ts's script). Titles and branches are outsiders' text: text nodes only, and
 * a preview's URL is a link only when it is http(s).
 */
export const PREVIEWS_JS = `  // GET /api/apps/<name>/previews, drawn into \`box\`; \`refresh\` draws it again after an action.
  function appPreviews(box, name, refresh) {
    var path = "apps/" + encodeURIComponent(name) + "/previews";
    return getJson(path).then(function (list) {
      box.textContent = "";
      var previews = list.previews.slice().sort(function (a, b) { return a.number - b.number; });
      if (previews.length === 0) { box.appendChild(el("p", { text: "No preview now." })); return; }
      var rows = el("tbody");
      previews.forEach(function (p) {
        var which = "#" + p.number + (p.title ? " '" + p.title + "'" : "");
        var again = el("button", { type: "button", "data-act": "deploy", text: "Deploy again", "aria-label": "Deploy again the preview of #" + p.number, onclick: function () {
          ask("Build the preview of " + which + " again, at its pull request's head now?", "Deploy again", function () {
            act(path + "/" + p.number + "/deploy", {}, function (ack) { say(ack.message); refresh(); });
          });
        } });
        var down = el("button", { type: "button", "data-act": "deploy", text: "Tear down", "aria-label": "Tear down the preview of #" + p.number, onclick: function () {
          ask("Tear down the preview of " + which + "? Its teardown script runs, then its directory and port go.", "Tear down", function () {
            act(path + "/" + p.number + "/teardown", {}, function (ack) { say(ack.message); refresh(); });
          });
        } });
        var url = /^https?:\\/\\//i.test(p.url) ? el("a", { href: p.url, rel: "noreferrer noopener", class: "clip", text: p.url }) : el("span", { text: p.url });
        var status = el("span", {}, el("span", { class: "badge " + (p.status === "running" ? "ok" : p.status === "building" ? "running" : p.status === "stopped" ? "paused" : "failed"), text: p.status }), p.reason ? " " + p.reason : "");
        rows.appendChild(el("tr", { "data-number": String(p.number) },
          el("td", { "data-label": "Pull request", title: shown(p.title) }, el("span", { class: "clip", text: "#" + p.number + (p.title ? " " + p.title : "") })),
          el("td", { "data-label": "Branch", title: shown(p.branch) }, el("code", { class: "clip", text: p.branch })),
          el("td", { "data-label": "Head" }, el("code", { text: short(p.head) })),
          el("td", { "data-label": "URL" }, url),
          el("td", { "data-label": "Port", text: String(p.port) }),
          el("td", { "data-label": "Updated", text: age(p.updated) }),
          el("td", { "data-label": "Outcome" }, p.outcome ? badge(p.outcome) : "–"),
          el("td", { "data-label": "Status" }, status),
          el("td", { "data-label": "Actions", "data-act": "deploy" }, el("div", { class: "actions" }, again, down))));
      });
      var head = el("tr");
      ["Pull request", "Branch", "Head", "URL", "Port", "Updated", "Outcome", "Status"].forEach(function (name) { head.appendChild(el("th", { text: name })); });
      head.appendChild(el("th", { "data-act": "deploy", text: "Actions" }));
      box.appendChild(el("div", { class: "scroll" }, el("table", { class: "stack previews" }, el("thead", {}, head), rows)));
    });
  }

`;
