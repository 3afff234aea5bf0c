/**
 * Reply decoding (src/engine/calls/Replies.ts), without Redis: what an error thrown by a Redis
 * call means (unavailable, outcome unknown, a command error), with passwords scrubbed from
 * causes; a script's refusal reply as its tagged error; and which errors the worker's
 * acks take as "the script surely did not run" (Acks.ts).
 */
import { describe, expect, it } from "vitest"
import { Refusal, redisError, scriptError, scrubCause } from "../../src/engine/calls/Replies.ts"
import {
  InvalidOptions,
  LayoutMismatch,
  OutcomeUnknown,
  RedisCommandError,
  RedisUnavailable,
  WrongKeyType,
} from "../../src/engine/model/Errors.ts"
import { LAYOUT_VERSION, queueKeys } from "../../src/engine/model/Keys.ts"
import { refusedBeforeRun } from "../../src/engine/worker/lease/Acks.ts"
import { NoAnswer } from "../../src/redis/Client.ts"

const replyError = (message: string) => Object.assign(new Error(message), { name: "ReplyError" })

describe("redisError", () => {
  it("a connection error is RedisUnavailable naming the server and the client's last connection error", () => {
    const e = redisError("reserve script", new Error("Connection is closed."), "redis://h:6379", "connect ECONNREFUSED")
    expect(e).toBeInstanceOf(RedisUnavailable)
    expect(e.message).toContain("redis://h:6379")
    expect(e.message).toContain("last connection error: connect ECONNREFUSED")
  })

  it("an error code alone (ECONNRESET) is enough to say unavailable", () => {
    expect(redisError("x", Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))).toBeInstanceOf(
      RedisUnavailable,
    )
  })

  it("a server-side state Redis recovers from (LOADING, READONLY) is unavailable, not a command error", () => {
    expect(redisError("x", replyError("LOADING Redis is loading the dataset in memory"))).toBeInstanceOf(
      RedisUnavailable,
    )
    expect(redisError("x", replyError("READONLY You can't write against a read only replica."))).toBeInstanceOf(
      RedisUnavailable,
    )
  })

  it("any other reply error is a RedisCommandError naming the command", () => {
    const e = redisError("fail script", replyError("NOPERM this user has no permissions to run the 'evalsha' command"))
    expect(e).toBeInstanceOf(RedisCommandError)
    expect(e).toMatchObject({ command: "fail script" })
  })

  it("a bounded call with no answer: sent → OutcomeUnknown, never sent → RedisUnavailable", () => {
    expect(redisError("add", new NoAnswer("add", true, "no reply within 2000 ms"))).toBeInstanceOf(OutcomeUnknown)
    expect(redisError("add", new NoAnswer("add", false, "not connected within 2000 ms"))).toBeInstanceOf(
      RedisUnavailable,
    )
  })

  it("a cause keeps the command's name but not its arguments, and no password from a URL", () => {
    const raw = Object.assign(new Error("WRONGPASS at redis://user:s3cret@h:6379"), {
      command: { name: "auth", args: ["user", "s3cret"] },
    })
    const scrubbed = scrubCause(raw) as Error & { command: { name: string; args?: unknown } }
    expect(scrubbed.command).toEqual({ name: "auth" })
    expect(JSON.stringify({ m: scrubbed.message, s: scrubbed.stack })).not.toContain("s3cret")
  })
})

describe("scriptError", () => {
  const keys = queueKeys("unit-replies")

  it("a layout refusal names the queue, the layout found and the one expected", () => {
    const e = scriptError(keys, [Refusal.LayoutMismatch, "0"])
    expect(e).toBeInstanceOf(LayoutMismatch)
    expect(e).toMatchObject({ queue: "unit-replies", found: "0", expected: LAYOUT_VERSION })
  })

  it("a key-type refusal names the key and both types", () => {
    const e = scriptError(keys, [Refusal.WrongKeyType, keys.wait, "string", "list"])
    expect(e).toBeInstanceOf(WrongKeyType)
    expect(e).toMatchObject({ key: keys.wait, found: "string", expected: "list" })
  })

  it("a size out of a script's range is InvalidOptions naming the script's argument, the value and the range", () => {
    const e = scriptError(keys, [Refusal.OutOfRange, "reserve", "count", "5000", 1000])
    expect(e).toBeInstanceOf(InvalidOptions)
    expect(e).toMatchObject({ field: "reserve count", value: 5000 })
    expect(e?.message).toContain("from 0 to 1000")
    expect(e?.message).toContain("nothing was written")
  })

  it("an ordinary reply is not a refusal", () => {
    expect(scriptError(keys, [1, "job-1"])).toBeUndefined()
    expect(scriptError(keys, ["job-1", "job-2"])).toBeUndefined()
    expect(scriptError(keys, 3)).toBeUndefined()
  })
})

describe("refusedBeforeRun", () => {
  it("BUSY, OOM, NOSCRIPT… mean the script did not run; a dropped connection may have run it", () => {
    for (const m of ["BUSY Redis is busy", "OOM command not allowed", "NOSCRIPT No matching script", "MOVED 1 h:1"]) {
      expect(refusedBeforeRun(new Error(m)), m).toBe(true)
    }
    expect(refusedBeforeRun(new Error("Connection is closed."))).toBe(false)
    expect(refusedBeforeRun(new RedisUnavailable({ reason: "ECONNRESET" }))).toBe(false)
  })
})
