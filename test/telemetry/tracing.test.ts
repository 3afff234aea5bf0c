/**
 * Traces and metrics through `@opentelemetry/api`, Promise face, with the real SDK: the
 * send, process and settle spans (names, kinds, parents, links, attributes), the error
 * path, lease-end events, the metrics, and that an untraced job is stored byte for byte
 * as before.
 */
import { SpanKind, SpanStatusCode, trace } from "@opentelemetry/api"
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base"
import type { Redis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/engine/model/Keys.ts"
import { Queue, Worker } from "../../src/index.ts"
import { deferred, onCleanup } from "../support/cleanup.ts"
import { setLeaseToken } from "../support/lease.ts"
import { installOtel, total } from "../support/otel.ts"
import { proxyToSuiteRedis } from "../support/proxy.ts"
import { queueNamer, rawClient, redisUrl } from "../support/redis.ts"
import { until } from "../support/until.ts"

const name = queueNamer("tracing")
let raw: Redis
let otel: ReturnType<typeof installOtel>
beforeAll(() => {
  raw = rawClient()
  otel = installOtel()
})
afterAll(async () => {
  raw.disconnect()
  await otel.uninstall()
})

const queueOf = <T>(q: string) => {
  const queue = new Queue<T>(q, { connection: redisUrl() })
  onCleanup(() => queue.close())
  return queue
}
const workerOf = <T>(q: string, handler: ConstructorParameters<typeof Worker<T>>[1], leaseMs = 30_000) => {
  const worker = new Worker<T>(q, handler, { connection: redisUrl(), leaseMs })
  onCleanup(() => worker.close())
  return worker
}
/** The finished spans named `name` (spans of other tests' queues are left out by the name). */
const spansNamed = (spanName: string): ReadableSpan[] => otel.spans().filter((s) => s.name === spanName)
const waitForSpans = (spanName: string, n: number) =>
  until(`${n} "${spanName}" spans`, () => (spansNamed(spanName).length >= n ? spansNamed(spanName) : undefined))

describe("tracing, Promise face", () => {
  it("add → send (PRODUCER) → process (CONSUMER, child of send and linked to it) → settle (CLIENT); the handler's own spans are children of process", async () => {
    const q = name()
    const queue = queueOf<{ n: number }>(q)
    const app = trace.getTracer("app")
    const id = await app.startActiveSpan("request", async (request) => {
      const added = await queue.add({ n: 1 })
      request.end()
      return added
    })
    const worker = workerOf<{ n: number }>(q, async (job) => {
      app.startSpan("handler work").end()
      return job.payload.n
    })
    const [settle] = await waitForSpans(`settle ${q}`, 1)
    const [request] = spansNamed("request")
    const [send] = spansNamed(`send ${q}`)
    const [process] = spansNamed(`process ${q}`)
    const [work] = spansNamed("handler work")

    expect(send!.kind).toBe(SpanKind.PRODUCER)
    expect(send!.parentSpanContext?.spanId).toBe(request!.spanContext().spanId)
    expect(send!.attributes).toMatchObject({
      "messaging.system": "leaseq",
      "messaging.destination.name": q,
      "messaging.operation.type": "send",
      "messaging.operation.name": "add",
      "messaging.batch.message_count": 1,
      "messaging.message.id": id,
    })

    expect(process!.kind).toBe(SpanKind.CONSUMER)
    expect(process!.spanContext().traceId).toBe(send!.spanContext().traceId)
    expect(process!.parentSpanContext?.spanId).toBe(send!.spanContext().spanId)
    expect(process!.links.map((l) => l.context.spanId)).toEqual([send!.spanContext().spanId])
    expect(process!.attributes).toMatchObject({
      "messaging.system": "leaseq",
      "messaging.destination.name": q,
      "messaging.operation.type": "process",
      "messaging.message.id": id,
      "messaging.client.id": expect.any(String),
      "messaging.leaseq.attempt": 1,
      "messaging.leaseq.lease_token": expect.any(Number),
      "messaging.leaseq.lease_ms": 30_000,
    })
    expect(process!.status.code).toBe(SpanStatusCode.UNSET)
    expect(work!.parentSpanContext?.spanId).toBe(process!.spanContext().spanId)

    expect(settle!.kind).toBe(SpanKind.CLIENT)
    expect(settle!.parentSpanContext?.spanId).toBe(process!.spanContext().spanId)
    expect(settle!.attributes).toMatchObject({
      "messaging.operation.type": "settle",
      "messaging.operation.name": "complete",
      "messaging.message.id": id,
      "messaging.client.id": process!.attributes["messaging.client.id"],
    })
    await worker.close()
  })

  it("addBulk: one send span with the batch count; every job's process span links to it", async () => {
    const q = name()
    const queue = queueOf<{ n: number }>(q)
    const ids = await queue.addBulk([1, 2, 3].map((n) => ({ payload: { n } })))
    workerOf<{ n: number }>(q, async (job) => job.payload.n)
    const processes = await waitForSpans(`process ${q}`, 3)
    const [send] = spansNamed(`send ${q}`)
    expect(send!.attributes["messaging.batch.message_count"]).toBe(3)
    expect(send!.attributes["messaging.operation.name"]).toBe("addBulk")
    expect(processes.map((p) => p.attributes["messaging.message.id"]).sort()).toEqual([...ids].sort())
    for (const p of processes) {
      expect(p.links.map((l) => l.context.spanId)).toEqual([send!.spanContext().spanId])
      expect(p.parentSpanContext?.spanId).toBe(send!.spanContext().spanId)
    }
  })

  it("a partitioned queue: spans are named after the queue, with the partition as messaging.leaseq.partition", async () => {
    const q = name()
    const queue = new Queue<number>(q, { connection: redisUrl(), partitions: 2 })
    onCleanup(() => queue.close())
    await queue.add(1)
    await queue.add(2)
    const worker = new Worker<number>(q, async (job) => job.payload, { connection: redisUrl(), partitions: 2 })
    onCleanup(() => worker.close())
    const processes = await waitForSpans(`process ${q}`, 2)
    const sends = spansNamed(`send ${q}`)
    expect(sends.map((s) => s.attributes["messaging.leaseq.partition"]).sort()).toEqual([0, 1])
    expect(processes.map((s) => s.attributes["messaging.leaseq.partition"]).sort()).toEqual([0, 1])
    for (const s of [...sends, ...processes]) expect(s.attributes["messaging.destination.name"]).toBe(q)
  })

  it("a failed run records the exception and sets the error status; its settle span is a fail", async () => {
    const q = name()
    const queue = queueOf<string>(q)
    await queue.add("x", { maxAttempts: 1 })
    workerOf<string>(q, async () => {
      throw new TypeError("downstream said no")
    })
    const [settle] = await waitForSpans(`settle ${q}`, 1)
    const [process] = spansNamed(`process ${q}`)
    expect(process!.status).toEqual({ code: SpanStatusCode.ERROR, message: "downstream said no" })
    expect(process!.attributes["error.type"]).toBe("TypeError")
    const exception = process!.events.find((e) => e.name === "exception")
    expect(exception?.attributes).toMatchObject({
      "exception.type": "TypeError",
      "exception.message": "downstream said no",
    })
    expect(settle!.attributes["messaging.operation.name"]).toBe("fail")
  })

  it("a lost lease is an event on the process span (reason lease-lost), counted in leaseq.leases.lost", async () => {
    const q = name()
    const queue = queueOf<string>(q)
    const id = await queue.add("x")
    const worker = workerOf<string>(
      q,
      async (job) => {
        // another holder's token: the next heartbeat is told the lease is gone
        await setLeaseToken(raw, queueKeys(q), job.id, String(job.token + 1))
        await new Promise((r) => job.signal.addEventListener("abort", r))
      },
      1500,
    )
    const [process] = await waitForSpans(`process ${q}`, 1)
    const event = process!.events.find((e) => e.name === "leaseq.lease_ended")
    expect(event?.attributes).toEqual({ "leaseq.reason": "lease-lost" })
    expect(process!.attributes["error.type"]).toBe("lease-lost")
    expect(process!.attributes["messaging.message.id"]).toBe(id)
    expect(total(await otel.points("leaseq.leases.lost", { "messaging.destination.name": q }))).toBe(1)
    await worker.close()
    expect(spansNamed(`settle ${q}`)).toHaveLength(0)
  })

  it("a self-fence (no heartbeat got through) is an event on the process span, counted in leaseq.leases.self_fenced", async () => {
    const q = name()
    const queue = queueOf<string>(q)
    await queue.add("x")
    const proxy = await proxyToSuiteRedis()
    const started = deferred()
    const worker = new Worker<string>(
      q,
      async (job) => {
        started.resolve()
        await new Promise((r) => job.signal.addEventListener("abort", r))
      },
      { connection: proxy.url, leaseMs: 1500 },
    )
    onCleanup(() => worker.close())
    const fenced = deferred<string>()
    worker.on("lease-lost", (_job, reason) => fenced.resolve(reason))
    worker.on("error", () => {}) // the cut connection is reported; expected here
    await started.promise
    proxy.cut()
    expect(await fenced.promise).toBe("self-fenced")
    const [process] = await waitForSpans(`process ${q}`, 1)
    expect(process!.events.find((e) => e.name === "leaseq.lease_ended")?.attributes).toEqual({
      "leaseq.reason": "self-fenced",
    })
    expect(process!.attributes["error.type"]).toBe("self-fenced")
    expect(total(await otel.points("leaseq.leases.self_fenced", { "messaging.destination.name": q }))).toBe(1)
    expect(total(await otel.points("leaseq.leases.lost", { "messaging.destination.name": q }))).toBe(0)
    proxy.heal()
    await worker.close()
  })

  it("a late ack refused (its token no longer current) is an event on the settle span, counted in leaseq.acks.refused", async () => {
    const q = name()
    const queue = queueOf<string>(q)
    await queue.add("x")
    const lost = deferred<string>()
    const worker = workerOf<string>(q, async (job) => {
      // the lease moves on while the handler finishes: its complete must be refused
      await setLeaseToken(raw, queueKeys(q), job.id, String(job.token + 1))
    })
    worker.on("lease-lost", (_job, reason) => lost.resolve(reason))
    expect(await lost.promise).toBe("lease-lost")
    const [settle] = await waitForSpans(`settle ${q}`, 1)
    expect(settle!.events.find((e) => e.name === "leaseq.lease_ended")?.attributes).toEqual({
      "leaseq.reason": "ack-refused",
    })
    expect(total(await otel.points("leaseq.acks.refused", { "messaging.destination.name": q }))).toBe(1)
    expect(total(await otel.points("leaseq.leases.lost", { "messaging.destination.name": q }))).toBe(0)
  })

  it("metrics: sent, consumed, operation and process durations, wait before start, heartbeat round trips", async () => {
    const q = name()
    const queue = queueOf<number>(q)
    await queue.addBulk([1, 2].map((payload) => ({ payload })))
    await queue.add(3)
    const where = { "messaging.destination.name": q }
    let heartbeats = 0
    const worker = workerOf<number>(
      q,
      async (job) => {
        // the first job holds its lease until a heartbeat was measured
        if (job.payload === 1) {
          await until("a heartbeat", async () => total(await otel.points("leaseq.heartbeat.duration", where)) > 0)
          heartbeats = total(await otel.points("leaseq.heartbeat.duration", where))
        }
        return job.payload
      },
      1500,
    )
    await waitForSpans(`settle ${q}`, 3)
    await worker.close()
    expect(total(await otel.points("messaging.client.sent.messages", where))).toBe(3)
    expect(
      total(await otel.points("messaging.client.sent.messages", { ...where, "messaging.operation.name": "addBulk" })),
    ).toBe(2)
    expect(total(await otel.points("messaging.client.consumed.messages", where))).toBe(3)
    expect(total(await otel.points("messaging.process.duration", where))).toBe(3)
    expect(
      total(await otel.points("messaging.client.operation.duration", { ...where, "messaging.operation.name": "add" })),
    ).toBe(1)
    expect(
      total(
        await otel.points("messaging.client.operation.duration", { ...where, "messaging.operation.name": "complete" }),
      ),
    ).toBe(3)
    expect(total(await otel.points("leaseq.job.wait.duration", where))).toBe(3)
    expect(heartbeats).toBeGreaterThan(0)
    const [point] = await otel.points("messaging.client.sent.messages", where)
    expect(point!.attributes).toMatchObject({ "messaging.system": "leaseq" })
  })

  it("with no tracer provider no span is made and the job is stored byte for byte as an untraced one", async () => {
    const q = name()
    const queue = queueOf<{ n: number }>(q)
    const before = otel.spans().length
    const id = await otel.withoutTracing(() => queue.add({ n: 7 }))
    // the wait list holds ids; the payload is stored by id, exactly as given
    expect(await raw.lrange(queueKeys(q).wait, 0, -1)).toEqual([id])
    expect(await raw.hget(queueKeys(q).data, id)).toBe('{"n":7}')
    expect(otel.spans().length).toBe(before)
    // traced, the entry carries the producer's context in front of the payload
    const traced = await queue.add({ n: 8 })
    const entry = await raw.hget(queueKeys(q).data, traced)
    const [send] = spansNamed(`send ${q}`)
    expect(entry).toBe(`~tp:00-${send!.spanContext().traceId}-${send!.spanContext().spanId}-01;{"n":8}`)
    // and the worker hands both payloads to the handler as they were added
    const seen: Array<{ n: number }> = []
    const both = deferred()
    workerOf<{ n: number }>(q, async (job) => {
      seen.push(job.payload)
      if (seen.length === 2) both.resolve()
    })
    await both.promise
    expect(seen.sort((a, b) => a.n - b.n)).toEqual([{ n: 7 }, { n: 8 }])
  })
})
