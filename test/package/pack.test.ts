/**
 * `npm pack` makes a package a user can install: the tarball is installed with npm into
 * a fresh app that has its own, older compatible Effect (4.0.x: leaseq's `effect` is a peer,
 * so the app has one copy), and used as a user would, on every Node line the package
 * supports: the engines floor (Node 22, fetched once from the npm registry as the `node`
 * package into .tmp/) and the repo's Node 24. Its types are checked with the repo's pins of
 * TypeScript and @types/node and with the newest of each (fetched into .tmp/ each run). The
 * registry must be reachable (CI has it).
 */
import { execFile, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueNamer, redisUrl } from "../support/redis.ts"

const root = new URL("../..", import.meta.url).pathname
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
/** The app's own Effect: the oldest line the peer range admits. */
const APP_EFFECT = "4.0.6"
/** The lowest Node the package claims (`engines`), as an exact version: ">=22.19" → 22.19.0. */
const NODE_FLOOR = (() => {
  const m = String(manifest.engines.node).match(/^>=(\d+)\.(\d+)$/)
  if (!m) throw new Error(`engines.node is ${manifest.engines.node}; expected ">=MAJOR.MINOR"`)
  return `${m[1]}.${m[2]}.0`
})()
const name = queueNamer("pack")
/** The dashboard's browser script in the sources: every module the page may load. */
const browserDir = join(root, "src", "dashboard", "browser")
const browserFiles = readdirSync(browserDir).filter((f) => f.endsWith(".js"))
let work: string
let tarball: string
let app: string
let files: string[]
/** Node binaries to run the app on, by version. */
const nodes: Record<string, string> = { [process.version.slice(1)]: process.execPath }

/**
 * `npm` with `args` in `cwd`, its stdout; rejects (with its stderr) when it fails. libuv's
 * io_uring off (`UV_USE_IO_URING=0`): an `npm install` here once hung for good in
 * `epoll_wait` with its cache read and an io_uring open, like the kernel/libuv hangs others
 * report (nodejs/node#55587, npm/cli#4028), whose workaround this is (not proven here); and
 * a call still running after 150 s is killed, so a hang fails with npm's stderr, not the hook's timeout.
 */
const npm = (args: string[], cwd: string): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(
      "npm",
      args,
      {
        cwd,
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
        timeout: 150_000,
        env: { ...process.env, UV_USE_IO_URING: "0" },
      },
      (error, stdout, stderr) => (error ? reject(Object.assign(error, { stderr })) : resolve(stdout)),
    ),
  )

/** What a child process said and how it ended (`spawnSync`'s answer, without blocking the file's other tests). */
interface Ran {
  readonly status: number | null
  readonly stdout: string
  readonly stderr: string
}
const spawnAsync = (cmd: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  new Promise<Ran>((resolve, reject) => {
    const child = spawn(cmd, args, { ...options, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString()
    })
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString()
    })
    child.on("error", reject)
    child.on("close", (status) => resolve({ status, stdout, stderr }))
  })

/** `npm install` of `what` from the registry, failing with a message that says what was needed and why. */
const fromRegistry = async (what: string, args: string[], cwd = root): Promise<void> => {
  try {
    await npm(args, cwd)
  } catch (e) {
    const said = String((e as { stderr?: unknown }).stderr ?? e).trim()
    throw new Error(
      `the pack test installs ${what} from the npm registry and could not (is the registry reachable? npm config get registry): ${said}`,
    )
  }
}

/** A Node binary of `version` from the npm registry's `node` package, kept in .tmp/ for the next run. */
const fetchNode = async (version: string): Promise<string> => {
  const dir = join(root, ".tmp", `node-${version}`)
  const bin = join(dir, "node_modules", "node", "bin", "node")
  if (!existsSync(bin))
    await fromRegistry(`Node ${version} (the engines floor)`, [
      "install",
      "--prefix",
      dir,
      "--no-audit",
      "--no-fund",
      `node@${version}`,
    ])
  return bin
}

/** The newest TypeScript and @types/node from the npm registry, in .tmp/ (a user's fresh install gets these). */
const fetchNewestTypes = async (): Promise<string> => {
  const dir = join(root, ".tmp", "types-newest")
  await fromRegistry("the newest TypeScript and @types/node", [
    "install",
    "--prefix",
    dir,
    "--no-audit",
    "--no-fund",
    "--loglevel=error",
    "typescript@latest",
    "@types/node@latest",
  ])
  return join(dir, "node_modules")
}
/** The toolchains the packed types are checked with: the repo's pins, and the newest. */
const toolchains: Record<string, string> = { pinned: join(root, "node_modules") }

/** `npm pack` builds first (`prepack`): the pack here runs that build itself, without its type check. */
const BUILD_WITHOUT_CHECK = (() => {
  const tsc = "tsc -p tsconfig.build.json"
  const script = String(manifest.scripts.build)
  if (manifest.scripts.prepack !== "npm run build" || !script.includes(tsc))
    throw new Error(
      `package.json: prepack is ${manifest.scripts.prepack}, build is ${script}; the pack test expects prepack "npm run build" and a build running "${tsc}"`,
    )
  return script.replace(tsc, `${tsc} --noCheck`)
})()
/**
 * The package's build (`npm run build`, what `npm pack` runs first), with `--noCheck`: the same
 * JavaScript and declarations byte for byte in a third of the CPU; `npm run typecheck` checks.
 */
const build = async (): Promise<void> => {
  const env = { ...process.env, PATH: `${join(root, "node_modules", ".bin")}:${process.env.PATH}` }
  const r = await spawnAsync("sh", ["-c", BUILD_WITHOUT_CHECK], { cwd: root, env })
  if (r.status !== 0) throw new Error(`the build (${BUILD_WITHOUT_CHECK}) failed: ${r.stdout}${r.stderr}`)
}

/** The relative links of Markdown file `doc`, each with the package path it points at. */
const brokenLinks = (doc: string, text: string) => {
  const dir = doc.includes("/") ? doc.slice(0, doc.lastIndexOf("/") + 1) : ""
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:|^#/.test(target))
    .map((target) => ({
      doc,
      target,
      path: new URL(target.split("#")[0]!, `file:///${dir}`).pathname.slice(1).replace(/\/$/, ""),
    }))
}

// the pack (a build), the app's install, the floor's Node and the newest types are npm runs
// that wait on the registry and the disk: the three that do not need the tarball run beside it
beforeAll(async () => {
  mkdirSync(join(root, ".tmp"), { recursive: true })
  work = mkdtempSync(join(root, ".tmp", "pack-"))
  const packAndInstall = async () => {
    await build()
    const out = await npm(["pack", "--silent", "--ignore-scripts", "--pack-destination", work], root)
    tarball = join(work, out.trim().split("\n").pop()!)
    files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" })
      .trim()
      .split("\n")
      .map((f) => f.replace(/^package\//, ""))
    app = join(work, "app")
    mkdirSync(app)
    const dependencies = { leaseq: `file:${tarball}`, effect: APP_EFFECT }
    writeFileSync(
      join(app, "package.json"),
      JSON.stringify({ name: "app", private: true, type: "module", dependencies }),
    )
    await fromRegistry(
      `the app's dependencies (effect ${APP_EFFECT}, leaseq's own)`,
      ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"],
      app,
    )
  }
  const [, floor, newest] = await Promise.all([packAndInstall(), fetchNode(NODE_FLOOR), fetchNewestTypes()])
  nodes[NODE_FLOOR] = floor
  toolchains.newest = newest
}, 300_000)
afterAll(() => {
  rmSync(work, { recursive: true, force: true })
})

describe("the tarball", () => {
  it("holds the license, built JS with its types, the Lua scripts, the bin and the docs — no sources, tests, maps or demo", () => {
    for (const f of [
      "LICENSE",
      "README.md",
      "CHANGELOG.md",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/effect.js",
      "dist/effect.d.ts",
      "dist/testing.d.ts",
      "dist/metrics.d.ts",
      "dist/dashboard.d.ts",
      "dist/cli/main.js",
      "lua/reserve.lua",
      "docs/getting-started.md",
      "docs/from-bullmq.md",
    ]) {
      expect(files).toContain(f)
    }
    // the dashboard's browser script, which the build copies beside dist/dashboard/Page.js
    for (const f of browserFiles) expect(files).toContain(`dist/dashboard/browser/${f}`)
    const unwanted = files.filter((f) => /^(src|test|bench|tools)\/|^dist\/demo\/|\.map$/.test(f))
    expect(unwanted).toEqual([])
    expect(readFileSync(join(root, "LICENSE"), "utf8")).toMatch(/^MIT License/)
    expect(manifest.license).toBe("MIT")
  })

  // the figures' sources (bench/, test/) stay in the repository: docs cite them, the package does not need them
  it("every relative link of the README and the shipped docs points at a file in the tarball (or at the bench's and tests' evidence)", () => {
    const shipped = (path: string) => files.some((f) => f === path || f.startsWith(`${path}/`))
    const broken = files
      .filter((f) => f.endsWith(".md"))
      .flatMap((doc) =>
        brokenLinks(doc, execFileSync("tar", ["-xzOf", tarball, `package/${doc}`], { encoding: "utf8" })),
      )
      // the screenshots (docs/*.png, 460 kB) stay in the repository too: a doc's text reads without them
      .filter(
        ({ doc, path }) =>
          !shipped(path) && !/^docs\/[^/]+\.png$/.test(path) && (doc === "README.md" || !/^(bench|test)\//.test(path)),
      )
    expect(broken).toEqual([])
  })

  it("is as large as the docs say, within 15%", () => {
    const said = readFileSync(join(root, "docs/getting-started.md"), "utf8").match(/about (\d+) kB packed/)
    expect(said, 'docs/getting-started.md states "about N kB packed"').not.toBeNull()
    const kB = statSync(tarball).size / 1000
    expect(kB).toBeGreaterThan(Number(said![1]) * 0.85)
    expect(kB).toBeLessThan(Number(said![1]) * 1.15)
  })
})

// each case runs its own processes (its own files, each Node line in a folder of its own), so
// they run side by side: most of their time is Node starting and an app waiting on Redis
describe.concurrent("installed into an app with its own Effect", () => {
  it("effect is a peer with a range, not a dependency: the app has one copy, its own", async ({ expect }) => {
    expect(manifest.dependencies.effect).toBeUndefined()
    expect(manifest.peerDependencies.effect).toMatch(/^\^4\./)
    const tree = JSON.parse(await npm(["ls", "effect", "--all", "--json"], app))
    expect(tree.dependencies.effect.version).toBe(APP_EFFECT)
    expect(tree.dependencies.leaseq.dependencies.effect).toMatchObject({ version: APP_EFFECT })
    const resolveFrom = (dir: string) =>
      execFileSync(
        process.execPath,
        ["-p", `require("module").createRequire(${JSON.stringify(`${dir}/`)}).resolve("effect")`],
        {
          encoding: "utf8",
        },
      ).trim()
    expect(resolveFrom(join(app, "node_modules", "leaseq"))).toBe(resolveFrom(app))
  })

  it.for(["pinned", "newest"])(
    "a strict TypeScript app type-checks against the packed types (skipLibCheck off), and its mistakes are errors: %s TypeScript and @types/node",
    async (toolchain, { expect }) => {
      const modules = toolchains[toolchain]!
      const tsconfig = {
        compilerOptions: {
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2023",
          lib: ["es2023"],
          noEmit: true,
          types: ["node"],
          typeRoots: [join(modules, "@types")],
        },
        files: [`check-${toolchain}.ts`],
      }
      writeFileSync(join(app, `tsconfig-${toolchain}.json`), JSON.stringify(tsconfig))
      writeFileSync(
        join(app, `check-${toolchain}.ts`),
        `import { Queue, Worker, type DeadReason } from "leaseq"
import { LeaseQueue } from "leaseq/effect"
const queue = new Queue<{ to: string }, { sent: boolean }>("types")
const worker = new Worker<{ to: string }, { sent: boolean }>("types", async () => ({ sent: true }))
worker.on("dead", (_job, reason: DeadReason) => console.log(reason))
worker.once("completed", (_job, result) => console.log(result.sent))
// @ts-expect-error a listener of the wrong result type
worker.off("completed", (_job, result: string) => console.log(result))
export const sent = async (id: string): Promise<boolean | undefined> => (await queue.waitFor(id)).result?.sent
// @ts-expect-error a BullMQ option name
void queue.add({ to: "a" }, { attempts: 3 })
// @ts-expect-error dedupeUntil without a dedupeKey
void queue.add({ to: "a" }, { dedupeUntil: "finished" })
// @ts-expect-error a misspelt event name
worker.on("completd", () => {})
export const made = LeaseQueue.make<{ to: string }, { sent: boolean }>({ name: "types" })
`,
      )
      const version = (pkg: string) => JSON.parse(readFileSync(join(modules, pkg, "package.json"), "utf8")).version
      const versions = `typescript ${version("typescript")}, @types/node ${version("@types/node")}`
      const r = await spawnAsync(join(modules, ".bin/tsc"), ["-p", join(app, `tsconfig-${toolchain}.json`)])
      expect(r.status, `${versions}: ${r.stdout}${r.stderr}`).toBe(0)
    },
  )

  for (const version of ["floor", "current"]) {
    describe(`on Node ${version}`, () => {
      const node = () => (version === "floor" ? nodes[NODE_FLOOR]! : process.execPath)
      /** This Node line's folder in the app (its files apart from the other line's; `leaseq` resolves from the app). */
      const dir = () => {
        const d = join(app, version)
        mkdirSync(d, { recursive: true })
        return d
      }
      const run = (file: string, text: string) => {
        writeFileSync(join(dir(), file), text)
        return spawnAsync(node(), [file], { cwd: dir(), env: { ...process.env, REDIS_URL: redisUrl() } })
      }

      it("the Promise face runs a job, and the app never imports Effect", async ({ expect }) => {
        const q = name()
        const r = await run(
          "promise.mjs",
          `import { Queue, Worker, InvalidOptions } from "leaseq"
import { metricsHandler } from "leaseq/metrics"
const queue = new Queue(${JSON.stringify(q)})
await queue.add({ hello: "world" })
const refused = await queue.add({}, { attempts: 3 }).catch((e) => e)
console.log("refused", refused instanceof InvalidOptions, refused.message)
await new Promise((resolve) => {
  const worker = new Worker(${JSON.stringify(q)}, async (job) => job.payload.hello)
  worker.on("completed", (_job, result) => { console.log("result", result); worker.close().then(resolve) })
})
await queue.close()
const metrics = metricsHandler({ queues: [${JSON.stringify(q)}] })
console.log("metrics", (await metrics.render()).includes("leaseq_jobs_completed_total"))
await metrics.close()
console.log("node", process.version)
`,
        )
        expect(readFileSync(join(dir(), "promise.mjs"), "utf8")).not.toMatch(/from "effect"/)
        expect(r.status, r.stderr).toBe(0)
        expect(r.stdout).toContain("result world")
        expect(r.stdout).toContain(
          "refused true invalid option options.attempts = 3: unknown option; did you mean maxAttempts?",
        )
        expect(r.stdout).toContain("metrics true")
        expect(r.stdout).toContain(`node v${version === "floor" ? NODE_FLOOR : process.version.slice(1)}`)
      })

      it("the Effect face, with the app's Effect, catches typed errors by tag and goes on", async ({ expect }) => {
        const q = name()
        const r = await run(
          "effect.mjs",
          `import { Effect } from "effect"
import { LeaseQueue } from "leaseq/effect"
const program = Effect.scoped(Effect.gen(function* () {
  const queue = yield* LeaseQueue.make({ name: ${JSON.stringify(q)} })
  const first = yield* queue.add(undefined).pipe(Effect.as("added"), Effect.catchTag("InvalidPayload", (e) => Effect.succeed("caught " + e._tag)))
  const id = yield* queue.add({ ok: true })
  const third = yield* queue.add({}, { delay: 5 }).pipe(Effect.as("added"), Effect.catchTag("InvalidOptions", (e) => Effect.succeed("caught " + e.field)))
  const stats = yield* queue.stats
  return [first, typeof id, third, stats.waiting].join(" ")
}))
console.log(await Effect.runPromise(program))
`,
        )
        expect(r.status, r.stderr).toBe(0)
        expect(r.stdout.trim()).toBe("caught InvalidPayload string caught options.delay 1")
      })

      it("the packed dashboard serves its page's script: app.js and every module it imports, the sources' bytes", async ({
        expect,
      }) => {
        const r = await run(
          "dashboard.mjs",
          `import { createServer } from "node:http"
import { dashboardHandler } from "leaseq/dashboard"
const handler = dashboardHandler()
const server = createServer(handler).listen(0, "127.0.0.1")
await new Promise((resolve) => server.once("listening", resolve))
const base = "http://127.0.0.1:" + server.address().port + "/"
const page = await (await fetch(base)).text()
const served = {}
const todo = [/<script type="module" src="([^"]+)">/.exec(page)?.[1]]
while (todo.length > 0) {
  const file = todo.pop()
  if (file === undefined || file in served) continue
  const res = await fetch(new URL(file, base))
  const body = await res.text()
  served[file] = { status: res.status, type: res.headers.get("content-type"), body }
  for (const m of body.matchAll(/^import [^"]+ from "\\.\\/([^"]+)"/gm)) todo.push(m[1])
}
console.log(JSON.stringify(served))
server.close()
await handler.close()
`,
        )
        expect(r.status, r.stderr).toBe(0)
        const served = JSON.parse(r.stdout) as Record<string, { status: number; type: string; body: string }>
        // app.js imports every other module, directly or not: the page loads all of them
        expect(Object.keys(served).sort()).toEqual([...browserFiles].sort())
        for (const f of browserFiles) {
          expect(served[f]).toEqual({
            status: 200,
            type: "text/javascript; charset=utf-8",
            body: readFileSync(join(browserDir, f), "utf8"),
          })
        }
      })

      // docs/getting-started.md: "A `.ts` sample runs with `node first.ts` on Node ≥ 22.18
      // (22.12–22.17: `--experimental-strip-types`)" (the floor is 22.12, the repo's Node 24)
      it("a .ts sample runs as getting-started says: `node first.ts`, with --experimental-strip-types below 22.18", async ({
        expect,
      }) => {
        const q = name()
        writeFileSync(
          join(dir(), "first.ts"),
          `import { Queue } from "leaseq"
const queue: Queue<{ to: string }> = new Queue<{ to: string }>(${JSON.stringify(q)})
const id: string = await queue.add({ to: "ada@example.com" })
console.log("added", typeof id)
await queue.obliterate()
await queue.close()
`,
        )
        const [major, minor] = (version === "floor" ? NODE_FLOOR : process.version.slice(1)).split(".").map(Number)
        const flags = major! > 22 || (major === 22 && minor! >= 18) ? [] : ["--experimental-strip-types"]
        const r = await spawnAsync(node(), [...flags, "first.ts"], {
          cwd: dir(),
          env: { ...process.env, REDIS_URL: redisUrl() },
        })
        expect(r.status, r.stderr).toBe(0)
        expect(r.stdout.trim()).toBe("added string")
        // and below 22.18 the flag is needed, as the page says
        if (flags.length > 0) expect((await spawnAsync(node(), ["first.ts"], { cwd: dir() })).status).not.toBe(0)
      })

      it("the bin runs, and CommonJS can require the package", async ({ expect }) => {
        const r = await spawnAsync(node(), [join(app, "node_modules/leaseq/dist/cli/main.js"), "--help"])
        expect(r.status, r.stderr).toBe(0)
        expect(r.stdout).toMatch(/sweep/)
        const cjs = await run(
          "require.cjs",
          `console.log(typeof require("leaseq").Queue, typeof require("leaseq/effect").LeaseQueue)`,
        )
        expect(cjs.status, cjs.stderr).toBe(0)
        expect(cjs.stdout.trim()).toBe("function object")
      })
    })
  }
})
