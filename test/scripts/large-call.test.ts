import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { connect } from "../../src/redis/Client.ts"
import { onCleanup } from "../support/cleanup.ts"
import { queueNamer, redisUrl } from "../support/redis.ts"

const name = queueNamer("large-call")
const source = "return #ARGV"
const argc = { name: "argc", source, sha: createHash("sha1").update(source).digest("hex") }

// An addBulk of 10,000 jobs sends over 100,000 arguments to one script: passing them to
// ioredis as function-call spread arguments ran out of stack ("Maximum call stack size
// exceeded") once a job carried 12 fields. They go as one array now.
describe("a script call with a very large argument list", () => {
  it("runs with 400,000 arguments (EVALSHA, and EVAL on the first call) and a command with as many", async () => {
    const client = connect(redisUrl())
    onCleanup(() => client.close())
    const args = Array.from({ length: 400_000 }, (_, i) => i % 7)
    expect(await client.script(argc, [`${name()}:k`], args)).toBe(400_000)
    expect(await client.script(argc, [`${name()}:k`], args)).toBe(400_000)
    const key = `${name()}:set`
    onCleanup(() => client.command("DEL", [key]).then(() => undefined))
    expect(await client.command("SADD", [key, ...Array.from({ length: 400_000 }, (_, i) => i)])).toBe(400_000)
  })
})
