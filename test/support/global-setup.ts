/**
 * Finds the Redis the suite runs against: REDIS_URL if set; else a
 * container when a container runtime answers a quick ping; else a redis-server
 * from PATH on a free port in a temp dir; else a one-line error naming what to install.
 */
import { request } from "node:http"
import type { TestProject } from "vitest/node"
import { hasRedisServer, startRedisServer } from "../../src/testing/RedisServer.ts"

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
    project.provide("redisUrl", process.env.REDIS_URL)
    return
  }
  if (await dockerAnswers()) {
    const { RedisContainer } = await import("@testcontainers/redis")
    const container = await new RedisContainer("redis:7").start()
    project.provide("redisUrl", container.getConnectionUrl())
    return async () => {
      await container.stop()
    }
  }
  if (!hasRedisServer()) {
    throw new Error(
      "leaseq tests need Redis: set REDIS_URL, or install redis-server (apt-get install -y redis-server / brew install redis)",
    )
  }
  const server = await startRedisServer()
  project.provide("redisUrl", server.url)
  return async () => {
    await server.stop()
  }
}

declare module "vitest" {
  export interface ProvidedContext {
    redisUrl: string
  }
}
