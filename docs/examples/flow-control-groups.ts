// docs/flow-control.md, "Groups". Run: npm run example docs/examples/flow-control-groups.ts
import { Queue, Worker } from "leaseq"

const connection = process.env.REDIS_URL
const queue = new Queue<{ tenant: string; n: number }>("flow-groups", { connection })

// #region groups
// every tenant at most 2 jobs at once; tenant-big also at most 50 leased per second
await queue.setGroupLimits({ concurrency: 2 })
await queue.setGroupLimits("tenant-big", { concurrency: 2, max: 50, perMs: 1000 })

// a backlog of one tenant does not starve another: groups are served round robin
await queue.addBulk(
  Array.from({ length: 100 }, (_, n) => ({ payload: { tenant: "tenant-big", n }, options: { group: "tenant-big" } })),
)
await queue.add({ tenant: "tenant-small", n: 0 }, { group: "tenant-small" })

const page = await queue.groups({ count: 10 })
for (const g of page.groups) console.log(g.group, "waiting", g.waiting, "active", g.active, "paused", g.paused)
// #endregion

const started: Array<string> = []
const waiters = new Map<number, () => void>()
const startedCount = (n: number) => new Promise<void>((resolve) => waiters.set(n, resolve))
const done = startedCount(101)
const worker = new Worker<{ tenant: string; n: number }>(
  "flow-groups",
  async (job) => {
    started.push(job.payload.tenant)
    waiters.get(started.length)?.()
  },
  { connection, concurrency: 4 },
)
await done
const small = started.indexOf("tenant-small")
console.log("tenant-small started as job", small + 1, "of 101")
if (small > 4) throw new Error("tenant-small waited behind tenant-big's backlog")

const last = startedCount(102)
// #region pause
await queue.pauseGroup("tenant-small") // its jobs wait (adds still go in); the others run
await queue.add({ tenant: "tenant-small", n: 1 }, { group: "tenant-small" })
console.log("tenant-small paused:", (await queue.groups()).groups.find((g) => g.group === "tenant-small")?.paused)
await queue.resumeGroup("tenant-small") // served again, idle workers woken
// #endregion
await last

await worker.close()
await queue.setGroupLimits(null) // clears the default; setGroupLimits(group, null) one group's own
await queue.setGroupLimits("tenant-big", null)
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
