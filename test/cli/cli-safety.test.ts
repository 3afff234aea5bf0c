/**
 * What the CLI and the library show of text they do not control, run from source as a
 * process against real Redis: a password with any character never printed (the CLI's
 * refusal, `new Queue(url)`'s error); control characters and bidi overrides from error
 * messages, dedupe keys, event reasons and payloads printed escaped, text and --json;
 * --json refused where nothing would be printed; counts with the right plural.
 */
import { inspect } from "node:util"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { formatWorkers } from "../../src/cli/Workers.ts"
import { Queue, Worker } from "../../src/index.ts"
import { redactText, redactUrl } from "../../src/redis/Client.ts"
import { runCli } from "../support/child.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("cli-safety")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

const leaseq = (args: ReadonlyArray<string>) => runCli([...args, "--url", redisUrl()])

/** Passwords a URL parser would split or choke on, written into the URL unencoded. */
const NASTY = ["se/cret-PW", "a@b/c", "p#ss-word", "q?x=1", "50%off", "%zz", "x/y#z?w%@v"]

/** A URL of the suite's Redis with `user:password@` in it, as given (nothing encoded). */
const withCredentials = (user: string, password: string) =>
  redisUrl().replace("redis://", `redis://${user}:${password}@`)

describe("F10: passwords with any character", () => {
  it("the CLI refuses a URL whose password would be split, naming the fix, and never prints the password", async () => {
    const runs = await Promise.all(NASTY.map((pw) => runCli(["stats", "--url", withCredentials("nasty", pw)])))
    for (const [i, r] of runs.entries()) {
      expect(r.code, NASTY[i]).toBe(2)
      expect(r.out).toBe("")
      expect(r.err).toMatch(/^leaseq: invalid --url "redis:\/\/nasty:\*\*\*@127\.0\.0\.1:\d+": .*percent-encode it/)
      expect(r.err).not.toContain(NASTY[i])
    }
    const env = await runCli(["stats"], { REDIS_URL: withCredentials("nasty", "se/cret-PW") })
    expect(env.code).toBe(2)
    expect(env.err).toMatch(/invalid REDIS_URL "redis:\/\/nasty:\*\*\*@/)
    expect(env.err).not.toContain("cret")
  })

  it("new Queue(url) and new Worker(url) throw InvalidOptions naming connection, the URL redacted, with no ioredis TypeError", () => {
    const thrown = (make: () => unknown): unknown => {
      try {
        make()
      } catch (e) {
        return e
      }
      return undefined
    }
    for (const pw of NASTY) {
      const connection = withCredentials("nasty", pw)
      for (const error of [
        thrown(() => new Queue(name(), { connection })),
        thrown(() => new Worker(name(), async () => {}, { connection })),
      ]) {
        expect(error, pw).toMatchObject({ _tag: "InvalidOptions", field: "connection" })
        const e = error as { value: string; message: string }
        expect(e.value).toMatch(/^redis:\/\/nasty:\*\*\*@127\.0\.0\.1:\d+$/)
        expect(e.message).toMatch(/percent-encode/)
        expect(inspect(error, { depth: 10 })).not.toContain(pw)
      }
    }
  })

  it("masks the whole password in URLs and messages, whatever it holds", () => {
    for (const pw of NASTY) {
      expect(redactUrl(`redis://u:${pw}@h:1/0`)).toBe("redis://u:***@h:1/0")
      expect(redactText(`cannot reach rediss://u:${pw}@h:1 now`)).toBe("cannot reach rediss://u:***@h:1 now")
      expect(redactText(`via http://u:${pw}@h:1`)).toBe("via http://u:***@h:1")
    }
    expect(redactUrl("redis://h:1/?password=s3cret&db=1")).toBe("redis://h:1/?password=***&db=1")
  })

  it("a percent-encoded password of those characters works, and a wrong one is refused without echo", async () => {
    const user = name("acl")
    const password = "x/y#z?w%@v 1"
    await raw.call("ACL", "SETUSER", user, "on", `>${password}`, "~*", "&*", "+@all")
    try {
      const good = withCredentials(user, encodeURIComponent(password))
      const q = useQueue(name(), { connection: good })
      expect(await q.add(1)).toMatch(/^[0-9A-Z]{26}$/)
      const denied = await runCli(["stats", "--url", withCredentials(user, encodeURIComponent("#wrong/pw"))])
      expect(denied.code).toBe(1)
      expect(denied.err).toMatch(/WRONGPASS/)
      expect(denied.err).toContain(`${user}:***@`)
      expect(denied.err).not.toMatch(/wrong/)
    } finally {
      await raw.call("ACL", "DELUSER", user)
    }
  })
})

/** Control characters (newline aside), DEL, C1 and bidi characters: none may reach the terminal. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is what it is for
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/

describe("F11, F17: what the CLI prints of text from outside", () => {
  const ESC = "\x1b"
  const evil = `${ESC}]0;PWNED\x07${ESC}[2J${ESC}[31mRED ${ESC}]8;;https://evil.example/\x07click \u202eevil\u202c \u2066x\u2069 \x7f\x9b\r\nnext`

  it("dead list, job and events escape control and bidi characters in text, and keep them exact in --json", async () => {
    const q = name()
    const queue = useQueue(q)
    const id = await queue.add({ p: evil }, { maxAttempts: 1, dedupeKey: evil })
    useWorker(q, async () => {
      throw new Error(evil)
    })
    await queue.waitFor(id, { timeoutMs: 10_000 }).catch(() => undefined)
    const [list, job, events, listJson, jobJson, eventsJson] = await Promise.all([
      leaseq(["dead", "list", "--queue", q]),
      leaseq(["job", id, "--queue", q]),
      leaseq(["events", "--queue", q]),
      leaseq(["dead", "list", "--queue", q, "--json"]),
      leaseq(["job", id, "--queue", q, "--json"]),
      leaseq(["events", "--queue", q, "--json"]),
    ])
    for (const r of [list, job, events, listJson, jobJson, eventsJson]) {
      expect(r.code).toBe(0)
      expect(r.out + r.err).not.toMatch(RAW)
    }
    expect(list.out).toContain("\\x1b]0;PWNED\\x07\\x1b[2J")
    expect(events.out).toContain("\\u202eevil\\u202c \\u2066x\\u2069 \\x7f\\x9b")
    // a value is escaped whole: the dedupe key's newline does not start a line of its own
    expect(job.out).toMatch(/^dedupe key: {2}\\x1b]0;PWNED.*\\x7f\\x9b\\x0d\\x0anext$/m)
    expect(events.out).toMatch(/ failed .* reason=\\x1b]0;PWNED/)
    expect(JSON.parse(listJson.out).jobs[0].error.message).toBe(evil)
    expect(JSON.parse(jobJson.out)).toMatchObject({ dedupeKey: evil, payload: { p: evil } })
    expect(jobJson.out).toContain("\\u202e")
    const reasons = eventsJson.out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.kind === "failed")
    expect(reasons.map((e) => e.reason)).toEqual([evil])
  })

  it("the workers table escapes what a worker's record holds", () => {
    const worker = {
      id: `w${ESC}[2J\u202e`,
      host: "h",
      pid: 1,
      concurrency: 2,
      running: 1,
      startedAt: 0,
      lastSeenAt: 0,
    }
    const text = formatWorkers({
      queue: "q",
      queues: ["q"],
      now: 0,
      workers: [{ ...worker, state: `run${ESC}]0;x\x07`, queue: "q" }],
    })
    expect(text).not.toMatch(RAW)
    expect(text).toMatch(/^w\\x1b\[2J\\u202e +q +run\\x1b\]0;x\\x07 +1\/2 /m)
  })

  it("an error message on stderr is escaped too", async () => {
    const r = await leaseq(["dead", "retry", "--queue", name(), `no-such-${ESC}[2J\u202eid`])
    expect(r.code).toBe(0)
    expect(r.err).toContain("no-such-\\x1b[2J\\u202eid")
    expect(r.err).not.toMatch(RAW)
  })
})

describe("issue 26: --json and plurals", () => {
  it("metrics and dashboard refuse --json (exit 2), which they would never print", async () => {
    const runs = await Promise.all([
      leaseq(["metrics", "--json", "--listen", "127.0.0.1:1"]),
      leaseq(["dashboard", "--json", "--listen", "127.0.0.1:1"]),
    ])
    for (const [i, r] of runs.entries()) {
      expect(r.code).toBe(2)
      expect(r.out).toBe("")
      expect(r.err).toBe(
        `leaseq: ${["metrics", "dashboard"][i]} prints no JSON (it serves until stopped): leave out --json\n`,
      )
    }
    const help = await runCli(["dashboard", "--help"])
    expect(help.out).not.toContain("--json")
  })

  it("says 1 call, 1 queue, 1 dead job, 1 job: no plural for one", async () => {
    const q = name()
    const queue = useQueue(q)
    const id = await queue.add(1, { maxAttempts: 1 })
    useWorker(q, async () => {
      throw new Error("no")
    })
    await queue.waitFor(id, { timeoutMs: 10_000 }).catch(() => undefined)
    const [sweep, list, verify] = await Promise.all([
      leaseq(["sweep", "--queue", q]),
      leaseq(["dead", "list", "--queue", q, "--offset", "5"]),
      leaseq(["verify", "--queue", q]),
    ])
    expect(sweep.out).toMatch(
      /^swept 1 queue under prefix leaseq in \d+ms: reclaimed 0 \(dead 0\), promoted 0, 1 call$/m,
    )
    expect(list.out).toBe(`queue ${q}: 1 dead job, none at offset 5\n`)
    expect(verify.out).toContain(`${q}: ok (1 job)`)
  })
})
