/**
 * The scanner behind tools/check-size.ts: finds the functions in a TypeScript file and how many
 * lines each spans, without a compiler API (there is none in TypeScript 7).
 *
 * Two passes. `mask` (tools/size-mask.ts) blanks every comment, the contents of every string,
 * template literal text and regular expression literal, keeping line numbers and the code
 * inside `${…}` (it may hold functions). `findFunctions` then matches brackets
 * on the masked text and reports each block that is a function body:
 * - `function` declarations and expressions, generators included (`Effect.gen(function* () {`);
 * - arrow functions whose body is a block (`(a) => {`, `a => {`, `async (a): T => {`);
 * - methods in classes and object literals (`name(a) {`, `get x() {`, `*gen() {`, `[k]() {`).
 * A function's length counts from the line of its parameter list (of the `function` keyword
 * for `function`s) to the line of its closing brace, both included.
 *
 * Limits (heuristics a parser would not need):
 * - Regular expressions are told from division by what comes before the `/` (see
 *   tools/size-mask.ts); a wrong guess costs at most one line.
 * - Return type annotations are skipped with a small type reader (brackets, `<…>`, `|`, `&`,
 *   `.`, keywords such as `keyof`); an exotic type can hide a function from the check.
 * - Methods are recognised by a name directly before `(…)` and a block after it; a call
 *   followed by a free-standing block on the next line would be read as a method.
 * - Function types with an object-literal result (`() => { a: T }`) are reported as short
 *   functions; harmless, since they are never 80 lines long.
 * - JSX, decorators with blocks and quoted method names (`"name"() {`) are not handled.
 */
import { isSpace, isWord, mask, REGEX_AFTER_WORD } from "./size-mask.ts"

/** One function found in a file: its name (or a description), first and last line (1-based). */
export interface FunctionSpan {
  readonly name: string
  readonly startLine: number
  readonly endLine: number
  readonly lines: number
}

/** Keywords that take `(…)` and a block but are not functions. */
const CONTROL = new Set(["if", "for", "while", "switch", "catch", "with", ...REGEX_AFTER_WORD])

/** Type keywords after which another type follows. */
const TYPE_PREFIX = new Set(["keyof", "typeof", "readonly", "infer", "is", "unique", "extends", "asserts", "new"])

/** For every `(`, `[`, `{` its closing partner and back (-1 when unbalanced). */
const matchBrackets = (code: string): Int32Array => {
  const match = new Int32Array(code.length).fill(-1)
  const stack: number[] = []
  for (let i = 0; i < code.length; i++) {
    const c = code[i]
    if (c === "(" || c === "[" || c === "{") stack.push(i)
    else if (c === ")" || c === "]" || c === "}") {
      const open = stack.pop()
      if (open === undefined) continue
      match[open] = i
      match[i] = open
    }
  }
  return match
}

const skipSpace = (code: string, i: number): number => {
  let j = i
  while (isSpace(code[j])) j++
  return j
}

/** After `=>` at `i`: the index of a block body, or -1 for an expression body. */
const arrowBody = (code: string, i: number): number => {
  const j = skipSpace(code, i + 2)
  return code[j] === "{" ? j : -1
}

type Body = { readonly kind: "block" | "arrow"; readonly brace: number }
type After = Body | undefined

/** The state of reading a return type annotation. */
interface TypeReader {
  readonly code: string
  readonly match: Int32Array
  p: number
  /** Depth of `<…>` type arguments. */
  depth: number
  /** Whether a type must come next (after `:`, `|`, `<`, `keyof`…), so a `{` starts a type literal. */
  expectType: boolean
}

/** One step of the reader: read on, give up, or the body found. */
type Step = "more" | "none" | Body

/** An `=>` in a type: the arrow of the function when the type is complete, else a function type. */
const typeArrow = (r: TypeReader): Step => {
  if (r.depth === 0 && !r.expectType) {
    const b = arrowBody(r.code, r.p)
    return b < 0 ? "none" : { kind: "arrow", brace: b }
  }
  r.p += 2
  r.expectType = true
  return "more"
}

/** A bracket in a type: `<` and `>` count depth, `(…)`, `[…]`, `{…}` are skipped whole. */
const typeBracket = (r: TypeReader, c: string): Step => {
  if (c === "<" || c === ">") {
    if (c === ">" && r.depth === 0) return "none"
    r.depth += c === "<" ? 1 : -1
    r.expectType = c === "<"
    r.p++
    return "more"
  }
  const close = r.match[r.p] as number
  if (close < 0) return "none"
  r.p = close + 1
  r.expectType = false
  return "more"
}

/** A word, a literal or an operator in a type. */
const typeToken = (r: TypeReader, c: string): Step => {
  if (c === '"' || c === "'" || c === "`") {
    const close = r.code.indexOf(c, r.p + 1)
    if (close < 0) return "none"
    r.p = close + 1
    r.expectType = false
  } else if (isWord(c)) {
    let k = r.p
    while (isWord(r.code[k])) k++
    r.expectType = TYPE_PREFIX.has(r.code.slice(r.p, k))
    r.p = k
  } else {
    r.expectType = "|&?:,.".includes(c)
    r.p++
  }
  return "more"
}

const typeStep = (r: TypeReader): Step => {
  const q = skipSpace(r.code, r.p)
  const c = r.code[q]
  if (c === undefined) return "none"
  const top = r.depth === 0
  // a complete type ending its line ends the annotation unless the next line continues it
  if (top && !r.expectType && r.code.slice(r.p, q).includes("\n") && !"{=|&.".includes(c)) return "none"
  r.p = q
  if (c === "=" && r.code[q + 1] === ">") return typeArrow(r)
  if (top && c === "{" && !r.expectType) return { kind: "block", brace: q }
  if (top && "=;,)]}".includes(c)) return "none"
  return "<>([{".includes(c) ? typeBracket(r, c) : typeToken(r, c)
}

/** Reads a return type annotation starting after its `:`; what follows it. */
const afterType = (code: string, match: Int32Array, start: number): After => {
  const r: TypeReader = { code, match, p: start, depth: 0, expectType: true }
  for (let steps = 0; steps < 4000 && r.p < code.length; steps++) {
    const s = typeStep(r)
    if (s === "none") return undefined
    if (s !== "more") return s
  }
  return undefined
}

/** What follows the parameter list closed at `close`: a block, an arrow with a block, or neither. */
const afterParams = (code: string, match: Int32Array, close: number): After => {
  const p = skipSpace(code, close + 1)
  if (code[p] === "{") return { kind: "block", brace: p }
  if (code[p] === "=" && code[p + 1] === ">") {
    const b = arrowBody(code, p)
    return b < 0 ? undefined : { kind: "arrow", brace: b }
  }
  if (code[p] === ":") return afterType(code, match, p + 1)
  return undefined
}

/** The word ending just before `end` (exclusive), skipping spaces; and where it starts. */
const wordBefore = (code: string, end: number): { word: string; start: number } => {
  let j = end - 1
  while (j >= 0 && isSpace(code[j])) j--
  let k = j
  while (k >= 0 && isWord(code[k])) k--
  return { word: code.slice(k + 1, j + 1), start: k + 1 }
}

const skipSpaceBack = (code: string, i: number): number => {
  let j = i
  while (j >= 0 && isSpace(code[j])) j--
  return j
}

/** From a `>` at `j`, the index before its matching `<`. */
const skipTypeParamsBack = (code: string, j: number): number => {
  let depth = 0
  let k = j
  for (; k >= 0; k--) {
    if (code[k] === ">" && code[k - 1] !== "=") depth++
    else if (code[k] === "<" && --depth === 0) break
  }
  return k - 1
}

/** Skips back over spaces, a `<…>` type parameter list and one `*` before `i`. */
const skipBackDecorations = (code: string, i: number): number => {
  let j = skipSpaceBack(code, i - 1)
  if (code[j] === ">") j = skipSpaceBack(code, skipTypeParamsBack(code, j))
  if (code[j] === "*") j--
  return j + 1
}

/**
 * For a block after the parameter list opened at `open`: the function's name and first index,
 * or undefined when the `(…)` belongs to `if`, `while`, a call or the like.
 */
const blockOwner = (code: string, open: number): { name: string; start: number } | undefined => {
  const before = skipBackDecorations(code, open)
  if (code[before - 1] === "]") return { name: "[computed]", start: open }
  const w = wordBefore(code, before)
  if (w.word === "function") return { name: "function", start: w.start }
  if (w.word === "" || CONTROL.has(w.word) || /^\d/.test(w.word)) return undefined
  const kw = wordBefore(code, skipBackDecorations(code, w.start))
  if (kw.word === "function") return { name: w.word, start: kw.start }
  return { name: w.word, start: w.start }
}

/** A name for an arrow function starting at `start`: the variable or property it is assigned to. */
const arrowName = (code: string, start: number): string => {
  const before = code.slice(Math.max(0, start - 200), start)
  const m = /([\w$]+)\s*(?::(?:=>|[^=;\n])*)?[=:]\s*(?:async\s*)?(?:<[^>]*>\s*)?$/.exec(before)
  return m?.[1] ?? "arrow function"
}

const lineOf = (lineStarts: number[], index: number): number => {
  let lo = 0
  let hi = lineStarts.length - 1
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1
    if ((lineStarts[mid] as number) <= index) lo = mid
    else hi = mid - 1
  }
  return lo + 1
}

type Owners = Map<number, { name: string; start: number }>

/** Functions whose parameters are in parentheses, keyed by the index of their body's `{`. */
const parenthesisedFunctions = (code: string, match: Int32Array, found: Owners): void => {
  for (let i = 0; i < code.length; i++) {
    if (code[i] !== "(" || (match[i] as number) < 0) continue
    const after = afterParams(code, match, match[i] as number)
    if (after === undefined || found.has(after.brace)) continue
    const owner = after.kind === "arrow" ? { name: arrowName(code, i), start: i } : blockOwner(code, i)
    if (owner !== undefined) found.set(after.brace, owner)
  }
}

/** Arrow functions with one bare parameter (`a => {`) not found already. */
const bareParameterArrows = (code: string, found: Owners): void => {
  for (const m of code.matchAll(/(?<![\w$.])([\w$]+)\s*=>\s*\{/g)) {
    const brace = m.index + m[0].length - 1
    if (!found.has(brace)) found.set(brace, { name: arrowName(code, m.index), start: m.index })
  }
}

/** Every function body in `text` (TypeScript source), in order of their body's opening brace. */
export const findFunctions = (text: string): FunctionSpan[] => {
  const code = mask(text)
  const match = matchBrackets(code)
  const found: Owners = new Map()
  parenthesisedFunctions(code, match, found)
  bareParameterArrows(code, found)
  const lineStarts = [0]
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1)
  return [...found.entries()]
    .filter(([brace]) => (match[brace] as number) >= 0)
    .sort(([a], [b]) => a - b)
    .map(([brace, owner]) => {
      const startLine = lineOf(lineStarts, owner.start)
      const endLine = lineOf(lineStarts, match[brace] as number)
      return { name: owner.name, startLine, endLine, lines: endLine - startLine + 1 }
    })
}

/** Lines in a file as an editor counts them (a final newline does not start another line). */
export const lineCount = (text: string): number => {
  if (text.length === 0) return 0
  const newlines = text.split("\n").length - 1
  return text.endsWith("\n") ? newlines : newlines + 1
}
