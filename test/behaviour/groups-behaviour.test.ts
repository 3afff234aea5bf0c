/**
 * Fair groups, one case run against both faces (docs/flow-control.md): limits, a paused
 * group waiting while another runs, resume, the list, and bad input refused naming the field.
 */
import { describe, expect, it } from "vitest"
import { queueNamer } from "../support/redis.ts"
import { until } from "../support/until.ts"
import { faces } from "./faces.ts"

const name = queueNamer("groups-behaviour")

describe.each(faces)("$name", (face) => {
  it("a paused group waits while another runs; resume serves it; groups() lists them with their limits", async () => {
    const q = await face.open(name())
    await q.groups.setGroupLimits({ concurrency: 1 })
    await q.groups.setGroupLimits("b", { max: 100, perMs: 1000 })
    expect(await q.groups.pauseGroup("a")).toBe(true)
    await q.addBulk([1, 2, 3, 4].map((n) => ({ payload: { n }, options: { group: n % 2 ? "a" : "b" } })))
    const w = await q.worker(() => "ok", { concurrency: 4 })
    await until("b's jobs ran", () => w.seen.completed.length === 2)
    expect(w.seen.runs.map((r) => r.n).sort()).toEqual([2, 4])
    const page = await q.groups.groups()
    expect(page.defaults).toEqual({ concurrency: 1 })
    expect(page.groups.map((g) => [g.group, g.waiting, g.paused, g.limits])).toEqual([
      ["a", 2, true, undefined],
      ["b", 0, false, { max: 100, perMs: 1000 }],
    ])
    expect(await q.groups.resumeGroup("a")).toBe(true)
    await until("a's jobs ran", () => w.seen.completed.length === 4)
    await w.close()
    expect((await q.verify()).violations).toBe(0)
  })

  it("bad input is refused naming the field", async () => {
    const q = await face.open(name())
    await expect(q.add({ n: 1 }, { group: "" })).rejects.toMatchObject({
      _tag: "InvalidOptions",
      field: "options.group",
    })
    await expect(q.groups.setGroupLimits("a", { concurrency: -1 })).rejects.toMatchObject({
      field: "limits.concurrency",
    })
    await expect(q.groups.setGroupLimits({ perMs: 10 })).rejects.toMatchObject({ field: "limits.perMs" })
    await expect(q.groups.pauseGroup("x".repeat(129))).rejects.toMatchObject({ field: "group" })
    expect((await q.stats()).waiting).toBe(0)
  })
})
