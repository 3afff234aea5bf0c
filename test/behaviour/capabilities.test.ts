/**
 * Both faces offer every call of the capability table (src/engine/queue/Capabilities.ts)
 * under the same name: the Promise `Queue` as a method, the Effect `LeaseQueue` service as a
 * member. Checked twice: by the types (`npm run typecheck` fails on a table call a face
 * lacks) and here, on a real `Queue` and a real service, so a call added to the table
 * without its face members fails.
 */
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { LeaseQueue } from "../../src/effect.ts"
import { CAPABILITIES, type CapabilityName, ENGINE_ONLY_CALLS } from "../../src/engine/queue/Capabilities.ts"
import type { QueueApi } from "../../src/engine/queue/QueueApi.ts"
import type { Queue } from "../../src/index.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("capabilities")

/** Every call the table names that a face must offer. */
type TableCall = Exclude<
  { [K in CapabilityName]: keyof QueueApi[K] }[CapabilityName],
  (typeof ENGINE_ONLY_CALLS)[number]
>

// the type-level half: each line fails to compile when a face lacks a call of the table
const promiseOffersAll: [Exclude<TableCall, keyof Queue>] extends [never] ? true : false = true
const effectOffersAll: [Exclude<TableCall, keyof LeaseQueue.Service<unknown>>] extends [never] ? true : false = true

/** The calls of the table, by name, as the faces must offer them. */
const tableCalls = (): ReadonlyArray<string> =>
  (Object.keys(CAPABILITIES) as Array<CapabilityName>)
    .flatMap((c) => Object.keys(CAPABILITIES[c].spread))
    .filter((call) => !(ENGINE_ONLY_CALLS as ReadonlyArray<string>).includes(call))

describe("the capability table and the faces", () => {
  it("names the calls of every capability (the list the faces are checked against)", () => {
    expect(promiseOffersAll && effectOffersAll).toBe(true)
    const calls = tableCalls()
    for (const call of ["getJob", "changePriority", "getJobs", "pauseGroup", "reserve"]) expect(calls).toContain(call)
    expect(calls).not.toContain("refuse")
  })

  it("the Promise Queue has a method for every call of the table", async () => {
    const queue = useQueue(name("promise"))
    const missing = tableCalls().filter(
      (call) => typeof (queue as unknown as Record<string, unknown>)[call] !== "function",
    )
    expect(missing).toEqual([])
    expect(await queue.isPaused()).toBe(false)
  })

  it("the Effect service has a member for every call of the table", async () => {
    const scope = Effect.runSync(Scope.make())
    onCleanup(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    const service = await Effect.runPromise(
      Scope.provide(scope)(LeaseQueue.make({ name: name("effect"), connection: redisUrl() })),
    )
    const record = service as unknown as Record<string, unknown>
    const missing = tableCalls().filter((call) => typeof record[call] !== "function" && !Effect.isEffect(record[call]))
    expect(missing).toEqual([])
    expect(await Effect.runPromise(service.isPaused)).toBe(false)
  })
})
