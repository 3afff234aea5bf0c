/**
 * The first pass of tools/size-scan.ts: blanks every comment, the contents of every string,
 * template literal text and regular expression literal, keeping newlines so positions and line
 * numbers do not move. Code inside `${…}` stays, as it may hold functions.
 *
 * Limit: a `/` is read as the start of a regular expression after an operator, an opening
 * bracket, `}`, a keyword such as `return`, or at the start of the file; otherwise it is
 * division. A regular expression is never taken to run past the end of its line, so a wrong
 * guess costs one line, not the rest of the file.
 */

/** Keywords after which a `/` starts a regular expression. */
export const REGEX_AFTER_WORD = new Set([
  "return",
  "typeof",
  "instanceof",
  "in",
  "of",
  "case",
  "do",
  "else",
  "void",
  "delete",
  "throw",
  "yield",
  "await",
  "new",
])

export const isWord = (c: string | undefined): boolean => c !== undefined && /[\w$]/.test(c)
export const isSpace = (c: string | undefined): boolean => c !== undefined && /\s/.test(c)

/** Is a `/` at `i` of the (partly masked) text the start of a regular expression? */
const slashStartsRegex = (out: string[], i: number): boolean => {
  let j = i - 1
  while (j >= 0 && isSpace(out[j])) j--
  if (j < 0) return true
  const c = out[j] as string
  if (isWord(c)) {
    let k = j
    while (k >= 0 && isWord(out[k])) k--
    return REGEX_AFTER_WORD.has(out.slice(k + 1, j + 1).join(""))
  }
  return c !== ")" && c !== "]"
}

/** Where a regular expression starting at `i` ends (index after its flags), or -1 if not on this line. */
const regexEnd = (text: string, i: number): number => {
  let inClass = false
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j]
    if (c === "\n") return -1
    if (c === "\\") j++
    else if (c === "[") inClass = true
    else if (c === "]") inClass = false
    else if (c === "/" && !inClass) {
      let k = j + 1
      while (isWord(text[k])) k++
      return k
    }
  }
  return -1
}

/** Blanks `text[from, to)` in `out`, keeping newlines. */
const blank = (out: string[], text: string, from: number, to: number): void => {
  for (let k = from; k < to; k++) out[k] = text[k] === "\n" ? "\n" : " "
}

/** Where the string literal opened at `i` ends (index after its closing quote). */
const stringEnd = (text: string, i: number): number => {
  const quote = text[i]
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === "\\") j++
    else if (text[j] === quote || text[j] === "\n") return j + 1
  }
  return text.length
}

/**
 * Scans template literal text from `i` (just after a backtick or a closing `}` of `${…}`):
 * blanks it and returns where code resumes and whether that is inside `${` (true) or after
 * the closing backtick (false).
 */
const templateText = (out: string[], text: string, i: number): { next: number; inExpr: boolean } => {
  for (let j = i; j < text.length; j++) {
    if (text[j] === "\\") {
      blank(out, text, j, j + 2)
      j++
    } else if (text[j] === "`") return { next: j + 1, inExpr: false }
    else if (text[j] === "$" && text[j + 1] === "{") return { next: j + 2, inExpr: true }
    else blank(out, text, j, j + 1)
  }
  return { next: text.length, inExpr: false }
}

interface Masker {
  readonly text: string
  readonly out: string[]
  /** What each open `{` began: a code block or a `${` inside a template literal. */
  readonly braces: ("code" | "template")[]
}

/** A comment or string literal at `i`: blanks it and returns where code resumes; -1 if none. */
const maskCommentOrString = (m: Masker, i: number): number => {
  const { text, out } = m
  let next = -1
  if (text.startsWith("//", i)) {
    next = text.indexOf("\n", i)
    if (next < 0) next = text.length
    blank(out, text, i, next)
  } else if (text.startsWith("/*", i)) {
    const close = text.indexOf("*/", i + 2)
    next = close < 0 ? text.length : close + 2
    blank(out, text, i, next)
  } else if (text[i] === '"' || text[i] === "'") {
    next = stringEnd(text, i)
    blank(out, text, i + 1, next - 1)
  }
  return next
}

/** A backtick, or the `}` closing a `${`, at `i`: blanks the template text; -1 if neither. */
const maskTemplate = (m: Masker, i: number): number => {
  const c = m.text[i]
  if (c !== "`" && !(c === "}" && m.braces.at(-1) === "template")) return -1
  if (c === "}") m.braces.pop()
  const t = templateText(m.out, m.text, i + 1)
  if (t.inExpr) m.braces.push("template")
  return t.next
}

/** Any other character at `i`: tracks braces, blanks a regular expression; returns the next index. */
const maskCode = (m: Masker, i: number): number => {
  const c = m.text[i]
  if (c === "{") m.braces.push("code")
  else if (c === "}") m.braces.pop()
  else if (c === "/" && slashStartsRegex(m.out, i)) {
    const end = regexEnd(m.text, i)
    if (end > 0) {
      blank(m.out, m.text, i + 1, end)
      return end
    }
  }
  return i + 1
}

/** The text with comments, string/template/regex contents blanked; same length, same lines. */
export const mask = (text: string): string => {
  const m: Masker = { text, out: text.split(""), braces: [] }
  let i = 0
  while (i < text.length) {
    const commentOrString = maskCommentOrString(m, i)
    if (commentOrString >= 0) {
      i = commentOrString
      continue
    }
    const template = maskTemplate(m, i)
    i = template >= 0 ? template : maskCode(m, i)
  }
  return m.out.join("")
}
