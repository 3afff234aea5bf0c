// @ts-check
/**
 * The job page's flow section: the job's parents and the first page of its children, each
 * linked, with its state; and the children page (`#/children/<q>/<cursor>/<id>`): the further
 * pages of a parent's children, 50 at a time.
 */
import { el, jobLink, main, queueLink, table } from "./dom.js"

/** @import { ChildrenView, JobView } from "./job-readings.js" */

/**
 * A node of a job's flow: its queue, id and state (a child no longer kept: its outcome, "(not retained)").
 * @typedef {{ readonly queue: string, readonly id: string, readonly state: string }} FlowNodeShown
 */
/**
 * A job's flow as the job page shows it (../JobFlow.ts's flowOf).
 * @typedef {{ readonly parents: ReadonlyArray<FlowNodeShown>, readonly parentsMore: number,
 *   readonly children: ReadonlyArray<FlowNodeShown & { readonly counted: string }>,
 *   readonly moreChildren: boolean, readonly next: string | null, readonly pending: number, readonly open: boolean,
 *   readonly waiting: boolean }} JobFlow
 */

/**
 * One node of the flow as a table row: its queue, its id (a link to its job page), its state.
 * @param {string} kind "parent" or "child"
 * @param {{ readonly queue: string, readonly id: string, readonly state: string }} n
 */
export const row = (kind, n) =>
  el(
    "tr",
    { "data-id": n.id, "data-kind": kind },
    el("td", {}, queueLink(n.queue)),
    el("td", {}, jobLink(n.queue, n.id)),
    el("td", {}, el("span", { class: `pill state-${n.state}`, text: n.state })),
  )

/**
 * The flow section of the page of `d`, or null for a job with neither parents nor children.
 * @param {JobView} d
 */
export const flowSection = (d) => {
  /** @type {JobFlow | undefined} */
  const f = d.flow
  if (!f || (f.parents.length === 0 && f.children.length === 0 && !f.waiting)) return null
  /** @type {ReadonlyArray<readonly [string]>} */
  const head = [["queue"], ["job"], ["state"]]
  const cli = `leaseq flow ${d.id} --queue ${d.queue}`
  return el(
    "section",
    { id: "job-flow" },
    el("h3", { text: `Flow: ${f.parents.length + f.parentsMore} parent(s), ${f.pending} child(ren) pending` }),
    el("h4", { text: "Parents" }),
    f.parents.length > 0
      ? table(
          "job-parents",
          head,
          f.parents.map((p) => row("parent", p)),
        )
      : el("p", { class: "muted", text: "No parent: this job is a flow's root." }),
    f.parentsMore > 0 ? el("p", { class: "muted", text: `… ${f.parentsMore} more parent(s)` }) : null,
    el("h4", { text: "Children" }),
    f.children.length > 0
      ? table(
          "job-children",
          head,
          f.children.map((c) => row("child", c)),
        )
      : el("p", {
          class: "muted",
          text: f.open ? "No child yet: the job is open (addChildren, then seal)." : "No child.",
        }),
    f.moreChildren
      ? el(
          "p",
          {
            id: "job-children-more",
            class: "muted",
            text: `The first ${d.flowLimits.children} children are shown; each child's page lists its own. All of them: ${cli} --max 10000 `,
          },
          f.next ? nextLink("job-children-next", d.queue, f.next, d.id, d.flowLimits.children) : null,
        )
      : null,
  )
}

/**
 * The link to the page of `id`'s children after `cursor`.
 * @param {string} linkId
 * @param {string} queue
 * @param {string} cursor
 * @param {string} id
 * @param {number} n
 */
const nextLink = (linkId, queue, cursor, id, n) =>
  el("a", { id: linkId, href: childrenHash(queue, cursor, id), text: `Next ${n}` })

/**
 * The address of the children page of `id` after `cursor` (base64url, "" from the first child).
 * @param {string} queue
 * @param {string} cursor
 * @param {string} id
 */
const childrenHash = (queue, cursor, id) =>
  `#/children/${encodeURIComponent(queue)}/${cursor}/${encodeURIComponent(id)}`

/**
 * The children page of reading `d`: a page of a parent's children, a link to the next page,
 * or the end marked.
 * @param {ChildrenView} d
 */
export const childrenPage = (d) => {
  const head = el("h2", {}, el("a", { href: "#/", text: "Queues" }), " / ", queueLink(d.queue), " / ")
  head.append(jobLink(d.queue, d.id), " / children")
  /** @type {ReadonlyArray<readonly [string]>} */
  const cols = [["queue"], ["job"], ["state"]]
  main.replaceChildren(
    head,
    el("p", {
      class: "muted",
      text: `${d.pending} child(ren) pending${d.open ? "; open (addChildren, then seal)" : ""}. ${d.cursor === "" ? "From the first child." : "After the page before."}`,
    }),
    d.children.length > 0
      ? table(
          "children",
          cols,
          d.children.map((c) => row("child", c)),
        )
      : el("p", { class: "muted", text: "No child on this page." }),
    d.next !== null
      ? el("p", {}, nextLink("children-next", d.queue, d.next, d.id, d.limit), " · ", firstLink(d))
      : el("p", { id: "children-end", class: "muted" }, "End of the children. ", firstLink(d)),
  )
}

/**
 * The link back to the first page of the children of `d`'s parent.
 * @param {ChildrenView} d
 */
const firstLink = (d) => el("a", { href: childrenHash(d.queue, "", d.id), text: "First page" })
