/**
 * Fails when two files of `src/` share a name (`Queue.ts`; the entry points' lower-case
 * `metrics.ts` is another name) unless the name is listed below:
 * `node tools/check-names.ts [dir]` (default `src`). A file is named by the
 * concept it holds, so one name in two folders is either one concept on two faces or
 * layers (`promise/Queue.ts` and `partition/Queue.ts`: the queue) — {@link SAME_CONCEPT} —
 * or two concepts under one word, a misnaming to fix — {@link TO_RENAME}. Each entry lists
 * its files exactly (paths relative to the root): a new file under a listed name fails
 * until the entry says why it belongs there, and an entry whose files changed must be
 * brought up to date, so the rename list only shrinks.
 */
import { readdirSync, statSync } from "node:fs"
import { basename, join, relative, resolve, sep } from "node:path"

/** A name used by more than one file, the files, and why. */
interface Shared {
  readonly files: readonly string[]
  readonly reason: string
}

/** Names shared by one concept on different faces or layers. */
const SAME_CONCEPT: Readonly<Record<string, Shared>> = {
  "Batch.ts": {
    files: ["engine/worker/Batch.ts", "promise/Batch.ts"],
    reason: "batches of the worker: the engine's, and the Promise face's batch job",
  },
  "ByName.ts": {
    files: ["effect/ByName.ts", "engine/queue/ByName.ts", "promise/ByName.ts"],
    reason: "a handler per job name: the engine's dispatch, and each face's typed `byName`",
  },
  "Dependencies.ts": {
    files: [
      "effect/Dependencies.ts",
      "engine/model/Dependencies.ts",
      "engine/queue/Dependencies.ts",
      "promise/Dependencies.ts",
    ],
    reason: "flows' dependencies: their model (types, checks), the engine's calls, and each face's",
  },
  "Errors.ts": {
    files: ["engine/model/Errors.ts", "redis/Errors.ts"],
    reason: "leaseq's errors: the client layer's own, which the engine's re-exports with the rest",
  },
  "Events.ts": {
    files: ["cli/Events.ts", "engine/events/Events.ts"],
    reason: "a queue's job events: the engine's stream reader, and `leaseq events` over it",
  },
  "Groups.ts": {
    files: ["cli/Groups.ts", "engine/queue/Groups.ts"],
    reason: "fair groups: the engine's group calls, and `leaseq groups` over them",
  },
  "Manual.ts": {
    files: ["engine/queue/Manual.ts", "promise/Manual.ts"],
    reason: "manual processing: the engine's calls, and the Promise face's over them",
  },
  "Queue.ts": {
    files: ["engine/partition/Queue.ts", "promise/Queue.ts"],
    reason: "the queue: the engine's `makeQueue` that both faces adapt, and the Promise face's class",
  },
  "QueueOps.ts": {
    files: ["effect/QueueOps.ts", "promise/QueueOps.ts"],
    reason: "the operator's calls of the queue, on the Effect face and on the Promise face",
  },
  "Schedules.ts": {
    files: ["cli/Schedules.ts", "engine/queue/Schedules.ts", "promise/Schedules.ts"],
    reason: "a queue's schedules: the engine's calls, the Promise face's, and the CLI's commands",
  },
  "Script.ts": {
    files: ["engine/scripts/Script.ts", "redis/Script.ts"],
    reason: "a Lua script: what the client runs, and the engine's typed descriptor that extends it",
  },
  "Worker.ts": {
    files: ["engine/worker/Worker.ts", "promise/Worker.ts"],
    reason: "the worker: the engine's, and the Promise face's class",
  },
  "main.ts": {
    files: ["cli/main.ts", "demo/main.ts"],
    reason: "a program's entry point (the `leaseq` bin, `npm run demo`): the folder names the program",
  },
}

/** Names shared by different concepts, to rename (not this round: issue 30 point 3); the reason says into what. */
const TO_RENAME: Readonly<Record<string, Shared>> = {
  // none left: the last four (cli/CliSession.ts, dashboard/DashboardHandler.ts,
  // metrics/MetricsHandler.ts, telemetry/OtelMetrics.ts, partition/PartitionWorkers.ts) are renamed
}

const root = resolve(process.argv[2] ?? "src")

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return files(path)
    return /\.(ts|js)$/.test(name) ? [path] : []
  })

/** Name → the files under it, root-relative with `/`. */
const byName = new Map<string, string[]>()
for (const file of files(root)) {
  const key = basename(file)
  byName.set(key, [...(byName.get(key) ?? []), relative(root, file).split(sep).join("/")])
}

const listed = new Map([...Object.entries(SAME_CONCEPT), ...Object.entries(TO_RENAME)])
const same = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join() === [...b].sort().join()

const problems: string[] = []
for (const [key, found] of byName) {
  const entry = listed.get(key)
  if (found.length < 2) continue
  if (entry === undefined)
    problems.push(
      `${found.length} files share the name ${key} (${found.sort().join(", ")}): name each by the concept it holds, or list them in SAME_CONCEPT in tools/check-names.ts with the reason they are one concept`,
    )
  else if (!same(found, entry.files))
    problems.push(
      `the files named ${key} are ${found.sort().join(", ")}, not the ${entry.files.join(", ")} that tools/check-names.ts lists: name the new file by its concept, or bring the entry up to date with the reason`,
    )
}
// an entry whose clash is gone (a file renamed) leaves the list, if its files were here at all
for (const [key, entry] of listed) {
  const found = byName.get(key) ?? []
  if (found.length < 2 && found.some((f) => entry.files.includes(f)))
    problems.push(`${entry.files.join(", ")} no longer share a name: remove its entry from tools/check-names.ts`)
  if (entry.reason.trim() === "") problems.push(`the entry for ${entry.files.join(", ")} gives no reason`)
}

const where = relative(process.cwd(), root) || "."
if (problems.length > 0) {
  for (const p of problems) console.error(p)
  console.error(`${problems.length} name clash problem(s) under ${where}`)
  process.exit(1)
}
console.log(
  `no two files under ${where} share a name but the ${listed.size} listed (${Object.keys(TO_RENAME).length} of them to rename: tools/check-names.ts)`,
)
