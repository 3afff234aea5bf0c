/**
 * Two source trees' scripts interleaved call by call on one Redis, so that whatever else
 * the machine does falls on both alike; SLOWLOG (threshold 0) gives each call's time.
 * Per tree: add (one job a call), reserve (50 a call, the previous calls' jobs riding
 * every third call) and complete (one job a call), then the median and mean µs a call.
 *
 *   node bench/scripts-interleaved.ts <treeA> <treeB> <redis port> [calls=20000]
 *
 * The Redis at `<port>` is FLUSHALLed. Used for docs/performance.md, round seven.
 */
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { Redis } from "ioredis"

const [ta, tb, port = "6399", callsArg = "20000"] = process.argv.slice(2)
const calls = Number(callsArg)
const r = new Redis(`redis://127.0.0.1:${port}`)
// a tree laid out before or after the engine's folders (calls/, model/)
const inTree = (tree: string, now: string, before: string) =>
  existsSync(resolve(tree, now)) ? resolve(tree, now) : resolve(tree, before)
const load = async (tree: string) => {
  const { Scripts } = await import(inTree(tree, "src/engine/calls/Scripts.ts", "src/engine/Scripts.ts"))
  const { queueKeys } = await import(inTree(tree, "src/engine/model/Keys.ts", "src/engine/Keys.ts"))
  return { Scripts, queueKeys, tag: tree!.split("/").pop()! }
}
const A = await load(ta!),
  B = await load(tb!)
await r.flushall()
await r.config("SET", "slowlog-max-len", "200000")
const trees = [A, B]
for (const t of trees) for (const s of ["add", "reserve", "complete"]) await r.script("LOAD", t.Scripts[s].source)
const keysOf = (t: typeof A, s: string, q: string) => {
  const k = t.queueKeys(q)
  return t.Scripts[s].keys.map((n: string) => k[n])
}
const call = (t: typeof A, s: string, q: string, input: unknown) => {
  const d = t.Scripts[s]
  const ks = keysOf(t, s, q)
  return r.evalsha(d.sha, ks.length, ...ks, ...d.args(input))
}
const job = (t: string, i: number) => ({
  id: `job-${t}-${i}-abcdefghijk`,
  payload: JSON.stringify({ n: i, s: "x".repeat(32) }),
  delayMs: 0,
  maxAttempts: 3,
  dedupeKey: "",
  dedupeTtlMs: -1,
  timeoutMs: 0,
})
const times = new Map<string, number[]>()
const labels = new Map<string, string>()
for (const t of trees) for (const s of ["add", "reserve", "complete"]) labels.set(t.Scripts[s].sha, `${s} ${t.tag}`)
const collect = async () => {
  const entries = (await r.slowlog("GET", "-1")) as Array<[number, number, number, string[]]>
  for (const e of entries) {
    const label = String(e[3]?.[0]).toLowerCase() === "evalsha" ? labels.get(String(e[3][1])) : undefined
    if (label === undefined) continue
    if (!times.has(label)) times.set(label, [])
    times.get(label)!.push(e[2])
  }
  await r.slowlog("RESET")
}
const on = async () => {
  await r.slowlog("RESET")
  await r.config("SET", "slowlog-log-slower-than", "0")
}
const off = async () => {
  await r.config("SET", "slowlog-log-slower-than", "10000")
  await collect()
}
// add: one job a call, alternating trees
await on()
for (let i = 0; i < calls; i++) {
  for (const t of i % 2 ? [A, B] : [B, A])
    await call(t, "add", `q-${t.tag}`, { requestId: `r${t.tag}${i}`, jobs: [job(t.tag, i)] })
  if (i % 5000 === 4999) await collect()
}
await off()
// reserve: 50 a call with the previous call's 50 as riders; then complete: one job a call
const held = new Map<string, Array<{ id: string; token: number }>>()
await on()
for (let i = 0; ; i++) {
  let got = 0
  for (const t of i % 2 ? [A, B] : [B, A]) {
    const prev = held.get(t.tag) ?? []
    const out = t.Scripts.reserve.decode(
      await call(t, "reserve", `q-${t.tag}`, {
        workerId: "w",
        requestId: `x${i}`,
        count: 50,
        leaseMs: 600000,
        promoteLimit: 500,
        keep: 0,
        timeoutMs: 0,
        completes: prev.slice(0, i % 3 === 0 ? prev.length : 0),
      }),
    )
    held.set(t.tag, i % 3 === 0 ? out.jobs : [...prev, ...out.jobs])
    got += out.jobs.length
  }
  if (i % 100 === 99) await collect()
  if (got === 0) break
}
await off()
await on()
const rest = trees.map((t) => held.get(t.tag) ?? [])
for (let i = 0; i < Math.min(...rest.map((x) => x.length)); i++) {
  for (const t of i % 2 ? [A, B] : [B, A]) {
    const j = (t === A ? rest[0] : rest[1])![i]!
    await call(t, "complete", `q-${t.tag}`, { items: [j], keep: 0 })
  }
  if (i % 5000 === 4999) await collect()
}
await off()
for (const [k, v] of [...times].sort()) {
  v.sort((a, b) => a - b)
  const mean = v.reduce((s, x) => s + x, 0) / v.length
  console.log(`${k.padEnd(24)} calls ${v.length}  median ${v[v.length >> 1]} us  mean ${mean.toFixed(2)} us`)
}
r.disconnect()
