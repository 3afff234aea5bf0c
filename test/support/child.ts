/**
 * Spawn a TypeScript file as a child process on this Node (24, type stripping),
 * reading its stdout line by line.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"

/** A child process with a line reader. */
export interface Child {
  readonly process: ChildProcess
  readonly lines: string[]
  /** Resolves with the first line (seen so far or later) that matches. */
  readonly waitFor: (match: (line: string) => boolean) => Promise<string>
  /** SIGKILL, and wait for the exit. */
  readonly kill: () => Promise<void>
}

/** Start `node <file> ...args`. */
export const spawnTs = (file: string, args: ReadonlyArray<string>): Child => {
  const child = spawn(process.execPath, [file, ...args], { stdio: ["ignore", "pipe", "inherit"] })
  const lines: string[] = []
  const waiters: Array<{ match: (l: string) => boolean; resolve: (l: string) => void }> = []
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line)
    for (const w of [...waiters]) {
      if (w.match(line)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(line)
      }
    }
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return {
    process: child,
    lines,
    waitFor: (match) => {
      const seen = lines.find(match)
      if (seen !== undefined) return Promise.resolve(seen)
      return new Promise((resolve) => waiters.push({ match, resolve }))
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await exited
    },
  }
}
