/**
 * The views the dashboard polls, named by a string (`?view=` of /api/stream, and the key of
 * each poller in the hub): `overview`, `workers`, `queue:<queue>`, `job:<queue>:<id>` and
 * `jobs:<queue>:<state>:<order>:<cursor>` (a page of a queue's jobs in one state) and
 * `children:<queue>:<cursor>:<id>` (a page of a parent's children, the cursor base64url).
 * Every part is checked here, before anything is read: a queue name holds no `:`, so the
 * first `:` after the kind ends it, and a cursor, which may hold `:`, comes last (a children
 * cursor holds none, so the id, which may, comes last there).
 */
import { queueKeys } from "../engine/model/Keys.ts"
import { validateJobId } from "../engine/queue/JobControl.ts"
import { checkJobsQuery, type JobsQuery } from "./JobList.ts"

/** A view, parsed and checked. */
export type View =
  | { readonly kind: "overview" }
  | { readonly kind: "workers" }
  | { readonly kind: "queue"; readonly queue: string }
  | { readonly kind: "job"; readonly queue: string; readonly id: string }
  | ({ readonly kind: "jobs"; readonly queue: string } & JobsQuery)
  /** `cursor` the engine's cursor of the page before ("" for the first page), decoded. */
  | { readonly kind: "children"; readonly queue: string; readonly id: string; readonly cursor: string }

/** What a bad `?view=` is told. */
export const VIEW_HELP =
  "give view=overview, view=workers, view=queue:<a queue name>, view=job:<a queue name>:<a job id>, view=jobs:<a queue name>:<state>:<asc|desc>:<cursor> or view=children:<a queue name>:<cursor>:<a job id>"

/** `true` when `f()` throws nothing (a queue name or job id check). */
export const valid = (f: () => unknown): boolean => {
  try {
    f()
    return true
  } catch {
    return false
  }
}

/** `[head, rest]` of `s` split at its first `:` (rest "" when it has none). */
const cut = (s: string): [string, string] => {
  const at = s.indexOf(":")
  return at < 0 ? [s, ""] : [s.slice(0, at), s.slice(at + 1)]
}

/** The longest children view: its two ids, queue and cursor are far shorter; a longer one is refused unread. */
export const MAX_CHILDREN_VIEW_LENGTH = 1024

/** The page a children view's `cursor` (base64url) and `id` name: its decoded cursor, or why it names none. */
export const checkChildrenCursor = (
  cursor: string,
  id: string,
): { readonly cursor: string } | { readonly error: string } => {
  if (cursor === "") return { cursor }
  const decoded = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : ""
  // only a cursor this parent's page answered: one of another parent would page its children
  return Buffer.from(decoded, "utf8").toString("base64url") === cursor && decoded.startsWith(`${id}|`)
    ? { cursor: decoded }
    : {
        error: `the cursor ${JSON.stringify(cursor.slice(0, 100))} is not one of job ${id}'s children pages: follow "Next" from its first page`,
      }
}

const TOO_LONG = `a children view is at most ${MAX_CHILDREN_VIEW_LENGTH} characters; ${VIEW_HELP}`

/** The children view of `queue` whose `<cursor>:<id>` is `tail`, checked; or why it names none. */
const childrenView = (queue: string, tail: string): View | { readonly error: string } => {
  const [cursor, id] = cut(tail)
  if (!tail.includes(":") || !valid(() => validateJobId(id))) return { error: VIEW_HELP }
  const c = checkChildrenCursor(cursor, id)
  return "error" in c ? c : { kind: "children", queue, id, cursor: c.cursor }
}

/** The view `v` names under `prefix`, checked; or why it names none. */
export const parseView = (v: string, prefix: string): View | { readonly error: string } => {
  if (v === "overview" || v === "workers") return { kind: v }
  const [kind, rest] = cut(v)
  const [queue, tail] = cut(rest)
  if (!["queue", "job", "jobs", "children"].includes(kind)) return { error: VIEW_HELP }
  if (!valid(() => queueKeys(queue, prefix))) return { error: `${JSON.stringify(queue)} is not a queue name` }
  if (kind === "queue") return tail === "" && !rest.includes(":") ? { kind, queue } : { error: VIEW_HELP }
  if (kind === "job") return valid(() => validateJobId(tail)) ? { kind, queue, id: tail } : { error: VIEW_HELP }
  if (kind === "children") return v.length > MAX_CHILDREN_VIEW_LENGTH ? { error: TOO_LONG } : childrenView(queue, tail)
  const [state, more] = cut(tail)
  const [order, cursor] = cut(more)
  const q = checkJobsQuery(state, order, cursor)
  return "error" in q ? q : { kind: "jobs", queue, ...q }
}

/** The view a request's `?view=` names (default `overview`), checked; or why it names none. */
export const viewIn = (u: URL, prefix: string): { readonly view: string } | { readonly error: string } => {
  const v = u.searchParams.get("view") ?? "overview"
  const parsed = parseView(v, prefix)
  return "error" in parsed ? parsed : { view: v }
}

/**
 * The view `/api/jobs?queue=&state=&order=&cursor=` names (state `waiting`, order `asc` and
 * the first page by default), each parameter checked on its own (so no `:` in one can shift
 * the parts of the view); or why it names none.
 */
export const jobsViewIn = (u: URL, prefix: string): { readonly view: string } | { readonly error: string } => {
  const p = (name: string, otherwise: string) => u.searchParams.get(name) ?? otherwise
  const queue = p("queue", "")
  if (!valid(() => queueKeys(queue, prefix))) return { error: `${JSON.stringify(queue)} is not a queue name` }
  const q = checkJobsQuery(p("state", "waiting"), p("order", "asc"), p("cursor", ""))
  return "error" in q ? q : { view: `jobs:${queue}:${q.state}:${q.order}:${q.cursor}` }
}

/**
 * The view `/api/children?queue=&id=&cursor=` names (the first page without a cursor), each
 * parameter checked on its own (so no `:` in one can shift the parts of the view); or why it
 * names none.
 */
export const childrenViewIn = (u: URL, prefix: string): { readonly view: string } | { readonly error: string } => {
  const [queue, id, cursor] = ["queue", "id", "cursor"].map((p) => u.searchParams.get(p) ?? "") as [
    string,
    string,
    string,
  ]
  if (!valid(() => queueKeys(queue, prefix))) return { error: `${JSON.stringify(queue)} is not a queue name` }
  const c = checkChildrenCursor(cursor, id)
  if ("error" in c) return c
  return viewIn(new URL(`?view=${encodeURIComponent(`children:${queue}:${cursor}:${id}`)}`, u), prefix)
}
