/**
 * A redis-server of a test file's own (for faults that would disturb other files: a
 * demotion, a restart): started before the file's tests, stopped after them, in a temp dir.
 * `demote` is the fault a failover leaves: the server made the replica of a port nobody
 * answers on, so it keeps its data and refuses every write (READONLY); `REPLICAOF NO ONE`
 * makes it a master again.
 */
import { afterAll, beforeAll } from "vitest"
import { freePort, type LocalRedis, startRedisServer } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "./cleanup.ts"
import { rawClient } from "./redis.ts"
import { tempDir } from "./tmp.ts"
import { until } from "./until.ts"

/**
 * The file's own redis-server (read `.server` inside a test; `label` names its temp dir;
 * `args`: extra `redis-server` arguments, default none).
 */
export const ownRedis = (label: string, args: ReadonlyArray<string> = []): { readonly server: LocalRedis } => {
  const own = {} as { server: LocalRedis }
  let tmp: ReturnType<typeof tempDir>
  beforeAll(async () => {
    tmp = tempDir(label)
    own.server = await startRedisServer({ port: await freePort(), dir: tmp.dir, args })
  })
  afterAll(async () => {
    await own.server?.stop()
    tmp?.remove()
  })
  return own
}

/** Demote the server `raw` talks to: a replica of an unanswered port; resolves once it refuses writes (`probe`: a key to try). */
export const demote = async (raw: ReturnType<typeof rawClient>, probe: string): Promise<void> => {
  await raw.call("REPLICAOF", "127.0.0.1", String(await freePort()))
  await until("the server refuses writes", async () => {
    try {
      await raw.set(probe, "1")
      return false
    } catch (e) {
      return String(e).includes("READONLY")
    }
  })
}

/** A raw client of `server`, made a master again and closed after the test (a test that demotes it needs both). */
export const rawOf = (server: LocalRedis): ReturnType<typeof rawClient> => {
  const raw = rawClient(server.url)
  onCleanup(async () => {
    await raw.call("REPLICAOF", "NO", "ONE")
    raw.disconnect()
  })
  return raw
}
