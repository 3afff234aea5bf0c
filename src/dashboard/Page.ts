/**
 * The dashboard page: one small HTML document, its stylesheet inline and its script at
 * ./app.js, nothing from a CDN (it works offline, and every asset ships in the package).
 */
import { CSS } from "./page.css.ts"
import { SCRIPT } from "./page.js.ts"

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
</header>
<nav id="controls" aria-label="actions"></nav>
<main><p class="muted">Loading…</p></main>
<script src="app.js"></script>
</body>
</html>
`

/** The page's script. */
export const APP_JS = SCRIPT
