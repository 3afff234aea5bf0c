/**
 * One add at a time, warm: leaseq's `queue.add` beside BullMQ's, rounds
 * alternating, each round 2,000 untimed adds (scripts loaded, JIT warm) and then
 * `n` adds each awaited before the next. Prints jobs/s, Node CPU per add
 * (`process.cpuUsage`) and Redis CPU per add (`INFO cpu` before and after).
 * The payload is the bench's (`{ n, s: "x".repeat(32) }`).
 *
 *   REDIS_URL=redis://127.0.0.1:7461 node --conditions=leaseq-source bench/add-one.ts [n=10000] [rounds=3]
 *
 * The Redis it points at is FLUSHALLed at the end.
 */
import { Queue as BullQueue } from "bullmq"
import { Redis } from "ioredis"
import { Queue } from "../src/index.ts"

const n = Number(process.argv[2] ?? 10_000)
const rounds = Number(process.argv[3] ?? 3)
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const admin = new Redis(url)

const redisCpuSeconds = async (): Promise<number> => {
  const info = await admin.info("cpu")
  const sys = /used_cpu_sys:([\d.]+)/.exec(info)
  const user = /used_cpu_user:([\d.]+)/.exec(info)
  return Number(sys?.[1] ?? 0) + Number(user?.[1] ?? 0)
}

const measure = async (name: string, add: (i: number) => Promise<unknown>): Promise<void> => {
  for (let i = 0; i < 2_000; i++) await add(-1)
  const redis0 = await redisCpuSeconds()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) await add(i)
  const ms = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const redisUs = ((await redisCpuSeconds()) - redis0) * 1e6
  const rate = ((n / ms) * 1000).toFixed(0)
  const nodeUs = ((cpu.user + cpu.system) / n).toFixed(1)
  console.log(
    `${name.padEnd(7)} ${rate.padStart(6)}/s  node ${nodeUs} µs/add  redis ${(redisUs / n).toFixed(1)} µs/add`,
  )
}

const payload = (i: number) => ({ n: i, s: "x".repeat(32) })
for (let round = 0; round < rounds; round++) {
  const queue = new Queue<{ n: number; s: string }>(`add-one-leaseq-${round}`, { connection: url })
  await measure("leaseq", (i) => queue.add(payload(i)))
  await queue.close()
  const bull = new BullQueue(`add-one-bullmq-${round}`, { connection: new Redis(url, { maxRetriesPerRequest: null }) })
  await measure("bullmq", (i) => bull.add("j", payload(i)))
  await bull.close()
  await bull.disconnect()
}
await admin.flushall()
admin.disconnect()
