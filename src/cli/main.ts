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
  [["ui"], () => import("./ui.js")],
  [["version"], () => import("./version.js")],
  [["completion"], () => import("./completion.js")],
];

/** Commands that read the whole command tree: every module is loaded for them, as for help. */
const WHOLE_TREE = new Set(["completion", "help"]);

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
    .option("--request-timeout <duration>", "per API request, retries included; 0: no limit", "30s")
    .option("--records-namespace <ns>", "namespace of vc's records on the host (default: below)")
    .addHelpText(
      "after",
      "\nThe records namespace is --records-namespace, else $VC_RECORDS_NAMESPACE, else $POD_NAMESPACE, else " +
        "vc-system.\nRun vc <command> --help for a command's flags.",
    )
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  wrapHelpToTerminal(program);
  // Commands listed as kubectl lists them: the name and its arguments, then one line of summary.
  program.configureHelp({ subcommandTerm: commandTerm });
  // Read before any command runs: every client the command opens gets the budget.
  program.hook("preAction", async (root) => {
    const timeoutMs = parseRequestTimeout(String(root.opts().requestTimeout));
    const { DEFAULT_BUDGET, setRequestBudget } = await import("../host/budget.js");
    setRequestBudget({ ...DEFAULT_BUDGET, timeoutMs });
    const records = root.opts().recordsNamespace as string | undefined;
    if (records !== undefined) process.env[RECORDS_NAMESPACE_ENV] = parseRecordsNamespace(records);
  });
  const invoked = invokedWord(argv);
  const only = COMMANDS.find(([names]) => invoked !== undefined && !WHOLE_TREE.has(invoked) && names.includes(invoked));
  for (const [, load] of only ? [only] : COMMANDS) (await load()).register(program);
  return program;
}

/** A command's name and arguments, without `[options]` (its own help lists them). */
function commandTerm(cmd: Command): string {
  const args = cmd.registeredArguments.map((a) => {
    const name = `${a.name()}${a.variadic ? "..." : ""}`;
    return a.required ? `<${name}>` : `[${name}]`;
  });
  return [cmd.name(), ...args].join(" ");
}

/** The first word of `argv` that names a command (not a root option or its value). */
function invokedWord(argv: readonly string[]): string | undefined {
  return argv.find((a, i) => !a.startsWith("-") && !VALUED_ROOT_OPTIONS.includes(argv[i - 1] ?? ""));
}

export async function main(argv: string[]): Promise<number> {
  exitQuietlyOnClosedStdout();
  boundHeapGrowth();
  const invoked = invokedWord(argv);
  // `vc nosuch --help` is an unknown command, not a request for the top-level help: commander says so (exit 2).
  if (invoked !== undefined && !WHOLE_TREE.has(invoked) && !COMMANDS.some(([names]) => names.includes(invoked)))
    argv = argv.filter((a) => a !== "--help" && a !== "-h");
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
