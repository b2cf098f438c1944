import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/hosts.mjs";
import { COMMAND_NAMES, EXIT, helpText, parseArgs, UsageError } from "../../src/cli/args.ts";
import { table } from "../../src/cli/format.ts";

function usage(argv: string[]): string {
  try {
    parseArgs(argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`parsed: ${argv.join(" ")}`);
}

describe("pi-bg-delegate argument parsing", () => {
  it("parses each command's id and options", () => {
    expect(parseArgs(["result", "d12", "--wait", "1.5", "--out=a.txt"])).toEqual({
      kind: "run",
      parsed: {
        command: "result",
        id: "d12",
        json: false,
        all: false,
        waitSeconds: 1.5,
        out: "a.txt",
        olderThanDays: undefined,
        keep: undefined,
        dryRun: false,
      },
    });
    expect(parseArgs(["prune", "--older-than", "7.5", "--keep=3", "--dry-run", "--json"])).toMatchObject({
      parsed: { command: "prune", olderThanDays: 7.5, keep: 3, dryRun: true, json: true, id: undefined },
    });
    expect(parseArgs(["list", "--all", "--json"])).toMatchObject({ parsed: { all: true, json: true, id: undefined } });
    expect(parseArgs([])).toEqual({ kind: "help", command: undefined });
    expect(parseArgs(["show", "--help"])).toEqual({ kind: "help", command: "show" });
    expect(parseArgs(["help", "verify"])).toEqual({ kind: "help", command: "verify" });
  });

  it("refuses a wrong command line with a one-line reason", () => {
    expect(usage(["nope"])).toBe('unknown command "nope"');
    expect(usage(["result"])).toBe("result needs a task id (or a unique prefix)");
    expect(usage(["result", "a", "b"])).toBe('result takes one task id, got "a" and "b"');
    expect(usage(["list", "d1"])).toBe('list takes no task id ("d1")');
    expect(usage(["result", "d1", "--wait"])).toBe("--wait needs a value");
    expect(usage(["result", "d1", "--wait", "-1"])).toBe('--wait must be a number of seconds ≥ 0, not "-1"');
    expect(usage(["result", "d1", "--wait", "soon"])).toBe('--wait must be a number of seconds ≥ 0, not "soon"');
    expect(usage(["show", "d1", "--all"])).toBe("show has no option --all");
    expect(usage(["list", "--json=1"])).toBe("--json takes no value");
    expect(usage(["prune"])).toBe("prune needs --older-than <days>, --keep <n> or both");
    expect(usage(["prune", "--keep", "1.5"])).toBe('--keep must be a whole number ≥ 0, not "1.5"');
    expect(usage(["prune", "--older-than", "-2"])).toBe('--older-than must be a number of days ≥ 0, not "-2"');
    expect(usage(["prune", "d1", "--keep", "1"])).toBe('prune takes no task id ("d1")');
  });

  it("has help for every command, with the exit statuses", () => {
    for (const command of COMMAND_NAMES) {
      const text = helpText(command);
      expect(text.startsWith(`Usage: pi-bg-delegate ${command}`)).toBe(true);
      expect(text).toContain(`  ${EXIT.running}  the task is still running`);
    }
  });
});

describe("pi-bg-delegate formatting", () => {
  it("aligns columns to the widest cell and leaves the last one unpadded", () => {
    expect(
      table(
        ["ID", "NAME"],
        [
          ["d1", "a"],
          ["d12345", "b"],
        ],
      ),
    ).toBe("ID      NAME\nd1      a\nd12345  b");
  });
});

describe("the command needs nothing from Pi", () => {
  it("no file src/cli/main.ts reaches imports a Pi package at run time (an installed package has none)", () => {
    const seen = new Set<string>();
    const piImports: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/^import (?!type )[^;]*? from "([^"]+)";/gms)) {
        const target = m[1] as string;
        if (target.startsWith(".")) visit(resolve(dirname(file), target));
        else if (/^@(mariozechner|earendil-works|sinclair)\//.test(target)) piImports.push(`${file}: ${target}`);
      }
    };
    visit(join(REPO_ROOT, "src/cli/main.ts"));
    expect(seen.size).toBeGreaterThan(20);
    expect(piImports).toEqual([]);
  });
});
