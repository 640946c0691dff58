// The installed vc package: its name, version and root folder (the same from the sources and from the dist/app bundle).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The package root: two folders above this module in the sources (src/model/) and in the bundle (dist/app/). */
export const PACKAGE_ROOT = fileURLToPath(new URL("../../", import.meta.url));

interface PackageJson {
  name: string;
  version: string;
}

let cached: PackageJson | undefined;

/** Name and version from the package's package.json. */
export function packageInfo(): PackageJson {
  if (!cached) {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as PackageJson;
    cached = { name: pkg.name, version: pkg.version };
  }
  return cached;
}

/** The project's public repository (package.json "repository"); its docs/ pages are read at the tag of this version. */
export const PROJECT_URL = "https://github.com/vc-project/vc";

/** The URL of a documentation page (`troubleshooting.md`) as of this vc release. */
export function docsUrl(page: string): string {
  return `${PROJECT_URL}/blob/v${packageInfo().version}/docs/${page}`;
}
