/**
 * A bar chart of leaseq's ratios against the peers, as a hand-written SVG
 * (no dependencies). Log scale: a bar right of the 1x line means leaseq is
 * better by that factor (more jobs/s, or less time / memory).
 *
 *   node bench/chart.ts [bench/results/<a full run>.json] [docs/performance.svg]
 *
 * Without arguments: the newest full run in bench/results/, into docs/performance.svg.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { ROOT } from "./paths.ts"
import { newestResultFile } from "./report.ts"

interface ResultLike {
  readonly mode: string
  readonly date: string
  readonly machine: { readonly nproc: number; readonly redis: string; readonly node: string }
  readonly scenarios: ReadonlyArray<{ readonly id: string; readonly title: string }>
  readonly ratiosVsBullmq: Record<string, number | null>
  readonly ratiosVsBeequeue: Record<string, number | null>
}

/** Scenario ids shown in the chart, with short labels. */
const ROWS: ReadonlyArray<readonly [string, string]> = [
  ["process.c1", "process, concurrency 1"],
  ["process.c16", "process, concurrency 16"],
  ["process.c100", "process, concurrency 100"],
  ["add.seq", "add, one at a time"],
  ["add.c64", "add, 64 in flight"],
  ["add.bulk100", "add, bulk 100"],
  ["pickup.p50", "pickup latency p50"],
  ["pickup.p99", "pickup latency p99"],
  ["memory.waiting", "memory per waiting job"],
  ["healthy.50k.maxcall", "longest call, 50k healthy"],
  ["healthy.20k.maxcall", "longest call, 20k healthy"],
  ["reclaim.20k", "mass reclaim 20k"],
  ["reclaim.100k", "mass reclaim 100k"],
  ["complete.100k", "complete at 100k in flight"],
  ["complete.20k", "complete at 20k in flight"],
]

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
const label = (r: number): string => `${r >= 10 ? r.toFixed(0) : r.toFixed(1)}x`

export const renderChart = (result: ResultLike): string => {
  const rows = ROWS.filter(([id]) => result.scenarios.some((s) => s.id === id))
  const series = [
    { name: "vs BullMQ 6.7", color: "#2563eb", ratios: result.ratiosVsBullmq },
    { name: "vs Bee-Queue 2.0", color: "#f59e0b", ratios: result.ratiosVsBeequeue },
  ]
  const all = rows
    .flatMap(([id]) => series.map((s) => s.ratios[id] ?? null))
    .filter((r): r is number => r !== null && r > 0)
  const lo = Math.min(0.25, ...all.map((r) => r / 1.5))
  const hi = Math.max(4, ...all.map((r) => r * 1.5))
  const left = 230
  const width = 820
  const plot = width - left - 60
  const barH = 11
  const rowH = series.length * barH + 10
  const top = 76
  const height = top + rows.length * rowH + 40
  const xOf = (r: number) => left + ((Math.log10(r) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * plot
  const out: string[] = []
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" font-size="12">`,
  )
  out.push(`<rect width="100%" height="100%" fill="#ffffff"/>`)
  out.push(
    `<text x="10" y="20" font-size="15" font-weight="bold">leaseq vs peers: how many times better (log scale)</text>`,
  )
  out.push(
    `<text x="10" y="38" fill="#555">${esc(`${result.mode} run ${result.date.slice(0, 10)}, ${result.machine.nproc} cores, redis ${result.machine.redis}, node ${result.machine.node}; right of 1x = leaseq better`)}</text>`,
  )
  // grid
  for (const g of [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000]) {
    if (g < lo || g > hi) continue
    const xg = xOf(g)
    out.push(
      `<line x1="${xg.toFixed(1)}" y1="${top - 6}" x2="${xg.toFixed(1)}" y2="${height - 30}" stroke="${g === 1 ? "#111" : "#ddd"}" stroke-width="${g === 1 ? 1.5 : 1}"/>`,
    )
    out.push(`<text x="${xg.toFixed(1)}" y="${height - 16}" text-anchor="middle" fill="#555">${g}x</text>`)
  }
  rows.forEach(([id, name], i) => {
    const y = top + i * rowH
    out.push(`<text x="${left - 8}" y="${y + rowH / 2 + 2}" text-anchor="end">${esc(name)}</text>`)
    series.forEach((s, j) => {
      const r = s.ratios[id] ?? null
      const yb = y + 4 + j * barH
      if (r === null || r <= 0) {
        out.push(`<text x="${xOf(1) + 4}" y="${yb + barH - 2}" fill="#999" font-size="10">n/a</text>`)
        return
      }
      const x1 = Math.min(xOf(1), xOf(r))
      const w = Math.max(1, Math.abs(xOf(r) - xOf(1)))
      out.push(
        `<rect x="${x1.toFixed(1)}" y="${yb}" width="${w.toFixed(1)}" height="${barH - 2}" fill="${s.color}"><title>${esc(`${name} ${s.name}: ${label(r)}`)}</title></rect>`,
      )
      const tx = r >= 1 ? x1 + w + 4 : x1 - 4
      out.push(
        `<text x="${tx.toFixed(1)}" y="${yb + barH - 2}" font-size="10" text-anchor="${r >= 1 ? "start" : "end"}">${label(r)}</text>`,
      )
    })
  })
  series.forEach((s, j) => {
    const lx = left + j * 160
    const ly = 48
    out.push(`<rect x="${lx}" y="${ly}" width="12" height="10" fill="${s.color}"/>`)
    out.push(`<text x="${lx + 18}" y="${ly + 9}">${esc(s.name)}</text>`)
  })
  out.push("</svg>")
  return `${out.join("\n")}\n`
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const input = process.argv[2] ?? newestResultFile("full")
  if (input === undefined) throw new Error("no full run in bench/results/: run `npm run bench` or name a result file")
  const output = process.argv[3] ?? join(ROOT, "docs", "performance.svg")
  writeFileSync(output, renderChart(JSON.parse(readFileSync(input, "utf8")) as ResultLike))
  console.log(`wrote ${output}`)
}
