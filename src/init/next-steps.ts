// What `vc init` tells the user to do next: the commands, in order, that check, apply and commit the new fleet.
import { isAbsolute, relative } from "node:path";

export interface NextStepsInput {
  /** The fleet folder (absolute) and the folder the user ran vc init in. */
  root: string;
  cwd: string;
  /** How the user runs vc: `vc`, or `npx <package>` when vc init ran through npx. */
  vc: string;
  packageName: string;
  version: string;
  branch: string;
  repoUrl?: string;
  /** The repository was made by vc init (no commit, no remote yet). */
  createdRepository: boolean;
  filesWritten: number;
}

interface NextStep {
  command: string;
  why: string;
}

/** A path as a shell word: kept as is when plain, else single-quoted. */
function shellWord(text: string): string {
  return /^[\w./@:+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The commands to run, each with why; `git push` needs a remote, added when vc init made the repository. */
function nextSteps(input: NextStepsInput): NextStep[] {
  const steps: NextStep[] = [];
  const rel = relative(input.cwd, input.root);
  if (rel !== "")
    steps.push({ command: `cd ${shellWord(isAbsolute(rel) ? input.root : rel)}`, why: "the fleet repository" });
  steps.push(
    { command: `${input.vc} validate`, why: "checks every cluster folder" },
    { command: `${input.vc} render`, why: "prints the host objects of each cluster" },
    { command: `${input.vc} apply`, why: "writes them into hydrated/ (--target kube: a host)" },
    { command: `${input.vc} diff`, why: "compares again: nothing left to change" },
    { command: "git add -A", why: "hydrated/ and node_modules/ stay out (.gitignore)" },
    { command: `git commit -m "A fleet of virtual clusters"`, why: "the first commit is yours: vc init made none" },
  );
  if (input.createdRepository) {
    steps.push({
      command: `git remote add origin ${input.repoUrl ? shellWord(input.repoUrl) : "<repository-url>"}`,
      why: "where the reconciler and the workflows read it",
    });
  }
  steps.push({ command: `git push -u origin ${shellWord(input.branch)}`, why: "the reconciler follows this branch" });
  return steps;
}

/** The closing words of vc init: what was made, then the next steps aligned in two columns. */
export function nextStepsText(input: NextStepsInput): string {
  const made = input.createdRepository
    ? `made it a new git repository (branch ${input.branch}) and committed nothing`
    : "in an existing git repository, committed nothing";
  const steps = nextSteps(input);
  const width = Math.max(...steps.map((s) => s.command.length));
  return [
    `${input.filesWritten} files in ${input.root}; ${made}.`,
    "Next:",
    ...steps.map((s) => `  ${s.command.padEnd(width)}   # ${s.why}`),
    `package.json pins ${input.packageName}@${input.version}: after npm install, npx vc runs that version here ` +
      `and in CI.`,
    "",
  ].join("\n");
}
