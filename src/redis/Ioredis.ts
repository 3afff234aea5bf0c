/**
 * ioredis, loaded on its first use: a process that never connects (`leaseq --help`, a
 * module that imports leaseq and connects later) does not load its ~60 modules at import.
 * ioredis is CommonJS, so this `require` returns the very module an `import` of it does:
 * the same `Redis` and `Cluster` classes, for `instanceof` on a client the app passes in.
 */
import { createRequire } from "node:module"
import type * as IORedis from "ioredis"

let loaded: typeof IORedis | undefined

/** The ioredis module, required once on the first call. */
export const ioredis = (): typeof IORedis => {
  loaded ??= createRequire(import.meta.url)("ioredis") as typeof IORedis
  return loaded
}
