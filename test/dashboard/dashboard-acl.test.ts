/**
 * The per-queue ACL of docs/operations.md (the `leaseq-app` line, for one queue) on a
 * prefix holding another queue too: the queue the user may not read is reported
 * unreadable, and the one it may read is still shown, by the dashboard's overview,
 * `/metrics`, `leaseq stats` and `leaseq verify`.
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { dashboardHandler } from "../../src/dashboard.ts"
import { Queue } from "../../src/index.ts"
import { metricsHandler } from "../../src/metrics.ts"
import { runCli } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const PREFIX = "lqacl"
const PASSWORD = "Acl-Pa55word-0123456789"
const name = queueNamer("acl")

/** docs/operations.md's `ACL SETUSER leaseq-app …` line as arguments, for user `user` and queue `queue` under PREFIX. */
const documentedAcl = (user: string, queue: string): string[] => {
  const doc = readFileSync(join(ROOT, "docs/operations.md"), "utf8")
  const block = /<!-- leaseq-acl:[^\n]*-->\n```sh\n([^\n]+)\n```/.exec(doc)?.[1]
  if (!block) throw new Error("docs/operations.md has no leaseq-acl block")
  const words = (block.match(/'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^'|'$/g, ""))
  return words
    .slice(3)
    .map((w) =>
      w.replace("leaseq-app", user).replace("CHANGE-ME", PASSWORD).replace("leaseq:{emails}", `${PREFIX}:{${queue}}`),
    )
}

describe("a per-queue ACL user beside another queue", () => {
  it("overview, /metrics, leaseq stats and verify report the other queue unreadable and still show the user's", async () => {
    const raw = rawClient()
    onCleanup(() => raw.quit())
    const mine = new Queue<number>(name(), { connection: redisUrl(), prefix: PREFIX })
    const other = new Queue<number>(name(), { connection: redisUrl(), prefix: PREFIX })
    onCleanup(() => Promise.all([mine.close(), other.close()]))
    await mine.add(1)
    await other.add(2)
    const user = `lq-acl-${randomBytes(4).toString("hex")}`
    await raw.call("ACL", "SETUSER", ...documentedAcl(user, mine.name))
    onCleanup(() => raw.call("ACL", "DELUSER", user))
    const u = new URL(redisUrl())
    u.username = user
    u.password = PASSWORD
    const url = u.toString()

    const dashboard = dashboardHandler({ connection: url, prefix: PREFIX })
    onCleanup(() => dashboard.close())
    const server = createServer(dashboard)
    onCleanup(() => new Promise((r) => server.close(r)))
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    const res = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/api/overview`)
    const overview = { status: res.status, body: await res.text() }
    expect(overview.status).toBe(200)
    const o = JSON.parse(overview.body) as { queues: Array<{ queue: string }>; unreadable: Array<{ queue: string }> }
    expect(o.queues.map((q) => q.queue)).toEqual([mine.name])
    expect(o.unreadable.map((q) => q.queue)).toEqual([other.name])
    // the queue page (its schedules too) and its job list read under the same user
    await mine.schedule("acl-tick", { every: 60_000 }, { payload: 1 })
    const at = `http://127.0.0.1:${(server.address() as { port: number }).port}/api`
    const page = (await (await fetch(`${at}/queue?name=${mine.name}`)).json()) as { schedules?: { total: number } }
    expect(page.schedules?.total).toBe(1)
    const jobs = (await (await fetch(`${at}/jobs?queue=${mine.name}&state=waiting`)).json()) as {
      page?: { total: number }
    }
    expect(jobs.page?.total).toBe(1)

    const metrics = metricsHandler({ connection: url, prefix: PREFIX })
    onCleanup(() => metrics.close())
    const text = await metrics.render()
    expect(text).toContain(`leaseq_jobs{queue="${mine.name}",state="waiting"} 1`)
    expect(text).toContain(`leaseq_queue_unreadable{queue="${other.name}"} 1`)

    const stats = await runCli(["stats", "--url", url, "--prefix", PREFIX, "--json"])
    expect(stats.code, stats.err).toBe(0)
    const report = JSON.parse(stats.out) as { queues: Array<{ queue: string; waiting: number }> }
    expect(report.queues.map((q) => [q.queue, q.waiting])).toEqual([[mine.name, 1]])
    expect(stats.err).toContain(other.name)
    expect(stats.err).not.toContain(PASSWORD)

    const verify = await runCli(["verify", "--url", url, "--prefix", PREFIX])
    expect(verify.code, verify.err).toBe(0)
    expect(verify.out).toContain(`${mine.name}: ok`)
    expect(verify.err).toContain(other.name)
  })
})
