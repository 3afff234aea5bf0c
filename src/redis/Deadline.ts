/**
 * Calls bounded in time: {@link withDeadline} wraps a client so that a call is written
 * only once the connection is ready and rejects with {@link NoAnswer} when no answer
 * came in time, telling a call never sent from one that may have run.
 */
import type { RedisClient } from "./Interface.ts"
import { redactText } from "./Redact.ts"

/**
 * A call bounded by {@link withDeadline} got no answer. `sent: false`: it was never handed
 * to the connection (none was ready in time), so nothing will be written later.
 * `sent: true`: it was written, and no reply came in time or the connection broke after
 * it: it may have run, and ioredis may still write it again after a reconnect.
 */
export class NoAnswer extends Error {
  override readonly name = "NoAnswer"
  readonly command: string
  readonly sent: boolean
  constructor(command: string, sent: boolean, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause })
    this.command = command
    this.sent = sent
  }
}

/** The deadline of {@link withDeadline}: each call gets `timeoutMs`, and none ends after `until` (a `performance.now()` time). */
export interface Deadline {
  readonly timeoutMs: number
  readonly until?: number | undefined
}

/** Redis answered (an error reply), or leaseq's own layer decided: the outcome is known. */
const answered = (e: unknown): boolean => e instanceof Error && (e.name === "ReplyError" || "_tag" in e)

/** A bounded call in flight: its deadline (a `performance.now()` time) and what to do when it passes. */
interface Pending {
  readonly end: number
  readonly expire: () => void
}

/**
 * The deadlines of every bounded call in flight, watched by ONE timer set for the
 * earliest: a call costs a Set insert and delete, not a timer of its own (a producer
 * makes thousands of calls a second, nearly all answered long before their deadline).
 * The timer keeps the process alive only while a call is in flight.
 */
const inFlight = new Set<Pending>()
let timer: NodeJS.Timeout | undefined
let timerAt = Number.POSITIVE_INFINITY

const armFor = (end: number) => {
  if (timer !== undefined && timerAt <= end) return
  if (timer !== undefined) clearTimeout(timer)
  timerAt = end
  timer = setTimeout(onTimer, Math.max(0, end - performance.now()))
}

/**
 * The timer fired: after one more turn of I/O (setImmediate, so a reply that arrived
 * while the process was stalled is read before its deadline is called missed), expire
 * the calls past their deadline and set the timer for the next one.
 */
const onTimer = () => {
  timer = undefined
  timerAt = Number.POSITIVE_INFINITY
  setImmediate(() => {
    const now = performance.now()
    let next = Number.POSITIVE_INFINITY
    for (const p of inFlight) {
      if (p.end <= now) {
        inFlight.delete(p)
        p.expire()
      } else if (p.end < next) next = p.end
    }
    if (next < Number.POSITIVE_INFINITY) armFor(next)
  })
}

/** Settle as `pending` does, or, if it has not by `end` (a `performance.now()` time), reject with `late()`. */
const settleByEnd = <A>(
  pending: Promise<A>,
  end: number,
  late: () => unknown,
  failed: (e: unknown) => unknown,
): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const entry: Pending = { end, expire: () => reject(late()) }
    if (inFlight.size === 0) timer?.ref()
    inFlight.add(entry)
    armFor(end)
    const done = (): boolean => {
      if (!inFlight.delete(entry)) return false
      if (inFlight.size === 0) timer?.unref()
      return true
    }
    pending.then(
      (value) => {
        if (done()) resolve(value)
      },
      (e: unknown) => {
        if (done()) reject(failed(e))
      },
    )
  })

/** Run `send` on `base` once it is writable, bounded by `deadline` (see {@link withDeadline}). */
const bounded = <A>(base: RedisClient, deadline: Deadline, what: string, send: () => Promise<A>): Promise<A> => {
  const now = performance.now()
  const end =
    deadline.until === undefined ? now + deadline.timeoutMs : Math.min(now + deadline.timeoutMs, deadline.until)
  const sent = (): Promise<A> =>
    settleByEnd(
      send(),
      end,
      () => new NoAnswer(what, true, `sent, but no reply came within ${deadline.timeoutMs} ms`),
      (e) => {
        if (answered(e)) return e
        const text = redactText(e instanceof Error ? e.message : String(e))
        return new NoAnswer(what, true, `sent, then the connection failed before a reply came: ${text}`, e)
      },
    )
  // written now, synchronously: the connection is ready
  if (base.writable()) return sent()
  return base.whenWritable(end - performance.now()).then((ready) => {
    if (!(ready && base.writable())) {
      throw new NoAnswer(what, false, `not sent: no connection to Redis was ready within ${deadline.timeoutMs} ms`)
    }
    return sent()
  })
}

/**
 * `base` with every call bounded: a call is written only once the connection is ready
 * (never parked in ioredis' offline queue, to be written after the caller gave up), and
 * rejects with {@link NoAnswer} when it was not written in time (`sent: false`), or was
 * written and no reply came in time or the connection broke after it (`sent: true`).
 * The clients `masters()` answers are bounded the same way.
 */
export const withDeadline = (base: RedisClient, deadline: Deadline): RedisClient => {
  const wrapped: RedisClient = {
    ...base,
    // each master's client bounded too (on a standalone server: this client itself)
    masters: () => base.masters().then((ms) => ms.map((m) => (m === base ? wrapped : withDeadline(m, deadline)))),
    script: (script, keys, args) =>
      bounded(base, deadline, `${script.name} script`, () => base.script(script, keys, args)),
    command: (name, args) => bounded(base, deadline, name, () => base.command(name, args)),
    scriptThenWait: (script, keys, args, replicas, timeoutMs) =>
      bounded(base, deadline, `${script.name} script`, () =>
        base.scriptThenWait(script, keys, args, replicas, timeoutMs),
      ),
  }
  return wrapped
}
