/**
 * Child processes for tests: `node <file> ...args` on this Node (24, type stripping), its
 * stdout read line by line with the time each line arrived, its stderr collected, and a
 * SIGKILL registered as the test's cleanup the moment it starts (so a failed assertion
 * never leaves a process behind). `startWorkerChild` runs the one worker fixture,
 * test/fixtures/chaos-worker.ts (its header lists the modes and the lines it prints);
 * `runCli` runs the `leaseq` command from source to its end.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { onCleanup } from "./cleanup.ts"

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, "../..")

/** The worker fixture run in a child process. */
export const CHAOS_WORKER = join(ROOT, "test/fixtures/chaos-worker.ts")

/** One line a child printed, with the wall-clock time the test received it. */
export interface Line {
  readonly at: number
  readonly text: string
}

/** A child process whose stdout is read line by line. */
export interface Child {
  readonly id: number
  readonly process: ChildProcess
  readonly lines: Line[]
  /** Everything it wrote to stderr (also passed on to this process's stderr). */
  readonly stderr: () => string
  /** Resolves with the first line (already seen or later) that matches; rejects if the child ends first. */
  readonly waitFor: (match: (line: string) => boolean, what?: string) => Promise<Line>
  /** Resolves once the process has exited *and* all of its output has been read. */
  readonly ended: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** Send `signal` (default SIGKILL) unless it already exited; resolves once it has ended. */
  readonly stop: (
    signal?: NodeJS.Signals,
  ) => Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  /** The time SIGKILL was sent by {@link stop}, if it was. */
  killedAt: number | undefined
}

let childIds = 0

/** Where children keep their V8 compile cache (shared by every child of every run). */
export const COMPILE_CACHE = join(tmpdir(), "leaseq-chaos-compile-cache")

/** Start `node <file> ...args` on this Node (24: type stripping), stdout read line by line, stderr collected; SIGKILLed after the test unless it ended. */
export const startChild = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}): Child => {
  const proc = spawn(process.execPath, [file, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    // a shared V8 compile cache: a replacement worker starts in about half the CPU time
    env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...process.env, ...env },
  })
  const lines: Line[] = []
  let stderr = ""
  proc.stderr!.on("data", (d: Buffer) => {
    stderr += d.toString()
    process.stderr.write(d)
  })
  const waiters: Array<{ match: (l: string) => boolean; resolve: (l: Line) => void }> = []
  let done = false
  const failWaiters: Array<() => void> = []
  createInterface({ input: proc.stdout! }).on("line", (text) => {
    const line = { at: Date.now(), text }
    lines.push(line)
    for (const w of [...waiters]) {
      if (w.match(text)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(line)
      }
    }
  })
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveEnd) => {
    proc.once("close", (code, signal) => {
      done = true
      for (const f of failWaiters.splice(0)) f()
      resolveEnd({ code, signal })
    })
  })
  const child: Child = {
    id: ++childIds,
    process: proc,
    lines,
    stderr: () => stderr,
    killedAt: undefined,
    ended,
    waitFor: (match, what = "a matching line") => {
      const seen = lines.find((l) => match(l.text))
      if (seen) return Promise.resolve(seen)
      if (done) return Promise.reject(new Error(`child ${child.id} ended before printing ${what}`))
      return new Promise((resolveLine, reject) => {
        waiters.push({ match, resolve: resolveLine })
        failWaiters.push(() =>
          reject(
            new Error(
              `child ${child.id} ended before printing ${what}; last lines:\n${lines
                .slice(-10)
                .map((l) => l.text)
                .join("\n")}`,
            ),
          ),
        )
      })
    },
    stop: async (signal = "SIGKILL") => {
      if (proc.exitCode === null && proc.signalCode === null) {
        if (signal === "SIGKILL") child.killedAt = Date.now()
        proc.kill(signal)
      }
      return ended
    },
  }
  onCleanup(() => child.stop())
  return child
}

/** Start the chaos worker fixture. `url` may be "@<file>" (ioredis options as JSON). */
export const startWorkerChild = (
  url: string,
  queue: string,
  mode: string,
  options: Record<string, unknown>,
  env: NodeJS.ProcessEnv = {},
): Child => startChild(CHAOS_WORKER, [url, queue, mode, JSON.stringify(options)], env)

/** What a finished process left: its exit code and everything it wrote. */
export interface Finished {
  readonly code: number | null
  readonly out: string
  readonly err: string
}

/**
 * Run the `leaseq` CLI from source (`src/cli/main.ts`) on this Node until it exits, with
 * `REDIS_URL` removed from its environment (so it uses only what `args` and `env` say).
 */
export const runCli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}): Promise<Finished> =>
  new Promise((resolveRun, reject) => {
    const { REDIS_URL: _, ...base } = process.env
    const proc = spawn(process.execPath, [join(ROOT, "src/cli/main.ts"), ...args], {
      env: { NODE_COMPILE_CACHE: COMPILE_CACHE, ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    })
    onCleanup(() => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL")
    })
    let out = ""
    let err = ""
    proc.stdout.on("data", (d: Buffer) => {
      out += d.toString()
    })
    proc.stderr.on("data", (d: Buffer) => {
      err += d.toString()
    })
    proc.on("error", reject)
    proc.on("close", (code) => resolveRun({ code, out, err }))
  })
