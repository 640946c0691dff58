// The `vc` command line: builds the command tree; each command lives in its own file under src/cli/.
import { Command, CommanderError } from "commander";
import { EXIT } from "./common.js";
import { register as registerValidate } from "./validate.js";
import { register as registerRender } from "./render.js";
import { register as registerDiff } from "./diff.js";
import { register as registerApply } from "./apply.js";
import { register as registerConnect } from "./connect.js";
import { register as registerDoctor } from "./doctor.js";
import { register as registerRestore } from "./restore.js";
import { register as registerDebug } from "./debug.js";
import { register as registerList } from "./list.js";
import { register as registerDescribe } from "./describe.js";
import { register as registerCreate } from "./create.js";
import { register as registerReconcile } from "./reconcile.js";
import { register as registerStatus } from "./status.js";
import { register as registerHistory } from "./history.js";

export function buildProgram(): Command {
  const program = new Command("vc")
    .description("GitOps for virtual clusters: validate, render, diff, apply and reconcile them from a git repository")
    .version("0.1.0")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();
  // Commands register themselves here, one line each.
  registerValidate(program);
  registerRender(program);
  registerDiff(program);
  registerApply(program);
  registerConnect(program);
  registerDoctor(program);
  registerRestore(program);
  registerDebug(program);
  registerList(program);
  registerDescribe(program);
  registerCreate(program);
  registerReconcile(program);
  registerStatus(program);
  registerHistory(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.exitCode === 0 ? EXIT.ok : EXIT.failure;
    }
    throw err;
  }
  return typeof process.exitCode === "number" ? process.exitCode : EXIT.ok;
}

// `node --import tsx src/cli/main.ts ...` (npm start, npm run vc) runs it directly; bin/vc.js calls main().
if (process.argv[1]?.endsWith("src/cli/main.ts")) {
  process.exitCode = await main(process.argv.slice(2));
}
