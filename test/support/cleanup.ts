/**
 * Cleanup registered where a thing is made: `onCleanup(() => worker.close())` right after
 * `new Worker(…)`. The suite's per-test hook (test/support/setup-each.ts) runs them after
 * each test, newest first, and before its leak check, so a failed assertion never turns
 * into a second failure from the leak check that hides the first.
 */

const pending: Array<() => unknown> = []

/** Register `undo` to run after the current test (newest first), whatever its outcome. */
export const onCleanup = (undo: () => unknown): void => {
  pending.push(undo)
}

const first_: Array<() => unknown> = []

/**
 * Register `undo` to run after the current test before every {@link onCleanup} one: for a
 * fault a test made that would otherwise slow down the cleanups (a cut proxy healed, so the
 * workers behind it close through it instead of waiting out their bounds).
 */
export const onCleanupFirst = (undo: () => unknown): void => {
  first_.push(undo)
}

/** Run every registered cleanup, newest first; all run even if one throws (the first error is rethrown). */
export const runCleanups = async (): Promise<void> => {
  let first: { readonly error: unknown } | undefined
  for (const undo of [...first_.splice(0), ...pending.splice(0).reverse()]) {
    try {
      await undo()
    } catch (error) {
      first ??= { error }
    }
  }
  if (first) throw first.error
}

/** A promise with its resolve function, for waiting on an event a test expects. */
export const deferred = <A = void>() => {
  let resolve!: (a: A) => void
  const promise = new Promise<A>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** Lines leaseq writes to stderr (`leaseq …`), kept from the terminal, until the test's cleanup restores stderr. */
export const captureStderr = (): string[] => {
  const lines: string[] = []
  const original = process.stderr.write
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = String(chunk)
    if (text.startsWith("leaseq ")) {
      lines.push(text)
      return true
    }
    return (original as (...a: unknown[]) => boolean).call(process.stderr, chunk, ...rest)
  }) as typeof process.stderr.write
  onCleanup(() => {
    process.stderr.write = original
  })
  return lines
}
