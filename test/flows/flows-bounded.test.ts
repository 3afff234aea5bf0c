/**
 * Fan-in is O(1) per child end (issue 31, "Bounded"): a child's complete, and the apply of
 * its note on its parent's queue, run the same Redis commands whether the parent has 2
 * children or 5,000, and none of them reads the parent's children (MONITOR, on a server of
 * the test's own: each script's own commands follow its call, a script being atomic).
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { Scripts } from "../../src/engine/calls/Scripts.ts"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { type Monitored, monitorOf } from "../support/monitor.ts"
import { queueNamer } from "../support/redis.ts"
import { useQueue } from "../support/use.ts"

const name = queueNamer("flows-bounded")

/** The sha1 of a script's text as MONITOR shows it (its bytes, one character each). */
const shaOf = (text: string) => createHash("sha1").update(Buffer.from(text, "latin1")).digest("hex")

/**
 * The commands each call of the script `sha` ran, in order (a call's own follow it, marked
 * lua): by EVALSHA, or by EVAL of its text (the client's fallback on a server that lacks it).
 */
const scriptRuns = (seen: readonly Monitored[], sha: string) => {
  const runs: Monitored[][] = []
  let current: Monitored[] | undefined
  for (const c of seen) {
    const call = c.args[0]?.toLowerCase()
    if (c.source === "lua") current?.push(c)
    else if ((call === "evalsha" && c.args[1] === sha) || (call === "eval" && shaOf(c.args[1] ?? "") === sha)) {
      current = []
      runs.push(current)
    } else current = undefined
  }
  return runs.filter((r) => r.length > 0)
}

describe("fan-in is bounded", () => {
  it("a child's end runs the same commands for a parent of 2 children as for one of 5,000, reading none of them", async () => {
    const server = await startRedisServer()
    onCleanup(() => server.stop())
    /** The commands of one child's complete and of its note's apply, for a parent of `n` children in another queue. */
    const oneEnd = async (n: number) => {
      const [qa, qb] = [name(), name()]
      const a = useQueue<string>(qa, { connection: server.url })
      const b = useQueue<string>(qb, { connection: server.url })
      const tree = await a.addFlow({
        payload: "parent",
        children: Array.from({ length: n }, (_, i) => ({ queue: qb, payload: `c${i}` })),
      })
      const [job] = await b.reserve()
      const monitor = await monitorOf(server.url)
      await b.complete(job!.id, job!.token)
      await b.sweep() // applies the note on the parent's queue (deps-apply)
      await monitor.caughtUp()
      expect((await a.getDependencies(tree.id, { count: 1 })).pending).toBe(n - 1)
      // the call that ran (not a first EVALSHA refused NOSCRIPT on this fresh server)
      const [complete] = scriptRuns(monitor.seen, Scripts.complete.sha)
      const [apply] = scriptRuns(monitor.seen, Scripts.depsApply.sha)
      expect(complete).toBeDefined()
      expect(apply).toBeDefined()
      const children = [queueKeys(qa).depChildren, queueKeys(qb).depChildren]
      for (const c of [...complete!, ...apply!]) expect(children).not.toContain(c.args[1])
      return { complete: complete!.map((c) => c.args[0]), apply: apply!.map((c) => c.args[0]) }
    }
    const small = await oneEnd(2)
    const large = await oneEnd(5000)
    expect(large).toEqual(small)
    // the apply counts the child in its parent's count: one HINCRBY, no page of children
    expect(small.apply).toContain("HINCRBY")
  })
})
