import { describe, expect, test } from "bun:test";
import { planLine, scriptLines, splitWords } from "../../src/steps/script.ts";

describe('scriptLines (docs/deploy-control.md "The run script": one line at a time, blank and # lines skipped)', () => {
  const cases: [name: string, script: string, lines: string[]][] = [
    ["a single-line script is one line, not split", "npm run deploy", ["npm run deploy"]],
    [
      "a single-line script with operators stays whole",
      "npm ci && npm run build; npm start",
      ["npm ci && npm run build; npm start"],
    ],
    ["a multi-line script runs every line, in order", "echo 1\necho 2\necho 3", ["echo 1", "echo 2", "echo 3"]],
    ["empty lines are skipped", "echo 1\n\n\necho 2\n", ["echo 1", "echo 2"]],
    ["whitespace-only lines are skipped", "echo 1\n   \n\t\necho 2", ["echo 1", "echo 2"]],
    ["lines starting with # are skipped", "# build\necho 1\n#echo 2\necho 3", ["echo 1", "echo 3"]],
    [
      "indented # lines are skipped (YAML block scalars indent)",
      "  echo 1\n  # comment\n  echo 2",
      ["echo 1", "echo 2"],
    ],
    ["a # later in a line does not skip it", "echo 1 # note", ["echo 1 # note"]],
    ["CRLF line endings split like LF", "echo 1\r\necho 2\r\n", ["echo 1", "echo 2"]],
    ["a script of only comments and blanks runs nothing", "# a\n\n  # b\n", []],
    ["an empty script runs nothing", "", []],
  ];
  test.each(cases)("%s", (_name, script, lines) => {
    expect(scriptLines(script)).toEqual(lines);
  });
});

describe("splitWords (direct spawn: arguments split as a shell would, quotes respected)", () => {
  const cases: [line: string, words: string[] | undefined][] = [
    ["npm run deploy", ["npm", "run", "deploy"]],
    ["  npm   run\tdeploy  ", ["npm", "run", "deploy"]],
    [`node -e "console.log(1)" "x y"`, ["node", "-e", "console.log(1)", "x y"]],
    [`printf %s 'a b'`, ["printf", "%s", "a b"]],
    [`echo "a b" 'c d' e`, ["echo", "a b", "c d", "e"]],
    [`echo a"b c"d`, ["echo", "ab cd"]],
    [`echo '' ""`, ["echo", "", ""]],
    [`echo "it's"`, ["echo", "it's"]],
    [`echo 'say "hi"'`, ["echo", 'say "hi"']],
    [`echo "a'b" 'c"d'`, ["echo", "a'b", 'c"d']],
    ["echo a\u00a0b", ["echo", "a\u00a0b"]],
    [`echo "unterminated`, undefined],
    [`echo 'unterminated`, undefined],
    ["", []],
  ];
  test.each(cases)("%p splits into %p", (line, words) => {
    expect(splitWords(line)).toEqual(words);
  });
});

describe('planLine (docs/deploy-control.md "The run script": shell for operators and builtins, otherwise a direct spawn)', () => {
  const direct: [line: string, argv: string[]][] = [
    ["npm run deploy", ["npm", "run", "deploy"]],
    ["./deploy.sh --prod", ["./deploy.sh", "--prod"]],
    ["git log -1 --format=%H", ["git", "log", "-1", "--format=%H"]],
    [`node -e "console.log(process.argv.length)" "x y"`, ["node", "-e", "console.log(process.argv.length)", "x y"]],
    [`echo 'a|b' 'c && d' '$HOME' 'x > y'`, ["echo", "a|b", "c && d", "$HOME", "x > y"]],
    [`echo "a|b; c & d > e"`, ["echo", "a|b; c & d > e"]],
    [`echo "a'b" 'c"d'`, ["echo", "a'b", 'c"d']],
    [`echo '"$HOME"'`, ["echo", '"$HOME"']],
    ["docker compose up -d --build", ["docker", "compose", "up", "-d", "--build"]],
    ["npm run build -- --mode=production", ["npm", "run", "build", "--", "--mode=production"]],
  ];
  test.each(direct)("a line without shell syntax is spawned directly: %p", (line, argv) => {
    expect(planLine(line)).toEqual({ argv, shell: false });
  });

  const shell: [why: string, line: string][] = [
    ["&&", "npm ci && npm run build"],
    ["||", "npm test || true"],
    ["|", "cat log | grep error"],
    [";", "npm ci; npm run build"],
    ["& (background)", "sleep 300 &"],
    ["> redirection", "echo hi > out.txt"],
    [">> redirection", "echo hi >> out.txt"],
    ["< redirection", "wc -l < file"],
    ["2>&1", "npm run build 2>&1"],
    ["$VAR", "echo $HOME"],
    ["${VAR}", "echo ${HOME}"],
    ["$VAR inside double quotes", `echo "$HOME"`],
    ["$(…) substitution", "echo $(date)"],
    ["`…` substitution", "echo `date`"],
    ["backslash escape", "echo a\\ b"],
    ["backslash inside double quotes", `echo "a\\"b"`],
    ["* glob", "rm -f *.tmp"],
    ["? glob", "ls file?.txt"],
    ["[…] glob / test", "[ -f package.json ]"],
    ["~ expansion", "ls ~"],
    ["# comment after a command", "npm run deploy # comment"],
    ["( subshell )", "(cd app && make)"],
    ["{ group }", "{ echo a; }"],
    ["! negation", "! false"],
    ["an assignment prefix", "NODE_ENV=production npm run build"],
    ["a bare assignment", "FOO=bar"],
    ["export", "export NODE_ENV=production"],
    ["set", "set -e"],
    ["cd", "cd app"],
    ["source", "source .env"],
    [". (dot)", ". ./env.sh"],
    ["unset", "unset FOO"],
    ["exec", "exec npm start"],
    ["exit", "exit 3"],
    ["if keyword", "if true; then echo y; fi"],
    ["an unterminated quote (the shell reports it)", `echo "oops`],
    ["a pipe between quotes that contain the other quote", `echo "'" | cat "'"`],
    ["&& after a double-quoted apostrophe", `echo "it's" 'a' && echo 'b'`],
  ];
  test.each(shell)("a line with %s goes through sh -c", (_why, line) => {
    expect(planLine(line)).toEqual({ argv: ["/bin/sh", "-c", line], shell: true });
  });
});
