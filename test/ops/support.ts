/**
 * What the operator's-call tests share: a queue with one job in every state, made through
 * the real scripts (add, reserve, complete, fail, cancel), and a look at where a job is.
 */

import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { ListState } from "../../src/engine/queue/OpsApi.ts"
import { Queue } from "../../src/index.ts"
import type { RedisClient } from "../../src/redis/Client.ts"
import { onCleanup } from "../support/cleanup.ts"
import { newJob, run } from "../support/jobs.ts"
import { redisUrl } from "../support/redis.ts"

/** The six states a job can be listed in, in the order {@link jobInEveryState} makes them. */
export const STATES: ReadonlyArray<ListState> = ["active", "completed", "dead", "cancelled", "waiting", "delayed"]

/** A queue with one job in each of {@link STATES} (completed and cancelled ones retained): the ids by state. */
export const jobInEveryState = async (client: RedisClient, q: string) => {
  const queue = new Queue<{ n: number }>(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  const keys = queueKeys(q)
  const c = makeCommands(client, keys)
  const take = async () => (await run(c.reserve(1, 60_000, 0))).jobs[0]!
  const ids = {} as Record<ListState, string>
  // each added then leased at once, so the next reserve takes the next one
  for (const state of ["completed", "dead", "cancelled", "active"] as const) {
    const job = newJob({ maxAttempts: 1 })
    await run(c.add([job]))
    const lease = await take()
    ids[state] = lease.id
    if (state === "completed") await run(c.complete([{ id: lease.id, token: lease.token, result: "7" }]))
    if (state === "dead") {
      await run(c.fail({ id: lease.id, token: lease.token }, { delayMs: 0, error: '{"message":"x"}', mode: "dead" }))
    }
    if (state === "cancelled") await queue.cancel(lease.id)
  }
  ids.waiting = await queue.add({ n: 1 })
  ids.delayed = await queue.add({ n: 2 }, { delayMs: 3_600_000 })
  return { queue, keys, c, ids }
}
