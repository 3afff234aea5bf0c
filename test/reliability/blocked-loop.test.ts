/**
 * Scenario 4 — event loop blocked. A worker process's handler busy-waits synchronously
 * (no heartbeat, no timer can run) until the job has been reclaimed and completed by
 * another worker. When the loop comes back, the blocked worker finds its lease gone
 * (self-fenced or told by Redis), never acknowledges, and the job completes once. Both
 * outcomes are allowed; the runs so far always saw Redis refuse the complete (the
 * handler's return reaches it before the overdue fence timer runs).
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { Job } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { startWorkerChild } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { report } from "../support/figures.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { tempDir } from "../support/tmp.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-blocked")
const LEASE_MS = 1_000
let tmp: ReturnType<typeof tempDir>
beforeAll(() => {
  tmp = tempDir("blocked")
})
afterAll(() => {
  tmp.remove()
})

describe("event loop blocked", () => {
  it("a handler that blocks the event loop past its lease: its late complete is refused, the job completes once elsewhere", async () => {
    const q = name()
    const keys = queueKeys(q)
    const release = join(tmp.dir, `${q}.unblock`)
    const queue = useQueue(q)
    const blocked = startWorkerChild(redisUrl(), q, "block", { leaseMs: LEASE_MS, sweep: false })
    onCleanup(() => writeFileSync(release, "")) // let a handler still blocked return before the child is stopped
    await blocked.waitFor((l) => l === "ready", "ready")
    const id = await queue.add({ until: release })
    const startLine = await blocked.waitFor((l) => l.startsWith(`started ${id} `), "started")
    const token = Number(startLine.text.split(" ")[2])

    // another worker (in this process) sweeps, reclaims after the lease, and completes
    const other = useWorker(q, async () => "ok", { leaseMs: LEASE_MS, sweep: { intervalMs: 100 } })
    const done = new Promise<Job<unknown>>((resolve) => other.on("completed", (job) => resolve(job)))
    const again = await done
    expect(again.id).toBe(id)
    expect(again.attempt).toBe(2)
    expect(again.token).toBeGreaterThan(token)

    // the blocked process has printed nothing since "started": its loop is still blocked
    expect(blocked.lines.at(-1)?.text).toBe(startLine.text)
    writeFileSync(release, "")
    await blocked.waitFor((l) => l.startsWith(`unblocked ${id}`), "unblocked")
    const lost = await blocked.waitFor((l) => l.startsWith(`lease-lost ${id} ${token} `), "lease-lost")
    const reason = lost.text.split(" ")[3]
    expect(["self-fenced", "lease-lost"]).toContain(reason)
    const abortedLine = blocked.lines.find((l) => l.text.startsWith(`aborted ${id} ${token} `))
    if (reason === "self-fenced") expect(abortedLine).toBeDefined()

    // a complete under the blocked worker's token is refused
    const client = connect(redisUrl())
    onCleanup(() => client.close())
    const late = await Effect.runPromise(makeCommands(client, keys).complete([{ id, token }]))
    expect(late).toEqual([false])

    const exit = await blocked.stop("SIGTERM")
    expect(exit.code).toBe(0)
    expect(blocked.lines.some((l) => l.text.startsWith("done "))).toBe(false)
    const stats = await queue.stats()
    expect(stats.counters).toMatchObject({ completed: 1, lostLeases: 1 })
    expect(stats).toMatchObject({ waiting: 0, active: 0, dead: 0 })

    report("blocked-event-loop", {
      leaseMs: LEASE_MS,
      blockedWorkerOutcome: reason === "self-fenced" ? "self-fenced (signal aborted)" : "complete refused (lease-lost)",
      signalAborted: abortedLine !== undefined,
      completed: stats.counters.completed,
      lostLeases: stats.counters.lostLeases,
    })
  })
})
