import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/hosts.mjs";
import { COMMAND_NAMES, EXIT, parseArgs, UsageError } from "../../src/cli/args.ts";
import { cliFailureText, forPerson } from "../../src/cli/failure.ts";
import { facts, table } from "../../src/cli/format.ts";
import { helpText } from "../../src/cli/help.ts";
import { renderFacts, renderList } from "../../src/cli/render.ts";
import { type DelegateFacts, SHOW_SCHEMA } from "../../src/cli/show-facts.ts";
import { ARGUMENT_BOUNDS } from "../../src/core/constants.ts";
import { displayWidth } from "../../src/core/display-width.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { groupFor } from "../../src/core/group.ts";
import { visible, visibleLines } from "../../src/core/terminal-text.ts";
import { type TaskRow, threadedName, threadRows, unreadRow } from "../../src/tasks/row.ts";

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
        verify: false,
        waitSeconds: 1.5,
        out: "a.txt",
        pi: undefined,
        node: undefined,
        olderThanDays: undefined,
        keep: undefined,
        dryRun: false,
        undelivered: false,
        unlink: false,
        foreign: false,
      },
    });
    expect(parseArgs(["prune", "--older-than", "7.5", "--keep=3", "--dry-run", "--json"])).toMatchObject({
      parsed: { command: "prune", olderThanDays: 7.5, keep: 3, dryRun: true, json: true, id: undefined },
    });
    expect(parseArgs(["prune", "--keep", "0", "--undelivered"])).toMatchObject({ parsed: { undelivered: true } });
    expect(parseArgs(["prune", "--keep", "0", "--unlink"])).toMatchObject({ parsed: { unlink: true } });
    expect(parseArgs(["list", "--all", "--json"])).toMatchObject({ parsed: { all: true, json: true, id: undefined } });
    expect(parseArgs(["list", "--verify"])).toMatchObject({ parsed: { verify: true, all: false } });
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
    expect(usage(["prune"])).toBe("prune needs --older-than <days>, --keep <n>, both, or --foreign");
    expect(usage(["prune", "--keep", "1.5"])).toBe('--keep must be a whole number ≥ 0, not "1.5"');
    expect(usage(["prune", "--older-than", "-2"])).toBe('--older-than must be a number of days ≥ 0, not "-2"');
    expect(usage(["prune", "d1", "--keep", "1"])).toBe('prune takes no task id ("d1")');
  });

  it("takes an argument starting with - as an option, never as an id", () => {
    expect(usage(["show", "-x"])).toBe("show has no option -x");
    expect(usage(["result", "-"])).toBe("result has no option -");
    expect(usage(["verify", "d1", "-j"])).toBe("verify has no option -j");
    expect(parseArgs(["show", "-h"])).toEqual({ kind: "help", command: "show" });
  });

  it("trims the id, as bg_result does", () => {
    expect(parseArgs(["show", " d5\t"])).toMatchObject({ parsed: { id: "d5" } });
    expect(usage(["show", " \t "])).toBe("the task id is blank");
  });

  it("takes only decimal numbers", () => {
    for (const raw of ["0x10", "1e3", " 5", "5 ", "Infinity", "0b1", "+1", ".", "1.", "1..2"])
      expect(usage(["result", "d1", "--wait", raw])).toBe(`--wait must be a number of seconds ≥ 0, not "${raw}"`);
    expect(usage(["prune", "--keep", "0x2"])).toBe('--keep must be a whole number ≥ 0, not "0x2"');
    expect(parseArgs(["result", "d1", "--wait", "0.25"])).toMatchObject({ parsed: { waitSeconds: 0.25 } });
    expect(parseArgs(["result", "d1", "--wait", ".5"])).toMatchObject({ parsed: { waitSeconds: 0.5 } });
    expect(parseArgs(["result", "d1", "--wait", "010"])).toMatchObject({ parsed: { waitSeconds: 10 } });
  });

  it("bounds every number: a wait no longer than the longest task timeout, an exact count, a century of days", () => {
    expect(usage(["result", "d1", "--wait", "1e20"])).toBe('--wait must be a number of seconds ≥ 0, not "1e20"');
    expect(usage(["result", "d1", "--wait", "100000000000000000000"])).toBe(
      `--wait must be at most ${ARGUMENT_BOUNDS.timeoutSeconds} seconds, not "100000000000000000000"`,
    );
    expect(parseArgs(["result", "d1", "--wait", String(ARGUMENT_BOUNDS.timeoutSeconds)])).toMatchObject({
      parsed: { waitSeconds: ARGUMENT_BOUNDS.timeoutSeconds },
    });
    expect(usage(["prune", "--keep", "99999999999999999999999"])).toBe(
      `--keep must be at most ${Number.MAX_SAFE_INTEGER}, not "99999999999999999999999"`,
    );
    // One past the largest exact integer rounds to a value above it: refused by its bound, not taken as 2^53.
    expect(usage(["prune", "--keep", "9007199254740993"])).toBe(
      `--keep must be at most ${Number.MAX_SAFE_INTEGER}, not "9007199254740993"`,
    );
    expect(parseArgs(["prune", "--keep", String(Number.MAX_SAFE_INTEGER)])).toMatchObject({
      parsed: { keep: Number.MAX_SAFE_INTEGER },
    });
    expect(usage(["prune", "--older-than", "36500.5"])).toBe('--older-than must be at most 36500 days, not "36500.5"');
  });

  it("has help for every command, listing only the exit statuses that command can end with", () => {
    const statuses = (text: string) =>
      text
        .slice(text.indexOf("Exit status:"))
        .split("\n")
        .slice(1)
        .map((line) => Number(line.trim().split(" ")[0]));
    const own: Record<(typeof COMMAND_NAMES)[number], number[]> = {
      list: [EXIT.ok, EXIT.failure, EXIT.usage],
      show: [EXIT.ok, EXIT.failure, EXIT.usage],
      verify: [EXIT.ok, EXIT.failure, EXIT.usage, EXIT.running],
      result: [EXIT.ok, EXIT.failure, EXIT.usage, EXIT.running],
      cancel: [EXIT.ok, EXIT.failure, EXIT.usage, EXIT.refused],
      prune: [EXIT.ok, EXIT.failure, EXIT.usage],
      "prove-host": [EXIT.ok, EXIT.failure, EXIT.usage],
    };
    for (const command of COMMAND_NAMES) {
      const text = helpText(command);
      expect(text.startsWith(`Usage: pi-bg-delegate ${command}`)).toBe(true);
      expect(statuses(text)).toEqual(own[command]);
      // Every option of the command is listed, and no other command's.
      expect(text).toContain("--help");
    }
    expect(helpText("list")).not.toContain("cancel refused");
    expect(helpText("prove-host")).not.toContain("still running");
    expect(statuses(helpText(undefined))).toEqual([EXIT.ok, EXIT.failure, EXIT.usage, EXIT.running, EXIT.refused]);
  });

  it("reports every bad argument of one call together, not only the first", () => {
    let caught: unknown;
    try {
      parseArgs(["result", "a", "b", "--wait", "soon", "--all", "-x", "--json=1"]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UsageError);
    const error = caught as UsageError;
    expect(error.command).toBe("result");
    expect(error.problems).toEqual([
      '--wait must be a number of seconds ≥ 0, not "soon"',
      "result has no option --all",
      "result has no option -x",
      "--json takes no value",
      'result takes one task id, got "a" and "b"',
    ]);
    expect(error.message).toBe(error.problems.join("\n"));
    expect(usage(["prune", "d1", "--keep", "x", "--older-than", "-1"]).split("\n")).toEqual([
      '--keep must be a whole number ≥ 0, not "x"',
      '--older-than must be a number of days ≥ 0, not "-1"',
      'prune takes no task id ("d1")',
    ]);
    // --help anywhere after a known command wins over the problems.
    expect(parseArgs(["result", "--bogus", "--help"])).toEqual({ kind: "help", command: "result" });
  });
});

describe("pi-bg-delegate formatting", () => {
  it("shows control characters visibly, in cells, facts and free text", () => {
    expect(visible("a\u001b[31mb\u0007c\u007f\u009bd\te\nf")).toBe("a\\x1b[31mb\\x07c\\x7f\\x9bd\\x09e\\x0af");
    expect(visible("bidi \u202e and \u2066 and line\u2028sep")).toBe("bidi \\u202e and \\u2066 and line\\u2028sep");
    expect(visible("plain ✓ text: ä, 日本")).toBe("plain ✓ text: ä, 日本");
    expect(visibleLines("one \u001b\ntwo\r\n")).toBe("one \\x1b\ntwo\\x0d\n");
    expect(table(["ID", "NAME"], [["d\u001b[2J", "n\u001b"]])).toBe("ID        NAME\nd\\x1b[2J  n\\x1b");
    expect(facts([["name", "x\u001by"]])).toBe("name:  x\\x1by");
  });

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

describe("how to run the command (README.md, docs/cli.md)", () => {
  it("gives a command that works without the npm registry (the package is not published: npx would 404)", () => {
    for (const doc of ["README.md", "docs/cli.md"]) {
      const text = readFileSync(join(REPO_ROOT, doc), "utf8");
      const blocks = [...text.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] as string);
      const lines = blocks.flatMap((b) => b.split("\n"));
      expect(
        lines.filter((l) => l.startsWith("npx pi-bg-delegate")),
        doc,
      ).toEqual([]);
      expect(text, doc).toContain("/bin/pi-bg-delegate.mjs");
    }
    expect(readFileSync(join(REPO_ROOT, "README.md"), "utf8")).toContain(
      'alias pi-bg-delegate="node /path/to/pi-bg-delegate/bin/pi-bg-delegate.mjs"',
    );
  });
});

describe("the command needs nothing from Pi", () => {
  it("no file src/cli/main.ts reaches imports a Pi package at run time (an installed package has none)", () => {
    // What the command may import: Node's own modules and this package's own dependencies (an
    // installed package has those; TypeBox among them, for the documents' one declaration).
    const own = Object.keys(JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).dependencies);
    expect(own).toContain("@sinclair/typebox");
    const seen = new Set<string>();
    const piImports: string[] = [];
    const foreign: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, "utf8");
      // An import, or an export that re-exports a module (a folder's door does that).
      for (const m of text.matchAll(/^(?:import|export) (?!type )[^;]*? from "([^"]+)";/gms)) {
        const target = m[1] as string;
        if (target.startsWith(".")) visit(resolve(dirname(file), target));
        else if (/^@(mariozechner|earendil-works)\//.test(target)) piImports.push(`${file}: ${target}`);
        else if (!target.startsWith("node:") && !own.some((dep) => target === dep || target.startsWith(`${dep}/`))) {
          foreign.push(`${file}: ${target}`);
        }
      }
    };
    visit(join(REPO_ROOT, "src/cli/main.ts"));
    expect(seen.size).toBeGreaterThan(20);
    expect(piImports).toEqual([]);
    expect(foreign).toEqual([]);
  });
});

type ListedRow = Parameters<typeof renderList>[0][number];

/**
 * A listed delegate `d<letter×32>` of session "s" on fake/priced-model with a $0.20 cap, top level:
 * completed in 12s without an answer or a known cost unless `fields` say otherwise.
 */
function cappedRow(letter: string, fields: Partial<ListedRow>): ListedRow {
  return {
    kind: "delegate",
    id: `d${letter.repeat(32)}`,
    state: "completed",
    name: "capped",
    run_seconds: 12,
    cost: null,
    cost_at_least: false,
    answer_bytes: null,
    code: null,
    dir: `/tmp/${letter}`,
    session: "s",
    route: "fake/priced-model",
    detail: null,
    created_at: null,
    ended_at: null,
    cap: 0.2,
    previous_id: null,
    group: null,
    children: [],
    depth: 0,
    ...fields,
  };
}

describe("list: the spend cap and the total", () => {
  it("shows each task's cap beside its cost and one line with the listed delegates' total spend", () => {
    const row = cappedRow("a", { cost: 0.1005, answer_bytes: 70 });
    const text = renderList([row, { ...row, id: `d${"b".repeat(32)}`, cap: null, cost: null }], true, 0);
    expect(text.split("\n")[0]).toMatch(/\bCOST\s+CAP\s+ANSWER\b/);
    expect(text).toMatch(/\$0\.1005\s+\$0\.2000/);
    expect(text.split("\n").at(-1)).toBe("total spend in this project: $0.1005 over 2 delegate tasks (1 not reported)");
    // A spend just over its cap never prints equal to it: COST and CAP take the digits that tell them apart.
    const over = renderList([{ ...row, cost: 0.20004, cost_at_least: true }], true, 0);
    expect(over).toMatch(/at least \$0\.20004\s+\$0\.20000/);
    // A Fusion run's recorded figure is its COST, beside the run's cap.
    const run = renderList([{ ...row, kind: "fusion", cost: 0.3, cost_at_least: true, cap: 1 }], true, 0);
    expect(run).toMatch(/fusion .*at least \$0\.3000\s+\$1\.00/);
  });

  it("lists a follow-up under the task it follows, oldest follow-up first, a chain top to bottom", () => {
    const at = (minute: number) => `2026-12-01T10:${String(minute).padStart(2, "0")}:00.000Z`;
    const make = (id: string, minute: number, previous: string | null): TaskRow => ({
      ...unreadRow({ kind: "delegate", id, dir: `/tmp/${id}`, trust: { mine: true } }),
      state: "completed",
      name: `task ${id}`,
      created_at: at(minute),
      previous_id: previous,
      children: [],
    });
    // Newest first, as listRows sorts them: d5 follows d1, d3 and d4 follow d2, d6 follows d4.
    const rows = [
      make("d6", 6, "d4"),
      make("d5", 5, "d1"),
      make("d4", 4, "d2"),
      make("d3", 3, "d2"),
      make("d2", 2, null),
      make("d1", 1, null),
      make("d7", 7, "gone"),
    ];
    const threaded = threadRows(rows);
    expect(threaded.map((r) => `${r.id}:${r.depth}`)).toEqual(["d2:0", "d3:1", "d4:1", "d6:2", "d1:0", "d5:1", "d7:0"]);
    expect(threaded.map((r) => threadedName(r))).toEqual([
      "task d2",
      "└ task d3",
      "└ task d4",
      "  └ task d6",
      "task d1",
      "└ task d5",
      "task d7",
    ]);
    const text = renderList(threaded, true, 0);
    expect(text).toMatch(/\n\S+\s.* {2}└ task d6\n/);
  });

  it("marks a cost that may leave out a request in flight (a cancel) 'at least', and the total with it", () => {
    const row = cappedRow("c", {
      state: "cancelled",
      name: "stopped",
      run_seconds: 3,
      cost: 0.1207,
      cost_at_least: true,
      code: "child_cancelled",
    });
    const text = renderList([row, { ...row, id: `d${"d".repeat(32)}`, cost: 0.01, cost_at_least: false }], true, 0);
    expect(text).toMatch(/\bat least \$0\.1207\s+\$0\.2000/);
    expect(text).toMatch(/\s\$0\.0100\s+\$0\.2000/);
    // The total is a floor too, and every cost is known (the full wording of the line is pinned above).
    expect(text.split("\n").at(-1)).toMatch(/: at least \$0\.1307 over 2 /);
    expect(text).not.toContain("not reported");
  });
});

describe("list and show: a member's group", () => {
  const make = (n: number, group: string | null, name: string): TaskRow => ({
    ...unreadRow({ kind: "delegate", id: `d${n}${"0".repeat(31)}`, dir: `/tmp/${n}`, trust: { mine: true } }),
    state: "completed",
    route: "fake/m",
    name,
    group: group === null ? null : groupFor("s", group)!,
  });

  it("list: a GROUP column before NAME when a row is in one ('-' for work of its own), aligned for wide names", () => {
    const text = renderList(
      [make(1, "認証監査🔐チーム", "セッション"), make(2, "auth-audit", "token path"), make(3, null, "quick look")],
      true,
      0,
    );
    const lines = text.split("\n");
    expect(lines[0]).toMatch(/\bANSWER\s+GROUP\s+NAME$/);
    // Each NAME starts at the header's column, in terminal columns (a wide character takes two).
    const nameAt = lines[0]!.indexOf("NAME");
    const nameColumn = (line: string, name: string) => displayWidth(line.slice(0, line.indexOf(name)));
    expect(nameColumn(lines[1]!, "セッション")).toBe(nameAt);
    expect(lines[1]).toContain("認証監査🔐チーム  ");
    expect(nameColumn(lines[2]!, "token path")).toBe(nameAt);
    expect(lines[3]).toMatch(/ - {2,}quick look$/);
    // No group in the list: no column.
    expect(renderList([make(3, null, "quick look")], true, 0).split("\n")[0]).not.toContain("GROUP");
  });
});

describe("show: which limit made the delegate answer", () => {
  const base: DelegateFacts = {
    schema_version: SHOW_SCHEMA,
    kind: "delegate",
    id: `d${"a".repeat(32)}`,
    name: "audit",
    group: null,
    state: "completed",
    created_at: "2026-12-01T10:00:00.000Z",
    ended_at: "2026-12-01T10:03:05.000Z",
    route: { provider: "fake", model: "fake-model" },
    host: null,
    attestations: { count: 3, response_models: ["fake-model"] },
    capability: "read_only",
    extension_mode: "isolated",
    limits: { max_turns: 24, max_tool_calls: 120, timeout_seconds: 1200 },
    budget: null,
    progress: { turns: 24, tool_calls: 40 },
    usage: null,
    cost: null,
    spend: null,
    answer: { byte_length: 120, sha256: "b".repeat(64) },
    finalized_by: "turns",
    evidence: [],
    evidence_check: null,
    basis: null,
    steering: null,
    failure: null,
    answer_copy: null,
    artifacts: {},
    run: {
      run_id: `d${"a".repeat(32)}`,
      interaction_id: `d${"a".repeat(32)}`,
      status: "completed",
      is_active: false,
      processor: "fake/fake-model",
      created_at: "2026-12-01T10:00:00.000Z",
      modified_at: "2026-12-01T10:03:05.000Z",
      error: null,
      warnings: [],
      metadata: { kind: "delegate", name: "audit" },
    },
    output: null,
    settings_ignored: [],
    chain: null,
  };
  const line = (f: DelegateFacts) =>
    renderFacts(f)
      .split("\n")
      .find((l) => l.startsWith("finalized"));

  it("prints one line per project setting that launch ignored, none when none was", () => {
    const ignored = "bgDelegate.maxRunning 9 in .pi/settings.json ignored: a project may only lower it (yours: 1)";
    const lines = (f: DelegateFacts) =>
      renderFacts(f)
        .split("\n")
        .filter((l) => l.startsWith("ignored"));
    expect(lines(base)).toEqual([]);
    expect(lines({ ...base, settings_ignored: [ignored] })).toEqual([
      expect.stringMatching(/^ignored:?\s+bgDelegate\.maxRunning 9 /),
    ]);
  });

  it("prints a member's group, its name and its id, under the name; nothing for a task of its own", () => {
    const group = groupFor("s", "認証監査🔐チーム")!;
    const lines = renderFacts({ ...base, group }).split("\n");
    expect(lines[1]).toMatch(/^name:\s+audit$/);
    expect(lines[2]).toBe(`group:${" ".repeat(lines[2]!.indexOf("認") - 6)}認証監査🔐チーム (${group.id})`);
    expect(renderFacts(base)).not.toMatch(/^group:/m);
  });

  it("states a steered task's messages: read before which request, and the rest (not read yet while it runs)", () => {
    const steeringLine = (f: DelegateFacts) =>
      renderFacts(f)
        .split("\n")
        .filter((l) => l.startsWith("steering"));
    expect(steeringLine(base)).toEqual([]);
    const steering = { sent: 3, delivered: [{ n: 1, request: 3 }], not_delivered: [2, 3] };
    expect(steeringLine({ ...base, steering })).toEqual([
      expect.stringMatching(/^steering:?\s+3 sent: 1 read before request 3; 2, 3 not delivered$/),
    ]);
    expect(steeringLine({ ...base, state: "running", steering })).toEqual([
      expect.stringMatching(/^steering:?\s+3 sent: 1 read before request 3; 2, 3 not read yet$/),
    ]);
  });

  it("names the limit whose runway forced the answer, says no when none did, and - without an answer", () => {
    expect(line(base)).toMatch(
      /^finalized:?\s+by turns: the delegate reached its last turn \(maxTurns\) and was told to answer from what it had$/,
    );
    expect(line({ ...base, finalized_by: "time" })).toContain("neared its timeout (timeoutSeconds)");
    expect(line({ ...base, finalized_by: null })).toMatch(/^finalized:?\s+no \(answered before any limit was near\)$/);
    expect(line({ ...base, state: "failed", answer: null, finalized_by: null })).toMatch(/^finalized:?\s+-$/);
  });

  it("is written for a person: the cost once, the budget in words, no internal terms", () => {
    const text = renderFacts({
      ...base,
      budget: { capacity_tokens: 100_000, growth_budget_tokens: 80_000, finalization_runway_tokens: 12_000 },
      usage: {
        status: "observed",
        input: 10,
        output: 5,
        cache_read: 0,
        cache_write: 0,
        total_tokens: 15,
        cost_total: 0.0123,
      },
      cost: { usd: 0.0123, at_least: false },
    } as DelegateFacts);
    expect(text.match(/\$0\.0123/g)).toHaveLength(1);
    expect(text).not.toMatch(/capacity|growth|runway/i);
    expect(text).toMatch(/^context:?\s+100000 tokens: 80000 to work in, 12000 kept to write the answer$/m);
  });

  it("a failure text on the command line carries no model-facing sentence", () => {
    const text = cliFailureText(new DelegateError("task_unknown", "no task d9", { childProcessCreated: false }));
    expect(text).not.toContain("Child process created");
    expect(text.split("\n")).toEqual(["[task_unknown] no task d9", expect.stringMatching(/^Remediation: /)]);
    expect(
      forPerson(
        "Fusion run f1 failed; no answer was committed (x). This view carries no answer text, partial output or usage, whatever delivery was requested.\nWorkflow: w",
      ),
    ).toBe("Fusion run f1 failed; no answer was committed (x).\nWorkflow: w");
  });

  it("prints a follow-up's whole chain with each link's state", () => {
    const chain = renderFacts({
      ...base,
      chain: [
        { id: "d1", state: "failed", link: null, current: false },
        { id: "d2", state: "completed", link: "intact", current: true },
        { id: "d3", state: "running", link: "changed", current: false },
      ],
    })
      .split("\n")
      .find((l) => l.startsWith("chain"));
    expect(chain).toMatch(
      /^chain:\s+1\. d1 failed → 2\. d2 completed \(link intact\) \[this task\] → 3\. d3 running \(link CHANGED\)$/,
    );
    expect(renderFacts(base)).not.toContain("chain:");
  });

  it("a capped delegate: the cap in its limits, the spend beside it, and the per-request spend of runtime-budget.json", () => {
    const text = renderFacts({
      ...base,
      finalized_by: "cost",
      limits: { ...base.limits, max_cost_usd: 0.2 },
      spend: {
        cap_usd: 0.2,
        spent_usd: 0.0603,
        overbilled: null,
        requests: [
          { request: 1, spent_before_usd: 0, worst_usd: 0.05, charged_usd: 0.0201, decision: "send" },
          { request: 2, spent_before_usd: 0.0201, worst_usd: 0.06, charged_usd: 0.0201, decision: "send" },
          {
            request: 3,
            spent_before_usd: 0.0402,
            output_limit_tokens: 4_096,
            worst_usd: 0.07,
            charged_usd: 0.0201,
            decision: "finalize",
          },
        ],
      },
    });
    expect(line({ ...base, finalized_by: "cost" })).toContain("reached the runway of its spend cap (maxCostUsd)");
    expect(text).toMatch(/^limits:?\s+24 turns, 120 tool calls, 20m00s, spend cap \$0\.2000$/m);
    expect(text).toMatch(/^spend:?\s+\$0\.0603 of cap \$0\.2000$/m);
    expect(text).toContain("Spend per request");
    expect(text).toMatch(/^\s*3\s+\$0\.0402\s+4096\s+\$0\.0700\s+\$0\.0201\s+answer now\s*$/m);
    expect(text).not.toContain("overbilled");
    // A provider that billed past the request: the amount over the cap and why, and no equal-looking figures.
    const over = renderFacts({
      ...base,
      limits: { ...base.limits, max_cost_usd: 0.2 },
      spend: {
        cap_usd: 0.2,
        spent_usd: 0.20004,
        overbilled: {
          over_cap_usd: 0.00004,
          past_bound_usd: 0.0042,
          request: 3,
          reason: "the provider billed 2,114 output tokens past the request's limit",
        },
        requests: [],
      },
    });
    expect(over).toMatch(/^spend:?\s+\$0\.20004 of cap \$0\.20000, over the cap by \$0\.000040$/m);
    // The sentence itself is spend's (test/unit/spend.test.ts): here, that show prints it on its row.
    expect(over).toMatch(/^overbilled:?\s+over the cap by \$0\.000040: .+ 2,114 output tokens .+$/m);
  });

  it("shows evidence file names and arguments with their control characters escaped", () => {
    const text = renderFacts({
      ...base,
      name: "audit \u001b]0;title\u0007",
      evidence: [
        {
          tool: "read",
          path: "./evil\u001b[2Jname.ts",
          file: "evil\u001b[2Jname.ts",
          offset: 1,
          limit: 1,
          line_start: 1,
          line_end: 1,
          byte_start: 0,
          byte_end: 10,
          sha256: "c".repeat(64),
        },
        { tool: "grep", args: '{"pattern":"\u001b[31m"}', length: 3, sha256: "d".repeat(64), seen: [] },
      ],
      evidence_check: {
        freshness: { state: "stale", checked: 1, changed: ["evil\u001b[2Jname.ts"], vanished: [], unchecked: 0 },
        citations: { total: 0, read: 0, unread_file: 0, unseen_lines: 0, flagged: [] },
      },
    });
    expect(text).not.toContain("\u001b");
    expect(text).not.toContain("\u0007");
    expect(text).toContain("evil\\x1b[2Jname.ts");
    expect(text).toContain("audit \\x1b]0;title\\x07");
    expect(text).toContain('{"pattern":"\\x1b[31m"}');
  });
});
