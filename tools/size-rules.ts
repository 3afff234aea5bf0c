/**
 * The size rule's caps and exemptions (tools/check-size.ts applies them; CONTRIBUTING.md,
 * "Size", says why). A cap warns that something grew, it is not a reason to move code: when
 * a file, function or script is big because its concept is, add an exemption here with the
 * reason instead of splitting it at the line where the cap bites.
 *
 * TypeScript and the browser script (`src/`): lines per file and per function. Lua (`lua/`):
 * lines per file (scripts and includes), KEYS per script (its descriptor's `keys`) and the
 * expanded size of each script (lines of what Redis runs: the includes expanded by
 * src/engine/scripts/Script.ts's `loadScript`). The Lua caps sit just above the worst of
 * 2026-12-01 (obliterate's 42 KEYS, reserve's 1,558 expanded lines), so a script that grows
 * past them is seen.
 */
import { findFunctions, lineCount } from "./size-scan.ts"

/** The caps. */
export const CAPS = {
  /** Lines of a `.ts` / `.js` file under src/. */
  fileLines: 300,
  /** Lines of a function, from its parameter list to its closing brace. */
  functionLines: 80,
  /** Lines of a file of lua/ or lua/include/. */
  luaLines: 300,
  /** KEYS a script takes. */
  luaKeys: 45,
  /** Lines of a script once its includes are expanded (what Redis compiles on every load). */
  luaExpandedLines: 1_600,
} as const

/** Which cap an exemption lifts. */
export type SizeRule = "file" | "function" | "lua-lines" | "lua-keys" | "lua-expanded"

/**
 * The exemptions, each with its reason: `"<path>"` (a file's lines, TypeScript or Lua),
 * `"<path>#<function>"` (one function), `"<path>#keys"`, `"<path>#expanded"` (a script's KEYS,
 * its expanded size). Paths from the repository root. An entry no longer needed is reported
 * (without failing) so the list can shrink.
 */
export const EXEMPT: Readonly<Record<string, string>> = {
  "lua/reserve.lua":
    "one atomic reserve, one round trip: its header (the KEYS, the re-sends, the reply) and ten named phase functions (answer_again, riders, limits, take, lease, record, housekeeping, events, reply), each with its own header and locals",
  "lua/include/ready.lua":
    "the one owner of the ready, delayed and priority sets: every move in or out of them is here, which a test enforces",
  "lua/include/groups.lua":
    "the fair groups' state machine in one closure table (built only when a script reaches a group), owned through ready.lua",
  "lua/reserve.lua#expanded":
    "reserve expands ready, groups, active, flow, events, complete-jobs and deps in one call; its phases are functions, so the main chunk holds 132 of Lua's 200 locals (154 before; 26 of them the include functions the phases call, bound again next to them so that making the phases' closures does not walk past the includes' locals)",
  "lua/fail.lua#expanded":
    "fail expands ready (with groups), active, finish, dead, deps, events and its ack record for one atomic retry or dead-letter; groups.lua's paths without group limits (issue 33 point 4) took it past 1,600, built only once a call reaches a group",
  "lua/add.lua#expanded":
    "one atomic add of any job: ready, groups, dedupe, debounce and the flows' dependencies expand into it (each built only when a job uses it); splitting the add would open a window between its parts",
  "lua/add.lua":
    "add is one atomic operation: each job read by field name (job_at), then group maxSize and dedupe (extend, replace) before its first write; its phases are functions, not a split to fit",
  "lua/obliterate.lua#keys":
    "obliterate deletes every key of the queue in one UNLINK: its KEYS are the whole layout (KEY_NAMES), growing with each key",
  "lua/reserve.lua#keys":
    "reserve takes its own keys, the ready group (with the dependencies' keys, issue 31) and the riders' errors and logs: one atomic call, its phases are functions of it, not scripts",
  "lua/sweep.lua#keys":
    "the sweep's one bounded pass covers every kind of cleanup of a queue, each with its own keys, and ends with the ready group: the dependencies' eighth key (depBuild, issue 31) took it past 45",
  "lua/open.lua#keys":
    "it checks the type of every key of the queue (the `all` group): the errors, logs and dependencies' keys (issues 31, 34) took it past 45",
  "lua/sweep.lua#expanded":
    "the sweep is the one bounded backstop of background work (reclaim, promote, trims, dropped parents' edges, the cancel cascade of issue 31): each a function of its include, not a split to fit",
  "lua/complete.lua#expanded":
    "one atomic ack of up to 1000 jobs: dedupe, ready (with groups), active, finish, events and the flows' dependencies expand into it, and the fan-in (deps-fanin, ready_bind) releases a parent of its peer queue in the same call, which is what makes the parent ready when the ack answers (issue 31); splitting it would put the outbox's round trip back. groups.lua's paths without group limits (issue 33 point 4) are built only once a call reaches a group (groups_lib)",
  "lua/include/deps.lua":
    "the one owner of the waiting-children state and of the notes a child's end leaves (a test keeps list commands here); its parts deps-gone and deps-cascade are apart already",
  "src/effect/LeaseQueue.ts#function":
    "make builds the Effect face's member record; it goes with the one capability table (issue 30 point 2), not a split at line 80",
}

/** One exemption's key for `path` and `rule` (`name`: the function's, for "function"). */
export const exemptionKey = (path: string, rule: SizeRule, name?: string): string =>
  rule === "function"
    ? `${path}#${name}`
    : rule === "lua-keys"
      ? `${path}#keys`
      : rule === "lua-expanded"
        ? `${path}#expanded`
        : path

/** What was measured of one Lua file: its lines; for a script also its KEYS and expanded lines. */
export interface LuaMeasure {
  readonly path: string
  readonly lines: number
  readonly keys?: number | undefined
  readonly expandedLines?: number | undefined
}

/** What a check found: the problems (failing), and the exemptions it used. */
export interface SizeFindings {
  readonly problems: ReadonlyArray<string>
  readonly used: ReadonlySet<string>
}

/**
 * The problems of the Lua files measured, under `caps` and `exempt` (each problem names the
 * file, the measure and the cap); the exemptions it used are added to `used`.
 */
export const luaProblems = (
  files: ReadonlyArray<LuaMeasure>,
  used: Set<string>,
  caps: typeof CAPS = CAPS,
  exempt: Readonly<Record<string, string>> = EXEMPT,
): string[] => {
  const problems: string[] = []
  const over = (path: string, rule: SizeRule, value: number | undefined, cap: number, what: string) => {
    if (value === undefined || value <= cap) return
    const key = exemptionKey(path, rule)
    if (exempt[key] !== undefined) used.add(key)
    else problems.push(`${path}: ${value} ${what} (max ${cap})`)
  }
  for (const f of files) {
    over(f.path, "lua-lines", f.lines, caps.luaLines, "lines")
    over(f.path, "lua-keys", f.keys, caps.luaKeys, "KEYS")
    over(f.path, "lua-expanded", f.expandedLines, caps.luaExpandedLines, "lines expanded")
  }
  return problems
}

/**
 * The problems of the TypeScript / JavaScript files given (`path` from the repository root,
 * `text`): a file over `caps.fileLines`, a function over `caps.functionLines`, unless exempt;
 * the exemptions it used are added to `used`.
 */
export const sourceProblems = (
  files: ReadonlyArray<{ readonly path: string; readonly text: string }>,
  used: Set<string>,
  caps: typeof CAPS = CAPS,
  exempt: Readonly<Record<string, string>> = EXEMPT,
): string[] => {
  const problems: string[] = []
  const isExempt = (key: string) => {
    if (exempt[key] === undefined) return false
    used.add(key)
    return true
  }
  for (const { path, text } of files) {
    const lines = lineCount(text)
    if (lines > caps.fileLines && !isExempt(exemptionKey(path, "file")))
      problems.push(`${path}: ${lines} lines (max ${caps.fileLines})`)
    for (const f of findFunctions(text)) {
      if (f.lines > caps.functionLines && !isExempt(exemptionKey(path, "function", f.name)))
        problems.push(`${path}:${f.startLine}: function ${f.name} is ${f.lines} lines (max ${caps.functionLines})`)
    }
  }
  return problems
}

/** The exemptions of `exempt` not used by a check that covered `covered` (path prefixes): stale. */
export const staleExemptions = (
  used: ReadonlySet<string>,
  covered: ReadonlyArray<string>,
  exempt: Readonly<Record<string, string>> = EXEMPT,
): string[] => Object.keys(exempt).filter((k) => !used.has(k) && covered.some((dir) => k.startsWith(`${dir}/`)))

/** The entries of `exempt` without a reason (a rule of the list: each says why). */
export const unreasoned = (exempt: Readonly<Record<string, string>> = EXEMPT): string[] =>
  Object.entries(exempt)
    .filter(([, reason]) => reason.trim().length < 10)
    .map(([k]) => k)
