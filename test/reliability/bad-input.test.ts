/**
 * Scenario 7 — bad input, across the Promise face, the Effect face and the CLI. Every
 * case gets a clear error that names the field (or flag) and the value, and the queue's
 * keys are byte-for-byte unchanged (DUMP before and after). A server that may evict keys
 * (`maxmemory-policy allkeys-lru`) gets a loud warning. Each case is one test below
 * (docs/reliability.md states the guarantee, not the list).
 */
import { Context, Effect, type Scope } from "effect"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { LeaseQueue, LeaseWorker } from "../../src/effect.ts"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { EvictionPolicyWarning } from "../../src/engine/calls/EvictionPolicy.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue, Worker } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { freePort, startRedisServer } from "../../src/testing/RedisServer.ts"
import { runCli } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { redisNow, until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-bad")
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

/** What a refused call ended with: a tagged error (library) or an exit code and stderr (CLI). */
interface Refusal {
  readonly tag?: string | undefined
  readonly exit?: number | null
  readonly text: string
}

/** `{ leaseMs: NaN }` as text (JSON.stringify would print null). */
const label = (o: object): string =>
  `{ ${Object.entries(o)
    .map(([k, v]) => `${k}: ${String(v)}`)
    .join(", ")} }`

const caught = async (f: () => unknown): Promise<Refusal> => {
  try {
    await f()
  } catch (e) {
    return { tag: (e as { _tag?: string })._tag, text: (e as Error).message }
  }
  throw new Error("expected the call to be refused, it succeeded")
}

/** Run `f`; it must be refused as `expected` with a message matching `message`; `queues` must not change. */
const refuses = async (
  f: () => Promise<Refusal>,
  expected: { readonly tag?: string; readonly exit?: number },
  message: RegExp,
  queues: ReadonlyArray<string> = [q],
) => {
  const before = await Promise.all(queues.map((x) => dumpQueue(raw, x)))
  const r = await f()
  if (expected.tag !== undefined) expect(r.tag).toBe(expected.tag)
  if (expected.exit !== undefined) {
    expect(r.exit).toBe(expected.exit)
    expect(r.text.trimEnd(), "one line on stderr").not.toContain("\n")
  }
  expect(r.text).toMatch(message)
  expect(await Promise.all(queues.map((x) => dumpQueue(raw, x)))).toEqual(before)
}

/** `leaseq <args>` from source; what it said on stderr. */
const leaseq = async (args: ReadonlyArray<string>): Promise<Refusal> => {
  const { code, err } = await runCli(args)
  return { exit: code, text: err }
}

describe("Promise face", () => {
  for (const [bad, why] of [
    ["a{b", /invalid queue name "a\{b": may only contain letters, digits/],
    ["a}b", /invalid queue name "a\}b": may only contain letters, digits/],
    ["a:b", /invalid queue name "a:b": may only contain letters, digits/],
    ["", /invalid queue name "": must not be empty/],
    ["x".repeat(101), /invalid queue name "x{101}": is 101 characters long; the limit is 100/],
  ] as const) {
    it(`queue name ${JSON.stringify(bad.slice(0, 8))}: Queue and Worker refuse it`, async () => {
      await refuses(() => caught(() => new Queue(bad, { connection: redisUrl() })), { tag: "InvalidQueueName" }, why)
      await refuses(
        () => caught(() => new Worker(bad, async () => {}, { connection: redisUrl() })),
        { tag: "InvalidQueueName" },
        why,
      )
    })
  }

  const circular: Record<string, unknown> = { a: 1 }
  circular.self = circular
  for (const [label, payload, why] of [
    ["undefined", undefined, /invalid payload: is undefined; pass null or a JSON value/],
    ["a function", () => 1, /invalid payload: is a function; functions cannot be stored/],
    ["a BigInt", { n: 10n }, /invalid payload: contains a BigInt at payload\.n;/],
    ["circular", circular, /invalid payload: contains a circular reference/],
    ["over the size limit", { s: "x".repeat(2000) }, /payload: is 2008 bytes as JSON; the limit is 1000 bytes/],
  ] as const) {
    it(`payload ${label}: add refuses it`, async () => {
      await refuses(() => caught(() => queue.add(payload)), { tag: "InvalidPayload" }, why)
    })
  }

  for (const [options, why] of [
    [{ leaseMs: 0 }, /invalid option leaseMs = 0: must be from 10 to 86400000/],
    [{ leaseMs: -5 }, /invalid option leaseMs = -5: must be from 10 to 86400000/],
    [{ leaseMs: Number.NaN }, /invalid option leaseMs = NaN: must be a whole number/],
    [{ leaseMs: Number.POSITIVE_INFINITY }, /invalid option leaseMs = Infinity: must be a whole number/],
    [{ leaseMs: 86_400_001 }, /invalid option leaseMs = 86400001: must be from 10 to 86400000/],
    [{ concurrency: 0 }, /invalid option concurrency = 0: must be from 1 to 10000/],
  ] as const) {
    it(`worker ${label(options)}: refused`, async () => {
      await refuses(
        () => caught(() => new Worker(q, async () => {}, { connection: redisUrl(), ...(options as object) })),
        { tag: "InvalidOptions" },
        why,
      )
    })
  }

  for (const [options, why] of [
    [{ delayMs: -1 }, /invalid option options\.delayMs = -1: must be from 0/],
    [{ maxAttempts: 0 }, /invalid option options\.maxAttempts = 0: must be from 1 to 1000/],
  ] as const) {
    it(`add ${JSON.stringify(options)}: refused`, async () => {
      await refuses(() => caught(() => queue.add("x", options)), { tag: "InvalidOptions" }, why)
    })
  }

  it("an unreachable host: add rejects with RedisUnavailable naming the host", async () => {
    const unreachable = useQueue(q, {
      connection: {
        host: "leaseq-unreachable.invalid",
        port: 6379,
        maxRetriesPerRequest: 1,
        retryStrategy: () => null,
      },
    })
    await refuses(
      () => caught(() => unreachable.add("x")),
      { tag: "RedisUnavailable" },
      /Redis unavailable at leaseq-unreachable\.invalid:6379: /,
    )
  })

  it("Redis down at start: a worker's ready rejects with RedisUnavailable naming the address, and close returns", async () => {
    const port = await freePort()
    const connection = { host: "127.0.0.1", port, maxRetriesPerRequest: 1, retryStrategy: () => null }
    const worker = useWorker(q, async () => {}, { connection })
    const producer = useQueue(q, { connection })
    await refuses(
      () => caught(() => worker.ready),
      { tag: "RedisUnavailable" },
      new RegExp(`Redis unavailable at 127\\.0\\.0\\.1:${port}: `),
    )
    await refuses(
      () => caught(() => producer.add("x")),
      { tag: "RedisUnavailable" },
      new RegExp(`Redis unavailable at 127\\.0\\.0\\.1:${port}: `),
    )
  })

  it("a queue written with another layout version: producers and workers refuse it, naming both versions", async () => {
    const other = name("layout")
    await raw.hset(queueKeys(other).meta, "layout", "99")
    const producer = useQueue(other)
    const worker = useWorker(other, async () => {})
    const why = new RegExp(`queue ${other} uses key layout version "99", this leaseq speaks version "2"`)
    await refuses(() => caught(() => producer.add("x")), { tag: "LayoutMismatch" }, why, [other])
    await refuses(() => caught(() => worker.ready), { tag: "LayoutMismatch" }, why, [other])
  })

  it("a key under the prefix that is not a leaseq key: refused, naming the key and both types", async () => {
    const other = name("foreign")
    await raw.set(queueKeys(other).data, "somebody else's string")
    const producer = useQueue(other)
    await refuses(
      () => caught(() => producer.add("x")),
      { tag: "WrongKeyType" },
      new RegExp(`key leaseq:\\{${other}\\}:data is a string, leaseq expects a hash`),
      [other],
    )
  })
})

class BadQ extends Context.Service<BadQ, LeaseQueue.Service<unknown>>()("test/reliability/BadQ") {}

describe("Effect face", () => {
  const run = <A, E>(effect: Effect.Effect<A, E>) => caught(() => Effect.runPromise(effect))
  const onQueue = <A, E>(effect: Effect.Effect<A, E, BadQ | Scope.Scope>) =>
    run(Effect.scoped(effect.pipe(Effect.provide(LeaseQueue.layer(BadQ, { name: q, connection: redisUrl() })))))

  it('LeaseQueue.make with name "a:b": InvalidQueueName', async () => {
    await refuses(
      () => run(Effect.scoped(LeaseQueue.make({ name: "a:b", connection: redisUrl() }))),
      { tag: "InvalidQueueName" },
      /invalid queue name "a:b"/,
    )
  })

  it("add of a BigInt: InvalidPayload", async () => {
    await refuses(
      () =>
        onQueue(
          Effect.gen(function* () {
            return yield* (yield* BadQ).add({ n: 10n })
          }),
        ),
      { tag: "InvalidPayload" },
      /invalid payload: contains a BigInt at payload\.n;/,
    )
  })

  it("add with delayMs -1: InvalidOptions", async () => {
    await refuses(
      () =>
        onQueue(
          Effect.gen(function* () {
            return yield* (yield* BadQ).add("x", { delayMs: -1 })
          }),
        ),
      { tag: "InvalidOptions" },
      /invalid option options\.delayMs = -1/,
    )
  })

  it("add with attempts (BullMQ's name): InvalidOptions, did you mean maxAttempts?", async () => {
    await refuses(
      () =>
        onQueue(
          Effect.gen(function* () {
            return yield* (yield* BadQ).add("x", { attempts: 3 } as never)
          }),
        ),
      { tag: "InvalidOptions" },
      /invalid option options\.attempts = 3: unknown option; did you mean maxAttempts\?/,
    )
  })

  for (const [options, why] of [
    [{ leaseMs: Number.NaN }, /invalid option leaseMs = NaN: must be a whole number/],
    [{ concurrency: 0 }, /invalid option concurrency = 0: must be from 1 to 10000/],
    [{ lockDuration: 5 }, /invalid option options\.lockDuration = 5: unknown option; did you mean leaseMs\?/],
  ] as const) {
    it(`LeaseWorker.make ${label(options)}: InvalidOptions`, async () => {
      await refuses(
        () => onQueue(LeaseWorker.make(BadQ, () => Effect.void, options as never)),
        { tag: "InvalidOptions" },
        why,
      )
    })
  }
})

describe("CLI", () => {
  it("sweep --queue 'a{b': exit 2 naming the flag and the value", async () => {
    await refuses(() => leaseq(["sweep", "--url", redisUrl(), "--queue", "a{b"]), { exit: 2 }, /--queue.*'a\{b'/)
  })

  it("sweep --limit 0: exit 2 naming the flag and the value", async () => {
    await refuses(() => leaseq(["sweep", "--url", redisUrl(), "--limit", "0"]), { exit: 2 }, /--limit.*'0'/)
  })

  it("--url http://…: exit 2 naming the URL", async () => {
    await refuses(
      () => leaseq(["stats", "--url", "http://127.0.0.1:6379"]),
      { exit: 2 },
      /--url "http:\/\/127\.0\.0\.1:6379/,
    )
  })

  it("an unreachable Redis: exit 1 naming the URL, without its password", async () => {
    const port = await freePort()
    const r = await leaseq(["stats", "--url", `redis://ops:hunter2-secret@127.0.0.1:${port}`])
    expect(r.text).not.toContain("hunter2-secret")
    await refuses(
      async () => r,
      { exit: 1 },
      new RegExp(`cannot reach Redis at redis://ops:\\*\\*\\*@127\\.0\\.0\\.1:${port}`),
    )
  })

  it("a layout version mismatch: exit 1 naming both versions, nothing written", async () => {
    const other = name("cli-layout")
    await raw.hset(queueKeys(other).meta, "layout", "99")
    await refuses(
      () => leaseq(["sweep", "--url", redisUrl(), "--queue", other]),
      { exit: 1 },
      /layout version "99", this leaseq speaks version "2"/,
      [other],
    )
  })

  it("a non-queue key under the prefix: exit 1 naming the key", async () => {
    const other = name("cli-foreign")
    await raw.set(queueKeys(other).wait, "not a list")
    await refuses(
      () => leaseq(["verify", "--url", redisUrl(), "--queue", other]),
      { exit: 1 },
      new RegExp(`key leaseq:\\{${other}\\}:wait is a string, leaseq expects a list`),
      [other],
    )
  })

  it("dead purge --all without --yes: exit 2, no dead job deleted", async () => {
    const other = name("cli-dead")
    const producer = useQueue(other)
    const client = connect(redisUrl())
    onCleanup(() => client.close())
    await producer.add("x", { maxAttempts: 1 })
    const { jobs } = await Effect.runPromise(makeCommands(client, queueKeys(other)).reserve(1, 10, 100))
    await until("the lease expired on the Redis clock", async () => (await redisNow(raw)) > jobs[0]!.deadline)
    await producer.sweep()
    expect((await producer.stats()).dead).toBe(1)
    await refuses(
      () => leaseq(["dead", "purge", "--url", redisUrl(), "--queue", other, "--all"]),
      { exit: 2 },
      /add --yes/,
      [other],
    )
  })
})

describe("a server that may evict keys", () => {
  it("maxmemory-policy allkeys-lru: one loud warning per client naming the policy and noeviction; none when INFO is denied", async () => {
    const server = await startRedisServer({ args: ["--maxmemory", "64mb", "--maxmemory-policy", "allkeys-lru"] })
    onCleanup(() => server.stop())
    const admin = rawClient(server.url)
    onCleanup(() => admin.disconnect())
    const warnings: Array<Error & { code?: string }> = []
    const listen = (w: Error) => {
      if ((w as { code?: string }).code === EvictionPolicyWarning.code) warnings.push(w)
    }
    process.on("warning", listen)
    onCleanup(() => process.off("warning", listen))
    const evicting = useQueue(q, { connection: server.url })
    await evicting.add("x")
    await evicting.add("y")
    await until("the producer's warning", () => warnings.length === 1)
    const w = warnings[0]!
    expect(w.name).toBe(EvictionPolicyWarning.type)
    expect(w.message).toContain(`${server.url} has maxmemory-policy allkeys-lru`)
    expect(w.message).toContain("Set maxmemory-policy noeviction")
    const worker = useWorker(q, async () => {}, { connection: server.url })
    await worker.ready
    await until("the worker's own warning", () => warnings.length === 2)

    // a user that may not run INFO: no warning, no error, the queue works
    await admin.call("ACL", "SETUSER", "noinfo", "on", ">noinfo-pw", "~*", "+@all", "-info")
    const denied = useQueue(name("noinfo"), {
      connection: `redis://noinfo:noinfo-pw@127.0.0.1:${server.port}`,
    })
    expect(await denied.add("z")).toMatch(/^[0-9A-Z]{26}$/)
    await denied.close()
    // a server with noeviction (the suite's): no warning
    const fine = useQueue(name("fine"))
    await fine.add("ok")
    await fine.close()
    await new Promise((r) => setImmediate(r))
    expect(warnings).toHaveLength(2)
  })
})
