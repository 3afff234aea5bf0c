/**
 * The operator's calls at 100,000 jobs: Redis time of each script call (SLOWLOG at
 * threshold 0: every EVALSHA logged with its execution time, the commands inside it
 * counted in it) while getJobs pages through 100,000 waiting jobs, and while drain, clean
 * and obliterate remove 100,000 jobs. On a redis-server of its own (from PATH).
 *
 *   node bench/ops.ts [--jobs 100000] [--count 100]
 *
 * Prints one line per phase: calls, the longest call and the median, in ms of Redis time.
 * The targets (issue 25): a page under 5 ms, a drain, clean or obliterate call under 10 ms.
 */
import { parseArgs } from "node:util"
import * as Effect from "effect/Effect"
import { makeCommands } from "../src/engine/calls/Commands.ts"
import { queueKeys } from "../src/engine/model/Keys.ts"
import { Queue } from "../src/index.ts"
import { connect as connectClient } from "../src/redis/Client.ts"
import { startRedisServer } from "../src/testing/RedisServer.ts"
import { connect } from "./lib/redis.ts"

const { values } = parseArgs({ options: { jobs: { type: "string" }, count: { type: "string" } } })
const N = Number(values.jobs ?? 100_000)
const COUNT = Number(values.count ?? 100)
const server = await startRedisServer()
const raw = connect(server.url)
const queue = new Queue<{ n: number; s: string }>("ops-bench", { connection: server.url })
const client = connectClient(server.url)
const c = makeCommands(client, queueKeys("ops-bench"))
const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)

const addWaiting = async (n: number) => {
  for (let i = 0; i < n; i += 10_000) {
    const size = Math.min(10_000, n - i)
    await queue.addBulk(Array.from({ length: size }, (_, k) => ({ payload: { n: i + k, s: "x".repeat(32) } })))
  }
}

/** Every job waiting leased and completed (all retained: the queue's retention count N * 2), 1,000 per reserve. */
const finishAll = async (how: "completed" | "dead") => {
  if (how === "completed") await queue.setRetention({ completed: { count: N * 2 } })
  for (;;) {
    const { jobs } = await run(c.reserve(1000, 600_000, 0))
    if (jobs.length === 0) return
    if (how === "completed") await run(c.complete(jobs.map((j) => ({ id: j.id, token: j.token }))))
    else {
      await Promise.all(jobs.map((j) => run(c.fail(j, { delayMs: 0, error: '{"message":"x"}', mode: "dead" }))))
    }
  }
}

/** Run `f` with SLOWLOG logging every command; the EVALSHA calls' Redis times (µs). */
const timed = async (f: () => Promise<unknown>): Promise<number[]> => {
  await raw.config("SET", "slowlog-log-slower-than", "0")
  await raw.config("SET", "slowlog-max-len", "1000000")
  await raw.slowlog("RESET")
  await f()
  const log = (await raw.slowlog("GET", 1_000_000)) as Array<[number, number, number, string[]]>
  await raw.config("SET", "slowlog-log-slower-than", "-1")
  return log.filter((e) => String(e[3][0]).toLowerCase() === "evalsha").map((e) => e[2])
}

/**
 * One line per phase. SLOWLOG times are wall time inside Redis: on a loaded machine a call
 * the OS preempts shows as a long one, so the median, p99 and the calls over 5 and 10 ms
 * are printed beside the max.
 */
const report = (phase: string, us: number[]) => {
  const s = [...us].sort((a, b) => a - b)
  const ms = (v: number | undefined) => ((v ?? 0) / 1000).toFixed(2)
  const over = (limit: number) => s.filter((v) => v > limit).length
  console.log(
    `${phase.padEnd(44)} calls ${String(s.length).padStart(5)}  median ${ms(s[Math.floor(s.length / 2)])}  p99 ${ms(s[Math.floor(s.length * 0.99)])}  max ${ms(s.at(-1))} ms  over 5 ms: ${over(5000)}, over 10 ms: ${over(10_000)}`,
  )
}

try {
  await addWaiting(N)
  for (const order of ["asc", "desc"] as const) {
    report(
      `getJobs("waiting", ${order}) ${N} by ${COUNT}`,
      await timed(async () => {
        let cursor: string | undefined
        do cursor = (await queue.getJobs("waiting", { count: COUNT, order, ...(cursor ? { cursor } : {}) })).cursor
        while (cursor !== undefined)
      }),
    )
  }
  report(`drain() of ${N} waiting`, await timed(() => queue.drain()))
  await addWaiting(N)
  await finishAll("completed")
  report(
    `getJobs("completed") ${N} by ${COUNT}`,
    await timed(async () => {
      let cursor: string | undefined
      do cursor = (await queue.getJobs("completed", { count: COUNT, ...(cursor ? { cursor } : {}) })).cursor
      while (cursor !== undefined)
    }),
  )
  report(`clean("completed") of ${N}`, await timed(() => queue.clean("completed")))
  await addWaiting(N)
  await finishAll("dead")
  report(`clean("dead") of ${N}`, await timed(() => queue.clean("dead")))
  await addWaiting(N)
  await finishAll("completed")
  await addWaiting(N)
  report(`obliterate() of ${2 * N} (waiting + completed)`, await timed(() => queue.obliterate()))
} finally {
  await queue.close()
  await client.close()
  raw.disconnect()
  await server.stop()
}
