/**
 * What `JSON.stringify` would silently drop or change in a value, found by walking it the
 * way JSON does (`toJSON` first, then own enumerable keys), so a payload or result is
 * refused with the path of the first such value instead of being stored changed. Only
 * values that are not plain JSON come here (Validate.ts checks the plain ones first).
 */

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** The path of `key` under `path`: `a.b`, `a[0]`, `a["odd key"]`. */
const under = (path: string, key: string | number): string =>
  typeof key === "number"
    ? `${path}[${key}]`
    : IDENTIFIER.test(key)
      ? `${path}.${key}`
      : `${path}[${JSON.stringify(key)}]`

/** What JSON does to an object of a class it does not know, and what to pass instead. */
const classChange = (o: object): string => {
  if (o instanceof Map) return "a Map; JSON would store it as {}: pass Object.fromEntries(map) or an array of entries"
  if (o instanceof Set) return "a Set; JSON would store it as {}: pass an array ([...set])"
  if (o instanceof Error) return "an Error; JSON would store it as {}: pass { name, message } instead"
  if (ArrayBuffer.isView(o)) {
    return `a ${o.constructor.name}; JSON would store it as an object of indexes: pass an array (Array.from) or a string`
  }
  if (o instanceof ArrayBuffer) return "an ArrayBuffer; JSON would store it as {}: pass an array or a string"
  if (o instanceof String || o instanceof Number || o instanceof Boolean) {
    return `a boxed ${typeof o.valueOf()}; JSON would store its primitive value: pass the primitive`
  }
  const name = (Object.getPrototypeOf(o) as { constructor?: { name?: unknown } } | null)?.constructor?.name
  const what = typeof name === "string" && name !== "" ? `a ${name} instance` : "an object with a prototype"
  return `${what}; JSON would keep only its own fields and drop its class: pass a plain object (or give the class a toJSON method)`
}

/** What JSON would do to a value that is not an object: undefined when it keeps it. */
const scalarChange = (value: unknown, inArray: boolean): string | undefined => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined
    case "number":
      return Number.isFinite(value) ? undefined : `${value}; JSON would turn it into null`
    case "undefined":
      return inArray
        ? "undefined; JSON would turn it into null: use null"
        : "undefined; JSON would drop the key: leave the key out or use null"
    case "function":
      return "a function; functions cannot be stored"
    case "symbol":
      return "a symbol; symbols cannot be stored"
    case "bigint":
      return "a BigInt; convert it to a string or number"
    default:
      return undefined
  }
}

/** A change found: where (the path under the value, "" for the value itself) and what. */
interface Found {
  readonly path: string
  readonly what: string
}

/**
 * The first thing in `value` that JSON would drop or change, as the reason to refuse it,
 * naming its path under `field` (`contains a Map at payload.meta.tags`), or undefined when
 * JSON keeps it all. A throwing getter or `toJSON` throws.
 */
export const jsonChange = (value: unknown, field: string): string | undefined => {
  const found = changeOf(value, "", "", [], false)
  if (found === undefined) return undefined
  const [what, fix] = splitFix(found.what)
  return found.path === "" ? `is ${what}${fix}` : `contains ${what} at ${field}${found.path}${fix}`
}

/** "a Map; JSON would …" as ["a Map", "; JSON would …"]. */
const splitFix = (what: string): [string, string] => {
  const i = what.indexOf(";")
  return i < 0 ? [what, ""] : [what.slice(0, i), what.slice(i)]
}

/** The first change in `value` (at `path`, reached by `key`); `stack` holds the objects above it, to find a cycle. */
const changeOf = (value: unknown, key: string, path: string, stack: object[], inArray: boolean): Found | undefined => {
  let v = value
  if (v !== null && typeof v === "object" && typeof (v as { toJSON?: unknown }).toJSON === "function") {
    v = (v as { toJSON: (key: string) => unknown }).toJSON(key)
  }
  if (v === null) return undefined
  if (typeof v !== "object") {
    const what = scalarChange(v, inArray)
    return what === undefined ? undefined : { path, what }
  }
  if (stack.includes(v)) return { path, what: "a circular reference; JSON cannot represent it" }
  stack.push(v)
  const found = Array.isArray(v) ? arrayChange(v, path, stack) : objectChange(v, path, stack)
  stack.pop()
  return found
}

const arrayChange = (a: ReadonlyArray<unknown>, path: string, stack: object[]): Found | undefined => {
  for (let i = 0; i < a.length; i++) {
    const found = changeOf(a[i], String(i), under(path, i), stack, true)
    if (found !== undefined) return found
  }
  return undefined
}

const objectChange = (o: object, path: string, stack: object[]): Found | undefined => {
  const proto = Object.getPrototypeOf(o)
  if (proto !== Object.prototype && proto !== null) return { path, what: classChange(o) }
  const record = o as Record<string, unknown>
  for (const k of Object.keys(record)) {
    const found = changeOf(record[k], k, under(path, k), stack, false)
    if (found !== undefined) return found
  }
  return undefined
}
