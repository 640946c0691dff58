// `vc completion bash|zsh|fish`: a shell completion script for vc's commands, subcommands and flags.
import type { Command, Option } from "commander";
import { action, EXIT, UserError } from "./common.js";

/** One command of the tree as completion needs it: its words after `vc`, subcommands and flags. */
interface Node {
  path: string[];
  summary: string;
  subcommands: string[];
  /** Flags; `value` when the flag takes one, `choices` when it names them. */
  flags: Array<{ names: string[]; value: boolean; choices?: readonly string[]; help: string }>;
}

const flagOf = (o: Option) => ({
  names: [o.long, o.short].filter((n): n is string => !!n),
  value: o.required || o.optional,
  ...(o.argChoices ? { choices: o.argChoices } : {}),
  help: o.description,
});

/** Every command below `root` (root included), depth first. */
export function completionTree(root: Command): Node[] {
  const out: Node[] = [];
  const walk = (c: Command, path: string[]): void => {
    const subs = c.commands.filter((s) => !(s as unknown as { _hidden?: boolean })._hidden);
    out.push({
      path,
      summary: c.summary() || c.description().split(/[:;.]/)[0]!,
      subcommands: [...subs.flatMap((s) => [s.name(), ...s.aliases()]), ...(path.length === 0 ? ["help"] : [])],
      flags: [...c.options.map(flagOf), { names: ["--help", "-h"], value: false, help: "display help" }],
    });
    for (const s of subs) walk(s, [...path, s.name()]);
  };
  walk(root, []);
  return out;
}

const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;

/** bash: words of the command path typed so far; a flag's value completes its choices, or file names. */
export function bashScript(nodes: Node[]): string {
  const cases = nodes
    .map((n) => {
      const words = [...n.subcommands, ...n.flags.flatMap((f) => f.names)].join(" ");
      const valued = n.flags.filter((f) => f.value);
      const values = valued
        .map((f) => `        ${f.names.join("|")}) ${f.choices ? `words=${quote(f.choices.join(" "))}` : "words="};;`)
        .join("\n");
      return [
        `    ${quote(n.path.join(" "))})`,
        `      subs=${quote(n.subcommands.join(" "))}; all=${quote(words)}`,
        '      case "$prev" in',
        values,
        "      esac;;",
      ].join("\n");
    })
    .join("\n");
  return `# bash completion for vc: source <(vc completion bash)
_vc() {
  local cur prev path="" subs all words i w
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ $w == -* ]] && continue
    _vc_node "$path"
    [[ " $subs " == *" $w "* ]] && path="\${path:+$path }$w"
  done
  words=unset
  _vc_node "$path"
  if [[ $words == unset ]]; then words=$all
  elif [[ -z $words ]]; then COMPREPLY=($(compgen -f -- "$cur")); return; fi
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
_vc_node() {
  subs=""; all=""
  case "$1" in
${cases}
  esac
}
complete -o default -F _vc vc
`;
}

/** zsh: the same walk as bash's, with descriptions of commands. */
export function zshScript(nodes: Node[]): string {
  const cases = nodes
    .map((n) => {
      const subs = n.subcommands.map((s) => {
        const child = nodes.find((m) => m.path.join(" ") === [...n.path, s].join(" "));
        return quote(`${s}:${(child?.summary ?? "display help for a command").replaceAll(":", "\\:")}`);
      });
      const flags = n.flags.flatMap((f) => f.names).join(" ");
      const valued = n.flags.filter((f) => f.value);
      const values = valued
        .map(
          (f) =>
            `        ${f.names.join("|")}) ${f.choices ? `compadd -- ${f.choices.join(" ")}` : "_files"}; return;;`,
        )
        .join("\n");
      return [
        `    ${quote(n.path.join(" "))})`,
        '      case "$prev" in',
        values,
        "      esac",
        `      subs=(${subs.join(" ")}); flags=(${flags});;`,
      ].join("\n");
    })
    .join("\n");
  return `#compdef vc
# zsh completion for vc: source <(vc completion zsh), or save it as _vc in a folder of $fpath
_vc() {
  local path_="" prev="\${words[CURRENT-1]}" w i
  local -a subs flags names
  for ((i = 2; i < CURRENT; i++)); do
    w="\${words[i]}"
    [[ $w == -* ]] && continue
    _vc_node "$path_" || return
    names=(\${subs%%:*})
    (( \${names[(Ie)$w]} )) && path_="\${path_:+$path_ }$w"
  done
  _vc_node "$path_" || return
  if [[ \${words[CURRENT]} == -* ]]; then compadd -- $flags
  elif (( \${#subs} )); then _describe command subs
  else _files; fi
}
_vc_node() {
  subs=(); flags=()
  case "$1" in
${cases}
  esac
  return 0
}
compdef _vc vc
`;
}

/** fish: one `complete` line per command and flag, conditioned on the command path typed. */
export function fishScript(nodes: Node[]): string {
  const lines = ["# fish completion for vc: vc completion fish | source", "complete -c vc -f"];
  const seen = (n: Node): string => (n.path.length === 0 ? "__fish_use_subcommand" : `__vc_path ${n.path.join(" ")}`);
  lines.push(
    "function __vc_path --description 'the command line names exactly these vc commands'",
    "  set -l typed (commandline -opc)[2..-1]",
    "  set -l words",
    "  for w in $typed",
    "    string match -q -- '-*' $w; or set -a words $w",
    "  end",
    "  test (count $words) -ge (count $argv); or return 1",
    '  test "$words[1..(count $argv)]" = "$argv"',
    "end",
  );
  for (const n of nodes) {
    for (const s of n.subcommands) {
      const child = nodes.find((m) => m.path.join(" ") === [...n.path, s].join(" "));
      lines.push(`complete -c vc -n ${quote(seen(n))} -a ${quote(s)} -d ${quote(child?.summary ?? "display help")}`);
    }
    if (n.path.length === 0) continue;
    for (const f of n.flags) {
      const names = f.names.map((x) => (x.startsWith("--") ? `-l ${x.slice(2)}` : `-s ${x.slice(1)}`)).join(" ");
      const value = f.choices ? ` -x -a ${quote(f.choices.join(" "))}` : f.value ? " -r -F" : "";
      lines.push(`complete -c vc -n ${quote(seen(n))} ${names}${value} -d ${quote(f.help)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

const SHELLS = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;

export function register(program: Command): void {
  program
    .command("completion <shell>")
    .summary("print a shell completion script (bash, zsh or fish)")
    .description(
      "print a completion script for bash, zsh or fish: the commands, subcommands and flags of vc, and the values " +
        "of flags that take one of a few",
    )
    .addHelpText(
      "after",
      "\nExamples:\n  source <(vc completion bash)          # bash, this shell\n" +
        "  vc completion zsh > ~/.zfunc/_vc       # zsh, with ~/.zfunc in fpath\n" +
        "  vc completion fish | source           # fish, this shell",
    )
    .action(
      action((shell: string) => {
        if (!(shell in SHELLS)) throw new UserError(`unknown shell "${shell}": use bash, zsh or fish`, EXIT.failure);
        process.stdout.write(SHELLS[shell as keyof typeof SHELLS](completionTree(program)));
        return EXIT.ok;
      }),
    );
}
