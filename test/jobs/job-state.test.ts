/**
 * `getJobState(id)` (BullMQ's `getJobState`): the state a job is in as it moves — waiting,
 * delayed, active, completed, dead, cancelled — and undefined for an unknown id. On both faces
 * (the call is declared once, in the engine's job control), on a partitioned queue (every
 * partition asked), and a bad id refused naming it, nothing changed.
 */
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { LeaseQueue } from "../../src/effect.ts"
import { InvalidOptions } from "../../src/engine/model/Errors.ts"
import type { JobState } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("job-state")
const shared = sharedClients()

/** The calls under test on one face. */
interface Face {
  readonly add: (payload: number, options?: Record<string, unknown>) => Promise<string>
  readonly getJobState: (id: unknown) => Promise<JobState | undefined>
  readonly cancel: (id: string) => Promise<unknown>
  readonly reserve: () => Promise<ReadonlyArray<{ readonly id: string; readonly token: number }>>
  readonly complete: (id: string, token: number) => Promise<void>
  readonly fail: (id: string, token: number) => Promise<unknown>
}

const promiseFace = (q: string, options: Record<string, unknown> = {}): Face => {
  const queue = useQueue<number>(q, options)
  return {
    add: (p, o) => queue.add(p, o),
    getJobState: (id) => queue.getJobState(id as string),
    cancel: (id) => queue.cancel(id),
    reserve: () => queue.reserve(),
    complete: (id, token) => queue.complete(id, token),
    fail: (id, token) => queue.fail(id, token, new Error("no"), { retry: false }),
  }
}

const effectFace = async (q: string, options: Record<string, unknown> = {}): Promise<Face> => {
  const scope = Effect.runSync(Scope.make())
  onCleanup(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  const service = await Effect.runPromise(
    Scope.provide(scope)(LeaseQueue.make<number>({ name: q, connection: redisUrl(), ...options })),
  )
  return {
    add: (p, o) => Effect.runPromise(service.add(p, o)),
    getJobState: (id) => Effect.runPromise(service.getJobState(id as string)),
    cancel: (id) => Effect.runPromise(service.cancel(id)),
    reserve: () => Effect.runPromise(service.reserve()),
    complete: (id, token) => Effect.runPromise(service.complete(id, token)),
    fail: (id, token) => Effect.runPromise(service.fail(id, token, new Error("no"), { retry: false })),
  }
}

const faces = [
  { face: "Promise", open: async (q: string, o?: Record<string, unknown>) => promiseFace(q, o) },
  { face: "Effect", open: effectFace },
] as const

describe.each(faces)("getJobState ($face face)", ({ open }) => {
  it("follows a job from waiting through active to completed; a delayed job is delayed; an unknown id is undefined", async () => {
    const queue = await open(name())
    const id = await queue.add(1)
    const later = await queue.add(2, { delayMs: 60_000 })
    expect(await queue.getJobState(id)).toBe("waiting")
    expect(await queue.getJobState(later)).toBe("delayed")
    expect(await queue.getJobState("no-such-job")).toBeUndefined()
    const [job] = await queue.reserve()
    expect(job?.id).toBe(id)
    expect(await queue.getJobState(id)).toBe("active")
    await queue.complete(id, job!.token)
    expect(await queue.getJobState(id)).toBe("completed")
  })

  it("answers dead for a job failed for good, cancelled for a cancelled one", async () => {
    const queue = await open(name())
    const id = await queue.add(1)
    const [job] = await queue.reserve()
    await queue.fail(id, job!.token)
    expect(await queue.getJobState(id)).toBe("dead")
    const other = await queue.add(2, { delayMs: 60_000 })
    await queue.cancel(other)
    expect(await queue.getJobState(other)).toBe("cancelled")
  })

  it("refuses a bad id naming it, changing nothing", async () => {
    const q = name()
    const queue = await open(q)
    await queue.add(1)
    const before = await dumpQueue(shared.raw, q)
    for (const bad of ["", 42, "x".repeat(1000)]) {
      const e = await queue.getJobState(bad).catch((err: unknown) => err)
      expect(e).toBeInstanceOf(InvalidOptions)
      expect(e).toMatchObject({ field: "id", value: bad })
    }
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })

  it("on a partitioned queue, finds each job in the partition that holds it", async () => {
    const queue = await open(name(), { partitions: 3 })
    const ids = await Promise.all([1, 2, 3, 4, 5].map((i) => queue.add(i)))
    for (const id of ids) expect(await queue.getJobState(id)).toBe("waiting")
    expect(await queue.getJobState("no-such-job")).toBeUndefined()
  })
})
