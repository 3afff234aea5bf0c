/**
 * The batch collector (src/engine/worker/Batch.ts), without Redis: batches fill up to
 * `size` or are handed after `waitMs`; a job's own complete/fail wins over the handler's
 * outcome; a job abandoned before its batch is handed leaves it; a handed batch is
 * interrupted only once every job of it not settled was abandoned; close hands at once.
 */
import { describe, expect, it, vi } from "vitest"
import type { Job } from "../../src/engine/queue/Job.ts"
import { type BatchEntry, makeBatchCollector } from "../../src/engine/worker/Batch.ts"

const job = (id: string): Job<string> =>
  ({ id, payload: id, attempt: 1, maxAttempts: 3, token: 1, progress: () => {} }) as unknown as Job<string>

/** A collector whose handler calls are recorded, each ended by hand. */
const recorded = (size: number, waitMs: number) => {
  const calls: Array<{
    ids: string[]
    entries: ReadonlyArray<BatchEntry<string>>
    end: (e?: unknown) => void
    interrupted: boolean
  }> = []
  const collector = makeBatchCollector<string>({ size, waitMs }, (entries) => {
    let end!: (e?: unknown) => void
    const done = new Promise<unknown>((resolve, reject) => {
      end = (e) => (e === undefined ? resolve(undefined) : reject(e))
    })
    const call = { ids: entries.map((e) => e.job.id), entries, end, interrupted: false }
    calls.push(call)
    const interrupt = () => {
      call.interrupted = true
    }
    return { done, interrupt }
  })
  return { calls, collector }
}

const outcome = (entry: BatchEntry<string>) =>
  entry.outcome.then(
    (v) => ({ ok: v }),
    (e) => ({ failed: e }),
  )

describe("batch collector", () => {
  it("hands a full batch at once and a partial one after waitMs", () => {
    vi.useFakeTimers()
    try {
      const { calls, collector } = recorded(2, 10)
      collector.take(job("a"))
      collector.take(job("b"))
      expect(calls.map((c) => c.ids)).toEqual([["a", "b"]])
      collector.take(job("c"))
      vi.advanceTimersByTime(9)
      expect(calls).toHaveLength(1)
      vi.advanceTimersByTime(1)
      expect(calls.map((c) => c.ids)).toEqual([["a", "b"], ["c"]])
    } finally {
      vi.useRealTimers()
    }
  })

  it("a job's own complete or fail wins; the handler's outcome settles the rest", async () => {
    const { calls, collector } = recorded(3, 1000)
    const [a, b, c] = ["a", "b", "c"].map((id) => collector.take(job(id)))
    const [ea, eb] = calls[0]!.entries
    ea!.complete("mine")
    eb!.fail("bad")
    calls[0]!.end(new Error("all"))
    expect(await outcome(a!)).toEqual({ ok: "mine" })
    expect(await outcome(b!)).toEqual({ failed: "bad" })
    expect(await outcome(c!)).toEqual({ failed: new Error("all") })
  })

  it("a job abandoned before its batch is handed leaves it; a handed batch is interrupted once all open jobs are abandoned", async () => {
    const { calls, collector } = recorded(3, 1000)
    const a = collector.take(job("a"))
    void collector.abandon(a)
    expect(await outcome(a)).toMatchObject({ failed: expect.any(Error) })
    const [b, c, d] = ["b", "c", "d"].map((id) => collector.take(job(id)))
    expect(calls.map((x) => x.ids)).toEqual([["b", "c", "d"]])
    calls[0]!.entries[0]!.complete()
    const abandoned = collector.abandon(c!)
    expect(calls[0]!.interrupted).toBe(false)
    void collector.abandon(d!)
    expect(calls[0]!.interrupted).toBe(true)
    calls[0]!.end(new Error("interrupted"))
    await abandoned
    expect(await outcome(b!)).toEqual({ ok: undefined })
  })

  it("close hands what is gathered at once, and every later job without waiting", async () => {
    const { calls, collector } = recorded(10, 60_000)
    collector.take(job("a"))
    collector.close()
    expect(calls.map((c) => c.ids)).toEqual([["a"]])
    collector.take(job("b"))
    await Promise.resolve()
    expect(calls.map((c) => c.ids)).toEqual([["a"], ["b"]])
  })
})
