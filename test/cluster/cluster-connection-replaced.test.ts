/**
 * A Cluster connection replaced as silent (a heartbeat or a marker wait got no reply in
 * time, `RedisClient.replaceSilent`/`commandWithin`) fails every call still in flight on it,
 * as a dropped connection does, so the caller sends it again on the new one. ioredis 6 does
 * not always: a Cluster client disconnected while it reconnects (during a failover: its
 * ready check found `cluster_state:fail`) leaves the commands it queued meanwhile unanswered
 * for ever. That stalled a worker's sweep (its leases expired, never reclaimed) or its acks
 * (its slots full, nothing reserved) after a master was killed under load, and left parents
 * stuck in `cluster-flows-failover.test.ts`.
 */
import { describe, expect, it } from "vitest"
import { connect } from "../../src/redis/Client.ts"
import { freePort } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "../support/cleanup.ts"
import { until } from "../support/until.ts"

/** The outcome of `call`, or "unanswered" if it has not settled by `ms` (a hang turned into a failure). */
const settled = (call: Promise<unknown>, ms: number) =>
  Promise.race([
    call.then(
      () => "answered",
      (e: unknown) => (e instanceof Error ? e.message : String(e)),
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve("unanswered"), ms)),
  ])

describe("a replaced Cluster connection", () => {
  it("fails the calls it queued while reconnecting, instead of leaving them unanswered", async () => {
    // nothing listens on this port: the client connects, fails, and waits to reconnect
    const port = await freePort()
    const client = connect({ cluster: [{ host: "127.0.0.1", port }] })
    onCleanup(() => client.close(100))
    await until("the cluster client to be reconnecting", () => client.status() === "reconnecting")
    const get = client.command("GET", ["k"])
    const set = client.command("SET", ["k", "1"])
    expect(client.replaceSilent?.()).toBe(true)
    // a few seconds is only the bound that turns a hang into this failure: they fail at once
    const outcomes = await Promise.all([settled(get, 5_000), settled(set, 5_000)])
    // failed (the wording is the connection layer's), neither answered nor left pending
    for (const outcome of outcomes) expect(outcome).not.toMatch(/^(answered|unanswered)$/)
  })
})
