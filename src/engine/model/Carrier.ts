/**
 * The creation context a traced job carries: the producer's span, as a W3C
 * `traceparent`, in front of the stored payload. Only a job added while a tracer
 * records carries it (59 bytes); every other job is stored exactly as before.
 *
 * The context travels inside the payload text so that it follows the job wherever the
 * payload goes (the inline wait entry, the data hash on retries and delays, dead
 * letters) without a new key or a change to any script. A stored payload is JSON text,
 * which never starts with `~`, so the prefix cannot be mistaken for a payload.
 *
 * A job's name (add's `name` option) travels the same way, after the traceparent if any:
 * `~n:<name>\0`, only for a job added with a name (a name holds no control character, and
 * JSON text none unescaped, so the NUL ends it). lua/update-payload.lua keeps both prefixes.
 */

/** A span context carried with a job: the W3C trace id, span id and sampled flag. */
export interface TraceParent {
  /** 32 lowercase hex digits. */
  readonly traceId: string
  /** 16 lowercase hex digits. */
  readonly spanId: string
  readonly sampled: boolean
}

/** What a traced payload starts with; the traceparent and a `;` follow. */
const PREFIX = "~tp:"
/** `00-<32 hex>-<16 hex>-<2 hex>` */
const TRACEPARENT_LENGTH = 55
/** Bytes a traced job carries more than an untraced one. */
export const CARRIER_BYTES = PREFIX.length + TRACEPARENT_LENGTH + 1

const HEX32 = /^[0-9a-f]{32}$/
const HEX16 = /^[0-9a-f]{16}$/

/** True when `parent` can be written as a W3C traceparent (and is not the all-zero invalid context). */
const valid = (parent: TraceParent): boolean =>
  HEX32.test(parent.traceId) && HEX16.test(parent.spanId) && !/^0+$/.test(parent.traceId) && !/^0+$/.test(parent.spanId)

/** `payload` with `parent` in front (unchanged when `parent` is not a valid W3C context). */
export const wrapPayload = (payload: string, parent: TraceParent | undefined): string =>
  parent === undefined || !valid(parent)
    ? payload
    : `${PREFIX}00-${parent.traceId}-${parent.spanId}-${parent.sampled ? "01" : "00"};${payload}`

/** What a named payload starts with; the name and a NUL follow. */
const NAME_PREFIX = "~n:"

/** `payload` with the job's `name` in front (unchanged without a name). */
export const namePayload = (payload: string, name: string | undefined): string =>
  name === undefined ? payload : `${NAME_PREFIX}${name}\u0000${payload}`

/** A stored payload split into the payload, the creation context and the name it carries, if any. */
export interface Carried {
  readonly payload: string
  readonly parent: TraceParent | undefined
  /** The job's name (add's `name` option), undefined for a job added without one. */
  readonly name?: string | undefined
}

/** The name in front of `text` split off (see {@link namePayload}). */
const splitName = (text: string, parent: TraceParent | undefined): Carried => {
  if (text.charCodeAt(0) !== 126 /* ~ */ || !text.startsWith(NAME_PREFIX)) return { payload: text, parent }
  const end = text.indexOf("\u0000", NAME_PREFIX.length)
  if (end < 0) return { payload: text, parent }
  return { payload: text.slice(end + 1), parent, name: text.slice(NAME_PREFIX.length, end) }
}

/** Split a stored payload (see {@link wrapPayload}, {@link namePayload}). A plain payload comes back as it is. */
export const splitPayload = (stored: string): Carried => {
  if (stored.charCodeAt(0) !== 126 /* ~ */) return { payload: stored, parent: undefined }
  if (!stored.startsWith(PREFIX)) return splitName(stored, undefined)
  const end = PREFIX.length + TRACEPARENT_LENGTH
  if (stored[end] !== ";") return { payload: stored, parent: undefined }
  const tp = stored.slice(PREFIX.length, end)
  const parent = {
    traceId: tp.slice(3, 35),
    spanId: tp.slice(36, 52),
    sampled: (Number.parseInt(tp.slice(53, 55), 16) & 1) === 1,
  }
  return valid(parent) ? splitName(stored.slice(end + 1), parent) : { payload: stored, parent: undefined }
}

/** The payload of a stored payload text, without the creation context and name (for reads of dead jobs and the like). */
export const storedPayload = (stored: string): string => splitPayload(stored).payload

/** `job` with `parent` in front of its payload (the same job when there is no parent to carry). */
export const carry = <J extends { readonly payload: string }>(job: J, parent: TraceParent | undefined): J =>
  parent ? { ...job, payload: wrapPayload(job.payload, parent) } : job
