/**
 * A real Prometheus for a test: started on a free port with the given `global:` settings
 * and one scrape job aimed at `target` (host:port), in a temp dir; stopped and removed
 * when the test ends. Resolves to the port its HTTP API listens on.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "../../src/testing/RedisServer.ts"
import { onCleanup } from "./cleanup.ts"

export const startPrometheus = async (target: string, global: ReadonlyArray<string>): Promise<number> => {
  const dir = mkdtempSync(join(tmpdir(), "leaseq-prom-"))
  onCleanup(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(
    join(dir, "prometheus.yml"),
    [
      "global:",
      ...global.map((line) => `  ${line}`),
      "scrape_configs:",
      "  - job_name: leaseq",
      `    static_configs: [{ targets: ["${target}"] }]`,
    ].join("\n"),
  )
  const port = await freePort()
  const prom = spawn(
    "prometheus",
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: "ignore" },
  )
  const exited = new Promise((r) => prom.on("close", r))
  onCleanup(async () => {
    prom.kill("SIGTERM")
    await exited
  })
  return port
}
