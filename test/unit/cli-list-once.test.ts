/**
 * `pi-bg-delegate list` verifies each printed task once per call, and only the printed ones
 * (docs/cli.md, "list"); `--verify` verifies every task. The verifiers of a completed Fusion run and
 * of a delegate's result are wrapped with counters; the rest of each module is the real one.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it, vi } from "vitest";

const { counted, counting } = vi.hoisted(() => {
  const counted = { calls: 0, delegates: 0 };
  /** `real` with its function `name` wrapped to add one to `counted[key]` on each call. */
  const counting = <M extends object>(real: M, name: keyof M, key: keyof typeof counted): M => {
    const fn = real[name] as (...args: unknown[]) => unknown;
    return {
      ...real,
      [name]: (...args: unknown[]) => {
        counted[key]++;
        return fn(...args);
      },
    };
  };
  return { counted, counting };
});

vi.mock("../../src/fusion/index.ts", async (importOriginal) =>
  counting(await importOriginal<typeof import("../../src/fusion/index.ts")>(), "verifyCompletedRun", "calls"),
);

vi.mock("../../src/verify/result-file.ts", async (importOriginal) =>
  counting(await importOriginal<typeof import("../../src/verify/result-file.ts")>(), "readVerifiedResult", "delegates"),
);

const { main } = await import("../../src/cli/main.ts");
const { buildCompletedRun } = await import("../helpers/fusion-fixtures.ts");
const { writeCompletedTask } = await import("../helpers/task-tree.ts");
const { makeTempDir } = await import("../helpers/temp.ts");

describe("list", () => {
  it("verifies every completed task once, with or without --all", async () => {
    const cwd = await makeTempDir("cli-list-once");
    buildCompletedRun(cwd);
    buildCompletedRun(cwd);
    const io = { cwd, stdout: () => {}, stderr: () => {} };
    for (const argv of [["list"], ["list", "--all"], ["list", "--json"], ["list", "--verify"]]) {
      counted.calls = 0;
      expect(await main(argv, io)).toBe(0);
      expect(counted.calls, argv.join(" ")).toBe(2);
    }
  });

  it("verifies only the rows it prints, and says so; --verify verifies every task", async () => {
    const cwd = await makeTempDir("cli-list-shown");
    writeCompletedTask(cwd, { session: "older-session", name: "old one" });
    await sleep(5);
    writeCompletedTask(cwd, { session: "older-session", name: "old two" });
    await sleep(5);
    writeCompletedTask(cwd, { session: "newest-session", name: "new" });
    const run = async (argv: string[]) => {
      const out: string[] = [];
      counted.delegates = 0;
      expect(await main(argv, { cwd, stdout: (t: string) => out.push(t), stderr: () => {} })).toBe(0);
      return { out: out.join(""), verified: counted.delegates };
    };
    const newest = await run(["list"]);
    expect(newest.verified).toBe(1);
    expect(newest.out).toContain("Verified: the rows shown; --verify checks every task.");
    expect(newest.out).toContain("(2 more in earlier sessions");
    expect((await run(["list", "--all"])).verified).toBe(3);
    const every = await run(["list", "--verify"]);
    expect(every.verified).toBe(3);
    expect(every.out).toContain("Verified: every task.");
    expect(every.out).not.toContain("old one");
    const json = JSON.parse((await run(["list", "--json"])).out) as { verified: string; tasks: unknown[] };
    expect(json).toMatchObject({ verified: "shown" });
    expect(json.tasks).toHaveLength(1);
  });
});
