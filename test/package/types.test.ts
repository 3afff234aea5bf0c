/**
 * Types that guide, on both faces: a queue's result type flows to `getJob` and `waitFor`
 * (and a worker's to its `completed` event), a dead job's reason is the union of its
 * documented values, `dedupeTtlMs` / `dedupeUntil` type-check only with a `dedupeKey`, and a
 * misspelt event name is an error naming the type of event names; a child's result type, as
 * declared, flows into the parent's `dependencies()` and `getDependencies`. `tsc --noEmit` (npm run
 * typecheck, in CI) checks the `@ts-expect-error` lines: each must be an error. At run time
 * nothing here touches Redis (the functions are never called).
 */
import { Context, Effect } from "effect"
import { describe, expectTypeOf, it } from "vitest"
import { type LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import {
  type DeadReason,
  type FinishedJob,
  type JobInfo,
  type JobOptions,
  type Queue,
  Worker,
  type WorkerEventName,
  type WorkerEvents,
} from "../../src/index.ts"

interface Mail {
  readonly to: string
}
interface Sent {
  readonly messageId: string
}

describe("Promise face", () => {
  it("a child's result type flows into the parent's dependencies() and getDependencies where declared", () => {
    const parent = () =>
      new Worker<Mail>("parents", async (job) => {
        const page = await job.dependencies!<Sent>()
        expectTypeOf(page.children[0]!.value).toEqualTypeOf<Sent | undefined>()
        // @ts-expect-error a declared result type is not any: no such field
        void page.children[0]!.value?.subject
        const untyped = await job.dependencies!()
        expectTypeOf(untyped.children[0]!.value).toEqualTypeOf<unknown>()
        return page.children.map((c) => c.value?.messageId)
      })
    type P = Awaited<ReturnType<Queue<Mail>["getDependencies"]>>
    expectTypeOf<P["children"][number]["value"]>().toEqualTypeOf<unknown>()
    const read = (q: Queue<Mail>) => q.getDependencies<Sent>("id")
    expectTypeOf<Awaited<ReturnType<typeof read>>["children"][number]["value"]>().toEqualTypeOf<Sent | undefined>()
    expectTypeOf(parent).toBeFunction()
  })

  it("Queue<Payload, Result>: getJob and waitFor give the result type", () => {
    type Q = Queue<Mail, Sent>
    expectTypeOf<Awaited<ReturnType<Q["getJob"]>>>().toEqualTypeOf<JobInfo<Mail, Sent> | undefined>()
    expectTypeOf<NonNullable<Awaited<ReturnType<Q["getJob"]>>>["result"]>().toEqualTypeOf<Sent | undefined>()
    expectTypeOf<Awaited<ReturnType<Q["waitFor"]>>>().toEqualTypeOf<FinishedJob<Sent>>()
    expectTypeOf<Awaited<ReturnType<Q["waitFor"]>>["result"]>().toEqualTypeOf<Sent | undefined>()
    // without a result type, as before: unknown
    expectTypeOf<Awaited<ReturnType<Queue<Mail>["waitFor"]>>["result"]>().toEqualTypeOf<unknown>()
  })

  it("a worker's completed event has its handler's result; dead has the documented reasons", () => {
    const listen = (worker: Worker<Mail, Sent>) => {
      worker.on("completed", (job, result) => {
        expectTypeOf(job.payload).toEqualTypeOf<Mail>()
        expectTypeOf(result).toEqualTypeOf<Sent>()
      })
      worker.on("dead", (_job, reason) => {
        expectTypeOf(reason).toEqualTypeOf<DeadReason>()
      })
      // @ts-expect-error a misspelt event name: not assignable to 'WorkerEventName'
      worker.on("completd", () => {})
      // @ts-expect-error once and off check the name too
      worker.once("deadd", () => {})
    }
    expectTypeOf(listen).toBeFunction()
    expectTypeOf<DeadReason>().toEqualTypeOf<
      "failed" | "timeout" | "invalid-payload" | "lease-expired" | "missing-data"
    >()
    expectTypeOf<WorkerEventName>().toEqualTypeOf<keyof WorkerEvents<unknown, unknown>>()
    expectTypeOf(Worker<Mail, Sent>).toBeConstructibleWith("mails", async () => ({ messageId: "m" }))
  })

  it("dedupeTtlMs and dedupeUntil only with a dedupeKey, and not both", () => {
    const add = (queue: Queue<Mail>) => {
      void queue.add({ to: "a" }, { dedupeKey: "k", dedupeUntil: "finished" })
      void queue.add({ to: "a" }, { dedupeKey: "k", dedupeTtlMs: 1000 })
      void queue.add({ to: "a" }, { maxAttempts: 5, delayMs: 10 })
      // @ts-expect-error dedupeUntil without a dedupeKey
      void queue.add({ to: "a" }, { dedupeUntil: "finished" })
      // @ts-expect-error dedupeTtlMs without a dedupeKey
      void queue.add({ to: "a" }, { dedupeTtlMs: 1000 })
      // @ts-expect-error dedupeUntil together with dedupeTtlMs
      void queue.add({ to: "a" }, { dedupeKey: "k", dedupeUntil: "finished", dedupeTtlMs: 1000 })
    }
    expectTypeOf(add).toBeFunction()
    expectTypeOf<{ dedupeUntil: "finished" }>().not.toExtend<JobOptions>()
  })
})

class Mails extends Context.Service<Mails, LeaseQueue.Service<Mail, Sent>>()("types/TypedMails") {}
class Untyped extends Context.Service<Untyped, LeaseQueue.Service<Mail>>()("types/UntypedMails") {}

describe("Effect face", () => {
  it("a child's result type flows into the parent's job.dependencies() and getDependencies where declared", () => {
    const start = () =>
      LeaseWorker.make(Untyped, (job) =>
        Effect.gen(function* () {
          const page = yield* job.dependencies<Sent>()
          expectTypeOf(page.children[0]!.value).toEqualTypeOf<Sent | undefined>()
          // @ts-expect-error a declared result type is not any: no such field
          void page.children[0]!.value?.subject
          return page.children.length
        }),
      )
    type S = LeaseQueue.Service<Mail>
    const read = (s: S) => s.getDependencies<Sent>("id")
    expectTypeOf<Effect.Success<ReturnType<typeof read>>["children"][number]["value"]>().toEqualTypeOf<
      Sent | undefined
    >()
    expectTypeOf(start).toBeFunction()
  })

  it("Service<Payload, Result>: getJob and waitFor give the result type", () => {
    type S = LeaseQueue.Service<Mail, Sent>
    expectTypeOf<Effect.Success<ReturnType<S["getJob"]>>>().toEqualTypeOf<JobInfo<Mail, Sent> | undefined>()
    expectTypeOf<Effect.Success<ReturnType<S["waitFor"]>>>().toEqualTypeOf<FinishedJob<Sent>>()
  })

  it("a typed queue's handler must succeed with its result type; onCompleted sees it; onDead's reason is the union", () => {
    const start = () => {
      const ok = LeaseWorker.make(Mails, (job) => Effect.succeed({ messageId: job.payload.to }), {
        onCompleted: (_job, result) => {
          expectTypeOf(result).toEqualTypeOf<{ messageId: string }>()
          return Effect.void
        },
        onDead: (_job, reason) => {
          expectTypeOf(reason).toEqualTypeOf<DeadReason>()
          return Effect.void
        },
      })
      // @ts-expect-error a typed queue's handler returning something else
      const wrong = LeaseWorker.make(Mails, () => Effect.succeed(42))
      // an untyped queue (Service<Mail>) takes any result, as before
      const any = LeaseWorker.make(Untyped, () => Effect.succeed(42))
      return [ok, wrong, any]
    }
    expectTypeOf(start).toBeFunction()
  })

  it("the same JobOptions: dedupeUntil needs a dedupeKey", () => {
    const add = (queue: LeaseQueue.Service<Mail>) => {
      void queue.add({ to: "a" }, { dedupeKey: "k", dedupeUntil: "finished" })
      // @ts-expect-error dedupeUntil without a dedupeKey
      void queue.add({ to: "a" }, { dedupeUntil: "finished" })
    }
    expectTypeOf(add).toBeFunction()
  })
})
