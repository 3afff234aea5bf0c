/**
 * The key layout upgrade's figures (docs/operations.md, "Upgrading the key layout"): a
 * queue of layout 1 filled by the frozen layout 1 engine (test/fixtures/layout1) with
 * `waiting` jobs, `active` of them held by a layout 1 worker and as many by a layout 2
 * worker (handlers that never finish), then `queue.upgrade({ force: true })` of this tree
 * (force: the layout 1 worker stays live). Prints the upgrade's duration, its calls, the
 * longest call as the client saw it and as Redis ran it (SLOWLOG at threshold 0 during the
 * upgrade), and the memory before and after.
 *
 *   node --conditions=leaseq-source bench/upgrade.ts <redis port> [waiting=1000000] [active=2000]
 *
 * The Redis at `<port>` is FLUSHALLed.
 */
import { join } from "node:path"
import { loadScript } from "../src/engine/scripts/Script.ts"
import { Queue, Worker } from "../src/index.ts"
import { connect, usedMemory } from "./lib/redis.ts"

const [port = "6379", waitingArg = "1000000", activeArg = "2000"] = process.argv.slice(2)
const waiting = Number(waitingArg)
const active = Number(activeArg)
const connection = `redis://127.0.0.1:${port}`
const admin = connect(connection)
await admin.flushall()

type OldQueue = { addBulk(jobs: ReadonlyArray<{ payload: unknown }>): Promise<unknown>; close(): Promise<void> }
type OldWorker = { close(): Promise<void> }
const old = (await import(join(import.meta.dirname, "../test/fixtures/layout1/dist/index.js"))) as {
  Queue: new (name: string, o: object) => OldQueue
  Worker: new (name: string, h: () => Promise<void>, o: object) => OldWorker
}
const q = "upgrade-bench"
const oldQ = new old.Queue(q, { connection })
const t0 = performance.now()
for (let i = 0; i < waiting + 2 * active; i += 1000) {
  const n = Math.min(1000, waiting + 2 * active - i)
  await oldQ.addBulk(Array.from({ length: n }, (_, k) => ({ payload: { n: i + k, s: "x".repeat(32) } })))
}
console.log(
  `filled ${waiting + 2 * active} jobs with the layout 1 engine in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
)

const never = () => new Promise<void>(() => {})
const inFlight = async () => Number(await admin.zcard(`leaseq:{${q}}:active`))
const oldW = new old.Worker(q, never, { connection, concurrency: active, prefetch: 0, shutdownGraceMs: 0 })
while ((await inFlight()) < active) await new Promise((r) => setTimeout(r, 50))
const newW = new Worker(q, never, { connection, concurrency: active, prefetch: 0, shutdownGraceMs: 0 })
while ((await inFlight()) < 2 * active) await new Promise((r) => setTimeout(r, 50))
const mem0 = await usedMemory(admin)

const queue = new Queue(q, { connection })
await admin.config("SET", "slowlog-max-len", "100000")
await admin.config("SET", "slowlog-log-slower-than", "0")
await admin.slowlog("RESET")
const u0 = performance.now()
const result = await queue.upgrade({ force: true })
const ms = performance.now() - u0
await admin.config("SET", "slowlog-log-slower-than", "10000")
const entries = (await admin.slowlog("GET", "-1")) as Array<[number, number, number, string[]]>
const sha = loadScript("upgrade").sha
const calls = entries.filter((e) => String(e[3]?.[0]).toLowerCase() === "evalsha" && e[3]?.[1] === sha)
const longest = Math.max(...calls.map((e) => e[2]))
if (process.env.UPGRADE_CALLS)
  console.log(
    calls
      .map((e) => e[2])
      .reverse()
      .join(" "),
  )
const mem1 = await usedMemory(admin)
console.log(
  `upgrade of ${waiting} waiting + ${2 * active} active (${active} leased by a layout 1 worker): ${ms.toFixed(0)} ms, ${result.steps} calls, ${result.moved} entries moved; longest call ${result.longestCallMs} ms (client), ${longest} us (Redis, of ${calls.length} upgrade calls); done ${result.done}, layout ${result.layout}`,
)
console.log(`memory ${(mem0 / 1e6).toFixed(1)} MB before, ${(mem1 / 1e6).toFixed(1)} MB after`)
await admin.slowlog("RESET")
await Promise.race([Promise.all([newW.close(), oldW.close()]), new Promise((r) => setTimeout(r, 3000))])
await queue.close()
await oldQ.close()
await admin.flushall()
admin.disconnect()
process.exit(0)
