/**
 * When a caller's next reserve call reads large payloads by reference (calls/PayloadRefs.ts,
 * `payloadSizes`): after a call that leased a large payload, until one that leased none.
 */
import { describe, expect, it } from "vitest"
import { LARGE_PAYLOAD_BYTES, payloadSizes } from "../../src/engine/calls/PayloadRefs.ts"
import { reservation } from "../support/jobs.ts"

describe("payload sizes: when to read by reference", () => {
  it("a call with jobs says whether the next one reads large payloads by reference", () => {
    const sizes = payloadSizes()
    const job = (payload: string) => reservation("j", payload)
    expect(sizes.refAt()).toBe(0)
    sizes.leased([job("{}"), job("x".repeat(LARGE_PAYLOAD_BYTES))])
    expect(sizes.refAt()).toBe(LARGE_PAYLOAD_BYTES)
    // a call that leased nothing says nothing of the payloads
    sizes.leased([])
    expect(sizes.refAt()).toBe(LARGE_PAYLOAD_BYTES)
    sizes.leased([job("x".repeat(LARGE_PAYLOAD_BYTES - 1))])
    expect(sizes.refAt()).toBe(0)
  })
})
