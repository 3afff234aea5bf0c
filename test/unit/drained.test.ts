/**
 * The worker's `drained` rule (loop/Drained.ts), without Redis. The race it closes: a
 * job's first attempt fails and is retried at once; a reserve call sent while that fail was
 * out ran in Redis before it, found nothing and landed after the fail's answer. Its short
 * answer said nothing of the queue as it then was (the retried job waited in it), and the
 * worker was told `drained` with a job of its own still to run (seen in the suite at 4
 * files at a time: `worker-drained.test.ts`, "failed, drained, completed, drained").
 */
import { describe, expect, it } from "vitest"
import { lookAgain, noteLanded, noteRunOver } from "../../src/engine/worker/loop/Drained.ts"
import type { LoopDeps } from "../../src/engine/worker/loop/LoopDeps.ts"
import { makeScheduling } from "../../src/engine/worker/loop/Scheduling.ts"

/** A running worker with nothing of its own in hand, counting its `drained` events. */
const worker = () => {
  const told: string[] = []
  const ctx = {
    hooks: { drained: () => told.push("drained") },
    idle: { hadWork: false, empty: false, looks: 0 },
    sched: makeScheduling(),
    state: "running",
    table: { held: new Map() },
  } as unknown as LoopDeps
  return { ctx, told }
}

describe("drained", () => {
  it("a short reserve sent before a job went back to the queue does not make the worker idle; the next one does", () => {
    const { ctx, told } = worker()
    noteLanded(ctx, 1, false, ctx.idle.looks) // the job started
    const sentBeforeTheFail = ctx.idle.looks // a reserve goes out while the job's fail is out
    lookAgain(ctx) // the fail answered: the job is back in the queue for its retry
    noteRunOver(ctx) // its run is over (its lease left the table)
    noteLanded(ctx, 0, true, sentBeforeTheFail) // the early reserve lands, short
    expect(told).toEqual([])
    noteLanded(ctx, 1, false, ctx.idle.looks) // the next reserve takes the retry
    noteRunOver(ctx)
    noteLanded(ctx, 0, true, ctx.idle.looks) // and the one after finds the queue empty
    expect(told).toEqual(["drained"])
  })

  it("a short reserve sent after the job went back still tells drained once the worker holds nothing", () => {
    const { ctx, told } = worker()
    noteLanded(ctx, 1, false, ctx.idle.looks)
    lookAgain(ctx)
    noteRunOver(ctx)
    noteLanded(ctx, 0, true, ctx.idle.looks) // sent after: the retry was taken by another worker
    expect(told).toEqual(["drained"])
  })
})
