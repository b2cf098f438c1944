/**
 * `pi-bg-delegate list` verifies each task once per call (docs/cli.md, "list"): the verifier of a
 * completed Fusion run is wrapped with a counter, the rest of the module is the real one.
 */
import { describe, expect, it, vi } from "vitest";

const counted = vi.hoisted(() => ({ calls: 0 }));

vi.mock("../../src/fusion/index.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../../src/fusion/index.ts")>();
  return {
    ...real,
    verifyCompletedRun: (...args: Parameters<typeof real.verifyCompletedRun>) => {
      counted.calls++;
      return real.verifyCompletedRun(...args);
    },
  };
});

const { main } = await import("../../src/cli/main.ts");
const { buildCompletedRun } = await import("../helpers/fusion-fixtures.ts");
const { makeTempDir } = await import("../helpers/temp.ts");

describe("list", () => {
  it("verifies every completed task once, with or without --all", async () => {
    const cwd = await makeTempDir("cli-list-once");
    buildCompletedRun(cwd);
    buildCompletedRun(cwd);
    const io = { cwd, stdout: () => {}, stderr: () => {} };
    for (const argv of [["list"], ["list", "--all"], ["list", "--json"]]) {
      counted.calls = 0;
      expect(await main(argv, io)).toBe(0);
      expect(counted.calls, argv.join(" ")).toBe(2);
    }
  });
});
