// Text from a host (names, messages, who applied) made safe to print on a terminal: control characters shown, never
// obeyed.
//
// A host string is data a tenant may have written. Printed raw, a newline forges a table row, an ANSI escape colours
// or clears the terminal, a bidi override reverses what the reader sees. `escapeControls` renders each such character
// visibly (`\n`, `\x1b`, `\u202e`); everything else, other non-ASCII text included, reads as written. JSON output needs
// none of this: JSON.stringify escapes control characters itself.

/**
 * C0 controls, DEL, C1 controls (U+0080-U+009F: 0x9b alone starts an escape sequence on some terminals), the bidi
 * marks, embeddings, overrides and isolates, the line and paragraph separators, and the zero-width no-break space.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function visible(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** `text` with every control, bidi and line-breaking character written out as an escape. */
export function escapeControls(text: string): string {
  return text.replace(CONTROL, visible);
}

/** escapeControls for whatever a host gave (undefined and null print as they would). */
export function shown(value: unknown): string {
  return escapeControls(String(value));
}

/** Each line of a multi-line text escaped, the line breaks kept: for messages that are several lines on purpose. */
export function escapeLines(text: string): string {
  return text.split("\n").map(escapeControls).join("\n");
}

/** The characters JSON.stringify leaves raw that a terminal may obey or that reorder text (C1, bidi, U+2028/9, BOM). */
const JSON_RAW = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/g;

/** Whether a string holds one of those characters. */
export function hasRawControls(text: string): boolean {
  JSON_RAW.lastIndex = 0;
  return JSON_RAW.test(text);
}

/** JSON text with those characters as `\uXXXX` escapes: the same JSON value (they can only occur inside strings). */
export function jsonEscapeControls(json: string): string {
  return json.replace(JSON_RAW, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
