// docs/dashboard.md, "Mount it in your own server". Run: npm run example docs/examples/dashboard-handler.ts
import { createServer } from "node:http"
import { Queue } from "leaseq"
import { dashboardHandler } from "leaseq/dashboard"

const queue = new Queue("dashboard-example", { connection: process.env.REDIS_URL })
await queue.add({ to: "ada@example.com" })

// #region mount
// with Redis unreachable, a reading fails after callTimeoutMs (503, and the page says so)
const dashboard = dashboardHandler({ connection: process.env.REDIS_URL, hidePayloads: true, callTimeoutMs: 5_000 })
const server = createServer((req, res) => {
  // your own authentication first: the dashboard has none of its own
  if (req.headers.authorization !== `Bearer ${process.env.DASHBOARD_SECRET ?? "change-me"}`) {
    res.writeHead(401).end()
    return
  }
  // mounted under /queues/: strip the prefix, the page uses relative links
  if (req.url?.startsWith("/queues/")) {
    req.url = req.url.slice("/queues".length)
    return dashboard(req, res)
  }
  res.writeHead(404).end()
})
// #endregion
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const { port } = server.address() as { port: number }

const auth = { authorization: `Bearer ${process.env.DASHBOARD_SECRET ?? "change-me"}` }
console.log("without auth:", (await fetch(`http://127.0.0.1:${port}/queues/`)).status)
const overview = await (await fetch(`http://127.0.0.1:${port}/queues/api/overview`, { headers: auth })).json()
const mine = overview.queues.find((q: { queue: string }) => q.queue === "dashboard-example")
console.log("dashboard-example waiting:", mine.waiting > 0)

server.close()
await dashboard.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
