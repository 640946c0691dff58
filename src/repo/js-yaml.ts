// js-yaml's loader as the repository reads YAML with: the library's CommonJS build, whose parser runs faster on Node
// 20.
import { createRequire } from "node:module";

/**
 * The same js-yaml release as `import "js-yaml"` (its ES module build), loaded through its CommonJS build: that one is
 * compiled down to ES2017 and on Node 20's V8 parses and constructs about 2.5 times faster (19,000 hydrated manifests:
 * 0.9 s of CPU against 2.4 s; compiling the ES module build for es2017 with esbuild gives the same gain, for es2019
 * not). Values, errors and limits are the library's own either way (test/repo/yaml-differential.test.ts compares
 * with the ES module build's loadAll).
 */
const requireCommonJs = createRequire(import.meta.url);
const jsYaml = requireCommonJs("js-yaml") as typeof import("js-yaml");

export const { constructFromEvents, EVENT_ID, getScalarValue, load, parseEvents, SCALAR_STYLE, YAMLException } = jsYaml;
export type { Event } from "js-yaml";

/** Deepest nesting of collections in the text: 64 nested collections are read, 65 refused. */
export const MAX_DEPTH = 64;
/**
 * js-yaml's `maxDepth` counts nodes, scalars included, and counts flow and block styles differently: it is only the
 * parser's stack guard, set so that MAX_DEPTH collections always parse; the limit itself is counted on the events.
 */
export const PARSE_MAX_DEPTH = MAX_DEPTH + 2;
