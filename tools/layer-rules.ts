/**
 * The engine's folder-direction rules that tools/check-layers.ts applies beside its table of
 * top-level folders (docs/architecture.md, "The source, by folder", draws them): inside
 * `src/engine/`, which sub-folder may import which. An engine sub-folder's own sub-folders
 * (`worker/loop/`, say) count as it. Paths are relative to the checked root, `/`-separated.
 */

/**
 * Which engine sub-folders each engine sub-folder may import: the edges of the imports at
 * `deaaad1` (the data model at the bottom, the partitioned roof on top). There is no exception
 * list: an import against the table is fixed by moving the shared code down a folder (as the
 * handler's `Job<A>`, the batcher, the eviction warning and the dependency page read were, issue 30).
 * A new edge is a decision: add it here, pointing down (the folder-loop rule refuses one that closes a loop).
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
 * undefined when the engine's rules allow it.
 */
export const engineProblem = (from: string, to: string): string | undefined => {
  const [a, b] = [engineFolder(from), engineFolder(to)]
  if (a === undefined || b === undefined || a === b) return undefined
  const allowed = ENGINE_ALLOWED[a]
  if (allowed === undefined)
    return `${shown(a)} is not in the engine's allowed-edges table (ENGINE_ALLOWED in tools/layer-rules.ts)`
  if (allowed.includes(b)) return undefined
  return `${shown(a)} may not import ${shown(b)} (ENGINE_ALLOWED in tools/layer-rules.ts)`
}

/**
 * Inside `engine/worker/`: which of the worker's rooms may import which. The reserve loop
 * (`loop/`) leases jobs and is handed a `startRun` function by the worker, so it never
 * imports the run; the run of a job (`run/`) takes and frees slots and rides completes by
 * telling the loop, and settles through the lease; the lease keeper (`lease/`: the lease
 * table, heartbeat, fence, acks) imports neither. Every room may import the worker's base
 * files (those of `engine/worker/` that import no room: options, hooks, states, the
 * program); the worker's assembly (`Worker.ts`, `Context.ts`, `Lifecycle.ts`) imports the
 * rooms, and no room imports it. A room's own sub-folders count as it.
 */
export const WORKER_ROOMS: Readonly<Record<string, readonly string[]>> = {
  lease: [],
  loop: ["lease"],
  run: ["loop", "lease"],
}

/** The worker room of a root-relative path (`engine/worker/loop/x.ts` → `loop`), "." for a file directly in engine/worker/, undefined outside. */
export const workerRoom = (path: string): string | undefined => {
  const parts = path.split("/")
  if (parts[0] !== "engine" || parts[1] !== "worker") return undefined
  return parts.length > 3 ? (parts[2] as string) : "."
}

/**
 * What is wrong with `from` importing `to` inside the worker (root-relative files), or
 * undefined when {@link WORKER_ROOMS} allows it (`toBase`: `to` imports no room).
 */
export const roomProblem = (from: string, to: string, toBase: boolean): string | undefined => {
  const [a, b] = [workerRoom(from), workerRoom(to)]
  if (a === undefined || b === undefined || a === b || a === ".") return undefined
  const allowed = WORKER_ROOMS[a]
  if (allowed === undefined)
    return `engine/worker/${a}/ is not in the worker's rooms table (WORKER_ROOMS in tools/layer-rules.ts)`
  if (b === ".")
    return toBase
      ? undefined
      : `engine/worker/${a}/ may import only the worker's base files, not ${to}, which imports its rooms (WORKER_ROOMS in tools/layer-rules.ts)`
  if (allowed.includes(b)) return undefined
  return `engine/worker/${a}/ may not import engine/worker/${b}/ (WORKER_ROOMS in tools/layer-rules.ts)`
}
