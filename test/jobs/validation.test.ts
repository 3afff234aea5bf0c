/**
 * Bad input on the Promise face: each case gets a clear error naming the field and
 * value, and the queue's keys are byte-for-byte unchanged.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue, Worker } from "../../src/index.ts"
import { freePort } from "../../src/testing/RedisServer.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("validation")
let raw: Redis
let q: string
let queue: Queue<unknown>
beforeAll(async () => {
  raw = rawClient()
  q = name()
  queue = new Queue(q, { connection: redisUrl(), maxPayloadBytes: 1000 })
  await queue.add({ seed: true })
})
afterAll(async () => {
  await queue.close()
  raw.disconnect()
})

/** Run `f`, expect it to throw or reject with `tag` and a message matching `message`; the queue must not change. */
const refuses = async (f: () => unknown, tag: string, message: RegExp) => {
  const before = await dumpQueue(raw, q)
  let error: unknown
  try {
    await f()
  } catch (e) {
    error = e
  }
  expect(error, "expected an error").toBeInstanceOf(Error)
  expect((error as { _tag?: string })._tag).toBe(tag)
  expect((error as Error).message).toMatch(message)
  expect(await dumpQueue(raw, q)).toEqual(before)
}

describe("queue names", () => {
  for (const [bad, why] of [
    ["a{b", /letters, digits/],
    ["a}b", /letters, digits/],
    ["a:b", /letters, digits/],
    ["", /must not be empty/],
    ["x".repeat(101), /101 characters long; the limit is 100/],
  ] as const) {
    it(`refuses ${JSON.stringify(bad.slice(0, 10))}`, async () => {
      await refuses(() => new Queue(bad, { connection: redisUrl() }), "InvalidQueueName", why)
      await refuses(() => new Worker(bad, async () => {}, { connection: redisUrl() }), "InvalidQueueName", why)
    })
  }
})

describe("payloads", () => {
  const circular: Record<string, unknown> = { a: 1 }
  circular.self = circular
  for (const [label, payload, why] of [
    ["undefined", undefined, /payload: is undefined/],
    ["a function", () => 1, /payload: is a function/],
    ["a BigInt", { n: 10n }, /contains a BigInt at payload\.n;/],
    ["a circular object", circular, /circular reference/],
    ["NaN", { x: Number.NaN }, /contains NaN at payload\.x;/],
    ["over the size limit", { s: "x".repeat(2000) }, /is 2008 bytes as JSON; the limit is 1000 bytes/],
  ] as const) {
    it(`refuses ${label}`, async () => {
      await refuses(() => queue.add(payload), "InvalidPayload", why)
    })
  }
  it("addBulk with one bad payload among good ones adds nothing", async () => {
    await refuses(
      () => queue.addBulk([{ payload: 1 }, { payload: () => 2 }, { payload: 3 }]),
      "InvalidPayload",
      /jobs\[1\]\.payload: is a function/,
    )
  })
})

describe("job options", () => {
  for (const [options, why] of [
    [{ delayMs: -1 }, /options\.delayMs = -1: must be from 0/],
    [{ delayMs: Number.NaN }, /options\.delayMs = NaN: must be a whole number/],
    [{ maxAttempts: 0 }, /options\.maxAttempts = 0: must be from 1 to 1000/],
    [{ maxAttempts: 1.5 }, /options\.maxAttempts = 1\.5/],
    [{ dedupeTtlMs: 1000 }, /options\.dedupeTtlMs = 1000: needs a dedupeKey/],
    [{ dedupeKey: "" }, /options\.dedupeKey = "": must be a non-empty string/],
    [{ delay: 5 }, /options\.delay = 5: unknown option/],
  ] as const) {
    it(`refuses ${JSON.stringify(options)}`, async () => {
      await refuses(() => queue.add("x", options as never), "InvalidOptions", why)
    })
  }
  it("addBulk with one bad option adds nothing", async () => {
    await refuses(
      () => queue.addBulk([{ payload: 1 }, { payload: 2, options: { maxAttempts: 0 } }]),
      "InvalidOptions",
      /jobs\[1\]\.options\.maxAttempts = 0/,
    )
  })
  it("addBulk over the limit of one call is refused, not cut", async () => {
    await refuses(
      () => queue.addBulk(Array.from({ length: 10_001 }, () => ({ payload: 1 }))),
      "InvalidOptions",
      /jobs\.length = 10001: one addBulk call takes at most 10000 jobs/,
    )
  })
})

describe("strings with a lone surrogate (N8)", () => {
  // Redis stores text as UTF-8, where each lone surrogate is U+FFFD: both would be one name.
  for (const [what, f, field] of [
    ["add's group", () => queue.add(1, { group: "tenant-\uD800" }), "options.group"],
    ["addBulk's group", () => queue.addBulk([{ payload: 1 }, { payload: 2, options: { group: "t\uDC00" } }]), "group"],
    ["setGroupLimits", () => queue.setGroupLimits("tenant-\uDBFF", { concurrency: 1 }), "group"],
    ["pauseGroup", () => queue.pauseGroup("tenant-\uDC00"), "group"],
    ["resumeGroup", () => queue.resumeGroup("\uD800"), "group"],
    ["add's dedupeKey", () => queue.add(1, { dedupeKey: "order-\uD800" }), "options.dedupeKey"],
    ["clearDedupe", () => queue.clearDedupe("order-\uDC00"), "dedupeKey"],
  ] as const) {
    it(`${what}: refused, naming the field and the escaped value, nothing written`, async () => {
      await refuses(f, "InvalidOptions", /not well-formed UTF-16/)
      const message = await (async () => f())().then(
        () => "",
        (e: Error) => e.message,
      )
      expect(message).toContain(field)
      expect(message).toMatch(/\\ud[89ab]ff|\\ud[89abcdef]00/)
    })
  }

  it("a well-formed name outside the BMP (a surrogate pair) is still a group of its own", async () => {
    const other = useQueue<number>(name())
    await other.add(1, { group: "tenant-\u{1F600}" })
    await other.add(2, { group: "tenant-\u{1F601}" })
    expect((await other.groups()).groups.map((g) => g.group)).toEqual(["tenant-\u{1F600}", "tenant-\u{1F601}"])
  })
})

describe("worker options", () => {
  for (const [options, why] of [
    [{ leaseMs: 0 }, /leaseMs = 0: must be from 10 to 86400000/],
    [{ leaseMs: -5 }, /leaseMs = -5/],
    [{ leaseMs: Number.NaN }, /leaseMs = NaN: must be a whole number/],
    [{ leaseMs: Number.POSITIVE_INFINITY }, /leaseMs = Infinity: must be a whole number/],
    [{ leaseMs: 86_400_001 }, /leaseMs = 86400001: must be from 10 to 86400000/],
    [{ concurrency: 0 }, /concurrency = 0: must be from 1 to 10000/],
    [{ leaseMs: 1000, heartbeatMs: 600 }, /heartbeatMs = 600: must be from 1 to 499/],
    [{ sweep: "yes" }, /sweep = "yes": must be true, false or/],
    [{ backoff: { type: "linear" } }, /backoff\.type = "linear"/],
    [{ concurency: 2 }, /options\.concurency = 2: unknown option/],
  ] as const) {
    it(`refuses ${JSON.stringify(options)}`, async () => {
      await refuses(
        () => new Worker(q, async () => {}, { connection: redisUrl(), ...(options as object) }),
        "InvalidOptions",
        why,
      )
    })
  }
  it("refuses a handler that is not a function", async () => {
    await refuses(() => new Worker(q, "nope" as never, { connection: redisUrl() }), "InvalidOptions", /handler/)
  })
})

describe("a BullMQ name or a typo is refused with what leaseq calls it", () => {
  const add = (options: object) => () => queue.add("x", options as never)
  const worker = (options: object) => () => new Worker(q, async () => {}, { connection: redisUrl(), ...options })
  const newQueue = (options: object) => () => new Queue(q, { connection: redisUrl(), ...options })
  for (const [label, call, message] of [
    ["add attempts", add({ attempts: 3 }), "options.attempts = 3: unknown option; did you mean maxAttempts?"],
    ["add delay", add({ delay: 5 }), "options.delay = 5: unknown option; did you mean delayMs?"],
    ["add maxAttempt", add({ maxAttempt: 3 }), "options.maxAttempt = 3: unknown option; did you mean maxAttempts?"],
    ["add jobId", add({ jobId: "o-1" }), 'options.jobId = "o-1": unknown option; did you mean id?'],
    [
      "add backoff",
      add({ backoff: 1 }),
      'options.backoff = 1: must be { type: "fixed" | "exponential", delayMs, … } (a backoff function',
    ],
    [
      "add removeOnComplete",
      add({ removeOnComplete: true }),
      "options.removeOnComplete = true: unknown option: finished jobs are kept per queue: queue.setRetention",
    ],
    [
      "worker keepCompleted (moved to the queue)",
      worker({ keepCompleted: 10 }),
      "options.keepCompleted = 10: unknown option: keepCompleted moved to queue.setRetention({ completed: { count, ageMs } })",
    ],
    [
      "worker lockDuration",
      worker({ lockDuration: 5 }),
      "options.lockDuration = 5: unknown option; did you mean leaseMs?",
    ],
    [
      "worker removeOnComplete",
      worker({ removeOnComplete: 5 }),
      "options.removeOnComplete = 5: unknown option: finished jobs are kept per queue: queue.setRetention({ completed: { count, ageMs } }); known options are",
    ],
    [
      "worker limiter",
      worker({ limiter: 1 }),
      "options.limiter = 1: unknown option: the rate limit is the queue's, across all workers: queue.setRateLimit({ max, perMs })",
    ],
    [
      "worker concurency",
      worker({ concurency: 2 }),
      "options.concurency = 2: unknown option; did you mean concurrency?",
    ],
    ["worker leaseMS", worker({ leaseMS: 2 }), "options.leaseMS = 2: unknown option; did you mean leaseMs?"],
    [
      "queue defaultJobOptions.attempts",
      newQueue({ defaultJobOptions: { attempts: 2 } }),
      "defaultJobOptions.attempts = 2: unknown option; did you mean maxAttempts?",
    ],
    [
      "queue callTimeout",
      newQueue({ callTimeout: 2 }),
      "options.callTimeout = 2: unknown option; did you mean callTimeoutMs?",
    ],
    ["queue wibble", newQueue({ wibble: 2 }), "options.wibble = 2: unknown option; known options are prefix, "],
  ] as const) {
    it(`${label}: ${message}`, async () => {
      await refuses(call, "InvalidOptions", new RegExp(message.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    })
  }
})

describe("connections and foreign keys", () => {
  it("refuses a URL that is not redis:// or rediss://", async () => {
    await refuses(
      () => new Queue(q, { connection: "http://127.0.0.1:6379" }),
      "InvalidOptions",
      /redis:\/\/ or rediss:\/\//,
    )
  })

  it("Redis down at start: add rejects with RedisUnavailable", async () => {
    const port = await freePort()
    const down = useQueue(q, {
      connection: { port, host: "127.0.0.1", maxRetriesPerRequest: 1, retryStrategy: () => null },
    })
    const e = await down.add("x").catch((err) => err)
    expect(e._tag).toBe("RedisUnavailable")
    expect(e.message).toMatch(/Redis unavailable/)
  })

  it("a key of a foreign type under the queue's names is refused before anything is written", async () => {
    const other = name("foreign")
    await raw.set(queueKeys(other).wait, "somebody else's string")
    const foreign = useQueue(other)
    const before = await dumpQueue(raw, other)
    const e = await foreign.add("x").catch((err) => err)
    expect(e._tag).toBe("WrongKeyType")
    expect(e.message).toContain(queueKeys(other).wait)
    expect(await dumpQueue(raw, other)).toEqual(before)
  })

  it("a queue with another layout version is refused by producers and workers", async () => {
    const other = name("layout")
    await raw.hset(queueKeys(other).meta, "layout", "99")
    const before = await dumpQueue(raw, other)
    const foreign = useQueue(other)
    const e = await foreign.add("x").catch((err) => err)
    expect(e._tag).toBe("LayoutMismatch")
    expect(e.message).toMatch(/layout version "99"/)
    const worker = useWorker(other, async () => {})
    expect((await worker.ready.catch((err) => err))._tag).toBe("LayoutMismatch")
    await worker.close()
    expect(await dumpQueue(raw, other)).toEqual(before)
  })

  it("calls after close reject with QueueClosed", async () => {
    const closed = useQueue(name("closed"))
    await closed.close()
    expect(((await closed.add("x").catch((e) => e)) as Error).name).toBe("QueueClosed")
  })
})
