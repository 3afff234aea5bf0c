/**
 * The types of batch workers, on both faces: with `batch` the handler takes `jobs` (each a
 * job with `complete` taking the worker's result type and `fail`), without it a job; the
 * one shape with the other's options is an error. `tsc --noEmit` (npm run typecheck) checks
 * the `@ts-expect-error` lines; at run time nothing here touches Redis (never called).
 */
import { Context, Effect } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { type LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { type BatchJob, Worker } from "../../src/index.ts"

interface Row {
  readonly n: number
}
interface Saved {
  readonly rowId: string
}

describe("Promise face", () => {
  it("with batch the handler takes jobs; complete takes the result type; the shapes do not mix", () => {
    const start = () => {
      const batch = new Worker<Row, Saved>(
        "rows",
        async (jobs) => {
          expectTypeOf(jobs).toEqualTypeOf<ReadonlyArray<BatchJob<Row, Saved>>>()
          expectTypeOf(jobs[0]!.payload).toEqualTypeOf<Row>()
          jobs[0]!.complete({ rowId: "r" })
          jobs[1]!.fail(new Error("bad row"))
          // @ts-expect-error complete takes the worker's result type
          jobs[2]!.complete({ id: 1 })
        },
        { batch: { size: 100, waitMs: 50 } },
      )
      const one = new Worker<Row, Saved>("rows", async (job) => ({ rowId: String(job.payload.n) }))
      const oneJob = async (job: { payload: Row }) => job.payload.n
      // @ts-expect-error a one-job handler with the batch option
      const wrongHandler = new Worker<Row>("rows", oneJob, { batch: { size: 5 } })
      // @ts-expect-error a batch option without its size
      const noSize = new Worker<Row>("rows", async (jobs) => jobs.length, { batch: { waitMs: 5 } })
      return [batch, one, wrongHandler, noSize]
    }
    expectTypeOf(start).toBeFunction()
  })
})

class Rows extends Context.Service<Rows, LeaseQueue.Service<Row, Saved>>()("types/BatchRows") {}

describe("Effect face", () => {
  it("with batch the handler takes jobs; fail and complete are Effects; the shapes do not mix", () => {
    const start = () => {
      const batch = LeaseWorker.make(
        Rows,
        (jobs) => {
          expectTypeOf(jobs[0]!.payload).toEqualTypeOf<Row>()
          expectTypeOf(jobs[0]!.complete({ rowId: "r" })).toEqualTypeOf<Effect.Effect<void>>()
          // @ts-expect-error complete takes the queue's result type
          void jobs[0]!.complete(42)
          return Effect.forEach(jobs, (job) => (job.payload.n < 0 ? job.fail("negative") : Effect.void))
        },
        { batch: { size: 100 } },
      )
      // @ts-expect-error a one-job handler (it reads job.payload) with the batch option
      const wrong = LeaseWorker.make(Rows, (job) => Effect.succeed({ rowId: String(job.payload.n) }), {
        batch: { size: 5 },
      })
      const layer = LeaseWorker.layer(Rows, (jobs) => Effect.log(jobs.length), { batch: { size: 10, waitMs: 0 } })
      return [batch, wrong, layer]
    }
    expectTypeOf(start).toBeFunction()
  })
})
