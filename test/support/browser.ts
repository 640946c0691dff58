// A real browser for the page's tests: Debian's chromium driven by playwright-core (which never downloads one).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";
import { findExecutable, requireOrSkip } from "./requires.js";

/** Debian's chromium (VC_CHROMIUM names another build of it, as on a GitHub runner). */
const CHROMIUM = process.env.VC_CHROMIUM ?? "/usr/bin/chromium";

/** The flags the browser runs with: headless, no sandbox (root in CI), and nothing that reaches the network. */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** In a mocha `before` hook: a browser with a fresh profile, or the suite skipped (failed in CI) without chromium. */
export async function launchBrowser(ctx: Mocha.Context): Promise<Browser> {
  requireOrSkip(ctx, findExecutable(CHROMIUM) ? undefined : CHROMIUM, "apt-get install chromium");
  const profile = mkdtempSync(join(tmpdir(), "vc-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
