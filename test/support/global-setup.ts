/**
 * Finds the Redis servers the suite runs against, one per test worker (see
 * test/support/workers.ts): REDIS_URL if set (then every worker shares it: run with
 * TEST_WORKERS=1 if other files must not see a file's CLIENT PAUSE); else a container
 * per worker when a container runtime answers a quick ping; else a redis-server from
 * PATH per worker, on a free port in a temp dir; else a one-line error naming what to install.
 */
import { request } from "node:http"
import type { TestProject } from "vitest/node"
import { hasRedisServer, startRedisServer } from "../../src/testing/RedisServer.ts"
import { TEST_WORKERS } from "./workers.ts"

const dockerAnswers = (): Promise<boolean> =>
  new Promise((resolve) => {
    const req = request({ socketPath: "/var/run/docker.sock", path: "/_ping", timeout: 500 }, (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on("error", () => resolve(false))
    req.on("timeout", () => {
      req.destroy()
      resolve(false)
    })
    req.end()
  })

export default async function setup(project: TestProject) {
  if (process.env.REDIS_URL) {
    project.provide("redisUrls", [process.env.REDIS_URL])
    return
  }
  if (await dockerAnswers()) {
    const { RedisContainer } = await import("@testcontainers/redis")
    const containers = await Promise.all(
      Array.from({ length: TEST_WORKERS }, () => new RedisContainer("redis:7").start()),
    )
    project.provide(
      "redisUrls",
      containers.map((c) => c.getConnectionUrl()),
    )
    return async () => {
      await Promise.all(containers.map((c) => c.stop()))
    }
  }
  if (!hasRedisServer()) {
    throw new Error(
      "leaseq tests need Redis: set REDIS_URL, or install redis-server (apt-get install -y redis-server / brew install redis)",
    )
  }
  const servers = await Promise.all(Array.from({ length: TEST_WORKERS }, () => startRedisServer()))
  project.provide(
    "redisUrls",
    servers.map((s) => s.url),
  )
  return async () => {
    await Promise.all(servers.map((s) => s.stop()))
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    /** One Redis per test worker (VITEST_POOL_ID picks it); one entry when REDIS_URL is set. */
    redisUrls: string[]
  }
}
