/**
 * Flows on the Effect face: addFlow with the queue's Schema (a bad payload of this queue's
 * node is refused by its path, nothing written), reserve and complete the child, the parent
 * ready; getDependencies and seal as on the Promise face.
 */
import { expect, it } from "@effect/vitest"
import { Context, Effect, Schema } from "effect"
import { describe } from "vitest"
import { InvalidPayload, LeaseQueue } from "../../src/effect.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { queueNamer, redisUrl, sharedClients } from "../support/redis.ts"

const name = queueNamer("flows-effect")
const shared = sharedClients()
const Task = Schema.Struct({ step: Schema.String })
class Tasks extends Context.Service<Tasks, LeaseQueue.Service<typeof Task.Type>>()("test/FlowTasks") {}

describe("flows on the Effect face", () => {
  it.effect("addFlow encodes with the Schema; the parent runs after its child", () => {
    const q = name()
    return Effect.gen(function* () {
      const tasks = yield* Tasks
      const bad = yield* Effect.flip(
        tasks.addFlow({ payload: { step: "p" }, children: [{ payload: { step: 1 } as unknown as { step: string } }] }),
      )
      expect(bad).toBeInstanceOf(InvalidPayload)
      expect(yield* Effect.promise(() => shared.raw.exists(queueKeys(q).data))).toBe(0)
      const tree = yield* tasks.addFlow({ payload: { step: "parent" }, children: [{ payload: { step: "child" } }] })
      expect((yield* tasks.getJob(tree.id))?.state).toBe("waiting-children")
      const [child] = yield* tasks.reserve()
      expect(child!.payload).toEqual({ step: "child" })
      yield* tasks.complete(child!.id, child!.token)
      expect((yield* tasks.getDependencies(tree.id)).pending).toBe(0)
      const [parent] = yield* tasks.reserve()
      expect(parent!.id).toBe(tree.id)
    }).pipe(Effect.provide(LeaseQueue.layer(Tasks, { name: q, connection: redisUrl(), schema: Task })))
  })

  it.effect('cancel takes { children: "keep" } or cancels the children with the parent (the sweep carries it)', () => {
    const q = name()
    return Effect.gen(function* () {
      const tasks = yield* Tasks
      const kept = yield* tasks.addFlow({ payload: { step: "p1" }, children: [{ payload: { step: "c1" } }] })
      const gone = yield* tasks.addFlow({ payload: { step: "p2" }, children: [{ payload: { step: "c2" } }] })
      expect(yield* tasks.cancel(kept.id, { children: "keep" })).toBe("waiting-children")
      expect(yield* tasks.cancel(gone.id)).toBe("waiting-children")
      yield* tasks.sweep()
      expect((yield* tasks.getJob(kept.children[0]!.id))?.state).toBe("waiting")
      expect((yield* tasks.getJob(gone.children[0]!.id))?.state).toBe("cancelled")
    }).pipe(Effect.provide(LeaseQueue.layer(Tasks, { name: q, connection: redisUrl(), schema: Task })))
  })
})
