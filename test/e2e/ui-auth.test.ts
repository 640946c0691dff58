// The reconciler's fleet page on a real API server: every API request needs a bearer token that the server's
// TokenReview accepts and whose user its SubjectAccessReview allows to list vc's records; a tenant's own syncer
// ServiceAccount, with the token the server issued it, is refused.
import { expect } from "chai";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "js-yaml";
import { useRealKube } from "../support/real-kube.js";
import { runVc } from "../support/vc.js";
import { silentLogger } from "../../src/model/log.js";
import { startReconciler, type Reconciler } from "../../src/reconciler/service.js";

const ROOT = join(import.meta.dirname, "../..");
const tokenIn = (kubeconfig: string): string =>
  (load(readFileSync(kubeconfig, "utf8")) as { users: Array<{ user: { token: string } }> }).users[0]!.user.token;

describe("e2e: the reconciler's fleet page, behind the host's TokenReview and SubjectAccessReview", function () {
  this.timeout(180_000);
  const kube = useRealKube({ users: [{ name: "viewer" }] });
  let dir: string;
  let reconciler: Reconciler | undefined;
  let url: string;

  const get = async (path: string, token?: string) => {
    const res = await fetch(`${url}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    return { status: res.status, body: await res.text(), csp: res.headers.get("content-security-policy") };
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "vc-e2e-ui-"));
    const repo = join(dir, "repo");
    cpSync(join(ROOT, "clusters", "minimal"), join(repo, "clusters", "evil"), { recursive: true });
    for (const file of ["namespace.yaml", "serviceaccount.yaml", "rbac.yaml"]) {
      const applied = await kube().kubectl(["apply", "-f", join(ROOT, "deploy", "reconciler", file)]);
      expect(applied.code, applied.stderr).to.equal(0);
    }
    // The tenant's cluster, applied by the platform: its syncer ServiceAccount vc-evil exists in vc-evil.
    const applied = await runVc(["apply", repo, "--target", "kube", "--kubeconfig", kube().kubeconfigPath]);
    expect(applied.code, applied.stdout + applied.stderr).to.equal(0);
    // The reconciler as deployed: its own ServiceAccount's token, the page on its listen port.
    reconciler = await startReconciler({
      repo,
      branch: "main",
      target: "kube",
      kubeconfig: await kube().serviceAccountKubeconfig("vc-system", "vc-reconciler"),
      intervalMs: 60_000,
      resyncMs: 600_000,
      listen: "127.0.0.1:0",
      leaderElect: false,
      allowMassPrune: false,
      logger: silentLogger,
      cacheDir: join(dir, "cache"),
    });
    url = reconciler.server!.url;
    await reconciler.loop.idle();
  });
  after(async () => {
    await reconciler?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("serves the page to anyone (it asks for a token), the API to no one without a token", async () => {
    const page = await get("/");
    expect(page.status).to.equal(200);
    expect(page.csp).to.match(/script-src 'self'/);
    expect((await get("/api/v1/clusters")).status).to.equal(401);
    expect((await get("/api/v1/clusters", "not-a-token")).status).to.equal(401);
  });

  it("refuses the tenant's syncer ServiceAccount (its real token), and a user who may not list records", async () => {
    const syncer = tokenIn(await kube().serviceAccountKubeconfig("vc-evil", "vc-evil"));
    const refused = await get("/api/v1/clusters", syncer);
    expect(refused.status).to.equal(403);
    expect(refused.body).to.include("system:serviceaccount:vc-evil:vc-evil");
    expect(refused.body).to.not.include('"items"');
    expect((await get("/api/v1/events", syncer)).status).to.equal(403);
    expect((await get("/api/v1/clusters/evil", syncer)).status).to.equal(403);
    expect((await get("/api/v1/clusters", kube().tokenOf("viewer"))).status).to.equal(403);
  });

  it("answers a user the host's RBAC lets list ConfigMaps in the records namespace", async () => {
    const role = await kube().kubectl([
      "-n",
      "vc-system",
      "create",
      "role",
      "fleet-viewer",
      "--verb=list",
      "--resource=configmaps",
    ]);
    expect(role.code, role.stderr).to.equal(0);
    const bound = await kube().kubectl([
      "-n",
      "vc-system",
      "create",
      "rolebinding",
      "fleet-viewer",
      "--role=fleet-viewer",
      "--user=viewer",
    ]);
    expect(bound.code, bound.stderr).to.equal(0);
    // The refusal above is kept 10 s (a decision is cached by the token's hash): the grant shows within that.
    let res = await get("/api/v1/clusters", kube().tokenOf("viewer"));
    for (let i = 0; i < 60 && res.status === 403; i++) {
      await new Promise((r) => setTimeout(r, 500));
      res = await get("/api/v1/clusters", kube().tokenOf("viewer"));
    }
    expect(res.status, res.body).to.equal(200);
    const page = JSON.parse(res.body) as { items: Array<{ name: string; result?: string }> };
    expect(page.items.map((r) => r.name)).to.deep.equal(["evil"]);
    expect((await get("/api/v1/clusters", kube().tokenOf("viewer"))).status).to.equal(200);
    const post = await fetch(`${url}/api/v1/clusters`, {
      method: "POST",
      headers: { Authorization: `Bearer ${kube().tokenOf("viewer")}` },
    });
    expect(post.status).to.equal(405);
  });
});
