/**
 * A test's own HTTP server: `listener` on a free loopback port, closed (its connections
 * too) by the test's cleanups.
 */
import { createServer, type RequestListener } from "node:http"
import { onCleanup } from "./cleanup.ts"

/** Serve `listener` on 127.0.0.1 at a free port until the test ends; the port. */
export const serveLoopback = async (listener: RequestListener): Promise<number> => {
  const server = createServer(listener)
  onCleanup(
    () =>
      new Promise((r) => {
        server.close(r)
        server.closeAllConnections()
      }),
  )
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  return (server.address() as { port: number }).port
}
