/**
 * A lost reply, end to end: the client reaches Redis through a TCP proxy that drops the
 * replies, then the connection is cut and healed, so ioredis re-sends the call. A retry
 * that ran, and whose job then ran and completed again, must not queue it a second time.
 */
import { describe, expect, it } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { newJob, run } from "../support/jobs.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, sharedClients } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("ops-resend")
const shared = sharedClients()

describe("a re-sent operator's call", () => {
  it("retry: the re-send answers the first call's state and queues nothing more", async () => {
    const q = name()
    const keys = queueKeys(q)
    const c = makeCommands(shared.client, keys)
    const job = newJob()
    await run(c.add([job]))
    const complete = async () => {
      const [lease] = (await run(c.reserve(1, 60_000, 0))).jobs
      expect(lease?.id).toBe(job.id)
      await run(c.complete([{ id: lease!.id, token: lease!.token }]))
    }
    await complete()
    const proxy = await proxyToSuiteRedis()
    const queue = useQueue(q, { connection: proxy.url })
    // the script loaded (a refused call writes nothing), so the lost reply is the call's own, not a NOSCRIPT
    await expect(queue.retry("warm-up")).rejects.toMatchObject({ _tag: "WrongJobState" })
    proxy.dropReplies()
    const pending = queue.retry(job.id)
    await until("the retry ran on Redis", async () => (await shared.raw.lrange(keys.wait, 0, -1)).includes(job.id))
    // the job runs and completes again before the client hears back
    await complete()
    proxy.cut()
    proxy.heal()
    expect(await pending).toBe("completed")
    expect(await shared.raw.llen(keys.wait)).toBe(0)
    expect(await shared.raw.zscore(keys.done, job.id)).not.toBeNull()
    expect((await queue.stats()).counters.retried).toBe(1)
  })
})
