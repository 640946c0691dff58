// vc completion bash|zsh|fish: scripts generated from the command tree; the bash one completes in a real bash.
import { expect } from "chai";
import { spawnSync } from "node:child_process";
import { runVc } from "../support/vc.js";
import { findExecutable, requireOrSkip } from "../support/requires.js";

/** What the bash script offers for the words typed (the last one being completed). */
function complete(script: string, words: string[]): string[] {
  const res = spawnSync(
    "bash",
    [
      "-c",
      `${script}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _vc; ` +
        'printf "%s\\n" "${COMPREPLY[@]}"',
    ],
    { encoding: "utf8" },
  );
  expect(res.status, res.stderr).to.equal(0);
  return res.stdout.split("\n").filter(Boolean);
}

describe("vc completion", () => {
  let bash: string;
  before(async function () {
    requireOrSkip(this, findExecutable("bash") ? undefined : "bash", "apt-get install bash");
    const res = await runVc(["completion", "bash"]);
    expect(res.code, res.stderr).to.equal(0);
    bash = res.stdout;
  });

  it("bash completes commands, subcommands, flags and a flag's choices", () => {
    expect(complete(bash, ["vc", "ro"])).to.deep.equal(["rollout"]);
    expect(complete(bash, ["vc", "rollout", "pa"])).to.deep.equal(["pause"]);
    expect(complete(bash, ["vc", "apply", "--tar"])).to.deep.equal(["--target"]);
    expect(complete(bash, ["vc", "status", "-o", ""])).to.deep.equal(["table", "json", "yaml"]);
    expect(complete(bash, ["vc", "--request-timeout", "30s", "vers"])).to.deep.equal(["version"]);
  });

  it("zsh and fish name every command with its summary", async () => {
    const zsh = (await runVc(["completion", "zsh"])).stdout;
    const fish = (await runVc(["completion", "fish"])).stdout;
    expect(zsh).to.match(/^#compdef vc/);
    for (const [name, summary] of [
      ["rollout", "show and steer the rollout of a fleet base change"],
      ["completion", "print a shell completion script (bash, zsh or fish)"],
    ]) {
      expect(zsh).to.include(`'${name}:${summary}'`);
      expect(fish).to.include(`-a '${name}' -d '${summary}'`);
    }
    expect(fish).to.include("complete -c vc -n '__vc_path rollout status'");
  });

  it("an unknown shell is a usage error", async () => {
    const res = await runVc(["completion", "powershell"]);
    expect(res.code).to.equal(2);
    expect(res.stderr).to.include('unknown shell "powershell"');
  });
});
