// Runs an entry point: the prebuilt bundle in dist/app/ when it is newer than every source file, else the sources through tsx.
import { existsSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../", import.meta.url));

/** Newest modification time of any file under `dir` (0 when it does not exist). */
function newestMtime(dir) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const m = statSync(`${entry.parentPath ?? entry.path}/${entry.name}`).mtimeMs;
    if (m > newest) newest = m;
  }
  return newest;
}

/** Imports the entry `name` (`vc`, `vc-metrics-proxy`): the bundle when fresh, else `source` via tsx. */
export async function launch(name, source) {
  const bundle = `${root}dist/app/${name}.js`;
  const fresh = existsSync(bundle) && statSync(bundle).mtimeMs >= newestMtime(`${root}src`);
  if (fresh && process.env.VC_NO_BUNDLE !== "1") return import(bundle);
  if (!existsSync(`${root}${source}`)) {
    // An installed package ships the bundle only: without it there is nothing to run.
    process.stderr.write(`error: ${bundle} is missing: reinstall @vc-gitops/vc (or run npm run build in a checkout)\n`);
    process.exit(2);
  }
  const { register } = await import("tsx/esm/api");
  register();
  return import(`${root}${source}`);
}
