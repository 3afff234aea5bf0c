/**
 * What loading leaseq costs, beside BullMQ: the CPU of `import("leaseq")` and of
 * `import("bullmq")` in a fresh Node process (process.cpuUsage around the import), and
 * the wall time of `leaseq --help` as a process, for one or more source trees side by
 * side (the figures of bench/HISTORY.md, "Import cost"). Each figure is the median of
 * `runs` child processes, the targets taken in turn within each repetition.
 *
 *   node bench/import.ts [runs=7] [tree…]
 *
 * `<tree>`: a checkout of leaseq (default `.`), e.g. `.` and an unpacked older commit with
 * node_modules linked. Its `src/` is measured (Node strips the types: the repository's
 * own CLI tests run it so) and, when it is built (`npm run build`), its `dist/` (what a
 * user of the package loads). BullMQ is the devDependency of this checkout.
 */
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { loadavg } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { ROOT } from "./paths.ts"

const [runsArg = "7", ...treeArgs] = process.argv.slice(2)
const runs = Number(runsArg)
if (!Number.isInteger(runs) || runs < 1) throw new Error(`runs: ${runsArg} is not a whole number ≥ 1`)
const trees = (treeArgs.length > 0 ? treeArgs : ["."]).map((t) => resolve(t))

/** A child that imports `specifier` and prints the CPU ms the import took. */
const importCpu = (specifier: string, cwd: string): number => {
  const code = `const t = process.cpuUsage(); await import(${JSON.stringify(specifier)}); const u = process.cpuUsage(t); process.stdout.write(String((u.user + u.system) / 1000))`
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd, encoding: "utf8" })
  if (r.status !== 0) throw new Error(`import ${specifier} failed: ${r.stderr}`)
  return Number(r.stdout)
}

/** The wall ms of `node <main> --help`, from spawn to exit. */
const helpWall = (main: string): number => {
  const start = performance.now()
  const r = spawnSync(process.execPath, [main, "--help"], { encoding: "utf8" })
  const ms = performance.now() - start
  if (r.status !== 0) throw new Error(`${main} --help exited ${r.status}: ${r.stderr}`)
  return ms
}

interface Target {
  readonly label: string
  readonly measure: () => number
}

const targets: Target[] = [{ label: "import(bullmq) CPU", measure: () => importCpu("bullmq", ROOT) }]
for (const tree of trees) {
  const name = tree === ROOT ? "." : tree
  targets.push({
    label: `${name} import(src) CPU`,
    measure: () => importCpu(pathToFileURL(join(tree, "src/index.ts")).href, tree),
  })
  targets.push({ label: `${name} src --help wall`, measure: () => helpWall(join(tree, "src/cli/main.ts")) })
  if (existsSync(join(tree, "dist/index.js"))) {
    targets.push({
      label: `${name} import(dist) CPU`,
      measure: () => importCpu(pathToFileURL(join(tree, "dist/index.js")).href, tree),
    })
    targets.push({ label: `${name} dist --help wall`, measure: () => helpWall(join(tree, "dist/cli/main.js")) })
  }
}

const samples = targets.map(() => [] as number[])
for (let i = 0; i < runs; i++) {
  targets.forEach((t, j) => {
    samples[j]!.push(t.measure())
  })
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const width = Math.max(...targets.map((t) => t.label.length))
console.log(`median of ${runs} processes (min–max), ms; load average ${loadavg()[0]!.toFixed(2)} at the end`)
targets.forEach((t, j) => {
  const xs = samples[j]!
  const f = (x: number) => x.toFixed(0)
  console.log(`${t.label.padEnd(width)}  ${f(median(xs)).padStart(5)}  (${f(Math.min(...xs))}–${f(Math.max(...xs))})`)
})
