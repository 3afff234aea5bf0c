/**
 * `dedupeHolder(key)` (BullMQ's `getDeduplicationJobId`): the id of the job holding a dedupe
 * key, or undefined when an add with it would be accepted now: held for its TTL on the Redis
 * clock (an expired entry the sweep has not dropped yet is free), or until the job finishes;
 * freed by `clearDedupe`. On both faces, on a partitioned queue (the key's partition), and a
 * bad key refused naming it, nothing changed.
 */
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { LeaseQueue } from "../../src/effect.ts"
import { InvalidOptions } from "../../src/engine/model/Errors.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, redisUrl, sharedClients } from "../support/redis.ts"
import { untilRedisClock } from "../support/until.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("dedupe-holder")
const shared = sharedClients()

/** The calls under test on one face. */
interface Face {
  readonly add: (payload: number, options: Record<string, unknown>) => Promise<string>
  readonly dedupeHolder: (key: unknown) => Promise<string | undefined>
  readonly clearDedupe: (key: string) => Promise<boolean>
}

const promiseFace = (q: string, options: Record<string, unknown> = {}): Face => {
  const queue = useQueue<number>(q, options)
  return {
    add: (p, o) => queue.add(p, o),
    dedupeHolder: (key) => queue.dedupeHolder(key as string),
    clearDedupe: (key) => queue.clearDedupe(key),
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
    dedupeHolder: (key) => Effect.runPromise(service.dedupeHolder(key as string)),
    clearDedupe: (key) => Effect.runPromise(service.clearDedupe(key)),
  }
}

const faces = [
  { face: "Promise", open: async (q: string, o?: Record<string, unknown>) => promiseFace(q, o) },
  { face: "Effect", open: effectFace },
] as const

describe.each(faces)("dedupeHolder ($face face)", ({ open }) => {
  it("answers the job holding a key until clearDedupe frees it; a key never held is free", async () => {
    const queue = await open(name())
    const id = await queue.add(1, { dedupeKey: "order-1" })
    expect(await queue.dedupeHolder("order-1")).toBe(id)
    expect(await queue.dedupeHolder("order-2")).toBeUndefined()
    expect(await queue.clearDedupe("order-1")).toBe(true)
    expect(await queue.dedupeHolder("order-1")).toBeUndefined()
  })

  it("frees a TTL key once the Redis clock passes its expiry, before any sweep drops the entry", async () => {
    const q = name()
    const queue = await open(q)
    const id = await queue.add(1, { dedupeKey: "short", dedupeTtlMs: 100 })
    expect(await queue.dedupeHolder("short")).toBe(id)
    const expiry = Number(await shared.raw.zscore(queueKeys(q).dedupe, "short"))
    await untilRedisClock(shared.raw, expiry)
    expect(await shared.raw.zscore(queueKeys(q).dedupe, "short")).not.toBeNull()
    expect(await queue.dedupeHolder("short")).toBeUndefined()
  })

  it('holds a key "until finished" past any TTL, and refuses a bad key naming it, changing nothing', async () => {
    const q = name()
    const queue = await open(q)
    const id = await queue.add(1, { dedupeKey: "run", dedupeUntil: "finished" })
    expect(await queue.dedupeHolder("run")).toBe(id)
    const before = await dumpQueue(shared.raw, q)
    for (const bad of ["", 42, "x".repeat(1000)]) {
      const e = await queue.dedupeHolder(bad).catch((err: unknown) => err)
      expect(e).toBeInstanceOf(InvalidOptions)
      expect(e).toMatchObject({ field: "dedupeKey", value: bad })
    }
    expect(await dumpQueue(shared.raw, q)).toEqual(before)
  })

  it("on a partitioned queue, answers from the key's partition (where add put the job)", async () => {
    const q = name()
    const queue = await open(q, { partitions: 4 })
    const ids = await Promise.all(["a", "b", "c", "d", "e"].map((k, i) => queue.add(i, { dedupeKey: k })))
    for (const [i, k] of ["a", "b", "c", "d", "e"].entries()) expect(await queue.dedupeHolder(k)).toBe(ids[i])
    expect(await queue.dedupeHolder("z")).toBeUndefined()
  })
})
