/**
 * Scenario 8 — least privilege and transport.
 *
 * - The ACL line of docs/operations.md, run as written: producers, workers (reserve,
 *   heartbeat, complete, fail, dead, lease loss, release), sweeps, admin calls and the
 *   CLI all work as that user; Redis's ACL LOG records no denied command; every command
 *   any script calls is in the line; the user cannot touch another queue.
 * - TLS: a CA and a server certificate made with openssl in a temp dir; redis-server
 *   with `--tls-port`; the library over ioredis options (`tls: { ca }`), a worker process
 *   over a `rediss://` URL, and the CLI, both trusting the CA via NODE_EXTRA_CA_CERTS.
 * - A password never appears: not in messages, not in `util.inspect` of errors, not in
 *   worker error events, not on the console, not in the CLI's output.
 */
import { spawnSync } from "node:child_process"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { inspect } from "node:util"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { makeCommands } from "../../src/engine/calls/Commands.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import type { Worker } from "../../src/index.ts"
import { connect } from "../../src/redis/Client.ts"
import { freePort, type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { ROOT, runCli, startWorkerChild } from "../support/child.ts"
import { report } from "../support/figures.ts"
import { queueNamer, rawClient } from "../support/redis.ts"
import { tempDir } from "../support/tmp.ts"
import { redisNow, until } from "../support/until.ts"
import { useQueue, useWorker } from "../support/use.ts"

const name = queueNamer("rel-security")
const PASSWORD = "S3cret-Pa55word-Never-Printed"
const USER = "leaseq-app"

/** The `ACL SETUSER …` line of docs/operations.md's least-privilege section, as arguments. */
const documentedAcl = (queue: string): string[] => {
  const doc = readFileSync(join(ROOT, "docs/operations.md"), "utf8")
  const block = /<!-- leaseq-acl:[^\n]*-->\n```sh\n([^\n]+)\n```/.exec(doc)?.[1]
  if (!block) throw new Error("docs/operations.md has no leaseq-acl block")
  const words = block.match(/'[^']*'|\S+/g)!.map((w) => w.replace(/^'|'$/g, ""))
  expect(words.slice(0, 4)).toEqual(["redis-cli", "ACL", "SETUSER", USER])
  return words.slice(3).map((w) => w.replace("CHANGE-ME", PASSWORD).replace("{emails}", `{${queue}}`))
}

/** Every command any Lua script (every .lua file under lua/) calls. */
const scriptCommands = (): string[] => {
  const found = new Set<string>()
  const files = readdirSync(join(ROOT, "lua"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".lua"))
  expect(files.length).toBeGreaterThan(10)
  for (const f of files) {
    for (const m of readFileSync(join(ROOT, "lua", f), "utf8").matchAll(/redis\.call\(\s*'([A-Za-z]+)'/g)) {
      found.add(m[1]!.toLowerCase())
    }
  }
  return [...found].sort()
}

/** Everything the test process prints through the console, for the password check. */
const captureConsole = () => {
  const lines: string[] = []
  const spies = (["log", "info", "warn", "error", "debug"] as const).map((level) =>
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push(args.map((a) => (typeof a === "string" ? a : inspect(a, { depth: 10 }))).join(" "))
    }),
  )
  return {
    lines,
    restore: () => {
      for (const s of spies) s.mockRestore()
    },
  }
}

const shown = (e: unknown): string =>
  [String(e), (e as Error)?.message, (e as Error)?.stack, inspect(e, { depth: 10, showHidden: true })].join("\n")

describe("least privilege", () => {
  let server: LocalRedis
  let admin: Redis
  beforeAll(async () => {
    server = await startRedisServer()
    admin = rawClient(server.url)
  })
  afterAll(async () => {
    admin?.disconnect()
    await server?.stop()
  })

  it("the documented ACL user runs producers, workers, sweeps, admin calls and the CLI; ACL LOG stays empty", async () => {
    const q = name("acl")
    const acl = documentedAcl(q)
    await admin.call("ACL", "SETUSER", ...acl)
    const allowed = new Set(acl.filter((w) => w.startsWith("+")).map((w) => w.slice(1)))
    // every command a script calls is granted (ACLs apply inside scripts too)
    expect(scriptCommands().filter((c) => !allowed.has(c))).toEqual([])

    const url = `redis://${USER}:${PASSWORD}@127.0.0.1:${server.port}`
    const console_ = captureConsole()
    const events: unknown[] = []
    const queue = useQueue<{ fail?: boolean; n?: number }>(q, { connection: url })
    const holder = connect(url)
    const workers: Worker<{ fail?: boolean; n?: number }>[] = []
    try {
      await queue.addBulk([{ payload: { n: 1 } }, { payload: { n: 2 }, options: { priority: 2 } }])
      await queue.add({ fail: true }, { maxAttempts: 1 })
      await queue.add({ n: 3 }, { delayMs: 50 })
      let completed = 0
      const first = useWorker<{ fail?: boolean; n?: number }>(
        q,
        async (job) => {
          if (job.payload.fail) throw new Error("fails on purpose")
        },
        { connection: url, concurrency: 2, leaseMs: 500, sweep: { intervalMs: 50 } },
      )
      workers.push(first)
      first.on("error", (e) => events.push(e))
      first.on("completed", () => completed++)
      await until("three completed, one dead", async () => completed === 3 && (await queue.stats()).dead === 1)

      // a lease lost to a sweep, then a graceful release of a running job
      await first.close()
      await queue.add({ n: 4 })
      const { jobs } = await Effect.runPromise(makeCommands(holder, queueKeys(q)).reserve(1, 10, 100))
      await until("the lease expired", async () => (await redisNow(admin)) > jobs[0]!.deadline)
      expect((await queue.sweep()).reclaimed).toBe(1)
      const second = useWorker<{ fail?: boolean; n?: number }>(
        q,
        (job) => new Promise((resolve) => job.signal.addEventListener("abort", resolve)),
        { connection: url, leaseMs: 60_000, shutdownGraceMs: 10 },
      )
      workers.push(second)
      second.on("error", (e) => events.push(e))
      // the worker's handler holds the job, not only Redis's lease: a reserve reply landing
      // after close began gives its job back unstarted, which close need not wait for
      await until("a job running", async () => second.running === 1)
      await second.close()
      const stats = await queue.stats()
      expect(stats.counters, JSON.stringify(stats.counters)).toMatchObject({
        completed: 3,
        dead: 1,
        lostLeases: 1,
        released: 1,
      })
      expect(await queue.verify()).toMatchObject({ violations: 0 })
      const dead = await queue.deadJobs()
      expect(await queue.retryDead(dead.jobs.map((j) => j.id))).toBe(1)
      expect(await queue.purgeDead([])).toBe(0)
      // a schedule: set, its due tick made by a sweep, listed, removed
      await queue.schedule("s", { every: 1000 }, { payload: { n: 5 } })
      await admin.zadd(queueKeys(q).schedAt, "XX", 1000, "s")
      expect((await queue.sweep()).scheduled).toBe(1)
      expect(await queue.schedules()).toHaveLength(1)
      expect(await queue.unschedule("s")).toBe(true)

      // the CLI as the same user
      for (const args of [
        ["sweep", "--queue", q, "--json"],
        ["stats", "--queue", q, "--json"],
        ["verify", "--queue", q],
        ["dead", "list", "--queue", q],
      ]) {
        const r = await runCli([...args, "--url", url])
        expect(r.code, `leaseq ${args.join(" ")}: ${r.err}`).toBe(0)
        expect(r.out + r.err).not.toContain(PASSWORD)
      }

      // nothing was denied on the way
      expect(await admin.call("ACL", "LOG")).toEqual([])
      expect(events).toEqual([])
      expect(console_.lines.filter((l) => /NOPERM|ready check/i.test(l))).toEqual([])

      // … and the user is confined to its queue
      const other = name("not-granted")
      const outsider = useQueue(other, { connection: url })
      try {
        const e = await outsider.add("x").catch((err) => err)
        expect(e._tag).toBe("RedisCommandError")
        expect(e.message).toMatch(/NOPERM/)
        expect(await admin.exists(queueKeys(other).meta, queueKeys(other).wait)).toBe(0)
      } finally {
        await outsider.close()
      }
      report("least-privilege", {
        aclCommands: [...allowed].sort(),
        scriptCommands: scriptCommands(),
        deniedDuringWorkload: 0,
      })
    } finally {
      console_.restore()
      await Promise.all(workers.map((w) => w.close()))
      await holder.close()
      await queue.close()
    }
  })

  it("a password never appears: wrong password, password rotated under a running worker, CLI", async () => {
    const q = name("secret")
    await admin.call("ACL", "SETUSER", ...documentedAcl(q))
    const good = `redis://${USER}:${PASSWORD}@127.0.0.1:${server.port}`
    const console_ = captureConsole()
    const seen: string[] = []
    let worker: Worker | undefined
    try {
      // a wrong password: the producer's error, the worker's error, both in full
      const wrong = `redis://${USER}:Wrong-${PASSWORD}@127.0.0.1:${server.port}`
      const producer = useQueue(q, { connection: wrong })
      const e1 = await producer.add("x").catch((e) => e)
      await producer.close()
      expect(e1._tag).toBe("RedisCommandError")
      expect(e1.message).toMatch(/WRONGPASS/)
      seen.push(shown(e1))
      const badWorker = useWorker(q, async () => {}, { connection: wrong })
      badWorker.on("error", (e) => seen.push(shown(e)))
      seen.push(shown(await badWorker.ready.catch((e) => e)))
      await badWorker.close()

      // the password is changed while a worker runs: it keeps failing to reconnect
      worker = useWorker(q, async () => {}, { connection: good, leaseMs: 500, sweep: { intervalMs: 50 } })
      const errors: unknown[] = []
      worker.on("error", (e) => {
        errors.push(e)
        seen.push(shown(e))
      })
      await worker.ready
      await admin.call("ACL", "SETUSER", USER, "resetpass", ">Another-Password-9")
      await admin.call("CLIENT", "KILL", "USER", USER)
      await until("the worker reports failed reconnects", () => errors.length >= 3)
      await worker.close()

      // a server that answers the handshake (HELLO with AUTH) with LOADING, as Redis does
      // while it loads its AOF after a restart: ioredis hands that error, with HELLO's
      // arguments attached, to every waiting command
      const loading = createServer((socket) => {
        socket.on("error", () => {})
        socket.on("data", (d) => {
          const commands = d
            .toString()
            .split("\r\n")
            .filter((l) => /^\*\d+$/.test(l)).length
          for (let i = 0; i < commands; i++) socket.write("-LOADING Redis is loading the dataset in memory\r\n")
        })
      })
      await new Promise<void>((resolve) => loading.listen(0, "127.0.0.1", resolve))
      try {
        const port = (loading.address() as { port: number }).port
        const connection = { host: "127.0.0.1", port, username: USER, password: PASSWORD }
        const fast = { ...connection, maxRetriesPerRequest: 1, retryStrategy: () => null }
        const duringLoad = useQueue(q, { connection: fast })
        const e2 = await duringLoad.add("x").catch((e) => e)
        await duringLoad.close()
        expect(e2._tag).toBe("RedisUnavailable")
        expect(e2.message).toMatch(/LOADING/)
        seen.push(shown(e2))
        const loadingWorker = useWorker(q, async () => {}, { connection: fast })
        seen.push(shown(await loadingWorker.ready.catch((e) => e)))
        await loadingWorker.close()
      } finally {
        loading.close()
      }

      // the CLI with the password in the URL
      const cli = await runCli(["sweep", "--queue", q, "--url", good])
      expect(cli.code).toBe(1)
      expect(cli.err).toContain(`redis://${USER}:***@`)
      seen.push(cli.out, cli.err)
      // a worker process: its output, and the reason it could not start
      const child = startWorkerChild(good, q, "work:0", {})
      await child.waitFor((l) => l.startsWith("failed "), "failed")
      await child.stop("SIGKILL")
      seen.push(...child.lines.map((l) => l.text), child.stderr())

      seen.push(...console_.lines)
      expect(seen.length).toBeGreaterThan(5)
      expect(seen.filter((s) => s.includes(PASSWORD))).toEqual([])
    } finally {
      console_.restore()
      await worker?.close()
    }
  })
})

describe("TLS", () => {
  let tls: ReturnType<typeof tempDir>
  let server: LocalRedis
  let admin: Redis
  let ca: Buffer
  let caFile: string
  beforeAll(async () => {
    tls = tempDir("tls")
    writeFileSync(join(tls.dir, "san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    const openssl = (args: string[]) => {
      const r = spawnSync("openssl", args, { cwd: tls.dir, encoding: "utf8" })
      if (r.status !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${r.stderr}`)
    }
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl(["req", "-x509", ...ec, "-keyout", "ca.key", "-out", "ca.crt", "-days", "1", "-subj", "/CN=leaseq test CA"])
    openssl(["req", ...ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"])
    openssl([
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.crt",
      "-days",
      "1",
      "-extfile",
      "san.cnf",
    ])
    caFile = join(tls.dir, "ca.crt")
    ca = readFileSync(caFile)
    const port = await freePort()
    server = await startRedisServer({
      port,
      args: [
        "--port",
        "0",
        "--tls-port",
        String(port),
        "--tls-cert-file",
        join(tls.dir, "server.crt"),
        "--tls-key-file",
        join(tls.dir, "server.key"),
        "--tls-ca-cert-file",
        caFile,
        "--tls-auth-clients",
        "no",
      ],
    })
    admin = new Redis({ host: "127.0.0.1", port, tls: { ca }, maxRetriesPerRequest: 1 })
    admin.on("error", () => {})
  })
  afterAll(async () => {
    admin?.disconnect()
    await server?.stop()
    tls?.remove()
  })

  it("queue, worker (ioredis options with tls.ca), a worker process and the CLI (rediss:// URL) over TLS", async () => {
    const q = name("tls")
    await admin.call("ACL", "SETUSER", ...documentedAcl(q))
    // a plain-text client cannot talk to the TLS port
    const plain = useQueue(q, {
      connection: { host: "127.0.0.1", port: server.port, maxRetriesPerRequest: 1, retryStrategy: () => null },
    })
    const plainError = await plain.add("x").catch((e) => e)
    await plain.close()
    expect(plainError._tag).toMatch(/RedisUnavailable|RedisCommandError/)
    // a TLS client that does not trust the CA is refused by the certificate check
    const untrusted = useQueue(q, {
      connection: { host: "127.0.0.1", port: server.port, tls: {}, maxRetriesPerRequest: 1, retryStrategy: () => null },
    })
    const untrustedError = await untrusted.add("x").catch((e) => e)
    await untrusted.close()
    expect(untrustedError._tag).toBe("RedisUnavailable")
    expect(untrustedError.message, untrustedError.message).toMatch(/certificate/i)

    const connection = { host: "127.0.0.1", port: server.port, username: USER, password: PASSWORD, tls: { ca } }
    const queue = useQueue<{ n: number }>(q, { connection })
    let worker: Worker<{ n: number }> | undefined
    const url = `rediss://${USER}:${PASSWORD}@127.0.0.1:${server.port}`
    const child = startWorkerChild(url, q, "work:0", { concurrency: 4 }, { NODE_EXTRA_CA_CERTS: caFile })
    try {
      // first the worker process (rediss:// URL, CA from NODE_EXTRA_CA_CERTS), then one in
      // this process (ioredis options with tls.ca) alongside it
      await child.waitFor((l) => l === "ready", "ready (over rediss://)")
      await queue.addBulk(Array.from({ length: 50 }, (_, n) => ({ payload: { n } })))
      await until(
        "50 completed by the worker process",
        () => child.lines.filter((l) => l.text.startsWith("done ")).length === 50,
      )
      let completed = 0
      worker = useWorker<{ n: number }>(q, async () => {}, { connection, concurrency: 4 })
      worker.on("completed", () => completed++)
      await worker.ready
      await queue.addBulk(Array.from({ length: 50 }, (_, n) => ({ payload: { n: 50 + n } })))
      const byChild = () => child.lines.filter((l) => l.text.startsWith("done ")).length
      await until("all 100 completed over TLS", () => completed + byChild() === 100)
      expect((await queue.stats()).counters.completed).toBe(100)

      const env = { NODE_EXTRA_CA_CERTS: caFile }
      const sweep = await runCli(["sweep", "--queue", q, "--json", "--url", url], env)
      expect(sweep.code, sweep.err).toBe(0)
      expect(JSON.parse(sweep.out).ok).toBe(true)
      const stats = await runCli(["stats", "--queue", q, "--json", "--url", url], env)
      expect(stats.code, stats.err).toBe(0)
      expect(JSON.parse(stats.out).queues[0]).toMatchObject({ queue: q, waiting: 0, active: 0 })
      // without the CA the CLI refuses the certificate, in one line
      const refused = await runCli(["stats", "--queue", q, "--url", url])
      expect(refused.code).toBe(1)
      expect(refused.err).toMatch(/certificate/i)
      expect(refused.err + sweep.out + stats.out).not.toContain(PASSWORD)

      report("tls", {
        libraryOverTlsOptions: completed,
        workerProcessOverRedissUrl: byChild(),
        cliSweepExit: sweep.code,
        cliStatsExit: stats.code,
        untrustedCertificateRefused: true,
      })
      expect((await child.stop("SIGTERM")).code).toBe(0)
    } finally {
      await child.stop("SIGKILL")
      await worker?.close()
      await queue.close()
    }
  })
})
