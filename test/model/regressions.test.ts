/**
 * The shrunk command lists the model found on f43eb35 (test/model/FINDINGS.md), each replayed
 * exactly as a named test: they fail while the finding is open and pass once it is fixed.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, it } from "vitest"
import { proxyToSuiteRedis } from "../reliability/support.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import {
  Add,
  Cancel,
  Complete,
  PauseGroup,
  Reserve,
  Retry,
  SetGroupLimits,
  SetRateLimit,
  SetRetention,
  WorkerRateLimited,
} from "./Commands.ts"
import { runList } from "./Real.ts"

const name = queueNamer("model-reg")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const plain = { id: undefined, priority: 0, lifo: false, group: undefined, delay: "none", maxAttempts: 1 } as const
const inG1 = { ...plain, group: "g1" } as const

const replay = async (cmds: ReadonlyArray<ConstructorParameters<typeof Object>[0]>) => {
  const proxy = await proxyToSuiteRedis()
  await runList(name(), raw, proxy, cmds as never)
}

describe("the model's findings on f43eb35, replayed", () => {
  it("G3: the default group rate window holds when the group runs empty", async () => {
    await replay([
      new SetGroupLimits(undefined, { max: 3 }),
      new Add(inG1, false),
      new Add(inG1, false),
      new Reserve(4, "long", false),
      new Complete(0, false),
      new Complete(0, false),
      new Add(inG1, false),
      new Add(inG1, false),
      new Reserve(4, "long", false),
    ])
  })
  it("G6: setRateLimit(null) lifts a RateLimited hold", async () => {
    await replay([new Add(plain, false), new WorkerRateLimited(redisUrl), new SetRateLimit(null), new Reserve(1, "long", false)])
  })
})
