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
