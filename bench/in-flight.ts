/**
 * Jobs in flight for the reclaim and complete scenarios: a child process that
 * holds N jobs until it is SIGKILLed (bench/holder.ts), and the library's own
 * recovery run tick by tick under the server probe.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import type { DisposableAdapter } from "./adapters/index.ts"
import type { LibName } from "./adapters/types.ts"
import type { BenchContext } from "./context.ts"
import { measureServer, QUEUE, withDeadline } from "./harness.ts"
import type { ProbeResult } from "./lib/redis.ts"
import { fmt } from "./lib/stats.ts"
import { BENCH_DIR } from "./paths.ts"

export interface Holder {
  readonly child: ChildProcess
  /** SIGKILL the holder (a crash, as far as Redis can tell) and wait until it has exited. */
  kill(): Promise<void>
}

/** Start a holder of `n` jobs of `lib` with leases of `leaseMs`; resolves once it holds them all. */
export const startHolder = async (ctx: BenchContext, lib: LibName, n: number, leaseMs: number): Promise<Holder> => {
  const script = join(BENCH_DIR, "holder.ts")
  const child = spawn(process.execPath, [script, lib, ctx.url, QUEUE, String(n), String(leaseMs)], {
    stdio: ["pipe", "pipe", "inherit"],
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL")
      await exited
    }
  }
  let out = ""
  try {
    await withDeadline(
      `${lib} holder (${n} jobs)`,
      300_000,
      new Promise<void>((resolve, reject) => {
        child.stdout?.on("data", (d: Buffer) => {
          out += d.toString()
          if (out.includes("held")) resolve()
        })
        child.once("exit", (code) => reject(new Error(`holder exited with code ${code}`)))
      }),
    )
  } catch (e) {
    await kill()
    throw e
  }
  return { child, kill }
}

export interface Ticks {
  /** Wall time of each recovery tick (ms). */
  readonly tickMs: number[]
  readonly reclaimed: number
  readonly calls: number
  readonly server: ProbeResult
}

/**
 * Run recovery ticks until `target` jobs are recovered (at most `maxTicks`; `target` 0 runs all of them).
 * `warm`: one untimed pass first (for a healthy set, where a pass changes nothing).
 */
export const runTicks = async (
  ctx: BenchContext,
  a: DisposableAdapter,
  target: number,
  maxTicks: number,
  warm = false,
): Promise<Ticks> => {
  const recovery = a.recovery ? await a.recovery(QUEUE) : undefined
  if (!recovery) throw new Error("no recovery")
  try {
    // steady state: one untimed pass first, so a script's first load (EVAL of its source) is not counted
    if (warm) await recovery.pass()
    const { value, server } = await measureServer(ctx, async () => {
      const tickMs: number[] = []
      let reclaimed = 0
      let calls = 0
      for (let i = 0; i < maxTicks; i++) {
        const t0 = performance.now()
        const r = await recovery.pass()
        tickMs.push(performance.now() - t0)
        reclaimed += r.reclaimed
        calls += r.calls
        if (target > 0 && reclaimed >= target) break
      }
      return { tickMs, reclaimed, calls }
    })
    return { ...value, server }
  } finally {
    await recovery.close()
  }
}

/** The three script/command labels with the longest single call, for a one-line summary. */
export const busiestCalls = (server: ProbeResult): string =>
  Object.entries(server.byLabel)
    .sort((x, y) => y[1].maxUs - x[1].maxUs)
    .slice(0, 3)
    .map(([k, v]) => `${k} ${fmt(v.maxUs / 1000)}ms×${v.count}`)
    .join("; ")
