/**
 * The wall (`/wall`, docs/admin.md "The wall"): a tile per app the session sees, as many per row as the screen
 * holds, kept current by the dashboard's script (script-wall.ts) from `GET /api/apps`. In a kiosk session (kiosk.ts)
 * the page links nowhere else: the session opens nothing else.
 */
import { HEADERS, shell } from "./pages.ts";

/** The wall's HTML shell; `kiosk`: no links to the rest of the dashboard, no log out. */
export function wallPage(kiosk: boolean): Response {
  const nav = kiosk
    ? ""
    : `<header><nav aria-label="Dashboard"><a href="./">Apps</a> <a href="deploys">Deploy history</a> <a href="wall" aria-current="page">Wall</a></nav>
<form method="post" action="logout"><button type="submit">Log out</button></form></header>
`;
  const body = `${nav}<main class="wall"${kiosk ? ' data-kiosk=""' : ""}><h1>Wall <span class="clock" id="updated"></span></h1>
<p id="notice" role="status" aria-live="polite"></p><p id="problem" role="alert"></p>
<div id="content"><p>Loading…</p></div></main>
<script src="assets/dashboard.js"></script>`;
  return new Response(shell("Wall", "./", body, "wall"), { headers: HEADERS });
}
