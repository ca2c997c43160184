import { CHARTS_CSS } from "./styles-charts.ts";
import { WALL_CSS } from "./styles-wall.ts";

/**
 * The dashboard's stylesheet, embedded like its script (assets.ts): light and dark. The pages use the screen's
 * width (an app is a row: its state beside its releases) and never scroll sideways; below 64rem an app's parts
 * stack, and a table marked `stack` turns into one labelled block per row (each cell's `data-label`), so a phone
 * reads every column without scrolling.
 */
export const DASHBOARD_CSS = `:root { color-scheme: light dark; --fg: #1b1f24; --bg: #fff; --muted: #5c6670; --line: #d5d9de; --ok: #1a7f37; --bad: #c62828; --warn: #9a6700; --accent: #0b5cad; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e8eb; --bg: #16191d; --muted: #a0a8b0; --line: #363c44; --ok: #4cc26a; --bad: #ff6b6b; --warn: #e0b040; --accent: #6cb0ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
header form { margin: 0; }
nav a { margin-right: 1rem; font-weight: 600; }
nav a[aria-current="page"] { text-decoration: underline 3px; }
main { max-width: 120rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.15rem; margin: 1rem 0 .5rem; overflow-wrap: anywhere; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, pre:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
button { font: inherit; padding: .4rem .9rem; border: 1px solid var(--line); border-radius: .4rem; background: var(--bg); color: var(--fg); cursor: pointer; min-height: 2.5rem; }
button:hover { border-color: var(--accent); }
input[type="text"], input[type="password"] { font: inherit; padding: .4rem .6rem; border: 1px solid var(--line); border-radius: .4rem; background: var(--bg); color: var(--fg); min-height: 2.5rem; max-width: 100%; }
.apps { display: grid; gap: 1rem; }
.app { border: 1px solid var(--line); border-radius: .6rem; padding: .25rem 1rem 1rem; display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 0 2rem; align-items: start; }
.app > * { grid-column: 1; min-width: 0; }
.app > .releases { grid-column: 2; grid-row: 1 / span 6; }
dl { display: grid; grid-template-columns: max-content minmax(0, 1fr); gap: .25rem 1rem; margin: .5rem 0; }
dt { color: var(--muted); }
dd { margin: 0; overflow-wrap: anywhere; }
.actions, .pause { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-top: .75rem; }
.pause { max-width: 44rem; }
.pause label { flex-basis: 100%; color: var(--muted); }
.pause input { flex: 1 1 10rem; }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 1rem; font-size: .85rem; font-weight: 600; border: 1px solid currentColor; }
.badge.ok { color: var(--ok); } .badge.failed, .badge.cancelled { color: var(--bad); } .badge.rolled_back, .badge.paused, .badge.refused { color: var(--warn); } .badge.superseded { color: var(--muted, inherit); } .badge.running { color: var(--accent); }
.scroll { overflow-x: auto; }
.filters { display: flex; flex-wrap: wrap; gap: .5rem 1.25rem; align-items: center; }
.filter { white-space: nowrap; }
select { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: .4rem; background: var(--bg); color: var(--fg); min-height: 2.5rem; max-width: 100%; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); white-space: nowrap; }
td.commit { white-space: normal; overflow-wrap: anywhere; min-width: 14rem; }
.clip { display: block; max-width: 12rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
@media (max-width: 64rem) {
  .app { grid-template-columns: minmax(0, 1fr); }
  .app > .releases { grid-column: 1; grid-row: auto; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; }
  table.stack thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
  table.stack tr { border: 1px solid var(--line); border-radius: .4rem; margin-bottom: .5rem; padding: .25rem 0; }
  table.stack td { border: 0; white-space: normal; overflow-wrap: anywhere; min-width: 0; }
  table.stack td[data-label] { position: relative; padding-left: 8.5rem; min-height: 2rem; }
  table.stack td[data-label]::before { content: attr(data-label); position: absolute; left: .6rem; width: 7.5rem; color: var(--muted); }
  table.stack .clip { max-width: none; white-space: normal; }
}
pre { background: rgba(127, 127, 127, .1); border: 1px solid var(--line); border-radius: .4rem; padding: .75rem; max-height: 70vh; overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; font-size: .85rem; }
.done { font-weight: 700; padding: .5rem .75rem; border-radius: .4rem; border: 2px solid currentColor; }
.done.ok { color: var(--ok); } .done.failed { color: var(--bad); } .done.rolled-back { color: var(--warn); } .done.stopped { color: var(--muted); }
#problem { color: var(--bad); } #notice:empty, #problem:empty, #outcome:empty { display: none; }
dialog { color: var(--fg); background: var(--bg); border: 1px solid var(--line); border-radius: .6rem; padding: 1rem 1.25rem; max-width: min(36rem, calc(100vw - 2rem)); }
dialog p { margin: 0; overflow-wrap: anywhere; }
dialog::backdrop { background: rgba(0, 0, 0, .45); }
dialog .yes { border-color: var(--accent); font-weight: 600; }
.login { max-width: 24rem; margin-top: 3rem; }
.login form { display: flex; flex-direction: column; gap: .5rem; }
.login .sign-in { display: inline-block; padding: .5rem .9rem; border: 1px solid var(--line); border-radius: .4rem; min-height: 2.5rem; box-sizing: border-box; }
.hint { color: var(--muted); font-size: .9rem; }
[hidden] { display: none !important; }
body:not([data-role="deploy"]):not([data-role="admin"]) [data-act], [data-role="deploy"] [data-act="admin"] { display: none !important; }
body:not([data-audit]) [data-act="audit"] { display: none !important; }
${CHARTS_CSS}${WALL_CSS}`;
