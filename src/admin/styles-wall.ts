/**
 * The wall's stylesheet (script-wall.ts), joined into styles.ts: tiles as many per row as the screen holds (ten
 * apps on a 1600×900 screen with no scroll), the state as a coloured edge and in words, large enough to read
 * across a room.
 */
export const WALL_CSS = `main.wall { max-width: none; padding: .75rem 1rem; }
main.wall h1 { margin: 0 0 .75rem; }
main.wall .clock { font-size: 1rem; font-weight: 400; color: var(--muted); }
.tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 17rem), 1fr)); gap: .75rem; }
.tile { border: 1px solid var(--line); border-left: .5rem solid var(--muted); border-radius: .5rem; padding: .4rem .8rem .6rem; min-width: 0; font-size: 1.05rem; }
.tile h2 { margin: 0 0 .25rem; font-size: 1.35rem; }
.tile p { margin: .15rem 0; overflow-wrap: anywhere; }
.tile .state { font-weight: 700; }
.tile .live { display: -webkit-box; -webkit-line-clamp: 2; -webkit-box-orient: vertical; overflow: hidden; }
.tile .extra { color: var(--muted); font-size: .95rem; display: -webkit-box; -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden; }
.tile progress { width: 100%; height: .6rem; accent-color: var(--accent); }
.tile[data-state="idle"] { border-left-color: var(--ok); }
.tile[data-state="idle"][data-last="failed"] { border-left-color: var(--bad); }
.tile[data-state="idle"][data-last="rolled_back"] { border-left-color: var(--warn); }
.tile[data-state="idle"][data-last="none"] { border-left-color: var(--muted); }
.tile[data-state="deploying"], .tile[data-state="waiting"], .tile[data-state="watching"] { border-left-color: var(--accent); }
.tile[data-state="deploying"] .state, .tile[data-state="waiting"] .state, .tile[data-state="watching"] .state { color: var(--accent); }
.tile[data-state="paused"], .tile[data-state="frozen"] { border-left-color: var(--warn); }
.tile[data-state="paused"] .state, .tile[data-state="frozen"] .state { color: var(--warn); }
`;
