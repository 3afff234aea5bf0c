#!/usr/bin/env node
/**
 * The `leaseq` bin. Runs under Node 24 type stripping (`node src/cli/main.ts`) and
 * compiled (`dist/cli/main.js`). Sets `process.exitCode` and lets Node exit once
 * every connection is closed.
 */
import { processIo } from "./Output.ts"
import { runCli } from "./Program.ts"

process.exitCode = await runCli(process.argv.slice(2), processIo(), process.env)

// Every connection is closed by now, so Node exits at once. Should a stray handle
// ever keep it alive, a cron job must still end: this timer does not hold Node open.
setTimeout(() => process.exit(), 5_000).unref()
