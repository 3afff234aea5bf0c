/**
 * The dashboard page: one small HTML document, its stylesheet inline and its script at
 * ./app.js, nothing from a CDN (it works offline, and every asset ships in the package).
 */
import { readdirSync, readFileSync } from "node:fs"
import { CSS } from "./page.css.ts"

/** The page. */
export const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>leaseq dashboard</title>
<style>${CSS}</style>
</head>
<body>
<header>
<h1><a href="#/">leaseq</a></h1>
<a href="#/workers">Workers</a>
<form id="search" role="search"><label>Job id <input name="id" autocomplete="off" required></label> <button>Find</button></form>
<span id="status" role="status" aria-live="polite"></span>
<span id="live" class="muted"></span>
<span id="clock" class="muted">all times UTC</span>
</header>
<p id="notice" class="muted" hidden></p>
<nav id="controls" aria-label="actions"></nav>
<main><p class="muted">Loading…</p></main>
<script type="module" src="app.js"></script>
</body>
</html>
`

/**
 * Where the page's script is: ./browser/ beside this module, in the sources as in dist/ (the
 * build copies the folder), so the sources and the package serve the same bytes.
 */
const BROWSER = new URL("./browser/", import.meta.url)

/**
 * The page's script by file name: `app.js` and the modules it imports (every `.js` of
 * ./browser/), read once when this module loads, never per request.
 */
export const SCRIPTS: ReadonlyMap<string, string> = new Map(
  readdirSync(BROWSER)
    .filter((f) => f.endsWith(".js"))
    .sort()
    .map((f) => [f, readFileSync(new URL(f, BROWSER), "utf8")]),
)
