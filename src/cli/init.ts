// `vc init [dir]`: scaffolds a fleet repository (clusters/, workflows, CODEOWNERS, deploy/); --dry-run lists the files.
import type { Command } from "commander";
import { initFleet, ACTION_REPOSITORY, DEFAULT_OWNERS } from "../init/index.js";
import { nextStepsText } from "../init/next-steps.js";
import { packageInfo } from "../model/package.js";
import { action, EXIT } from "./common.js";

interface InitFlags {
  cluster: string;
  repoUrl?: string;
  branch: string;
  owners?: string;
  actionRef?: string;
  dryRun?: boolean;
}

export function register(program: Command): void {
  program
    .command("init")
    .summary("scaffold a fleet repository")
    .description(
      "scaffold a fleet repository: an example clusters/<name>/ folder, GitHub workflows (validate, plan comment, " +
        "drift) pinned to this vc " +
        "version, CODEOWNERS for the platform-owned files and deploy/ with the reconciler pointed at the " +
        "repository; never overwrites a file",
    )
    .argument("[dir]", "folder of the fleet repository (created when missing)", ".")
    .option("--cluster <name>", "name of the example cluster", "example")
    .option(
      "--repo-url <url>",
      "http(s) URL the reconciler fetches the repository from (default: the git remote origin of dir)",
    )
    .option("--branch <name>", "the branch the reconciler follows and drift detection compares", "main")
    .option(
      "--owners <owners>",
      `CODEOWNERS owners of the platform-owned files, space-separated (default ${DEFAULT_OWNERS})`,
    )
    .option(
      "--action-ref <ref>",
      `the GitHub Action the workflows use (default ${ACTION_REPOSITORY}@v<this version>; a commit SHA pins it harder)`,
    )
    .option("--dry-run", "list the files it would write and write nothing")
    .addHelpText(
      "after",
      "\nExit status: 0 written (or listed), 1 a file exists already or an option is invalid, 2 a runtime failure.",
    )
    .action(
      action(async (dir: string, flags: InitFlags) => {
        const result = await initFleet({ dir, ...flags });
        const verb = result.written ? "wrote" : "would write";
        process.stdout.write(result.files.map((f) => `${verb} ${f}\n`).join(""));
        for (const note of result.notes) process.stderr.write(`note: ${note}\n`);
        if (result.written) {
          const { name, version } = packageInfo();
          // Through npx (npm exec) the next commands go through npx too, by our package's name: a bare `npx vc` outside
          // the fleet would fetch whatever package is called "vc".
          const vc = process.env.npm_command === "exec" ? `npx ${name}` : "vc";
          process.stderr.write(
            nextStepsText({
              root: result.root,
              cwd: process.cwd(),
              vc,
              packageName: name,
              version,
              branch: result.branch,
              repoUrl: result.repoUrl,
              createdRepository: result.git.created,
              filesWritten: result.files.length,
            }),
          );
        } else if (result.git.created) {
          process.stderr.write("would make the folder a git repository (git init), with no commit\n");
        }
        return EXIT.ok;
      }),
    );
}
