// Name checks for cluster folder names (the schemas check the other names).

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Longest cluster name. The StatefulSet `<cluster>` gives its pods the label
 * `controller-revision-hash=<cluster>-<10 characters>`, which must fit in 63 characters.
 */
export const MAX_CLUSTER_NAME = 52;

export function isDns1123Label(s: string): boolean {
  return s.length > 0 && s.length <= 63 && LABEL.test(s);
}

/** Why a string is not a DNS-1123 label, for messages. */
export function labelProblem(s: string): string {
  if (s.length === 0) return "it is empty";
  if (s.length > 63) return `it is ${s.length} characters long, over 63`;
  if (/[A-Z]/.test(s)) return "it has upper-case letters";
  if (/^[-]|[-]$/.test(s)) return "it starts or ends with '-'";
  return "use only lower-case letters, digits and '-'";
}

/**
 * Why a folder name cannot be a cluster name, or undefined when it can. A cluster name is a DNS-1123 label
 * that starts with a letter (it names the Service `<cluster>`, a DNS-1035 label) and has at most 52 characters.
 */
export function clusterNameProblem(name: string): string | undefined {
  if (!isDns1123Label(name)) return `it must be a DNS-1123 label (${labelProblem(name)})`;
  if (!/^[a-z]/.test(name)) return "it must start with a letter: it also names the Service of the virtual API server";
  if (name.length > MAX_CLUSTER_NAME) {
    return (
      `it is ${name.length} characters long, over ${MAX_CLUSTER_NAME}: the control-plane pods' ` +
      `controller-revision-hash label would exceed 63`
    );
  }
  return undefined;
}
