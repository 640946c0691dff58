// The fleet page's files: the HTML shell (no inline script or style) and the bundle `npm run build` makes in dist/ui.
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "../model/package.js";

/** Where `npm run build` writes the page's bundle (package.json's build script). */
const ASSETS_DIR = join(PACKAGE_ROOT, "dist", "ui");

export interface Assets {
  /** The HTML of every page path. */
  page: string;
  /** Files under /ui/ by name. */
  files: Map<string, { type: string; body: Buffer; etag: string }>;
}

const TYPES: Record<string, string> = {
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
};

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>vc fleet</title>
<link rel="stylesheet" href="/ui/app.css">
<script type="module" src="/ui/app.js"></script>
</head>
<body>
<div id="app"><p class="loading">Loading the fleet…</p></div>
<noscript><p>The fleet page needs JavaScript. The same data: vc list -o json, vc status -o json.</p></noscript>
</body>
</html>
`;

const MISSING = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>vc fleet</title></head>
<body><p>The fleet page's files are not built: run <code>npm run build</code> in vc's folder
(an installed package ships them). The API answers at <code>/api/v1/clusters</code>.</p></body></html>
`;

/** The page's files from `dir` (default: the package's dist/ui), read once. */
export function loadAssets(dir = ASSETS_DIR): Assets {
  const files = new Map<string, { type: string; body: Buffer; etag: string }>();
  for (const [name, type] of Object.entries(TYPES)) {
    const file = join(dir, name);
    if (!existsSync(file)) continue;
    const body = readFileSync(file);
    files.set(name, { type, body, etag: `"${createHash("sha256").update(body).digest("hex").slice(0, 16)}"` });
  }
  return { page: files.size === Object.keys(TYPES).length ? SHELL : MISSING, files };
}
