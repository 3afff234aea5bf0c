/** The descriptors of the worker registry's own scripts: `workers` (read) and `worker-leave`. */
import { LAYOUT_VERSION } from "../model/Keys.ts"
import { parseWorker, type WorkerInfo } from "../model/Registry.ts"
import { type Argv, defineScript, list } from "./Script.ts"

/** `workers`: the records of live workers and the Redis time of the read (ms). */
export const workers = defineScript({
  name: "workers",
  keys: ["workers", "workersAt"],
  argv: ["layout"],
  args: (_: undefined): Argv => [LAYOUT_VERSION],
  decode: (reply): { readonly now: number; readonly workers: ReadonlyArray<WorkerInfo> } => {
    const r = list(reply)
    return { now: Number(r[0]), workers: r.slice(1).flatMap((text) => parseWorker(String(text))) }
  },
})

/** `worker-leave`: true when the worker's record was there and is removed. */
export const workerLeave = defineScript({
  name: "worker-leave",
  keys: ["workers", "workersAt"],
  argv: ["layout", "workerId"],
  args: (workerId: string): Argv => [LAYOUT_VERSION, workerId],
  decode: (reply): boolean => list(reply)[0] === 1,
})
