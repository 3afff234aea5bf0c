// docs/observability.md, "Mount it in your own server". Run: npm run example docs/examples/metrics-handler.ts
import { createServer } from "node:http"
import { Queue } from "leaseq"
import { metricsHandler } from "leaseq/metrics"

const queue = new Queue("metrics-example", { connection: process.env.REDIS_URL })
await queue.add({ to: "ada@example.com" })

// one handler: every queue under the prefix, one reading of Redis per second at most
// #region mount
const metrics = metricsHandler({ connection: process.env.REDIS_URL, prefix: "leaseq" })
const server = createServer((req, res) => {
  if (req.url === "/metrics") return metrics(req, res)
  res.writeHead(404).end()
})
// #endregion
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const { port } = server.address() as { port: number }

const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
console.log(
  text
    .split("\n")
    .filter((line) => line.startsWith('leaseq_jobs{queue="metrics-example"'))
    .join("\n"),
)

server.close()
await metrics.close()
await queue.obliterate() // remove what this example made: its jobs and every key of its queue
await queue.close()
