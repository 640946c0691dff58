// WATCH over HTTP: events from a resourceVersion, initial ADDED events, selector transitions, 410 for expired versions.
import { expect } from "chai";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { call, configMap } from "./helpers.js";

interface WatchEvent {
  type: string;
  object: any;
}

/** Opens a watch and collects events until `count` arrived (or the timeout). */
async function collect(
  server: KubeServer,
  path: string,
  count: number,
  during: () => Promise<void> = async () => {},
): Promise<WatchEvent[]> {
  const ctrl = new AbortController();
  const res = await fetch(server.url + path, { headers: { Authorization: "Bearer admin" }, signal: ctrl.signal });
  expect(res.status).to.equal(200);
  const events: WatchEvent[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const timer = setTimeout(() => ctrl.abort(), 3000);
  const reading = (async () => {
    try {
      while (events.length < count) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          events.push(JSON.parse(buffer.slice(0, nl)) as WatchEvent);
          buffer = buffer.slice(nl + 1);
        }
      }
    } catch {
      /* aborted by the timeout: the assertion on the events reports it */
    }
  })();
  await during();
  await reading;
  clearTimeout(timer);
  ctrl.abort();
  return events;
}

describe("kube-server: watch", () => {
  let server: KubeServer;
  beforeEach(async () => {
    server = await startKubeServer();
  });
  afterEach(async () => server.close());

  it("replays changes after a resourceVersion and streams new ones", async () => {
    const start = server.resourceVersion;
    server.put(configMap("a", { v: "1" }));
    server.put(configMap("a", { v: "2" }));
    const events = await collect(
      server,
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${start}`,
      4,
      async () => {
        await call(server, "POST", "/api/v1/namespaces/default/configmaps", configMap("b"));
        await call(server, "DELETE", "/api/v1/namespaces/default/configmaps/a");
      },
    );
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal([
      "ADDED a",
      "MODIFIED a",
      "ADDED b",
      "DELETED a",
    ]);
    expect(events[1]!.object.data).to.deep.equal({ v: "2" });
    const rvs = events.map((e) => Number(e.object.metadata.resourceVersion));
    expect([...rvs].sort((x, y) => x - y)).to.deep.equal(rvs);
  });

  it("counts open watches and ends them on closeWatches", async () => {
    const ctrl = new AbortController();
    const res = await fetch(`${server.url}/api/v1/namespaces/default/configmaps?watch=true`, { signal: ctrl.signal });
    expect(server.openWatches).to.equal(1);
    const ended = res.text();
    expect(server.closeWatches()).to.equal(1);
    expect(await ended).to.equal("");
    expect(server.openWatches).to.equal(0);
  });

  it("starts with ADDED events for existing objects when no resourceVersion is given", async () => {
    server.put(configMap("x"));
    server.put(configMap("y"));
    const events = await collect(server, "/api/v1/namespaces/default/configmaps?watch=1", 2);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).to.deep.equal(["ADDED x", "ADDED y"]);
  });

  it("streams initial events and an initial-events-end bookmark for sendInitialEvents", async () => {
    server.put(configMap("x"));
    const events = await collect(
      server,
      "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan",
      3,
      async () => {
        await new Promise((r) => setTimeout(r, 50));
        server.put(configMap("y"));
      },
    );
    expect(events.map((e) => e.type)).to.deep.equal(["ADDED", "BOOKMARK", "ADDED"]);
    expect(events[1]!.object.metadata.annotations).to.deep.equal({ "k8s.io/initial-events-end": "true" });
    expect(events[1]!.object.kind).to.equal("ConfigMap");
    expect(events[2]!.object.metadata.name).to.equal("y");
  });

  it(
    "filters by label selector and turns objects leaving or entering the selection into DELETED " + "and ADDED",
    async () => {
      const start = server.resourceVersion;
      server.put(configMap("a", {}, { app: "web" }));
      server.put(configMap("other", {}, { app: "db" }));
      server.put(configMap("a", {}, { app: "db" }));
      server.put(configMap("a", {}, { app: "web" }));
      const events = await collect(
        server,
        `/api/v1/namespaces/default/configmaps?watch=true&labelSelector=app%3Dweb&resourceVersion=${start}`,
        3,
      );
      expect(events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.labels.app}`)).to.deep.equal([
        "ADDED a web",
        "DELETED a db",
        "ADDED a web",
      ]);
    },
  );

  it("sends a 410 Expired ERROR event for a resourceVersion older than the history", async () => {
    await server.close();
    server = await startKubeServer({ watchHistory: 100 });
    const start = server.resourceVersion;
    for (let i = 0; i < 200; i++) server.put(configMap(`c${i % 10}`, { i: String(i) }));
    const events = await collect(
      server,
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${start}`,
      1,
    );
    expect(events).to.have.length(1);
    expect(events[0]!.type).to.equal("ERROR");
    expect(events[0]!.object).to.include({ kind: "Status", code: 410, reason: "Expired" });
    expect(events[0]!.object.message).to.match(/^too old resource version: \d+ \(\d+\)$/);
    const recent = String(Number(server.resourceVersion) - 50);
    const replay = await collect(
      server,
      `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${recent}`,
      50,
    );
    expect(replay.map((e) => e.type)).to.deep.equal(Array(50).fill("MODIFIED"));
  });
});
