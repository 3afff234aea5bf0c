/** The dashboard's stylesheet: light and dark by the system setting, no external assets. */
export const CSS = `
:root { color-scheme: light dark; --bg: #fff; --fg: #1b1f24; --muted: #59636e; --line: #d1d9e0; --bad: #b3261e; --badbg: #fde7e4; --ok: #1a7f37; --link: #0950c3; }
@media (prefers-color-scheme: dark) { :root { --bg: #0f1216; --fg: #e6edf3; --muted: #9198a1; --line: #30363d; --bad: #ff7b72; --badbg: #3d1714; --ok: #3fb950; --link: #79b8ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; background: var(--bg); color: var(--fg); }
header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1rem; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
header h1 { font-size: 1rem; margin: 0; }
main { padding: 1rem; max-width: 1200px; }
a { color: var(--link); }
a:focus, button:focus, input:focus { outline: 2px solid var(--link); outline-offset: 1px; }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1.5rem; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.expired td { background: var(--badbg); color: var(--bad); font-weight: 600; }
.muted { color: var(--muted); }
.pill { display: inline-block; padding: 0 .4rem; border: 1px solid var(--line); border-radius: 1rem; }
.bad { color: var(--bad); }
pre { white-space: pre-wrap; word-break: break-all; margin: 0; max-height: 12rem; overflow: auto; }
button { font: inherit; padding: .2rem .6rem; margin-right: .4rem; }
#status { margin-left: auto; }
#controls { padding: .6rem 1rem 0; }
#controls:empty { display: none; }
pre.stack { color: var(--muted); }
#job-state { font-weight: 600; }
svg.spark { vertical-align: middle; }
svg.spark text { font-size: 9px; fill: var(--muted); }
#notice { margin: .6rem 1rem 0; }
#sections { position: sticky; top: 0; background: var(--bg); padding: .4rem 0; border-bottom: 1px solid var(--line); display: flex; gap: .8rem; flex-wrap: wrap; z-index: 1; }
section { scroll-margin-top: 2.5rem; }
td.ids a { margin-right: .3rem; }
`
