/**
 * `leaseq jobs`, `drain`, `clean`, `obliterate`, `promote`, `retry`, run from source as a
 * process against real Redis: text (escaped) and --json, paging by cursor, refusals with
 * exit 1 naming the state, obliterate asking --yes, bad flags writing nothing.
 */
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue } from "../../src/index.ts"
import { runCli } from "../support/child.ts"
import { onCleanup } from "../support/cleanup.ts"
import { dumpQueue, queueNamer, rawClient, redisUrl } from "../support/redis.ts"

const name = queueNamer("ops-cli")
let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

/** `leaseq <args> --url <suite redis>` from source on this Node (24) (test/support/child.ts `runCli`). */
const leaseq = async (
  args: ReadonlyArray<string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> => {
  const r = await runCli([...args, "--url", redisUrl()])
  return { code: r.code, stdout: r.out, stderr: r.err }
}

const newQueue = () => {
  const q = name()
  const queue = new Queue<{ to: string }>(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  return { q, queue }
}

describe("leaseq jobs / drain / clean / obliterate / promote / retry", () => {
  it("the help lists them", async () => {
    const help = await leaseq(["--help"])
    for (const c of ["jobs", "drain", "clean", "obliterate", "promote", "retry"])
      expect(help.stdout).toMatch(new RegExp(`^  ${c} `, "m"))
  })

  it("jobs pages in text (payloads escaped) and JSON, by cursor", async () => {
    const { q, queue } = newQueue()
    const ids = await queue.addBulk([{ payload: { to: "a" } }, { payload: { to: "b" } }, { payload: { to: "c" } }])
    // a payload written around leaseq, with a raw escape character in it
    await raw.hset(queueKeys(q).data, ids[0]!, '"a\x1b[31m"')
    const text = await leaseq(["jobs", "--queue", q, "--state", "waiting", "--count", "2"])
    expect(text.code).toBe(0)
    expect(text.stdout).toContain(`queue ${q}: 2 of 3 waiting jobs`)
    expect(text.stdout).toContain(ids[0])
    expect(text.stdout).not.toContain("\x1b")
    expect(text.stdout).toContain("\\x1b")
    const cursor = /--cursor (\S+)/.exec(text.stdout)![1]!
    const json = await leaseq(["jobs", "--queue", q, "--state", "waiting", "--cursor", cursor, "--json"])
    expect(json.code).toBe(0)
    const page = JSON.parse(json.stdout)
    expect(page.jobs.map((j: { id: string }) => j.id)).toEqual([ids[2]])
    expect(page.cursor).toBeUndefined()
  })

  it("promote and retry act, or refuse naming the state (exit 1, nothing written)", async () => {
    const { q, queue } = newQueue()
    const later = await queue.add({ to: "x" }, { delayMs: 3_600_000 })
    const promoted = await leaseq(["promote", later, "--queue", q])
    expect(promoted).toMatchObject({ code: 0 })
    expect(promoted.stdout).toContain(`job ${later} promoted (it was delayed)`)
    const before = await dumpQueue(raw, q)
    const refused = await leaseq(["retry", later, "--queue", q])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("is waiting")
    expect(await dumpQueue(raw, q)).toEqual(before)
  })

  it("drain and clean report what they removed", async () => {
    const { q, queue } = newQueue()
    await queue.addBulk([{ payload: { to: "a" } }, { payload: { to: "b" }, options: { delayMs: 60_000 } }])
    const drained = await leaseq(["drain", "--queue", q, "--delayed", "--json"])
    expect(JSON.parse(drained.stdout)).toMatchObject({ queue: q, waiting: 1, delayed: 1 })
    const cleaned = await leaseq(["clean", "--queue", q, "--state", "dead"])
    expect(cleaned.stdout).toContain("deleted 0 dead jobs")
    expect((await leaseq(["clean", "--queue", q, "--state", "waiting"])).code).toBe(2)
  })

  it("obliterate asks --yes (exit 2, nothing deleted), then deletes the queue", async () => {
    const { q, queue } = newQueue()
    await queue.add({ to: "a" })
    const before = await dumpQueue(raw, q)
    const asked = await leaseq(["obliterate", "--queue", q])
    expect(asked.code).toBe(2)
    expect(asked.stderr).toContain("add --yes")
    expect(await dumpQueue(raw, q)).toEqual(before)
    expect((await leaseq(["obliterate", "--queue", q, "--yes"])).code).toBe(0)
    expect(Object.values(await dumpQueue(raw, q)).every((v) => v === null)).toBe(true)
  })
})
