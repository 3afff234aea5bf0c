/**
 * A job holder, run as a child process by the benchmark: it starts one worker
 * of the given library (or several, see startWorkers) with a handler that never finishes, waits until `n`
 * jobs are in flight, prints `held <n>` and then just keeps them (heartbeats
 * and lock renewals keep running) until the parent SIGKILLs it — a crash, as
 * far as Redis can tell. It exits by itself after 10 minutes or when its
 * stdin closes (the parent went away).
 *
 *   node bench/holder.ts <lib> <redis-url> <queue> <n> <leaseMs>
 */
import { createAdapter } from "./adapters/index.ts"
import type { LibName } from "./adapters/types.ts"
import { sleep } from "./lib/stats.ts"
import { startWorkers } from "./lib/workers.ts"

const [lib, url, queue, nText, leaseText] = process.argv.slice(2)
if (!lib || !url || !queue || !nText || !leaseText) {
  console.error("usage: node bench/holder.ts <lib> <redis-url> <queue> <n> <leaseMs>")
  process.exit(2)
}
const n = Number(nText)
setTimeout(() => process.exit(3), 10 * 60_000).unref()
process.stdin.on("end", () => process.exit(0))
process.stdin.resume()

const adapter = await createAdapter(lib as LibName, url)
await startWorkers(adapter, queue, n, {
  leaseMs: Number(leaseText),
  holder: true,
  handler: (job) =>
    new Promise((_, reject) => {
      job.signal?.addEventListener("abort", () => reject(new Error("aborted")))
    }),
})
const deadline = Date.now() + 5 * 60_000
for (;;) {
  const c = await adapter.counts(queue)
  if (c.active >= n) break
  if (Date.now() > deadline) {
    console.error(`holder: only ${c.active} of ${n} in flight after 5 minutes`)
    process.exit(4)
  }
  await sleep(50)
}
process.stdout.write(`held ${n}\n`)
