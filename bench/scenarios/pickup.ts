/**
 * pickup.p50, pickup.p99: how long an idle worker (concurrency 1) takes to start
 * a job after `add` returns, one job at a time with a short gap between samples.
 */
import type { DisposableAdapter } from "../adapters/index.ts"
import { payload } from "../adapters/types.ts"
import { wanted } from "../config.ts"
import { eachRun, QUEUE, type Section, withDeadline } from "../harness.ts"
import { max, quantile, sleep } from "../lib/stats.ts"

/** One latency (ms) per sample: from just before `add` to the handler's start. */
const samplePickups = async (a: DisposableAdapter, samples: number, gapMs: number): Promise<number[]> => {
  const producer = await a.producer(QUEUE)
  let started: (t: number) => void = () => {}
  let completed: () => void = () => {}
  const w = await a.worker(QUEUE, {
    concurrency: 1,
    handler: async () => {
      started(performance.now())
      return undefined
    },
    onCompleted: () => completed(),
  })
  const lat: number[] = []
  try {
    // Warm-up job: connections up and scripts loaded.
    const warm = new Promise<void>((resolve) => {
      completed = resolve
    })
    await producer.add(payload(-1))
    await withDeadline("warm-up", 10_000, warm)
    await sleep(100)
    for (let i = 0; i < samples; i++) {
      const start = new Promise<number>((resolve) => {
        started = resolve
      })
      const done = new Promise<void>((resolve) => {
        completed = resolve
      })
      const t0 = performance.now()
      await producer.add(payload(i))
      const t = await withDeadline(`pickup sample ${i}`, 10_000, start)
      lat.push(t - t0)
      await withDeadline(`completion ${i}`, 10_000, done)
      await sleep(gapMs) // the worker goes idle again: every sample measures a pickup from idle
    }
  } finally {
    await w.close()
    await producer.close()
  }
  return lat
}

export const pickupSection: Section = {
  name: "pickup",
  async run(ctx) {
    if (!wanted(ctx.config, "pickup")) return
    const { pickupSamples: samples, pickupGapMs: gapMs, reps } = ctx.config.sizes
    const r = ctx.results
    const p50 = r.scenario("pickup.p50", `pickup latency p50, idle worker (${samples} samples)`, "ms", "lower")
    const p99 = r.scenario("pickup.p99", `pickup latency p99, idle worker (${samples} samples)`, "ms", "lower")
    ctx.log(`pickup latency (${samples} samples, ${gapMs} ms gap)`)
    await eachRun(
      ctx,
      reps,
      async (a, lib) => {
        const lat = await samplePickups(a, samples, gapMs)
        r.record(p50, lib, quantile(lat, 0.5))
        r.record(p99, lib, quantile(lat, 0.99), { max: max(lat) })
      },
      (lib, reason) => {
        r.markNa(p50, lib, reason)
        r.markNa(p99, lib, reason)
      },
    )
  },
}
