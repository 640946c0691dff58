// Deep-merges layered values documents: mappings merge key by key, lists and scalars replace, null removes a key.

export type Mapping = Record<string, unknown>;

export function isMapping(value: unknown): value is Mapping {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A new mapping: `overlay` over `base`. Neither input is modified. */
export function deepMerge(base: Mapping, overlay: Mapping): Mapping {
  const out: Mapping = { ...base };
  for (const key of Object.keys(overlay)) {
    const value = overlay[key];
    if (value === null) {
      delete out[key];
    } else if (isMapping(value) && isMapping(out[key])) {
      out[key] = deepMerge(out[key] as Mapping, value);
    } else {
      out[key] = value;
    }
  }
  return out;
}

/** Which of the layered documents (index, last wins) sets `path`; -1 when none does. */
export function layerSetting(layers: readonly unknown[], path: readonly string[]): number {
  for (let i = layers.length - 1; i >= 0; i--) {
    let node: unknown = layers[i];
    let found = true;
    for (const seg of path) {
      if (!isMapping(node) || !Object.hasOwn(node, seg)) {
        found = false;
        break;
      }
      node = node[seg];
    }
    if (found) return i;
  }
  return -1;
}
