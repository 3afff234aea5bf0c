/**
 * What `leaseq job` and `leaseq jobs` print of a named, failed job (their text forms, fed
 * with what the queue answers on a real Redis): the name, every attempt's error, the logs,
 * and the rows' name, attempt and error / result columns.
 */
import { describe, expect, it } from "vitest"
import { formatJob } from "../../src/cli/Jobs.ts"
import { formatPage } from "../../src/cli/Ops.ts"
import { queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("job-cli-view")

describe("leaseq job / jobs text", () => {
  it("shows the name, each attempt's error and the log lines; the rows the name, attempts and last error", async () => {
    const q = name()
    const queue = useQueue<{ to: string }>(q)
    await queue.setRetention({ completed: { count: 5 } })
    const id = await queue.add({ to: "a@x" }, { name: "email", maxAttempts: 2 })
    const ok = await queue.add({ to: "b@x" }, { name: "resize" })
    useWorker<{ to: string }>(
      q,
      async (job) => {
        await job.log(`try ${job.attempt}`)
        if (job.payload.to === "a@x") throw new Error(`smtp ${job.attempt}`)
        return { sent: true }
      },
      { backoff: { type: "fixed", delayMs: 0 } },
    )
    await until("dead and completed", async () => {
      const [a, b] = [await queue.getJob(id), await queue.getJob(ok)]
      return a?.state === "dead" && b?.state === "completed"
    })
    // the CLI reads payloads as stored text
    const info = (await queue.getJob(id))!
    const text = formatJob(q, { ...info, payload: JSON.stringify(info.payload) })
    expect(text).toContain("name:        email\n")
    expect(text).toMatch(/attempt 1: +\S+ failed: Error: smtp 1\n/)
    expect(text).toMatch(/attempt 2: +\S+ failed: Error: smtp 2\n/)
    expect(text).toContain("log:         try 1\nlog:         try 2\n")
    const asText = <P>(page: { jobs: Array<{ payload: P | null }> }) =>
      ({ ...page, jobs: page.jobs.map((j) => ({ ...j, payload: JSON.stringify(j.payload) })) }) as never
    const dead = formatPage(q, "dead", asText(await queue.getJobs("dead")))
    expect(dead).toMatch(/name +attempt +error \/ result +payload/)
    expect(dead).toMatch(new RegExp(`${id} .* email +2/2 +failed: Error: smtp 2 `))
    const done = formatPage(q, "completed", asText(await queue.getJobs("completed")))
    expect(done).toMatch(new RegExp(`${ok} .* resize +1/3 +\\{"sent":true\\} `))
  })
})
