// The kube client's connections: a request that ran out of its budget closes its own (a hung server gets no pile of
// open sockets from a client that keeps retrying), an answered one goes back to the pool for the next request.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient, MAX_SOCKETS, RequestTimeoutError } from "../../src/host/client.js";
import { waitFor } from "../support/real-kube.js";
import { kubeconfigFor } from "../support/silent-server.js";

/** What the server does with a request: answer with that status, hold it without a byte (a hung API server), or send
 * the headers and the start of a body and hold the rest. */
type Answer = number | "hold" | "stall";

/**
 * An HTTP server counting connections: every one it took, and those open now. It reads what it is sent, so a
 * connection the client closes closes here too (a server that never reads never sees the client's FIN and would count
 * the client's closed connections as open).
 */
async function countingServer(answer: (n: number) => Answer) {
  const sockets = new Set<Socket>();
  let taken = 0;
  let requests = 0;
  const server: Server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    const a = answer(++requests);
    if (a === "hold") return;
    if (a === "stall") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"kind":"NamespaceList","items":[');
      return;
    }
    res.writeHead(a, { "content-type": "application/json" });
    res.end(a === 200 ? '{"kind":"NamespaceList","items":[]}' : '{"kind":"Status","code":503}');
  });
  server.on("connection", (s: Socket) => {
    taken++;
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    taken: () => taken,
    open: () => sockets.size,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe("host/client: connections", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "vc-sockets-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it(
    "closes the connection of every request that ran out of its budget, retries included, so a hung server " +
      "holds none",
    async function () {
      // A budget that a 503 and its retry fit in on a loaded machine: the held requests take all of it, six times.
      this.timeout(60_000);
      // Odd requests get a 503, even ones are held: each of the first five client requests is a 503 and a retry (on the
      // same kept-alive connection) the server never answers; the burst after them mixes both.
      let hung = true;
      const server = await countingServer((n) => (!hung ? 200 : n % 2 === 1 ? 503 : "hold"));
      const client = KubeClient.open({
        kubeconfig: kubeconfigFor(dir, server.url),
        budget: { timeoutMs: 2_000 },
        retry: { attempts: 5, baseDelayMs: 1, maxDelayMs: 2 },
      });
      try {
        for (let i = 0; i < 5; i++) {
          const err = await client.request("GET", "/api/v1/namespaces").then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(err, String(err)).to.be.instanceOf(RequestTimeoutError);
        }
        // More at once than the client keeps connections.
        const errors = await Promise.all(
          Array.from({ length: MAX_SOCKETS + 8 }, () =>
            client.request("GET", "/api/v1/namespaces").then(
              () => undefined,
              (e: unknown) => e,
            ),
          ),
        );
        expect(
          errors.every((e) => e instanceof RequestTimeoutError),
          String(errors.find((e) => !(e instanceof RequestTimeoutError))),
        ).to.equal(true);
        expect(client.stats.retries, "each of the first five was a 503 and a held retry").to.be.at.least(5);
        expect(server.taken(), "one connection for each of the first five, then MAX_SOCKETS at once").to.be.at.least(
          5 + MAX_SOCKETS,
        );
        // Closed by the client, not by the server (it holds every request) nor by client.close().
        await waitFor(
          () => server.open() === 0,
          "the client closing the connections of its timed-out requests",
          10_000,
        );

        // The server answers again: the client works on, on at most MAX_SOCKETS new connections, kept for the next
        // ones.
        hung = false;
        const before = server.taken();
        await Promise.all(Array.from({ length: 100 }, () => client.request("GET", "/api/v1/namespaces")));
        expect(server.taken() - before)
          .to.be.at.least(1)
          .and.at.most(MAX_SOCKETS);
      } finally {
        client.close();
        await server.close();
      }
    },
  );

  it("closes the connection of a request whose answer stopped halfway when its budget runs out", async () => {
    const server = await countingServer(() => "stall");
    const client = KubeClient.open({ kubeconfig: kubeconfigFor(dir, server.url), budget: { timeoutMs: 300 } });
    try {
      for (let i = 0; i < 5; i++) {
        const err = await client.request("GET", "/api/v1/namespaces").then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err, String(err)).to.be.instanceOf(RequestTimeoutError);
      }
      expect(server.taken()).to.equal(5);
      await waitFor(() => server.open() === 0, "the client closing the connections of its timed-out requests", 10_000);
    } finally {
      client.close();
      await server.close();
    }
  });

  it("keeps the connections of answered requests for the next requests (keep-alive)", async () => {
    const server = await countingServer(() => 200);
    const client = KubeClient.open({ kubeconfig: kubeconfigFor(dir, server.url), budget: { timeoutMs: 10_000 } });
    try {
      for (let round = 0; round < 5; round++)
        await Promise.all(Array.from({ length: 10 }, () => client.request("GET", "/api/v1/namespaces")));
      expect(server.requests()).to.equal(50);
      expect(server.taken(), "50 requests, 10 at a time, on the connections of the first round")
        .to.be.at.least(1)
        .and.at.most(10);
      expect(server.open(), "kept open between rounds").to.equal(server.taken());
      client.close();
      await waitFor(() => server.open() === 0, "client.close() closing its kept connections", 10_000);
    } finally {
      client.close();
      await server.close();
    }
  });
});
