/**
 * The producer's per-job work without Redis: payload serialisation (a fast path for plain
 * JSON values, the careful path for everything else) and job ids (monotonic ULIDs).
 */
import { decodeTime, isValid } from "ulid"
import { describe, expect, it } from "vitest"
import { serializePayload } from "../../src/engine/model/Validate.ts"
import { newJobId } from "../../src/engine/queue/Job.ts"

const serialize = (payload: unknown) => serializePayload("payload", payload, 1 << 20)

describe("serializePayload", () => {
  it("gives exactly JSON.stringify's text for plain values, deep ones, and values with toJSON or a class", () => {
    let deep: unknown = { leaf: [1, "two", null, true] }
    for (let i = 0; i < 40; i++) deep = { level: i, next: [deep] }
    class Point {
      readonly x: number
      readonly y: number
      constructor(x: number, y: number) {
        this.x = x
        this.y = y
      }
    }
    const values = [
      { i: 1 },
      [1.5, -0, "é\u2028", { a: null, b: false }],
      Object.assign(Object.create(null), { bare: 1 }),
      deep,
      { at: new Date(0), custom: { toJSON: () => "custom" } },
      new Point(1, 2),
      { skipped: undefined, kept: 1 },
      "text",
      42,
      null,
    ]
    for (const v of values) expect(serialize(v)).toBe(JSON.stringify(v))
  })

  it("refuses, naming where, what JSON would drop or change at any depth", () => {
    expect(() => serialize({ a: [{ b: [1, () => 1] }] })).toThrow(/contains a function/)
    expect(() => serialize({ a: { s: Symbol("s") } })).toThrow(/contains a symbol at key "s"/)
    expect(() => serialize([[[Number.POSITIVE_INFINITY]]])).toThrow(/contains Infinity/)
    expect(() => serialize({ a: { n: 1n } })).toThrow(/contains a BigInt at key "n"/)
    const ring: Record<string, unknown> = { a: 1 }
    let node = ring
    for (let i = 0; i < 50; i++) node = node.next = { i } as Record<string, unknown>
    node.next = ring
    expect(() => serialize(ring)).toThrow(/circular reference/)
  })
})

describe("newJobId", () => {
  it("makes valid ULIDs, unique, in creation order, carrying the creation time", () => {
    const before = Date.now()
    const ids = Array.from({ length: 20_000 }, () => newJobId())
    const after = Date.now()
    expect(ids.every((id) => id.length === 26 && isValid(id))).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    expect([...ids].sort()).toEqual(ids)
    for (const id of [ids[0]!, ids.at(-1)!]) {
      expect(decodeTime(id)).toBeGreaterThanOrEqual(before)
      expect(decodeTime(id)).toBeLessThanOrEqual(after)
    }
  })
})
