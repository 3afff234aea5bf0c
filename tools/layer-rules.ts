/**
 * The engine's folder-direction rules that tools/check-layers.ts applies beside its table of
 * top-level folders (docs/architecture.md, "The source, by folder", draws them): inside
 * `src/engine/`, which sub-folder may import which. An engine sub-folder's own sub-folders
 * (`worker/loop/`, say) count as it. Paths are relative to the checked root, `/`-separated.
 */

/**
 * Which engine sub-folders each engine sub-folder may import: the edges of the imports at
 * `deaaad1` (the data model at the bottom, the partitioned roof on top), less the worker's
 * imports of `queue/`, which are {@link ENGINE_EXCEPTIONS}. A new edge is a decision: add it
 * here, pointing down (the folder-loop rule refuses one that closes a loop).
 */
export const ENGINE_ALLOWED: Readonly<Record<string, readonly string[]>> = {
  model: [],
  scripts: ["model"],
  calls: ["scripts", "model"],
  telemetry: ["calls", "model"],
  admin: ["calls", "scripts", "model"],
  queue: ["admin", "telemetry", "calls", "scripts", "model"],
  events: ["queue", "calls", "model"],
  // the consumer side: it meets the producer side (queue/) only through calls/ and model/
  worker: ["admin", "telemetry", "calls", "scripts", "model"],
  partition: ["worker", "queue", "admin", "calls", "model"],
  // handlers in threads or processes: a pool the faces hand the worker; it speaks the worker's job shape
  isolation: ["worker", "queue", "calls", "model"],
}

/** Imports that point against {@link ENGINE_ALLOWED} today, each to be fixed by moving code (not now: issue 30). */
export interface LayerException {
  /** The importing files. */
  readonly files: readonly string[]
  /** The file they import. */
  readonly imports: string
  /** Why the edge is wrong and where the imported code belongs. */
  readonly reason: string
}

/** The named exceptions. One that no longer matches an import fails the check, so the list only shrinks. */
export const ENGINE_EXCEPTIONS: readonly LayerException[] = [
  {
    files: [
      "engine/worker/Batch.ts",
      "engine/worker/Callbacks.ts",
      "engine/worker/Context.ts",
      "engine/worker/HeldJob.ts",
      "engine/worker/Lease.ts",
      "engine/worker/PlainRun.ts",
      "engine/worker/RunJob.ts",
      "engine/worker/Settle.ts",
      "engine/worker/Steer.ts",
    ],
    imports: "engine/queue/Job.ts",
    reason:
      "Job<A>, the job a handler gets, is the worker's word, not the producer's: it belongs in model/ (review aesthetics-f43eb35, layering (b))",
  },
  {
    files: ["engine/worker/HeldJob.ts"],
    imports: "engine/queue/Dependencies.ts",
    reason:
      "job.dependencies() reads a parent's children page: that read (readDependencies) is a script call of calls/, not of the producer's queue/",
  },
  {
    files: ["engine/worker/Context.ts"],
    imports: "engine/queue/Batcher.ts",
    reason: "adaptive batching of script calls serves adds and acks alike: it belongs in calls/",
  },
  {
    files: ["engine/worker/Worker.ts"],
    imports: "engine/queue/EvictionPolicy.ts",
    reason: "the eviction-policy warning is about the connection a queue and a worker both use: it belongs in calls/",
  },
]

/** The engine sub-folder of a root-relative path (`engine/worker/x.ts` → `worker`), "." for a file directly in engine/, undefined outside. */
export const engineFolder = (path: string): string | undefined => {
  const parts = path.split("/")
  if (parts[0] !== "engine") return undefined
  return parts.length > 2 ? (parts[1] as string) : "."
}

/** `engine/worker/` for "worker", `engine/` for ".". */
const shown = (folder: string): string => (folder === "." ? "engine/" : `engine/${folder}/`)

/**
 * What is wrong with `from` importing `to` inside the engine (root-relative files), or
 * undefined when the engine's rules allow it (`excepted`: whether a named exception does).
 */
export const engineProblem = (from: string, to: string, excepted: boolean): string | undefined => {
  const [a, b] = [engineFolder(from), engineFolder(to)]
  if (a === undefined || b === undefined || a === b) return undefined
  const allowed = ENGINE_ALLOWED[a]
  if (allowed === undefined)
    return `${shown(a)} is not in the engine's allowed-edges table (ENGINE_ALLOWED in tools/layer-rules.ts)`
  if (allowed.includes(b) || excepted) return undefined
  return `${shown(a)} may not import ${shown(b)} (ENGINE_ALLOWED in tools/layer-rules.ts)`
}

/** Whether a named exception covers `from` importing `to`, and the key it is counted under. */
export const exceptionKey = (from: string, to: string): string | undefined =>
  ENGINE_EXCEPTIONS.some((e) => e.imports === to && e.files.includes(from)) ? `${from} → ${to}` : undefined
