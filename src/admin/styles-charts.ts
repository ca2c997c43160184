/** The stylesheet of the dashboard's pictures (script-charts.ts), joined into styles.ts. */
export const CHARTS_CSS = `.picture { max-width: 40rem; }
.picture svg { display: block; width: 100%; height: auto; }
.bar { fill: var(--muted); }
.bar.ok { fill: var(--ok); } .bar.failed { fill: var(--bad); } .bar.rolled_back { fill: var(--warn); } .bar.running { fill: var(--accent); }
.bar.slow { stroke: var(--fg); stroke-width: 2; }
.bars a:focus-visible rect { stroke: var(--accent); stroke-width: 3; }
.timeline text { fill: var(--fg); font-size: 13px; }
.timeline .phase { fill: var(--accent); }
.timeline .axis { stroke: var(--line); }
.figures .rate, .figures .median, .dora .value, .dora .band { font-weight: 600; }
`;
