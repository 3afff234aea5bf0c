/**
 * The shrunk command lists the model found on f43eb35 and on flows (test/model/FINDINGS.md), each replayed
 * exactly as a named test through the model harness: they fail while the finding is open and
 * pass once it is fixed. `it.fails` marks the ones still open on this branch: the lead flips
 * each to `it` when the branch that fixes it is merged.
 *
 * G5 (a Worker's stand-alone complete re-sent) is out of the model's reach: its real side is
 * manual processing, and its one Worker step has no proxy (see FINDINGS.md).
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, it } from "vitest"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import {
  Add,
  AddG1,
  AVOID,
  Cancel,
  CompleteAll,
  Fail,
  PauseGroup,
  Reserve,
  Retry,
  SetGroupLimits,
  SetRateLimit,
  SetRetention,
  UpdatePayload,
  WorkerRateLimited,
} from "./Commands.ts"
import { AddDependsOn, OpenParent, Settle } from "./FlowCommands.ts"
import { runList } from "./Real.ts"

const name = queueNamer("model-reg")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
  // every step of a list runs: no finding is steered clear of here
  AVOID.clear()
})
afterAll(() => {
  raw.disconnect()
})

const plain = { id: undefined, priority: 0, lifo: false, group: undefined, delay: "none", maxAttempts: 1 } as const
const inG1 = { ...plain, group: "g1" } as const
const inG2 = { ...plain, group: "g2" } as const

const replay = async (cmds: ReadonlyArray<Parameters<typeof runList>[3] extends Iterable<infer C> ? C : never>) => {
  const proxy = await proxyToSuiteRedis()
  await runList(name(), raw, proxy, cmds)
}

describe("the model's findings on f43eb35, replayed", () => {
  it("G1: a cancelled grouped job, retried, stays in its group (groups() counts it)", async () => {
    await replay([new Add(inG2, true), new Cancel(0, false), new Retry(0, false)])
  })

  it("G2: a cancelled job trimmed by a count of 0 leaves the cancelled list", async () => {
    await replay([new Add(plain, true), new SetRetention(0, 0), new Cancel(0, false)])
  })

  it("G3: the default group rate window holds when the group runs empty", async () => {
    await replay([
      new SetGroupLimits(undefined, { max: 3 }),
      new AddG1(1),
      new Reserve(1, "short", false),
      new CompleteAll(),
      new AddG1(3),
      new Reserve(3, "short", false),
    ])
  })

  it("G6: setRateLimit(null) lifts a RateLimited hold", async () => {
    await replay([
      new Add(plain, false),
      new WorkerRateLimited(redisUrl),
      new SetRateLimit(null),
      new WorkerRateLimited(redisUrl),
    ])
  })

  it("G8: a grouped job added delayed does not stall the waiting ungrouped jobs", async () => {
    await replay([new Add(plain, false), new Add({ ...inG1, delay: "long" }, false), new Reserve(1, "short", false)])
  })

  it("G9: clearing the default group concurrency releases the group held by it", async () => {
    await replay([
      new AddG1(1),
      new SetGroupLimits(undefined, { concurrency: 2 }),
      new AddG1(2),
      new Reserve(2, "short", false),
      new SetGroupLimits(undefined, null),
      new Reserve(1, "short", false),
    ])
  })

  it("G10: pauseGroup re-sent after a lost reply answers true", async () => {
    await replay([new PauseGroup("g1", true, true)])
  })

  it("G10: cancel re-sent after a lost reply answers the state the job was in", async () => {
    await replay([new Add(plain, false), new Cancel(0, true)])
  })

  it("M2: a lowered cancelled count trims the cancelled jobs retained before it", async () => {
    await replay([
      new Add(plain, false),
      new Cancel(0, true),
      new SetRetention(0, 0),
      new AddG1(1),
      new Cancel(3, true),
    ])
  })

  it("M1: the reserve that carries a RateLimited fail leases nothing more", async () => {
    await replay([new Add(plain, false), new Add(plain, false), new WorkerRateLimited(redisUrl)])
  })

  it("FM1: a job a cancelled parent's cascade cancels is held to the cancelled count (0: gone)", async () => {
    await replay([
      new OpenParent("wait"),
      new SetRetention(0, 0),
      new AddDependsOn([{ where: "main", pick: 0 }], "wait"),
      new Cancel(1, false),
      new Settle(),
    ])
  })
})

describe("large payloads read by reference, through the model (calls/PayloadRefs.ts)", () => {
  const large = { ...plain, maxAttempts: 3, large: true } as const
  it("a reserve after a large payload reads the large ones by reference: each as added or updated, re-sent too", async () => {
    await replay([
      new Add(large, false),
      new Add({ ...large, group: "g1" }, false),
      new Add(plain, false),
      // leases the first large job: the next reserve reads large payloads by reference
      new Reserve(1, "long", false),
      new UpdatePayload(1),
      new Add({ ...large, priority: 5 }, false),
      // its reply lost: the re-send answers the same leases, payloads read in the script again
      new Reserve(2, "long", true),
      new Fail(0, true, "short", false),
      new Reserve(3, "long", false),
      new CompleteAll(),
      new Add(large, true),
      new Reserve(2, "short", false),
    ])
  })
})
