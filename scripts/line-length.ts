// Every line of the TypeScript sources is at most 120 characters, comments and strings included (Biome's formatter
// wraps code, not comments or long literals). The lines longer than that when the rule came in (literals the
// formatter cannot break: regular expressions, nested templates, test titles) are listed in line-length-known.txt;
// a long line not listed fails, and so does a listed line that is gone (the list only shrinks).
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const FOLDERS = ["src", "test", "bench", "scripts"];
const KNOWN = join(ROOT, "scripts/line-length-known.txt");
const MAX = 120;

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) yield* sources(path);
    else if (/\.(ts|mts|cts|mjs|cjs|js)$/.test(e.name)) yield path;
  }
}

/** Each long line as `file<TAB>text` (its text without indentation, so a moved line is still the same line). */
const long: { key: string; where: string }[] = [];
for (const folder of FOLDERS)
  for (const file of sources(join(ROOT, folder))) {
    const path = relative(ROOT, file);
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, i) => {
        if ([...line].length > MAX) long.push({ key: `${path}\t${line.trim()}`, where: `${path}:${i + 1}` });
      });
  }

if (process.argv.includes("--write-known")) {
  writeFileSync(KNOWN, `${[...new Set(long.map((l) => l.key))].sort().join("\n")}\n`);
  process.stdout.write(`${long.length} long line(s) written to ${relative(ROOT, KNOWN)}\n`);
  process.exit(0);
}
const known = new Set(readFileSync(KNOWN, "utf8").split("\n").filter(Boolean));
const found = new Set(long.map((l) => l.key));
const fresh = long.filter((l) => !known.has(l.key));
const gone = [...known].filter((k) => !found.has(k));
for (const l of fresh) process.stdout.write(`${l.where}: longer than ${MAX} characters\n`);
for (const k of gone) process.stdout.write(`${k.split("\t")[0]}: a known long line is gone: remove it from the list\n`);
if (fresh.length + gone.length > 0) {
  process.stdout.write(
    `${fresh.length} new line(s) longer than ${MAX} characters, ${gone.length} stale entr(y/ies) in ` +
      `${relative(ROOT, KNOWN)} (wrap the new ones; once listed ones are wrapped, --write-known drops them)\n`,
  );
  process.exit(1);
}
process.stdout.write(`line length: no new line longer than ${MAX} characters (${known.size} known)\n`);
