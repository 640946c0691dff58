// The fleet page's API: filters, sorting and keyset pages over the rows; read-only, a strict CSP, no secret in any
// answer; the event stream catches a reconnecting reader up (or tells it to read again); tokens decided by the host.
import { expect } from "chai";
import type { IncomingMessage } from "node:http";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { KubeClient } from "../../src/host/client.js";
import type { ListRow } from "../../src/ops/list.js";
import {
  countRows,
  parseQuery,
  QueryError,
  queryRows,
  type FleetEvent,
  type FleetProvider,
} from "../../src/ui/model.js";
import { startUiServer, uiHandler, type RunningUi } from "../../src/ui/server.js";
import { fleetAccess, tokenAuthorizer } from "../../src/ui/auth.js";

const row = (name: string, extra: Partial<ListRow> = {}): ListRow => ({
  name,
  namespace: `vc-${name}`,
  controlPlane: "running",
  ready: "1/1",
  drift: "no",
  source: "both",
  health: "Healthy",
  labels: {},
  ...extra,
});

/** A provider of fixed rows whose events the test sends. */
function fixedFleet(rows: ListRow[]): FleetProvider & { send(e: FleetEvent): void } {
  const listeners = new Set<(e: FleetEvent) => void>();
  return {
    rows: () => rows,
    summary: () => ({
      served: { by: "vc ui", target: "dir:x" },
      ...countRows(rows),
      updated: "2026-01-01T00:00:00Z",
      notes: [],
    }),
    rollout: () => undefined,
    cluster: async (name) => {
      const r = rows.find((x) => x.name === name);
      return r ? { cluster: r, commits: {} } : undefined;
    },
    subscribe: (l) => (listeners.add(l), () => listeners.delete(l)),
    send: (e) => listeners.forEach((l) => l(e)),
  };
}

const q = (s: string) => parseQuery(new URLSearchParams(s));

describe("ui: the fleet API's queries", () => {
  const rows = Array.from({ length: 120 }, (_, i) =>
    row(`c-${String(i).padStart(3, "0")}`, {
      health: i % 10 === 0 ? "Degraded" : "Healthy",
      ...(i % 10 === 0 ? { healthReason: `pod c-${i}-0 CrashLoopBackOff` } : {}),
      labels: i % 2 ? { tier: "prod" } : { tier: "dev" },
      lastAppliedRevision: i < 60 ? "a".repeat(40) : "b".repeat(40),
      drift: i % 7 === 0 ? "yes" : "no",
      ...(i % 7 === 0 ? { driftObjects: i } : {}),
    }),
  );

  it("filters by health, label, revision and text, and counts what matched", () => {
    expect(queryRows(rows, q("health=Degraded")).matched).to.equal(12);
    expect(queryRows(rows, q("health=Degraded&label=tier%3Dprod")).matched).to.equal(0);
    expect(queryRows(rows, q("label=tier%3Ddev&health=Degraded")).matched).to.equal(12);
    expect(queryRows(rows, q(`revision=${"b".repeat(12)}`)).matched).to.equal(60);
    const found = queryRows(rows, q("q=CRASHLOOP"));
    expect(found.items.every((r) => r.health === "Degraded")).to.equal(true);
    expect(queryRows(rows, q("")).total).to.equal(120);
  });

  it("pages with a cursor that continues after the last row, in every sort", () => {
    for (const sort of ["name", "health", "drift", "namespace", "applied", "result", "wave"]) {
      const seen: string[] = [];
      let cursor = "";
      for (;;) {
        const page = queryRows(rows, q(`sort=${sort}&limit=25${cursor ? `&cursor=${cursor}` : ""}`));
        seen.push(...page.items.map((r) => r.name));
        if (!page.next) break;
        cursor = page.next;
      }
      expect(new Set(seen).size, sort).to.equal(120);
      expect(seen.length, sort).to.equal(120);
    }
    const worst = queryRows(rows, q("sort=health&limit=3")).items;
    expect(worst.map((r) => r.health)).to.deep.equal(["Degraded", "Degraded", "Degraded"]);
    expect(queryRows(rows, q("sort=drift&limit=1")).items[0]!.driftObjects).to.equal(119);
  });

  it("refuses a bad sort, limit, cursor or label selector", () => {
    expect(() => q("sort=color")).to.throw(QueryError);
    expect(() => q("limit=100000")).to.throw(QueryError);
    expect(() => queryRows(rows, q("cursor=nonsense"))).to.throw(QueryError);
    expect(() => queryRows(rows, q("label=a%20b%20c"))).to.throw(QueryError);
  });
});

describe("ui: the fleet API's server", () => {
  let fleet: ReturnType<typeof fixedFleet>;
  let ui: RunningUi;
  before(async () => {
    fleet = fixedFleet([
      row("alpha", { note: "cannot pull https://alice:s3cr3t-pass@git.example.com/fleet.git" }),
      row("beta"),
    ]);
    ui = await startUiServer(uiHandler({ provider: fleet, heartbeatMs: 50, replay: 3 }), "127.0.0.1", 0);
  });
  after(() => ui.close());

  it("answers GET and HEAD only (else 405 with Allow), each answer with the strict CSP", async () => {
    for (const method of ["POST", "PUT", "DELETE", "PATCH"]) {
      const res = await fetch(`${ui.url}api/v1/clusters`, { method });
      expect(res.status, method).to.equal(405);
      expect(res.headers.get("allow")).to.equal("GET, HEAD");
    }
    for (const path of ["", "clusters/alpha", "api/v1/clusters", "ui/nothing"]) {
      const res = await fetch(`${ui.url}${path}`);
      expect(res.headers.get("content-security-policy"), path).to.match(/default-src 'none'; script-src 'self'/);
      expect(res.headers.get("content-security-policy")).to.not.include("unsafe");
      expect(res.headers.get("x-content-type-options")).to.equal("nosniff");
    }
    expect((await fetch(`${ui.url}api/v1/clusters`, { method: "HEAD" })).status).to.equal(200);
  });

  it("masks credentials in every answer with vc's masker", async () => {
    const text = await (await fetch(`${ui.url}api/v1/clusters`)).text();
    expect(text).to.not.include("s3cr3t-pass");
    expect(text).to.include("<masked>");
    expect((await fetch(`${ui.url}api/v1/clusters/gamma`)).status).to.equal(404);
    expect((await fetch(`${ui.url}api/v1/clusters?sort=color`)).status).to.equal(400);
  });

  /** Reads an event stream until `until` holds of what came, then stops. */
  async function readEvents(
    headers: Record<string, string>,
    until: (text: string) => boolean,
    opened: () => void = () => {},
  ): Promise<string> {
    const ac = new AbortController();
    const res = await fetch(`${ui.url}api/v1/events`, { headers, signal: ac.signal });
    expect(res.headers.get("content-type")).to.match(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let text = "";
    let told = false;
    while (!until(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      if (!told && text.includes("\n\n")) {
        told = true;
        opened();
      }
    }
    ac.abort();
    return text;
  }

  it("streams each event with an id; a reader back with Last-Event-ID gets what it missed, or a reset", async () => {
    const text = await readEvents(
      {},
      (t) => t.includes("event: removed"),
      () => {
        fleet.send({ type: "cluster", row: row("alpha", { health: "Degraded" }) });
        fleet.send({ type: "removed", name: "beta" });
      },
    );
    const cluster = /id: (\d+)\nevent: cluster\n/.exec(text)!;
    const back = await readEvents({ "Last-Event-ID": cluster[1]! }, (t) => t.includes("event: removed"));
    expect(back).to.not.include("event: cluster");
    expect(back).to.include('"name":"beta"');
    for (let i = 0; i < 5; i++) fleet.send({ type: "removed", name: `x${i}` });
    const late = await readEvents({ "Last-Event-ID": cluster[1]! }, (t) => t.includes("event: reset"));
    expect(late).to.include("event: reset");
  });
});

describe("ui: tokens decided by the host's TokenReview and SubjectAccessReview", () => {
  let kube: KubeServer;
  let client: KubeClient;
  before(async () => {
    kube = await startKubeServer({
      namespaces: ["default", "vc-system"],
      tokenReviews: true,
      users: [
        { token: "t-stranger", rules: [], name: "stranger" },
        {
          token: "t-reader",
          rules: [{ verbs: ["list"], apiGroups: [""], resources: ["configmaps"], namespaces: ["vc-system"] }],
          name: "reader",
        },
      ],
    });
    client = KubeClient.open({ kubeconfig: kube.kubeconfigPath });
  });
  after(async () => {
    client.close();
    await kube.close();
  });
  const req = (auth?: string) => ({ headers: auth ? { authorization: auth } : {} }) as IncomingMessage;

  it("401 without a token or with an unknown one, 403 without list on vc's records, else allowed", async () => {
    const decide = tokenAuthorizer(client, fleetAccess("vc-system"));
    expect(await decide(req())).to.include({ allowed: false, status: 401 });
    expect(await decide(req("Bearer nobody-knows"))).to.include({ allowed: false, status: 401 });
    const refused = await decide(req("Bearer t-stranger"));
    expect(refused).to.include({ allowed: false, status: 403 });
    expect((refused as { message: string }).message).to.include(
      '"stranger" may not list configmaps in namespace vc-system',
    );
    expect(await decide(req("Bearer t-reader"))).to.deep.equal({ allowed: true });
  });

  it("keeps a decision a short while by the token's hash: one review pair for a page's requests", async () => {
    let t = 0;
    const decide = tokenAuthorizer(client, fleetAccess("vc-system"), { now: () => t, cacheMs: 1000 });
    kube.resetRequests();
    await decide(req("Bearer t-reader"));
    await decide(req("Bearer t-reader"));
    expect(kube.countRequests({ path: "/apis/authentication.k8s.io/v1/tokenreviews" })).to.equal(1);
    t = 2000;
    await decide(req("Bearer t-reader"));
    expect(kube.countRequests({ path: "/apis/authentication.k8s.io/v1/tokenreviews" })).to.equal(2);
  });
});
