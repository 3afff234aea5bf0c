/**
 * The messages between a worker and the threads or processes that run its handler
 * (Pool.ts on the worker's side, Entry.ts on the other). Values cross by structured
 * clone (`serialization: "advanced"` for a process): Dates, Maps, typed arrays survive;
 * errors cross as {@link WireError} and are rebuilt.
 */

/** The job as the handler's side receives it (its signal and progress are made there). */
export interface WireJob {
  readonly id: string
  readonly payload: unknown
  readonly attempt: number
  readonly maxAttempts: number
  readonly token: number
  readonly scheduledFor: number | undefined
}

/** An error as it crosses: its name, message, stack and own properties (those that clone). */
export interface WireError {
  readonly name?: string | undefined
  readonly message: string
  readonly stack?: string | undefined
  readonly props?: Record<string, unknown> | undefined
  /** A thrown value that is not an Error (cloned as is). */
  readonly value?: unknown
  readonly isError: boolean
}

/** Worker → handler side. */
export type ToHandler =
  | { readonly t: "run"; readonly n: number; readonly job: WireJob }
  | { readonly t: "batch"; readonly n: number; readonly jobs: ReadonlyArray<WireJob> }
  /** `i`: which job of a batch (its place in `jobs`). */
  | { readonly t: "abort"; readonly n: number; readonly i: number; readonly reason: WireError }

/** Handler side → worker. */
export type FromHandler =
  | { readonly t: "ready" }
  | { readonly t: "load-failed"; readonly reason: string }
  | { readonly t: "done"; readonly n: number; readonly ok: true; readonly result: unknown }
  | { readonly t: "done"; readonly n: number; readonly ok: false; readonly error: WireError }
  /** `i`: which job of a batch (0 for a run of one job). */
  | { readonly t: "progress"; readonly n: number; readonly i: number; readonly value: unknown }
  /** A batch job settled by the handler (`complete`, `fail`) before the batch ends. */
  | { readonly t: "settle"; readonly n: number; readonly i: number; readonly ok: true; readonly result: unknown }
  | { readonly t: "settle"; readonly n: number; readonly i: number; readonly ok: false; readonly error: WireError }

/** A thrown value as it crosses. */
export const toWire = (e: unknown): WireError => {
  if (!(e instanceof Error)) {
    try {
      structuredClone(e)
      return { isError: false, message: String(e), value: e }
    } catch {
      return { isError: false, message: String(e) }
    }
  }
  const props: Record<string, unknown> = {}
  for (const key of Object.keys(e)) {
    try {
      const v = (e as unknown as Record<string, unknown>)[key]
      props[key] = structuredClone(v)
    } catch {
      // a property that does not clone stays behind
    }
  }
  return { isError: true, name: e.name, message: e.message, stack: e.stack, props }
}

/** A crossed error rebuilt: an Error with the same name, message, stack and properties. */
export const fromWire = (w: WireError): unknown => {
  if (!w.isError) return "value" in w ? w.value : w.message
  const e = new Error(w.message)
  if (w.name !== undefined) e.name = w.name
  if (w.stack !== undefined) e.stack = w.stack
  if (w.props) Object.assign(e, w.props)
  return e
}
