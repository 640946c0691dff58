// A server that takes connections and never answers (an API server stopped with SIGSTOP), and a kubeconfig for a URL.
import { createServer, type Server, type Socket } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

/** A kubeconfig for a plain-HTTP server at `url` (as the test server's). */
export function kubeconfigFor(dir: string, url: string): string {
  const path = join(dir, "kubeconfig");
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "c", cluster: { server: url, "insecure-skip-tls-verify": true } }],
      users: [{ name: "u", user: { token: "t" } }],
      contexts: [{ name: "test", context: { cluster: "c", user: "u" } }],
      "current-context": "test",
    }),
  );
  return path;
}

/** A server that takes connections and never answers, as an API server stopped with SIGSTOP looks to a client. */
export async function silentServer(): Promise<{
  url: string;
  connections: () => number;
  open: () => number;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let count = 0;
  const server: Server = createServer((s) => {
    count++;
    sockets.add(s);
    // Reads and drops what it is sent, so it sees the client close a connection (`open` counts what the client holds;
    // a server that never reads keeps the client's closed connections half-open, in CLOSE_WAIT, and counts them too).
    s.resume();
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => count,
    /** Connections open now. */
    open: () => sockets.size,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
