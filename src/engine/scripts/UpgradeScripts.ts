/** The descriptor of `lua/upgrade.lua`: one bounded step of moving a queue to this key layout. */
import { LAYOUT_VERSION } from "../model/Keys.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/**
 * What one upgrade step answers: `step` (a page moved, call again), `wait` (layout 1
 * workers are live: call again once they stop, or force), `done` (the queue is of layout `layout`).
 */
export type UpgradeStep =
  | { readonly kind: "step"; readonly phase: string; readonly moved: number }
  | { readonly kind: "wait"; readonly workers: ReadonlyArray<string> }
  | { readonly kind: "done"; readonly layout: string }

/** One upgrade step's input: entries per step (1 to 1000), and whether to move on past live layout 1 workers. */
export interface UpgradeInput {
  readonly count: number
  readonly force: boolean
}

/** `upgrade`: one step of the move to {@link LAYOUT_VERSION} (see lua/upgrade.lua). */
export const upgrade = defineScript({
  name: "upgrade",
  keys: ["active", "lease", "holder", "meta", "workers", "workersAt"],
  argv: ["layout", "count", "force"],
  args: ({ count, force }: UpgradeInput): Argv => [LAYOUT_VERSION, count, force ? "1" : "0"],
  decode: (reply): UpgradeStep => {
    const r = list<unknown>(reply)
    if (r[0] === "WAIT") return { kind: "wait", workers: r.slice(2).map(String) }
    if (r[0] === "DONE") return { kind: "done", layout: String(r[1]) }
    return { kind: "step", phase: String(r[1]), moved: Number(r[2]) }
  },
})
