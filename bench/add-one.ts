/**
 * One add at a time, warm: each library's add through its bench adapter (the same
 * `add` the `add.seq` scenario times), rounds alternating, each round 2,000 untimed
 * adds (scripts loaded, JIT warm) and then `n` adds each awaited before the next.
 * Prints adds/s, Node CPU per add (`process.cpuUsage`) and Redis main-thread CPU per
 * add (`INFO cpu` before and after). The payload is the bench's (`{ n, s: "x".repeat(32) }`).
 *
 *   REDIS_URL=redis://127.0.0.1:7461 node --conditions=leaseq-source bench/add-one.ts [n=10000] [rounds=3]
 *
 * The Redis it points at is FLUSHALLed at the end.
 */
import { Redis } from "ioredis"
import { createAdapter } from "./adapters/index.ts"
import type { LibName, Producer } from "./adapters/types.ts"
import { cpuUs } from "./lib/redis.ts"

const n = Number(process.argv[2] ?? 10_000)
const rounds = Number(process.argv[3] ?? 3)
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const admin = new Redis(url)
const payload = (i: number) => ({ n: i, s: "x".repeat(32) })

const measure = async (lib: LibName, producer: Producer): Promise<void> => {
  for (let i = 0; i < 2_000; i++) await producer.add(payload(-1))
  const redis0 = await cpuUs(admin)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await producer.add(payload(i))
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const redisUs = ((await cpuUs(admin)) - redis0) / n
  const rate = ((n / ms) * 1000).toFixed(0)
  const nodeUs = ((cpu.user + cpu.system) / n).toFixed(1)
  console.log(`${lib.padEnd(7)} ${rate.padStart(6)}/s  node ${nodeUs} µs/add  redis ${redisUs.toFixed(1)} µs/add`)
}

for (let round = 0; round < rounds; round++) {
  for (const lib of ["leaseq", "bullmq"] as const) {
    const adapter = await createAdapter(lib, url)
    const producer = await adapter.producer(`add-one-${lib}-${round}`)
    await measure(lib, producer)
    await producer.close()
    await adapter.dispose()
  }
}
await admin.flushall()
admin.disconnect()
