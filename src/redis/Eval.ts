/**
 * Running a script on one connection: EVALSHA, and on NOSCRIPT (after a restart or
 * failover) EVAL once, which loads it again; and a script followed by WAIT on the same
 * connection of the node that ran it (the `durability` option), following MOVED on a
 * cluster.
 */
import type { Cluster, Redis } from "ioredis"
import type { WaitedReply } from "./Interface.ts"
import { ioredis } from "./Ioredis.ts"
import type { Script } from "./Script.ts"
import { keySlot } from "./Slot.ts"

/** The reply Redis gives EVALSHA of a script it does not hold (after a restart, a failover, SCRIPT FLUSH). */
export const isNoScript = (e: unknown): boolean => e instanceof Error && e.message.startsWith("NOSCRIPT")

/** Cluster errors after which a script did not run and may be sent again (to the slot's new owner). */
const REROUTE = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/
const MAX_REROUTES = 16

/** A refusal reply (`{'CODE', …}`): the script wrote nothing, so there is nothing to wait for. */
const isRefusal = (reply: unknown): boolean => Array.isArray(reply) && typeof reply[0] === "string"

/** EVALSHA then WAIT, written back to back on one connection; on NOSCRIPT, EVAL then WAIT. */
const evalThenWait = async (
  node: Redis,
  script: Script,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>,
  replicas: number,
  timeoutMs: number,
): Promise<{ reply: unknown; acknowledged: number; waitError?: string }> => {
  const waitOn = () =>
    node.call("WAIT", replicas, timeoutMs).then(
      (n) => ({ acknowledged: Number(n) }),
      (e: unknown) => ({ acknowledged: 0, waitError: e instanceof Error ? e.message : String(e) }),
    )
  let written = node.call("evalsha", [script.sha, keys.length, ...keys, ...args])
  let waited = waitOn()
  const reply = await written.catch(async (e: unknown) => {
    if (!isNoScript(e)) throw e
    await waited
    written = node.call("eval", [script.source, keys.length, ...keys, ...args])
    waited = waitOn()
    return await written
  })
  const w = await waited
  return isRefusal(reply) ? { reply, acknowledged: replicas } : { reply, ...w }
}

/** The pool connection of the master that serves `key`'s slot, per the client's slot map. */
const masterFor = (cluster: Cluster, key: string): Redis | undefined => {
  const nodeKey = cluster.slots[keySlot(key)]?.[0]
  return cluster.nodes("master").find((n) => `${n.options.host}:${n.options.port}` === nodeKey)
}

const refreshSlots = (cluster: Cluster): Promise<void> =>
  new Promise((resolve) => cluster.refreshSlotsCache(() => resolve()))

/** Run a script then WAIT (see {@link RedisClient.scriptThenWait}); on a cluster, on the slot's master, following MOVED. */
export const scriptThenWaitOn = async (
  client: Redis | Cluster,
  script: Script,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>,
  replicas: number,
  timeoutMs: number,
): Promise<WaitedReply> => {
  if (!(client instanceof ioredis().Cluster)) {
    const r = await evalThenWait(client, script, keys, args, replicas, timeoutMs)
    return { ...r, node: `${client.options.host}:${client.options.port}` }
  }
  for (let attempt = 0; ; attempt++) {
    try {
      return await onSlotMaster(client, script, keys, args, replicas, timeoutMs)
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e)
      if (!REROUTE.test(message) || attempt >= MAX_REROUTES) throw e
      await refreshSlots(client)
      await new Promise((resolve) => setTimeout(resolve, Math.min(500, 20 * 2 ** attempt)))
    }
  }
}

/** One try on the master the cluster client knows for the slot of `keys[0]`. */
const onSlotMaster = async (
  client: Cluster,
  script: Script,
  keys: ReadonlyArray<string>,
  args: ReadonlyArray<string | number>,
  replicas: number,
  timeoutMs: number,
): Promise<WaitedReply> => {
  if (client.status !== "ready" || client.slots.length === 0) await client.call("PING")
  const node = masterFor(client, keys[0] ?? "")
  if (!node) throw new Error(`CLUSTERDOWN no known master for slot ${keySlot(keys[0] ?? "")}`)
  const r = await evalThenWait(node, script, keys, args, replicas, timeoutMs)
  return { ...r, node: `${node.options.host}:${node.options.port}` }
}
