/**
 * The `leaseq` CLI, built with tsc and spawned as a process on Node 24 against
 * real Redis: sweep, stats, dead list/retry/purge, verify, exit codes, flags,
 * redaction, and discovery over a real 3-master cluster.
 */
import { type SpawnOptions, spawn, spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import type { Redis } from "ioredis"
import { monotonicFactory } from "ulid"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeProgress } from "../../src/cli/Output.ts"
import { type Commands, makeCommands, type NewJob } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { connect, type RedisClient } from "../../src/redis/Client.ts"
import { freePort } from "../../src/testing/RedisServer.ts"
import { COMPILE_CACHE } from "../support/child.ts"
import { startCluster } from "../support/cluster.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { untilRedisClock } from "../support/until.ts"

const ROOT = resolve(import.meta.dirname, "../..")
const NODE = join(ROOT, "node_modules/.bin/node")
const name = queueNamer("cli")
const ulid = monotonicFactory()
let build: string
let client: RedisClient
let raw: Redis
let url: string

/**
 * Compile the CLI (and only what it imports) with the build config into a package-shaped temp
 * dir. Without type checking (`noCheck`: the same JavaScript, byte for byte, in a fifth of the
 * CPU): the types are checked by `npm run typecheck`, and with this build config by
 * test/package/pack.test.ts, whose `npm pack` runs `npm run build`.
 */
const buildCli = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "leaseq-cli-"))
  const config = {
    extends: join(ROOT, "tsconfig.build.json"),
    compilerOptions: {
      outDir: join(dir, "dist"),
      rootDir: join(ROOT, "src"),
      typeRoots: [join(ROOT, "node_modules/@types")],
      declaration: false,
      sourceMap: false,
      noCheck: true,
    },
    include: [],
    files: [join(ROOT, "src/cli/main.ts")],
  }
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(config))
  const r = spawnSync(join(ROOT, "node_modules/.bin/tsc"), ["-p", join(dir, "tsconfig.json")], { encoding: "utf8" })
  if (r.status !== 0) throw new Error(`tsc failed:\n${r.stdout}${r.stderr}`)
  // The published layout: package.json, dist/ (with the dashboard's browser script, copied as
  // `npm run build` does), lua/ (engine/scripts/Script.ts reads the package's lua/), and dependencies.
  cpSync(join(ROOT, "src/dashboard/browser"), join(dir, "dist/dashboard/browser"), {
    recursive: true,
    filter: (f) => !f.endsWith(".d.ts"),
  })
  cpSync(join(ROOT, "package.json"), join(dir, "package.json"))
  symlinkSync(join(ROOT, "lua"), join(dir, "lua"))
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"))
  return dir
}

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Spawn the built CLI. REDIS_URL is removed from its environment unless `env` sets it. */
const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Run> =>
  new Promise((done, fail) => {
    const { REDIS_URL: _, ...base } = process.env
    // a shared V8 compile cache: each run of the built CLI starts in about 60% of the time
    const options: SpawnOptions = {
      env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    }
    const child = spawn(NODE, [join(build, "dist/cli/main.js"), ...args], options)
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr?.on("data", (d: Buffer) => {
      stderr += d.toString()
    })
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout, stderr }))
  })

const json = (r: Run) => {
  expect(r.stderr).toBe("")
  return JSON.parse(r.stdout)
}
const oneLine = (r: Run) => {
  expect(r.stderr.endsWith("\n")).toBe(true)
  expect(r.stderr.trimEnd()).not.toContain("\n")
  return r.stderr
}

const run = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e)
const job = (over: Partial<NewJob> = {}): NewJob => ({
  id: ulid(),
  payload: JSON.stringify({ n: Math.random() }),
  delayMs: 0,
  maxAttempts: 3,
  dedupeKey: "",
  dedupeTtlMs: 0,
  ...over,
})
const queue = (prefix?: string) => {
  const keys = queueKeys(name(), prefix)
  return { keys, c: makeCommands(client, keys) }
}
/** Add `n` jobs and lease them for 20 ms; resolves once every lease has expired on the Redis clock. */
const expiredLeases = async (c: Commands, n: number, maxAttempts = 3, r: Redis = raw) => {
  await run(c.add(Array.from({ length: n }, () => job({ maxAttempts }))))
  const { jobs } = await run(c.reserve(n, 20, 100))
  await untilRedisClock(r, Math.max(...jobs.map((j) => j.deadline)))
  return jobs
}

beforeAll(() => {
  build = buildCli()
  url = redisUrl()
  client = connect(url)
  raw = rawClient()
})
afterAll(async () => {
  await client.close()
  raw.disconnect()
  if (build) rmSync(build, { recursive: true, force: true })
})

describe("leaseq sweep", () => {
  it("reclaims a lease left unacknowledged and says so", async () => {
    const { keys, c } = queue()
    const [leased] = await expiredLeases(c, 1)
    const r = await cli(["sweep", "--url", url, "--queue", keys.queue, "--json"])
    expect(r.code).toBe(0)
    const out = json(r)
    expect(out.queues).toEqual([
      expect.objectContaining({ queue: keys.queue, reclaimed: 1, dead: 0, promoted: 0, calls: 1, incomplete: false }),
    ])
    expect(await raw.zcard(keys.active)).toBe(0)
    expect(await raw.lrange(keys.wait, 0, -1)).toEqual([leased!.id])
    expect(await raw.hget(keys.lost, leased!.id)).toBe("1")
  })

  it("prints a text summary by default", async () => {
    const { keys, c } = queue()
    await expiredLeases(c, 2)
    const r = await cli(["sweep", "--url", url, "--queue", keys.queue])
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    expect(r.stdout).toContain("reclaimed 2 (dead 0)")
    expect(r.stdout).toMatch(new RegExp(`${keys.queue}\\s+2\\s+0\\s+0\\s+1`))
  })

  it("finds nothing in a healthy queue and changes nothing", async () => {
    const { keys, c } = queue()
    await run(c.add([job(), job()]))
    await run(c.reserve(1, 60_000, 100))
    const before = await dumpQueue(raw, keys.queue)
    const r = await cli(["sweep", "--url", url, "--queue", keys.queue, "--json"])
    expect(r.code).toBe(0)
    expect(json(r).queues[0]).toMatchObject({ reclaimed: 0, dead: 0, promoted: 0, incomplete: false })
    expect(await dumpQueue(raw, keys.queue)).toEqual(before)
  })

  it("moves a job whose attempts are used up to dead, and promotes due delayed jobs", async () => {
    const { keys, c } = queue()
    const [poison] = await expiredLeases(c, 1, 1)
    const delayed = job({ delayMs: 20 })
    await run(c.add([delayed]))
    await untilRedisClock(raw, Number(await raw.zscore(keys.delayed, delayed.id)))
    const r = await cli(["sweep", "--url", url, "--queue", keys.queue, "--json"])
    expect(r.code).toBe(0)
    expect(json(r).queues[0]).toMatchObject({ reclaimed: 1, dead: 1, promoted: 1 })
    // the jobs it moved to dead are named, with the token of the lease that expired
    expect(json(r).queues[0].deadJobs).toEqual([
      { id: poison!.id, token: poison!.token, message: "lease expired 1 time(s) with 0 failure(s); maxAttempts is 1" },
    ])
    expect(await raw.zscore(keys.dead, poison!.id)).not.toBeNull()
    expect(await raw.lrange(keys.wait, 0, -1)).toEqual([delayed.id])
  })

  it("names the jobs it moved to dead in text, at most 100, and counts the rest", async () => {
    const { keys, c } = queue()
    const dead = await expiredLeases(c, 102, 1)
    const r = await cli(["sweep", "--url", url, "--queue", keys.queue])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`${keys.queue}: 102 jobs moved to dead (lease-expired):`)
    const named = dead.filter((j) => r.stdout.includes(`  ${j.id} (token ${j.token}): lease expired 1 time(s)`))
    expect(named).toHaveLength(100)
    expect(r.stdout).toContain(`… and 2 more (leaseq dead list --queue ${keys.queue})`)
  })

  it("respects --limit and --max-ms: one call of 10 when the budget is 0, the rest on the next pass", async () => {
    const { keys, c } = queue()
    await expiredLeases(c, 25)
    const first = await cli(["sweep", "--url", url, "--queue", keys.queue, "--limit", "10", "--max-ms", "0", "--json"])
    expect(first.code).toBe(0)
    const a = json(first)
    expect(a.queues[0]).toMatchObject({ reclaimed: 10, calls: 1, incomplete: true })
    expect(a.totals).toMatchObject({ reclaimed: 10, calls: 1, incomplete: true })
    expect(await raw.zcard(keys.active)).toBe(15)
    const second = await cli(["sweep", "--url", url, "--queue", keys.queue, "--limit", "10", "--json"])
    expect(json(second).queues[0]).toMatchObject({ reclaimed: 15, calls: 2, incomplete: false })
    expect(await raw.llen(keys.wait)).toBe(25)
  })

  it("prints exactly one JSON object with per-queue results, totals and elapsedMs", async () => {
    const prefix = `${name("prefix")}`
    const one = queue(prefix)
    const two = queue(prefix)
    const nested = queue(`${prefix}:sub`)
    await expiredLeases(one.c, 3)
    await run(two.c.add([job()]))
    await expiredLeases(nested.c, 1)
    const r = await cli(["sweep", "--url", url, "--prefix", prefix, "--json"])
    expect(r.code).toBe(0)
    expect(r.stdout.endsWith("\n")).toBe(true)
    expect(r.stdout.trimEnd()).not.toContain("\n")
    const out = json(r)
    expect(Object.keys(out).sort()).toEqual(["elapsedMs", "ok", "prefix", "queues", "totals"])
    expect(out.prefix).toBe(prefix)
    expect(out.ok).toBe(true)
    expect(typeof out.elapsedMs).toBe("number")
    // every queue under the prefix, found by SCAN; not those under another prefix
    expect(out.queues.map((q: { queue: string }) => q.queue)).toEqual([one.keys.queue, two.keys.queue].sort())
    for (const q of out.queues) {
      expect(Object.keys(q).sort()).toEqual(
        [
          "calls",
          "dead",
          "deadJobs",
          "dedupeDropped",
          "incomplete",
          "nextDeadlineMs",
          "nextTickMs",
          "promoted",
          "queue",
          "reclaimed",
          "scheduled",
          "trimmed",
        ].sort(),
      )
    }
    expect(out.totals).toEqual({
      queues: 2,
      reclaimed: 3,
      dead: 0,
      promoted: 0,
      dedupeDropped: 0,
      trimmed: 0,
      scheduled: 0,
      calls: 2,
      incomplete: false,
      failed: 0,
    })
    expect(await raw.zcard(nested.keys.active)).toBe(1)
  })

  it("reports zeros for a named queue that does not exist, and creates nothing", async () => {
    const ghost = name("ghost")
    const r = await cli(["sweep", "--url", url, "--queue", ghost, "--json"])
    expect(r.code).toBe(0)
    expect(json(r).queues).toEqual([expect.objectContaining({ queue: ghost, reclaimed: 0, dead: 0, promoted: 0 })])
    expect(Object.values(await dumpQueue(raw, ghost)).every((v) => v === null)).toBe(true)
  })

  it("uses REDIS_URL when --url is absent", async () => {
    const { keys, c } = queue()
    await expiredLeases(c, 1)
    const r = await cli(["sweep", "--queue", keys.queue, "--json"], { REDIS_URL: url })
    expect(r.code).toBe(0)
    expect(json(r).queues[0].reclaimed).toBe(1)
  })
})

describe("failures and exit codes", () => {
  it("exits 1 with one line when Redis cannot be reached", async () => {
    const port = await freePort()
    const r = await cli(["sweep", "--url", `redis://127.0.0.1:${port}`, "--json"])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(oneLine(r)).toMatch(
      new RegExp(`^leaseq: cannot reach Redis at redis://127\\.0\\.0\\.1:${port}.*ECONNREFUSED`),
    )
  })

  it("never prints a password from a URL", async () => {
    const port = await freePort()
    const secretUrl = `redis://user:s3cret@127.0.0.1:${port}`
    const runs = await Promise.all([
      cli(["sweep", "--url", secretUrl]),
      cli(["stats", "--url", secretUrl, "--json"]),
      cli(["dead", "list", "--queue", "q", "--url", secretUrl]),
      cli(["verify"], { REDIS_URL: secretUrl }),
      cli(["sweep", "--url", "http://user:s3cret@127.0.0.1:1"]),
      cli(["sweep", `--ur=${secretUrl}`]),
      cli(["sweep", "--ur=http://user:s3cret@127.0.0.1:1"]),
    ])
    expect(runs.map((r) => r.code)).toEqual([1, 1, 1, 1, 2, 2, 2])
    for (const r of runs) {
      expect(r.stdout + r.stderr).not.toContain("s3cret")
      expect(oneLine(r)).toContain("user:***@")
    }
  })

  it("works with an ACL user and password in the URL, without echoing it", async () => {
    const user = name("acl")
    const password = `pw-${Math.random().toString(36).slice(2)}:@/x`
    await raw.call("ACL", "SETUSER", user, "on", `>${password}`, "~*", "+@all")
    try {
      const { keys, c } = queue()
      await expiredLeases(c, 1)
      const u = new URL(url)
      u.username = user
      u.password = encodeURIComponent(password)
      const r = await cli(["sweep", "--url", u.toString(), "--queue", keys.queue])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain("reclaimed 1")
      const wrong = new URL(u)
      wrong.password = "not-it"
      const denied = await cli(["stats", "--url", wrong.toString()])
      expect(denied.code).toBe(1)
      expect(oneLine(denied)).toMatch(/WRONGPASS/)
      for (const secret of [password, encodeURIComponent(password)]) {
        expect(r.stdout + r.stderr + denied.stdout + denied.stderr).not.toContain(secret)
      }
      expect(denied.stderr).not.toContain("not-it")
    } finally {
      await raw.call("ACL", "DELUSER", user)
    }
  })

  it.each([
    [["sweep", "--queue", "@Q", "--limit", "0"], /--limit.*'0'.*from 1 to 10000/],
    [["sweep", "--queue", "@Q", "--limit", "abc"], /--limit.*'abc'.*whole number/],
    [["sweep", "--queue", "@Q", "--limit", "1.5"], /--limit.*'1\.5'/],
    [["sweep", "--queue", "@Q", "--max-ms", "-1"], /--max-ms.*'-1'/],
    [["sweep", "--queue", "@Q", "--queue", "a{b"], /--queue.*'a\{b'.*invalid queue name/],
    [["sweep", "--queue", "@Q", "--prefix", "p{x}"], /--prefix.*'p\{x\}'/],
    [["sweep", "--queue", "@Q", "extra"], /too many arguments/],
    [["sweep", "--queue", "@Q", "--bogus"], /unknown option '--bogus'/],
    [["swep", "--queue", "@Q"], /unknown command 'swep'/],
    [["dead", "list"], /required option '--queue <name>'/],
    [["dead", "retry", "--queue", "@Q"], /give the ids of the jobs to retry, or --all/],
    [["dead", "retry", "--queue", "@Q", "--all", "some-id"], /not both/],
    [["verify", "--queue", "@Q", "--max-lines", "0"], /--max-lines.*'0'/],
    [["verify", "--queue", "@Q", "--page-size", "0"], /--page-size.*'0'.*from 1 to 10000/],
  ])("exits 2 with one line for bad flags: %j", async (args, message) => {
    const { keys, c } = queue()
    await expiredLeases(c, 1)
    const before = await dumpQueue(raw, keys.queue)
    const r = await cli([...args.map((a) => (a === "@Q" ? keys.queue : a)), "--url", url])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(oneLine(r)).toMatch(/^leaseq: /)
    expect(r.stderr).toMatch(message)
    expect(await dumpQueue(raw, keys.queue)).toEqual(before)
  })

  it("exits 2 for a URL that is not redis:// or rediss://, from --url or REDIS_URL", async () => {
    const a = await cli(["sweep", "--url", "localhost:6379"])
    const b = await cli(["stats"], { REDIS_URL: "http://127.0.0.1:6379" })
    expect([a.code, b.code]).toEqual([2, 2])
    expect(oneLine(a)).toMatch(/invalid --url "localhost:6379"/)
    expect(oneLine(b)).toMatch(/invalid REDIS_URL "http:\/\/127\.0\.0\.1:6379\/?"/)
  })

  it("exits 1 naming the key when a queue's keys are not leaseq's, and goes on with the other queues", async () => {
    const prefix = name("foreign")
    const good = queue(prefix)
    await expiredLeases(good.c, 1)
    const bad = queueKeys(name("bad"), prefix)
    await raw.hset(bad.meta, "layout", "1")
    await raw.set(bad.active, "not a zset")
    const named = await cli(["sweep", "--url", url, "--prefix", prefix, "--queue", bad.queue])
    expect(named.code).toBe(1)
    expect(oneLine(named)).toContain(`key ${bad.active} is a string, leaseq expects a zset`)
    const all = await cli(["sweep", "--url", url, "--prefix", prefix, "--json"])
    expect(all.code).toBe(1)
    expect(oneLine(all)).toContain(`cannot sweep queue ${bad.queue}`)
    const out = JSON.parse(all.stdout)
    expect(out.ok).toBe(false)
    expect(out.queues.find((q: { queue: string }) => q.queue === good.keys.queue).reclaimed).toBe(1)
    expect(out.queues.find((q: { queue: string }) => q.queue === bad.queue).error).toMatch(/is a string/)
    expect(await raw.get(bad.active)).toBe("not a zset")
  })

  it("exits 1 on a layout this leaseq does not speak, writing nothing", async () => {
    const { keys, c } = queue()
    await expiredLeases(c, 1)
    await raw.hset(keys.meta, "layout", "99")
    const before = await dumpQueue(raw, keys.queue)
    const r = await cli(["sweep", "--url", url, "--queue", keys.queue])
    expect(r.code).toBe(1)
    expect(oneLine(r)).toMatch(/layout version "99"/)
    expect(await dumpQueue(raw, keys.queue)).toEqual(before)
  })
})

describe("leaseq stats", () => {
  it("counts waiting, active, expired-but-unswept, delayed and dead per queue", async () => {
    const { keys, c } = queue()
    const jobs = [job({ maxAttempts: 1 }), job(), job(), job(), job()]
    await run(c.add(jobs))
    await run(c.add([job({ delayMs: 60_000 })]))
    const [toKill] = (await run(c.reserve(1, 60_000, 0))).jobs
    await run(c.fail(toKill!, { delayMs: 0, error: JSON.stringify({ message: "boom" }), mode: "retry" }))
    await run(c.reserve(1, 60_000, 0))
    const { jobs: short } = await run(c.reserve(1, 20, 0))
    await untilRedisClock(raw, short[0]!.deadline)
    const r = await cli(["stats", "--url", url, "--queue", keys.queue, "--json"])
    expect(r.code).toBe(0)
    const out = json(r)
    expect(out.queues).toHaveLength(1)
    expect(out.queues[0]).toMatchObject({ queue: keys.queue, waiting: 2, active: 2, expired: 1, delayed: 1, dead: 1 })
    expect(out.queues[0].oldestWaitingAgeMs).toBeGreaterThanOrEqual(0)
    expect(out.totals).toMatchObject({ queues: 1, waiting: 2, active: 2, expired: 1, delayed: 1, dead: 1 })
    const text = await cli(["stats", "--url", url, "--queue", keys.queue])
    expect(text.stdout).toMatch(/QUEUE\s+WAITING\s+ACTIVE\s+EXPIRED\s+DELAYED\s+DEAD/)
    expect(text.stdout).toMatch(new RegExp(`${keys.queue}\\s+2\\s+2\\s+1\\s+1\\s+1`))
  })
})

describe("leaseq dead", () => {
  const deadQueue = async (n: number) => {
    const q = queue()
    const jobs = await expiredLeases(q.c, n, 1)
    await run(q.c.sweep(100))
    expect(await raw.zcard(q.keys.dead)).toBe(n)
    return { ...q, ids: jobs.map((j) => j.id) }
  }

  it("lists dead jobs with their last error", async () => {
    const { keys, ids } = await deadQueue(2)
    const r = await cli(["dead", "list", "--url", url, "--queue", keys.queue, "--json"])
    expect(r.code).toBe(0)
    const out = json(r)
    expect(out.total).toBe(2)
    expect(out.jobs.map((j: { id: string }) => j.id).sort()).toEqual([...ids].sort())
    expect(out.jobs[0]).toMatchObject({ lostLeases: 1, error: { reason: "lease-expired" } })
    const text = await cli(["dead", "list", "--url", url, "--queue", keys.queue, "--count", "1"])
    expect(text.stdout).toContain("2 dead jobs, showing 1-1")
    expect(text.stdout).toContain("lease-expired")
  })

  it("retries dead jobs by id and with --all; unknown ids are named on stderr", async () => {
    const { keys, ids } = await deadQueue(3)
    const one = await cli(["dead", "retry", "--url", url, "--queue", keys.queue, ids[0]!, "no-such-id", "--json"])
    expect(one.code).toBe(0)
    expect(JSON.parse(one.stdout)).toEqual({
      queue: keys.queue,
      action: "retry",
      count: 1,
      remaining: 2,
      missing: ["no-such-id"],
    })
    expect(oneLine(one)).toContain("no-such-id")
    expect(await raw.lrange(keys.wait, 0, -1)).toEqual([ids[0]])
    const all = await cli(["dead", "retry", "--url", url, "--queue", keys.queue, "--all"])
    expect(all.code).toBe(0)
    expect(all.stdout).toContain("2 dead jobs put back on wait; 0 still dead")
    expect(await raw.zcard(keys.dead)).toBe(0)
    expect(await raw.llen(keys.wait)).toBe(3)
  })

  it("purge refuses without --yes (exit 2, nothing deleted), and deletes with it", async () => {
    const { keys, ids } = await deadQueue(3)
    const before = await dumpQueue(raw, keys.queue)
    for (const args of [[ids[0]!], ["--all"]]) {
      const r = await cli(["dead", "purge", "--url", url, "--queue", keys.queue, ...args])
      expect(r.code).toBe(2)
      expect(oneLine(r)).toMatch(/add --yes to confirm \(nothing was deleted\)/)
    }
    expect(await dumpQueue(raw, keys.queue)).toEqual(before)
    const one = await cli(["dead", "purge", "--url", url, "--queue", keys.queue, ids[0]!, "--yes", "--json"])
    expect(json(one)).toMatchObject({ action: "purge", count: 1, remaining: 2 })
    expect(await raw.hexists(keys.data, ids[0]!)).toBe(0)
    const all = await cli(["dead", "purge", "--url", url, "--queue", keys.queue, "--all", "--yes"])
    expect(all.code).toBe(0)
    expect(all.stdout).toContain("2 dead jobs deleted; 0 still dead")
    expect(await raw.zcard(keys.dead)).toBe(0)
    expect(await raw.hlen(keys.data)).toBe(0)
  })

  it("N13: list, retry and purge cover every partition of a partitioned queue", async () => {
    const base = name("parted")
    const parts = [0, 1].map((i) => {
      const keys = queueKeys(`${base}~${i}`)
      return { keys, c: makeCommands(client, keys) }
    })
    /** One job per partition dies (lease expired, no attempts left); partition 0's first. */
    const killOne = async () => {
      const ids: string[] = []
      for (const { c } of parts) {
        const { jobs } = await run(c.reserve(1, 20, 0))
        await untilRedisClock(raw, jobs[0]!.deadline)
        expect(await run(c.sweep(10))).toMatchObject({ dead: 1 })
        ids.push(jobs[0]!.id)
      }
      return ids
    }
    for (const { c } of parts) await run(c.add([job({ maxAttempts: 1 })]))
    const ids = await killOne()
    const partitions = parts.map((p) => p.keys.queue)

    const list = json(await cli(["dead", "list", "--url", url, "--queue", base, "--json"]))
    expect(list).toMatchObject({ queue: base, partitions, total: 2 })
    expect(list.jobs.map((j: { id: string; queue: string }) => [j.queue, j.id])).toEqual([
      [partitions[0], ids[0]],
      [partitions[1], ids[1]],
    ])
    const second = await cli(["dead", "list", "--url", url, "--queue", base, "--offset", "1", "--count", "1"])
    expect(second.code).toBe(0)
    expect(second.stdout).toContain("2 dead jobs, showing 2-2")
    expect(second.stdout).toMatch(new RegExp(`${partitions[1]}\\s+${ids[1]}`))
    expect(second.stdout).not.toContain(ids[0]!)

    const retried = await cli(["dead", "retry", "--url", url, "--queue", base, "--all"])
    expect(retried.code).toBe(0)
    expect(retried.stdout).toContain("2 dead jobs put back on wait; 0 still dead")
    for (const [i, { keys }] of parts.entries()) {
      expect(await raw.zcard(keys.dead)).toBe(0)
      expect(await raw.lrange(keys.wait, 0, -1)).toEqual([ids[i]])
    }

    const again = await killOne()
    expect(again).toEqual(ids)
    const purged = await cli(["dead", "purge", "--url", url, "--queue", base, ...ids, "no-such-id", "--yes", "--json"])
    expect(purged.code).toBe(0)
    expect(JSON.parse(purged.stdout)).toEqual({
      queue: base,
      partitions,
      action: "purge",
      count: 2,
      remaining: 0,
      missing: ["no-such-id"],
    })
    for (const { keys } of parts) {
      expect(await raw.zcard(keys.dead)).toBe(0)
      expect(await raw.hlen(keys.data)).toBe(0)
    }
  })
})

describe("leaseq verify", () => {
  it("exits 0 on a healthy queue", async () => {
    const { keys, c } = queue()
    await run(c.add([job(), job()]))
    await run(c.reserve(1, 60_000, 0))
    const r = await cli(["verify", "--url", url, "--queue", keys.queue])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`${keys.queue}: ok (2 jobs)`)
  })

  it("exits 3 on a corrupted queue and lists the violations", async () => {
    const { keys, c } = queue()
    const [a, b] = [job(), job()]
    await run(c.add([a, b]))
    await raw.hset(keys.data, "orphan-1", "{}")
    await raw.rpush(keys.wait, a.id)
    const r = await cli(["verify", "--url", url, "--queue", keys.queue])
    expect(r.code).toBe(3)
    expect(r.stdout).toContain(`${keys.queue}: 2 violations`)
    expect(r.stdout).toContain("orphan-data orphan-1 has a payload but is in no state")
    expect(r.stdout).toContain(`duplicate ${a.id} in wait and wait`)
    expect(oneLine(r)).toMatch(new RegExp(`verify found 2 violations in ${keys.queue}`))
    const j = await cli(["verify", "--url", url, "--queue", keys.queue, "--json", "--max-lines", "1"])
    expect(j.code).toBe(3)
    const out = JSON.parse(j.stdout)
    expect(out).toMatchObject({ ok: false, violations: 2 })
    expect(out.queues[0].lines).toHaveLength(1)
  })

  it("N9: reads the queue in pages of --page-size and says the result is approximate under change", async () => {
    const { keys, c } = queue()
    const jobs = Array.from({ length: 7 }, () => job())
    await run(c.add(jobs))
    // the job read on the first page of wait also waits again at the far end (the last page)
    await raw.lpush(keys.wait, jobs[0]!.id)
    const r = await cli(["verify", "--url", url, "--queue", keys.queue, "--page-size", "2"])
    expect(r.code).toBe(3)
    expect(r.stdout).toContain(`${keys.queue}: 1 violation (7 jobs)`)
    expect(r.stdout).toContain(`duplicate ${jobs[0]!.id} in wait and wait`)
    expect(r.stdout).toMatch(/page by page: if jobs moved meanwhile.*run again to confirm/)
    const j = await cli(["verify", "--url", url, "--queue", keys.queue, "--page-size", "2", "--json"])
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, violations: 1, approximate: true })
  })
})

describe("--help", () => {
  it.each([
    [["--help"], /Usage: leaseq \[options\] \[command\][\s\S]*Exit codes/],
    [
      ["sweep", "--help"],
      /Usage: leaseq sweep[\s\S]*--json[\s\S]*--queue <name>[\s\S]*--limit <n>[\s\S]*--max-ms <ms>/,
    ],
    [["stats", "--help"], /Usage: leaseq stats[\s\S]*--queue <name>/],
    [["verify", "--help"], /Usage: leaseq verify[\s\S]*--max-lines <n>[\s\S]*--page-size <n>/],
    [["dead", "--help"], /Usage: leaseq dead[\s\S]*list[\s\S]*retry[\s\S]*purge/],
    [["dead", "list", "--help"], /Usage: leaseq dead list[\s\S]*--offset <n>/],
    [["dead", "retry", "--help"], /Usage: leaseq dead retry[\s\S]*--all/],
    [["dead", "purge", "--help"], /Usage: leaseq dead purge[\s\S]*--yes/],
    [["help", "sweep"], /Usage: leaseq sweep/],
  ])("%j prints help and exits 0", async (args, pattern) => {
    const r = await cli(args)
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(pattern)
    if (args[0] !== "dead" || args.length > 2) expect(r.stdout).toContain("--url <url>")
    expect(r.stderr).toBe("")
  })

  it("shows the help on stderr and exits 2 when the command is missing", async () => {
    const r = await cli([])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe("")
    expect(r.stderr).toMatch(/Usage: leaseq \[options\] \[command\]/)
  })
})

describe("progress", () => {
  it("goes to stderr only when it is a terminal, and never with --json", () => {
    const writes: string[] = []
    const io = (tty: boolean) => ({ out: () => {}, err: (t: string) => writes.push(t), errIsTTY: tty })
    makeProgress(io(false), true, 0).update("a")
    makeProgress(io(true), false, 0).update("b")
    expect(writes).toEqual([])
    const p = makeProgress(io(true), true, 0)
    p.update("sweeping q")
    p.done()
    expect(writes.join("")).toContain("sweeping q")
    expect(writes.at(-1)).toBe("\r\x1b[2K")
  })
})

describe("on a Redis Cluster", () => {
  const hasRedisCli = spawnSync("redis-cli", ["--version"], { stdio: "ignore" }).status === 0

  it.skipIf(!hasRedisCli)("finds queues on every master and sweeps them", async () => {
    // the shared fixture picks bus ports that cannot overflow 65535
    const local = await startCluster({ masters: 3 })
    const nodes = local.nodes.map((s) => rawClient(s.url))
    const cluster = connect({ cluster: local.startup })
    try {
      const prefix = "cl"
      const names = Array.from({ length: 9 }, (_, i) => `q${i}`)
      for (const q of names) await expiredLeases(makeCommands(cluster, queueKeys(q, prefix)), 1, 3, nodes[0])
      // the queues really are spread over several masters
      const perMaster = await Promise.all(nodes.map(async (n) => (await n.keys(`${prefix}:{*}:meta`)).length))
      expect(perMaster.filter((k) => k > 0).length).toBeGreaterThan(1)
      expect(perMaster.reduce((a, b) => a + b, 0)).toBe(9)

      const r = await cli(["sweep", "--url", local.nodes[1]!.url, "--prefix", prefix, "--json"])
      expect(r.code, r.stderr).toBe(0)
      const out = json(r)
      expect(out.queues.map((q: { queue: string }) => q.queue)).toEqual(names)
      expect(out.totals.reclaimed).toBe(9)
      const stats = json(await cli(["stats", "--url", local.nodes[2]!.url, "--prefix", prefix, "--json"]))
      expect(stats.totals).toMatchObject({ queues: 9, waiting: 9, active: 0, expired: 0 })
    } finally {
      await cluster.close()
      for (const n of nodes) n.disconnect()
      await local.stop()
    }
  })
})
