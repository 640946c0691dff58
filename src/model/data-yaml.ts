// Data as YAML for stdout (every `-o yaml`): keys sorted, no anchors, no folding, nothing a terminal obeys left raw.
import { DEFAULT_SCALAR_STYLE_RULES, dump, SCALAR_STYLE, type ScalarLayout } from "js-yaml";
import { hasRawControls, jsonEscapeControls } from "./escape.js";

/** A scalar holding a character that reorders or controls a terminal is double-quoted, the only style with escapes. */
function doubleQuoteRawControls(layout: ScalarLayout): void {
  if (hasRawControls(layout.node.value)) layout.style = SCALAR_STYLE.DOUBLE_QUOTED;
}

const YAML_STYLE_RULES = [...Object.values(DEFAULT_SCALAR_STYLE_RULES), doubleQuoteRawControls];

/**
 * YAML with sorted keys. In YAML a string holding a control character is double-quoted (js-yaml escapes C0 and C1
 * controls there itself), and the bidi and separator characters it leaves raw become \u escapes, which a
 * double-quoted scalar reads back as the same character.
 */
export function dataYaml(data: unknown): string {
  return jsonEscapeControls(
    dump(data, { sortKeys: true, noRefs: true, lineWidth: -1, scalarStyleRules: YAML_STYLE_RULES }),
  );
}

/**
 * The items of a block sequence that is the value of a top-level key, one item's text at a time: the same bytes
 * `dataYaml` writes for them inside the whole document (an item is indented by two spaces; empty lines, as in a
 * block scalar, stay empty; js-yaml writes an indentation indicator relative to its parent, so it holds at any depth).
 */
export function sequenceItemYaml(item: unknown): string {
  return dataYaml([item]).replace(/^(?=.)/gm, "  ");
}
