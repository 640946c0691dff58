// Builds the fleet page's bundle (preact and htm with the page's code, and its styles) into dist/ui with esbuild.
import { build } from "esbuild";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..");

/** Bundles src/ui/web/ into `outdir` (default dist/ui): app.js (an ES module for browsers) and app.css. */
export async function buildPage(outdir = join(ROOT, "dist", "ui")): Promise<void> {
  await build({
    entryPoints: { app: join(ROOT, "src/ui/web/app.ts") },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2020",
    outdir,
    logLevel: "warning",
    legalComments: "eof",
  });
  await build({
    entryPoints: { app: join(ROOT, "src/ui/web/app.css") },
    bundle: true,
    minify: true,
    outdir,
    logLevel: "warning",
  });
}

if (process.argv[1]?.endsWith("scripts/build-ui.ts")) await buildPage();
