// DNS-1123 label checks for cluster folder names (the schemas check the other names).

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

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
