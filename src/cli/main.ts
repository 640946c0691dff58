// The `vc` command line: builds the command tree; each command lives in its own file under src/cli/.
import { Command, CommanderError } from "commander";
import { EXIT, exitQuietlyOnClosedStdout } from "./common.js";
import { boundHeapGrowth } from "./heap.js";
import { packageInfo } from "../model/package.js";
import { parseRequestTimeout } from "../model/duration.js";
import { reportError } from "../model/errors.js";
import { wrapHelpToTerminal } from "../util/help-width.js";
import { RECORDS_NAMESPACE_ENV } from "../translate/keys.js";
import { isDns1123Label, labelProblem } from "../validate/names.js";
import { escapeControls } from "../model/escape.js";
import { UserError } from "../model/errors.js";
type CommandModule = { register(program: Command): void };

/**
 * Top-level command names and the module that defines them. Only the invoked command's module is
 * loaded, so `vc validate` never pays for the Kubernetes client; help and unknown commands load all.
 */
const COMMANDS: ReadonlyArray<readonly [names: readonly string[], load: () => Promise<CommandModule>]> = [
  [["validate"], () => import("./validate.js")],
  [["render"], () => import("./render.js")],
  [["diff"], () => import("./diff.js")],
  [["apply"], () => import("./apply.js")],
  [["adopt"], () => import("./adopt.js")],
  [["reconcile"], () => import("./reconcile.js")],
  [["status"], () => import("./status.js")],
  [["history"], () => import("./history.js")],
  [["rollout"], () => import("./rollout.js")],
  [["list"], () => import("./list.js")],
  [["create"], () => import("./create.js")],
  [["connect", "disconnect"], () => import("./connect.js")],
  [["describe"], () => import("./describe.js")],
  [["debug"], () => import("./debug.js")],
  [["restore"], () => import("./restore.js")],
  [["doctor"], () => import("./doctor.js")],
  [["init"], () => import("./init.js")],
];

/** A records namespace given on the command line, checked as the server would check it (a DNS-1123 label). */
function parseRecordsNamespace(text: string): string {
  if (!isDns1123Label(text))
    throw new UserError(`invalid --records-namespace "${escapeControls(text)}": ${labelProblem(text)}`);
  return text;
}

/** Root options that take a value (the word after them is not the command). */
const VALUED_ROOT_OPTIONS = ["--request-timeout", "--records-namespace"];

/** The command tree: every command, or only the one `argv` invokes. */
export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
  const program = new Command("vc")
    .description("GitOps for virtual clusters: validate, render, diff, apply and reconcile them from a git repository")
    .version(packageInfo().version)
    .option(
      "--request-timeout <duration>",
      "longest wait for one API request, its retries included: seconds (30), a duration (30s, 2m), or 0 for no limit",
      "30s",
    )
    .option(
      "--records-namespace <ns>",
      "namespace of vc's records on the host (default: $VC_RECORDS_NAMESPACE, else $POD_NAMESPACE, else vc-system)",
    )
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  wrapHelpToTerminal(program);
  // Read before any command runs: every client the command opens gets the budget.
  program.hook("preAction", async (root) => {
    const timeoutMs = parseRequestTimeout(String(root.opts().requestTimeout));
    const { DEFAULT_BUDGET, setRequestBudget } = await import("../host/budget.js");
    setRequestBudget({ ...DEFAULT_BUDGET, timeoutMs });
    const records = root.opts().recordsNamespace as string | undefined;
    if (records !== undefined) process.env[RECORDS_NAMESPACE_ENV] = parseRecordsNamespace(records);
  });
  const invoked = argv.find((a, i) => !a.startsWith("-") && !VALUED_ROOT_OPTIONS.includes(argv[i - 1] ?? ""));
  const only = COMMANDS.find(([names]) => invoked !== undefined && names.includes(invoked));
  for (const [, load] of only ? [only] : COMMANDS) (await load()).register(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  exitQuietlyOnClosedStdout();
  boundHeapGrowth();
  const program = await buildProgram(argv);
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT.ok : EXIT.failure;
    }
    // An error before the command's own action ran (a bad --request-timeout): a message, never a stack trace.
    return reportError(err);
  }
  return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
}

// `node --import tsx src/cli/main.ts ...` (npm start, npm run vc) runs it directly; bin/vc.js calls main().
if (process.argv[1]?.endsWith("src/cli/main.ts")) {
  process.exitCode = await main(process.argv.slice(2));
}
