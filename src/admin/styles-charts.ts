/** The stylesheet of the dashboard's pictures (script-charts.ts), joined into styles.ts. */
export const CHARTS_CSS = `.picture { max-width: 40rem; }
.picture svg { display: block; width: 100%; height: auto; }
.barchart { margin: 0; display: grid; grid-template-columns: auto minmax(0, 1fr); gap: 0 .5rem; font-size: 13px; color: var(--muted); }
.barchart .y-axis { display: flex; flex-direction: column; justify-content: space-between; text-align: right; border-right: 1px solid var(--line); padding-right: .35rem; }
.barchart .x-axis { grid-column: 2; min-width: min(100%, 18rem); display: flex; justify-content: space-between; gap: .5rem; border-top: 1px solid var(--line); }
.barchart .y-name, .barchart .x-name { font-style: italic; }
ul.plain { margin: 0; padding-left: 1.1rem; }
.bar { fill: var(--muted); }
.bar.ok { fill: var(--ok); } .bar.failed { fill: var(--bad); } .bar.rolled_back { fill: var(--warn); } .bar.running { fill: var(--accent); }
.bar.slow { stroke: var(--fg); stroke-width: 2; }
.bars a:focus-visible rect { stroke: var(--accent); stroke-width: 3; }
.timeline { display: grid; gap: 2px; font-size: 13px; }
.timeline .row { display: grid; grid-template-columns: minmax(0, 2fr) minmax(0, 3fr); gap: .75rem; align-items: center; }
.timeline .label { overflow-wrap: anywhere; }
.timeline .track { position: relative; height: 1rem; }
.timeline .phase { position: absolute; top: 2px; bottom: 2px; min-width: 2px; background: var(--accent); }
.timeline .axis { display: flex; justify-content: space-between; border-top: 1px solid var(--line); color: var(--muted); }
.figures .rate, .figures .median, .dora .value, .dora .band { font-weight: 600; }
`;
