/** Where things are: the bench folder, the repository root, the results folder. */
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url))
export const ROOT = join(BENCH_DIR, "..")
/** One JSON record per run (bench/README.md). */
export const RESULTS_DIR = join(BENCH_DIR, "results")
