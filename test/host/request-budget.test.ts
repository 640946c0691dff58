// One request budget for every API request: a server that never answers, one that keeps failing, and one that refuses.
import { expect } from "chai";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeClient, RequestTimeoutError } from "../../src/host/client.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { freePort } from "../support/requires.js";
import { kubeconfigFor, silentServer } from "../support/silent-server.js";

describe("host/client: the request budget", () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "vc-budget-"))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("fails a request the server never answers when the budget runs out, naming the server and the flag", async () => {
    const silent = await silentServer();
    const client = KubeClient.open({ kubeconfig: kubeconfigFor(dir, silent.url), budget: { timeoutMs: 400 } });
    try {
      const err = await client.request("GET", "/api/v1/namespaces").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(RequestTimeoutError);
      expect((err as Error).message)
        .to.include(silent.url)
        .and.include("GET /api/v1/namespaces")
        .and.include("within 0.4s")
        .and.include("--request-timeout");
      expect(silent.connections(), "one request, held open by the server until the budget ran out").to.equal(1);
    } finally {
      client.close();
      await silent.close();
    }
  });

  it(
    "keeps at most 32 requests in flight; a request waiting for a connection gets its whole budget once it " +
      "has one",
    async () => {
      const silent = await silentServer();
      const client = KubeClient.open({ kubeconfig: kubeconfigFor(dir, silent.url), budget: { timeoutMs: 1000 } });
      try {
        let atFirstFailure: number | undefined;
        const errors = await Promise.all(
          Array.from({ length: 40 }, () =>
            client.request("GET", "/api/v1/namespaces").then(
              () => undefined,
              (e: unknown) => ((atFirstFailure ??= silent.connections()), e),
            ),
          ),
        );
        expect(
          errors.every((e) => e instanceof RequestTimeoutError && e.message.includes("within 1s")),
          String(errors[0]),
        ).to.equal(true);
        expect(atFirstFailure, "requests sent before the first ran out of its budget").to.equal(32);
        // The 8 requests beyond the first 32 were sent, each on its own connection, once those gave up: none failed
        // while it waited behind the others.
        expect(silent.connections()).to.equal(40);
      } finally {
        client.close();
        await silent.close();
      }
    },
  );

  it(
    "bounds the retries of a server that keeps failing by the same budget, and says what it last " + "answered",
    async () => {
      const server: KubeServer = await startKubeServer();
      server.faults.add({ path: "/api/v1/namespaces", status: 503 });
      const client = KubeClient.open({
        kubeconfig: server.kubeconfigPath,
        context: "test",
        budget: { timeoutMs: 700 },
        retry: { attempts: 100, baseDelayMs: 50, maxDelayMs: 100 },
      });
      try {
        const err = await client.request("GET", "/api/v1/namespaces").then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).to.be.instanceOf(RequestTimeoutError);
        expect((err as Error).message).to.include("last answer: 503");
        const tries = server.countRequests({ path: "/api/v1/namespaces" });
        expect(tries).to.be.greaterThan(2).and.below(100);
      } finally {
        client.close();
        await server.close();
      }
    },
  );

  it("waits without end with a budget of 0 (kubectl's --request-timeout=0)", async () => {
    const server: KubeServer = await startKubeServer();
    server.faults.add({ path: "/api/v1/namespaces", latencyMs: 300, times: 1 });
    const client = KubeClient.open({ kubeconfig: server.kubeconfigPath, context: "test", budget: { timeoutMs: 0 } });
    try {
      const list = await client.request<{ kind: string }>("GET", "/api/v1/namespaces");
      expect(list.kind).to.equal("NamespaceList");
    } finally {
      client.close();
      await server.close();
    }
  });

  it("fails a refused connection at once for a person at a prompt, and retries it for the reconciler", async () => {
    const port = await freePort();
    const kubeconfig = kubeconfigFor(dir, `http://127.0.0.1:${port}`);
    const interactive = KubeClient.open({ kubeconfig, budget: { timeoutMs: 30_000, retryRefused: false } });
    const err = await interactive.request("GET", "/version").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.match(
      /^cannot reach the API server http:\/\/127\.0\.0\.1:\d+: connection refused/,
    );
    expect(interactive.stats.retries).to.equal(0);

    const retried: string[] = [];
    const reconciler = KubeClient.open({
      kubeconfig,
      budget: { timeoutMs: 30_000, retryRefused: true },
      retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 },
      onRetry: (r) => retried.push(r.reason),
    });
    await reconciler.request("GET", "/version").catch(() => undefined);
    expect(retried).to.deep.equal(["ECONNREFUSED", "ECONNREFUSED"]);
  });
});
