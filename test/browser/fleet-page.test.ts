// The fleet page in a real browser (Debian's chromium): it lists the example fleet, filters and deep-links, shows a
// vc apply without a reload, renders hostile commit subjects and labels as text, and says why a token is refused.
import { expect } from "chai";
import { execFileSync } from "node:child_process";
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Page } from "playwright-core";
import { buildPage } from "../../scripts/build-ui.js";
import { launchBrowser, type Browser } from "../support/browser.js";
import { startKubeServer, type KubeServer } from "../support/kube-server/index.js";
import { runVc } from "../support/vc.js";
import { KubeClient } from "../../src/host/client.js";
import { serveLocalUi, type ServedUi } from "../../src/ui/serve.js";
import { startUiServer, uiHandler, type RunningUi } from "../../src/ui/server.js";
import { fleetAccess, tokenAuthorizer } from "../../src/ui/auth.js";
import type { FleetProvider } from "../../src/ui/model.js";
import type { RolloutRecord } from "../../src/rollout/types.js";
import { rolloutView } from "../../src/rollout/view.js";

/** A rollout in its second wave: canary (minimal) done, rest (platform) moving. */
function rolloutRecord(): RolloutRecord {
  const moved = {
    from: "f".repeat(64),
    at: "to" as const,
    health: "Healthy" as const,
    movedAt: "2026-01-01T00:00:00Z",
  };
  return {
    id: "0123456789ab",
    source: "fleet",
    to: { digest: "d".repeat(64) },
    phase: "Progressing",
    wave: 1,
    waves: [
      { name: "canary", clusters: ["minimal"] },
      { name: "rest", clusters: ["platform"] },
    ],
    from: {},
    moved: { minimal: moved, platform: moved },
    started: "2026-01-01T00:00:00Z",
    since: "2026-01-01T00:05:00Z",
    message: "wave rest: waiting for its gate",
  };
}

const ROOT = join(import.meta.dirname, "../..");

// What the functions run in the page use of it (this file is type-checked without the DOM library).
declare const document: {
  cookie: string;
  querySelector(s: string): { textContent: string | null } | null;
  querySelectorAll(s: string): { length: number };
};
declare const window: Record<string, unknown>;
declare const sessionStorage: { getItem(k: string): string | null };
const HOSTILE_SUBJECT = "<img src=x onerror=alert(1)>";
const HOSTILE_LABEL = "<script>alert(2)</script>";

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Mallory",
      GIT_AUTHOR_EMAIL: "m@example.com",
      GIT_COMMITTER_NAME: "Mallory",
      GIT_COMMITTER_EMAIL: "m@example.com",
    },
  });

/** The cluster names of the table's rows, in order. */
const rowNames = (page: Page) =>
  page.$$eval("tr[data-cluster]", (rows) => rows.map((r) => r.getAttribute("data-cluster")));

describe("the fleet page in a real browser", function () {
  this.timeout(120_000);
  let browser: Browser;
  let repo: string;
  let ui: ServedUi;
  let page: Page;
  const dialogs: string[] = [];

  before(async function () {
    browser = await launchBrowser(this);
    await buildPage();
    // The example fleet, plus a cluster whose label a tenant wrote, committed with a committer's hostile subject.
    repo = mkdtempSync(join(tmpdir(), "vc-ui-browser-"));
    for (const dir of ["clusters", "fleet"]) cpSync(join(ROOT, dir), join(repo, dir), { recursive: true });
    mkdirSync(join(repo, "clusters", "hostile"));
    copyFileSync(join(ROOT, "clusters/minimal/values.yaml"), join(repo, "clusters/hostile/values.yaml"));
    writeFileSync(join(repo, "clusters/hostile/cluster.yaml"), `labels:\n  team: "${HOSTILE_LABEL}"\n`);
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", HOSTILE_SUBJECT);
    const applied = await runVc(["apply", "--target", `dir:${join(repo, "hydrated")}`], { cwd: repo });
    expect(applied.code, applied.stderr).to.be.oneOf([0, 1]); // the hostile cluster's label is invalid: exit 1
    ui = await serveLocalUi({ path: repo, target: `dir:${join(repo, "hydrated")}`, refreshMs: 300, port: 0 });
    page = await browser.context.newPage();
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });

  after(async () => {
    await browser?.close();
    await ui?.close();
    if (repo) rmSync(repo, { recursive: true, force: true });
  });

  it("lists the example fleet with each cluster's health, drift and last applied commit", async () => {
    await page.goto(ui.url);
    await page.waitForSelector('tr[data-cluster="platform"]');
    expect(await rowNames(page)).to.deep.equal(["bookinfo", "hostile", "minimal", "platform"]);
    const minimal = page.locator('tr[data-cluster="minimal"]');
    expect(await minimal.locator(".drift").textContent()).to.equal("in sync");
    expect(await minimal.locator(".author").textContent()).to.equal("Mallory");
    expect(await page.locator(".summary .total").textContent()).to.equal("4 clusters");
    // The picture in docs/ui.md: VC_UI_SCREENSHOT names where to keep it.
    const shot = join(repo, "fleet.png");
    await page.screenshot({ path: shot });
    expect(statSync(shot).size).to.be.greaterThan(10_000);
    if (process.env.VC_UI_SCREENSHOT) {
      mkdirSync(dirname(process.env.VC_UI_SCREENSHOT), { recursive: true });
      copyFileSync(shot, process.env.VC_UI_SCREENSHOT);
    }
  });

  it("filters by text and label, and a deep link opens a cluster with its history", async () => {
    await page.goto(ui.url);
    await page.waitForSelector('tr[data-cluster="platform"]');
    await page.fill('input[name="q"]', "platf");
    await page.waitForFunction(() => document.querySelectorAll("tr[data-cluster]").length === 1);
    expect(await rowNames(page)).to.deep.equal(["platform"]);
    expect(page.url()).to.include("q=platf");
    await page.goto(`${ui.url}?label=${encodeURIComponent("tier=prod")}`);
    await page.waitForSelector('tr[data-cluster="bookinfo"]');
    expect(await rowNames(page)).to.deep.equal(["bookinfo", "platform"]);
    await page.goto(`${ui.url}clusters/minimal`);
    await page.waitForSelector("article.cluster table.history");
    expect(await page.locator("article.cluster h2").textContent()).to.equal("minimal");
    expect(await page.locator("table.history tbody tr").count()).to.equal(1);
    expect(await page.locator("table.history .author").first().textContent()).to.equal("Mallory");
  });

  it("shows a vc apply of a change without a reload", async () => {
    await page.goto(ui.url);
    await page.waitForSelector('tr[data-cluster="minimal"]');
    await page.evaluate(() => (window.stayed = true));
    writeFileSync(join(repo, "clusters/minimal/values.yaml"), "controlPlane:\n  statefulSet:\n    replicas: 2\n");
    git(repo, "commit", "-q", "-am", "minimal: two replicas");
    const applied = await runVc(["apply", "--target", `dir:${join(repo, "hydrated")}`, "--cluster", "minimal"], {
      cwd: repo,
    });
    expect(applied.code, applied.stderr).to.equal(0);
    await page.waitForFunction(
      () => document.querySelector('tr[data-cluster="minimal"] .subject')?.textContent === "minimal: two replicas",
      undefined,
      { timeout: 60_000 },
    );
    expect(await page.evaluate(() => window.stayed)).to.equal(true);
    expect(await page.locator('tr[data-cluster="bookinfo"] .subject').textContent()).to.equal(HOSTILE_SUBJECT);
  });

  it("keeps 8 tabs live on one stream (a browser keeps 6 connections to a host)", async () => {
    const tabs = await Promise.all(Array.from({ length: 8 }, () => browser.context.newPage()));
    try {
      for (const tab of tabs) {
        await tab.goto(ui.url);
        await tab.waitForSelector('tr[data-cluster="minimal"]');
      }
      writeFileSync(join(repo, "clusters/minimal/values.yaml"), "controlPlane:\n  statefulSet:\n    replicas: 3\n");
      git(repo, "commit", "-q", "-am", "minimal: three replicas");
      const applied = await runVc(["apply", "--target", `dir:${join(repo, "hydrated")}`, "--cluster", "minimal"], {
        cwd: repo,
      });
      expect(applied.code, applied.stderr).to.equal(0);
      for (const tab of tabs)
        await tab.waitForFunction(
          () =>
            document.querySelector('tr[data-cluster="minimal"] .subject')?.textContent === "minimal: three replicas",
          undefined,
          { timeout: 60_000 },
        );
    } finally {
      await Promise.all(tabs.map((tab) => tab.close()));
    }
  });

  it("renders a hostile commit subject and cluster label as text: no element made, no script run", async () => {
    await page.goto(ui.url);
    await page.waitForSelector('tr[data-cluster="hostile"]');
    expect(await page.locator('tr[data-cluster="hostile"] .label').textContent()).to.equal(`team=${HOSTILE_LABEL}`);
    expect(await page.locator('tr[data-cluster="bookinfo"] .subject').textContent()).to.equal(HOSTILE_SUBJECT);
    expect(await page.locator("main img").count()).to.equal(0);
    expect(await page.locator("main script").count()).to.equal(0);
    await page.goto(`${ui.url}clusters/hostile`);
    await page.waitForSelector("article.cluster h2");
    expect(await page.locator("article.cluster .label").textContent()).to.equal(`team=${HOSTILE_LABEL}`);
    await page.waitForTimeout(500);
    expect(dialogs).to.deep.equal([]);
  });

  it("shows the rollout's waves and their gate, and links a wave's clusters", async () => {
    const record = rolloutRecord();
    const provider: FleetProvider = {
      rows: () => ui.fleet.rows(),
      summary: () => ({
        ...ui.fleet.summary(),
        rollout: { id: record.id, phase: record.phase, wave: rolloutView(record).wave, message: record.message },
      }),
      rollout: () => rolloutView(record),
      cluster: (name) => ui.fleet.cluster(name),
      subscribe: (l) => ui.fleet.subscribe(l),
    };
    const server = await startUiServer(uiHandler({ provider }), "127.0.0.1", 0);
    try {
      await page.goto(server.url);
      await page.waitForSelector(".rollout-line");
      expect(await page.locator(".rollout-line").textContent()).to.include("Progressing, wave 2/2 (rest)");
      await page.click('.rollout-line a[href="/rollout"]');
      await page.waitForSelector('section.wave[data-wave="rest"]');
      expect(await page.locator('section.wave[data-wave="canary"] .badge').textContent()).to.equal("done");
      expect(await page.locator('section.wave[data-wave="rest"] .badge').textContent()).to.equal("current");
      expect(await page.locator('section.wave[data-wave="rest"] p').textContent()).to.include("1 clusters, 1 moved");
    } finally {
      await server.close();
    }
  });

  describe("behind the host's TokenReview and SubjectAccessReview", () => {
    let kube: KubeServer;
    let client: KubeClient;
    let guarded: RunningUi;
    before(async () => {
      kube = await startKubeServer({
        namespaces: ["default", "vc-system"],
        tokenReviews: true,
        users: [
          { token: "stranger-token", rules: [], name: "stranger" },
          {
            token: "reader-token",
            rules: [{ verbs: ["list"], apiGroups: [""], resources: ["configmaps"], namespaces: ["vc-system"] }],
            name: "reader",
          },
        ],
      });
      client = KubeClient.open({ kubeconfig: kube.kubeconfigPath });
      const handler = uiHandler({ provider: ui.fleet, authorize: tokenAuthorizer(client, fleetAccess("vc-system")) });
      guarded = await startUiServer(handler, "127.0.0.1", 0);
    });
    after(async () => {
      await guarded?.close();
      client?.close();
      await kube?.close();
    });

    it("asks for a token, keeps it in the tab's session storage, says clearly when it may not read", async () => {
      const p = await browser.context.newPage();
      await p.goto(guarded.url);
      await p.waitForSelector("form.login");
      await p.fill('input[name="token"]', "stranger-token");
      await p.click('form.login button[type="submit"]');
      const alert = p.locator('.problem[role="alert"]');
      await alert.waitFor();
      expect(await alert.textContent()).to.match(
        /Not allowed[\s\S]*"stranger" may not list configmaps in namespace vc-system/,
      );
      expect(await p.evaluate(() => document.cookie)).to.equal("");
      expect(p.url()).to.not.include("token");
      expect(await p.evaluate(() => sessionStorage.getItem("vc-fleet-token"))).to.equal("stranger-token");
      await p.click('button:has-text("Use another token")');
      await p.waitForSelector("form.login");
      await p.fill('input[name="token"]', "reader-token");
      await p.click('form.login button[type="submit"]');
      await p.waitForSelector('tr[data-cluster="minimal"]');
      await p.close();
    });
  });
});
