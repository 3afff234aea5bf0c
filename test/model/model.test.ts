/**
 * The model-based test of the queue's state machine (issue 29 part 1): random command lists
 * run on the model (test/model/Model.ts: what the docs promise) and on a real queue, through
 * the suite's TCP proxy; after every step everything observable must agree and verify() be clean.
 *
 * - `npm run model`: this file, MODEL_RUNS command lists (default 100; `CHAOS=full`: MODEL_SCALE×, default 10,
 *   so `npm run chaos` stays short: 100× takes ~45 min, past the 10 min this test allowed).
 * - A failure prints fast-check's seed, path and shrunk command list; replay it with
 *   `MODEL_SEED=<seed> MODEL_PATH=<path> MODEL_REPLAY=<replayPath> npm run model` (the replayPath
 *   is printed in the counterexample, `/*replayPath="…"*\/`: fc.commands needs it to shrink alike).
 * - `MODEL_COMMANDS=add,reserve,…` runs only those command kinds, `MODEL_SKIP=…` all but those
 *   (test/model/Commands.ts `KINDS`), `MODEL_STEPS` the most commands per list (default 20).
 * - Flows (test/model/FlowCommands.ts) are in a share of the lists, `MODEL_FLOW_SHARE` (0 to 1,
 *   default 0.35; ignored with MODEL_COMMANDS): a list with flows compares a second queue and
 *   each parent after every step, so the share keeps the run's time near what it was without.
 */
import fc from "fast-check"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FULL, report } from "../support/figures.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { commandArbitraries } from "./Commands.ts"
import { flowKinds } from "./FlowCommands.ts"
import { runList } from "./Real.ts"

const name = queueNamer("model")
const list = (v: string | undefined) => (v === undefined || v === "" ? undefined : v.split(",").map((s) => s.trim()))
const env = process.env
const runs = Number(env.MODEL_RUNS ?? 100) * (FULL ? Number(env.MODEL_SCALE ?? 10) : 1)
const steps = Number(env.MODEL_STEPS ?? 20)
const flowShare = Number(env.MODEL_FLOW_SHARE ?? 0.35)
const FLOW_KINDS = flowKinds().map(([k]) => k)
/** 0.2 s a list here, 0.55 s on a busy machine: 2 s a list leaves room, MODEL_SCALE=100 included. */
const timeoutMs = Math.max(600_000, runs * 2_000)

let raw: Redis
beforeAll(() => {
  raw = rawClient()
})
afterAll(() => {
  raw.disconnect()
})

describe("the model of the queue", () => {
  it(`${runs} random command lists agree with the model after every step`, { timeout: timeoutMs }, async () => {
    const proxy = await proxyToSuiteRedis()
    const only = list(env.MODEL_COMMANDS)
    const skip = list(env.MODEL_SKIP) ?? []
    const lists = (arbs: ReturnType<typeof commandArbitraries>) =>
      fc.commands(arbs, {
        maxCommands: steps,
        size: "max",
        ...(env.MODEL_REPLAY === undefined ? {} : { replayPath: env.MODEL_REPLAY }),
      })
    const withFlows = lists(commandArbitraries(redisUrl, only, skip))
    const share = Math.round(Math.min(1, Math.max(0, flowShare)) * 100)
    const generated =
      only !== undefined || share === 100
        ? withFlows
        : fc.oneof(
            {
              weight: 100 - share,
              arbitrary: lists(commandArbitraries(redisUrl, undefined, [...skip, ...FLOW_KINDS])),
            },
            { weight: share, arbitrary: withFlows },
          )
    let total = 0
    const started = Date.now()
    await fc.assert(
      fc.asyncProperty(generated, async (cmds) => {
        total += await runList(name(), raw, proxy, cmds)
      }),
      {
        numRuns: runs,
        // a list skipped because a busy machine made a timed call too slow (see checkQuick)
        maxSkipsPerRun: 10,
        ...(env.MODEL_SEED === undefined ? {} : { seed: Number(env.MODEL_SEED) }),
        ...(env.MODEL_PATH === undefined ? {} : { path: env.MODEL_PATH }),
      },
    )
    report("model", { runs, steps: total, ms: Date.now() - started })
    expect(total + (env.MODEL_PATH === undefined ? 0 : 1)).toBeGreaterThan(0)
  })
})
