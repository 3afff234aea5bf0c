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
  it("gives exactly JSON.stringify's text for plain values, deep ones, and values with toJSON", () => {
    let deep: unknown = { leaf: [1, "two", null, true] }
    for (let i = 0; i < 40; i++) deep = { level: i, next: [deep] }
    const values = [
      { i: 1 },
      [1.5, -0, "é\u2028", { a: null, b: false }],
      Object.assign(Object.create(null), { bare: 1 }),
      deep,
      { at: new Date(0), custom: { toJSON: () => "custom" } },
      "text",
      42,
      null,
    ]
    for (const v of values) expect(serialize(v)).toBe(JSON.stringify(v))
  })

  it("refuses, naming where, what JSON would drop or change at any depth", () => {
    expect(() => serialize({ a: [{ b: [1, () => 1] }] })).toThrow(/contains a function/)
    expect(() => serialize({ a: { s: Symbol("s") } })).toThrow(/contains a symbol at payload\.a\.s;/)
    expect(() => serialize([[[Number.POSITIVE_INFINITY]]])).toThrow(/contains Infinity/)
    expect(() => serialize({ a: { n: 1n } })).toThrow(/contains a BigInt at payload\.a\.n;/)
    const ring: Record<string, unknown> = { a: 1 }
    let node = ring
    for (let i = 0; i < 50; i++) node = node.next = { i } as Record<string, unknown>
    node.next = ring
    expect(() => serialize(ring)).toThrow(/circular reference at payload(\.next)+;/)
  })

  it("refuses, naming the path, what JSON would store changed: Map, Set, Error, typed arrays, class instances, a nested undefined", () => {
    class Point {
      readonly x: number
      constructor(x: number) {
        this.x = x
      }
    }
    const cases: ReadonlyArray<readonly [unknown, RegExp]> = [
      [{ m: new Map([[1, 2]]) }, /invalid payload: contains a Map at payload\.m; JSON would store it as \{\}/],
      [{ s: new Set([1]) }, /contains a Set at payload\.s; JSON would store it as \{\}/],
      [{ e: new Error("x") }, /contains an Error at payload\.e; JSON would store it as \{\}/],
      [{ u8: new Uint8Array([1, 2]) }, /contains a Uint8Array at payload\.u8;/],
      [{ a: [{ "odd key": new Point(1) }] }, /contains a Point instance at payload\.a\[0\]\["odd key"\];/],
      [{ k: undefined }, /contains undefined at payload\.k; JSON would drop the key/],
      [[1, undefined], /contains undefined at payload\[1\]; JSON would turn it into null/],
      [{ custom: { toJSON: () => new Set() } }, /contains a Set at payload\.custom;/],
      [new Map(), /invalid payload: is a Map;/],
    ]
    for (const [value, why] of cases) expect(() => serialize(value)).toThrow(why)
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
