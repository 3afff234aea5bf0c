/**
 * The event-loop check of an in-process worker (LoopMonitor.ts) costs nothing while no
 * handler runs: no timer before the first job, none once the handlers are done; while they
 * run, one timer, whatever the number of jobs started.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { makeLoopMonitor } from "../../src/engine/worker/lease/LoopMonitor.ts"

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

describe("the loop monitor", () => {
  it("runs one timer only while handlers run", () => {
    let running = 0
    const monitor = makeLoopMonitor(
      30_000,
      () => running > 0,
      () => undefined,
    )
    expect(vi.getTimerCount()).toBe(0)
    running = 3
    monitor.touch()
    monitor.touch()
    monitor.touch()
    expect(vi.getTimerCount()).toBe(1)
    vi.advanceTimersByTime(5_000)
    expect(vi.getTimerCount()).toBe(1)
    running = 0
    vi.advanceTimersByTime(1_000)
    expect(vi.getTimerCount()).toBe(0)
    monitor.touch()
    monitor.stop()
    expect(vi.getTimerCount()).toBe(0)
  })

  it("names no cause when the loop was not blocked", () => {
    const monitor = makeLoopMonitor(
      1_000,
      () => true,
      () => undefined,
    )
    monitor.touch()
    vi.advanceTimersByTime(3_000)
    expect(monitor.cause("q")).toBeUndefined()
    monitor.stop()
  })
})
