/** The app page's DORA figures, each with its band and the deploys it rests on (a part of assets.ts's script). */
export const DORA_JS = `  // The four figures of GET /api/apps/<name>/stats's "dora" (docs/log-files.md "DORA figures").
  function doraSpan(seconds) {
    if (seconds < 90) return Math.round(seconds) + " s";
    if (seconds < 5400) return Math.round(seconds / 60) + " min";
    if (seconds < 172800) return (seconds / 3600).toFixed(1) + " h";
    return (seconds / 86400).toFixed(1) + " days";
  }
  function doraRate(perDay) {
    if (perDay >= 1) return perDay.toFixed(1) + " a day";
    if (perDay * 7 >= 1) return (perDay * 7).toFixed(1) + " a week";
    return (perDay * 30).toFixed(1) + " a month";
  }
  function doraFigures(dl, dora) {
    dl.textContent = "";
    var rows = [
      ["Deploy frequency", dora.deployFrequency, doraRate, ""],
      ["Lead time", dora.leadTime, doraSpan, dora.leadTime.withoutLead ? "; " + dora.leadTime.withoutLead + " without lead" : ""],
      ["Change failure rate", dora.changeFailureRate, function (r) { return (r * 100).toFixed(1) + " %"; }, ""],
      ["Time to restore", dora.timeToRestore, doraSpan, dora.timeToRestore.unrestored ? "; " + dora.timeToRestore.unrestored + " not restored yet" : ""],
    ];
    rows.forEach(function (row) {
      var figure = row[1];
      var rests = figure.deploys + " deploy" + (figure.deploys === 1 ? "" : "s") + row[3];
      field(dl, row[0], el("span", { class: "dora", "data-band": figure.band },
        el("span", { class: "value", text: figure.value === null ? "–" : row[2](figure.value) }), " ",
        el("span", { class: "band", text: figure.band }), " (" + rests + ")"));
    });
    if (dora.partial) field(dl, "Note", "only the newest records were read: the figures cover fewer days");
  }

`;
