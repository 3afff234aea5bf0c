/**
 * `@opentelemetry/api`, an optional peer dependency: imported dynamically, once. When
 * it is not installed, leaseq runs as without it; when it is installed but no tracer
 * provider is registered, no span is made (the global provider is checked per span,
 * so one registered later is seen).
 */
import type * as OtelApi from "@opentelemetry/api"

/** The API module, once loaded; null when it is not installed; undefined until the import settled. */
let api: typeof OtelApi | null | undefined
let loading: Promise<typeof OtelApi | null> | undefined
/** The provider a ProxyTracerProvider hands out when none is registered (the no-op one). */
let noopProvider: OtelApi.TracerProvider | undefined

/** The module name in a variable, so bundlers and the type checker leave the import to run time. */
const MODULE = "@opentelemetry/api"

/** Import `@opentelemetry/api` (once); resolves to null when it is not installed. */
export const loadOtel = (): Promise<typeof OtelApi | null> => {
  loading ??= (import(MODULE) as Promise<typeof OtelApi>).then(
    (m) => {
      api = m
      noopProvider = new m.ProxyTracerProvider().getDelegate()
      return m
    },
    () => {
      api = null
      return null
    },
  )
  return loading
}

/** The loaded API, or undefined (not installed, or not loaded yet: see {@link loadOtel}). */
export const otel = (): typeof OtelApi | undefined => api ?? undefined

/** True once the import has settled (either way). */
export const otelSettled = (): boolean => api !== undefined

/**
 * The tracer leaseq's spans go to, or undefined when none would record: the API is
 * absent or no tracer provider is registered. Cheap: two property reads and a call.
 */
export const activeTracer = (): OtelApi.Tracer | undefined => {
  if (!api) return undefined
  const provider = api.trace.getTracerProvider() as OtelApi.TracerProvider & {
    getDelegate?: () => OtelApi.TracerProvider
  }
  const delegate = provider.getDelegate ? provider.getDelegate() : provider
  if (delegate === noopProvider) return undefined
  return delegate.getTracer("leaseq")
}
