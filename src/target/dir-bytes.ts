// The bytes the dir: target writes for an object (its one serialisation), and a file's text compared with them, so that a file vc wrote is known without parsing it.
import { randomBytes } from "node:crypto";
import type { KubeObject } from "../kube/object.js";
import { toYaml } from "../plan/diff.js";
import { stripServerFields } from "../plan/normalize.js";
import { withholdCredentials } from "../render/secrets.js";
import { ANNOTATIONS } from "../translate/keys.js";

/** What apply writes for an object: `clean` (server fields and inline credentials dropped) serialised as `text`. */
export interface Manifest {
  clean: KubeObject;
  text: string;
}

/**
 * A manifest with its text split around the value of its revision annotation (`text` = `head` + revision + `tail`),
 * when that value is a plain YAML scalar: a file that differs from `text` only there is the same object at another
 * revision (an object keeps the revision that last changed it, so after any commit most files differ there).
 */
export interface ExpectedManifest extends Manifest {
  head?: string;
  tail?: string;
}

/** The one serialisation of the dir: target: what apply writes, and what a plan's comparison of bytes is made with. */
export function manifestOf(obj: KubeObject): Manifest {
  const clean = stripServerFields(withholdCredentials(obj));
  return { clean, text: toYaml(clean) };
}

/**
 * A value no object holds (random per process, so a tenant cannot plant it), written in place of the revision to find
 * where the revision's bytes sit in the text.
 */
const MARK = `vcrevisionmark${randomBytes(12).toString("hex")}`;

/**
 * The manifest of `obj` as manifestOf gives it, split around its revision annotation. The text is serialised once,
 * with MARK as the revision, and the revision put in MARK's place: both are plain scalars on one line (toYaml never
 * folds lines), so the result is the bytes toYaml writes for the object itself (test/target/dir-bytes.test.ts).
 */
export function expectedManifest(obj: KubeObject): ExpectedManifest {
  const clean = stripServerFields(withholdCredentials(obj));
  const revision = clean.metadata.annotations?.[ANNOTATIONS.revision];
  if (typeof revision === "string" && plainScalar(revision)) {
    const marked = toYaml(withRevision(clean, MARK));
    const at = marked.indexOf(MARK);
    if (at >= 0 && marked.indexOf(MARK, at + MARK.length) < 0) {
      const head = marked.slice(0, at);
      const tail = marked.slice(at + MARK.length);
      return { clean, text: head + revision + tail, head, tail };
    }
  }
  return { clean, text: toYaml(clean) };
}

/**
 * The object a file's text holds when it is the expected manifest's bytes (the object itself) or those bytes with
 * another plain revision (the object with that revision): what parsing the file would give. Undefined for any other
 * text, which is then parsed.
 */
export function matchManifest(want: ExpectedManifest, text: string): KubeObject | undefined {
  if (text === want.text) return want.clean;
  const { head, tail } = want;
  if (head === undefined || tail === undefined || text.length <= head.length + tail.length) return undefined;
  if (!text.startsWith(head) || !text.endsWith(tail)) return undefined;
  const revision = text.slice(head.length, text.length - tail.length);
  return plainScalar(revision) ? withRevision(want.clean, revision) : undefined;
}

/** Values already checked by plainScalar (revisions: a few per run). */
const PLAIN = new Map<string, boolean>();

/**
 * True when `value` is written by toYaml as itself, unquoted, on one line: then the same bytes in a file read back as
 * this string (a value YAML would read otherwise, such as `true`, `1e3` or `~`, is quoted by toYaml, so never plain).
 */
export function plainScalar(value: string): boolean {
  let known = PLAIN.get(value);
  if (known === undefined) {
    known = value !== "" && !value.includes("\n") && toYaml(value) === `${value}\n`;
    if (PLAIN.size >= 1000) PLAIN.clear();
    PLAIN.set(value, known);
  }
  return known;
}

function withRevision(obj: KubeObject, revision: string): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, annotations: { ...obj.metadata.annotations, [ANNOTATIONS.revision]: revision } } };
}
