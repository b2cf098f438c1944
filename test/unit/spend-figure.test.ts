/**
 * The one spend figure's pure parts (src/views/spend-figure.ts): a Fusion run's figure from its
 * children's, the figure beside its cap and as table cells, with the digits that keep a spend over
 * the cap from printing equal to it, and the Fusion manifest's terminal record that holds a run's figure.
 */
import { describe, expect, it } from "vitest";
import { checkDocument } from "../../src/core/schema/check.ts";
import { FusionManifestSchema } from "../../src/core/schema/fusion-document.ts";
import { SchemaViolation } from "../../src/core/validate.ts";
import { listRows } from "../../src/tasks/seam.ts";
import {
  addSpend,
  recordedSpend,
  spendCells,
  spendFigureText,
  spendOfCapText,
  sumSpend,
} from "../../src/views/spend-figure.ts";
import { spendTotal } from "../../src/views/spend-total.ts";
import { cancelledSpentRun } from "../helpers/spent-run.ts";

describe("a Fusion run's figure from its children's", () => {
  it("sums them; a floor when any child's is one or is not known (counted as nothing); nothing spent without children", () => {
    expect(sumSpend([])).toEqual({ usd: 0, at_least: false });
    expect(
      sumSpend([
        { usd: 0.1, at_least: false },
        { usd: 0.2, at_least: false },
      ]),
    ).toEqual({ usd: 0.3, at_least: false });
    expect(
      sumSpend([
        { usd: 0.1, at_least: false },
        { usd: 0.0603, at_least: true },
      ]),
    ).toEqual({
      usd: 0.1603,
      at_least: true,
    });
    expect(
      sumSpend([
        { usd: 0.1, at_least: false },
        { usd: null, at_least: false },
      ]),
    ).toEqual({ usd: 0.1, at_least: true });
  });

  it("reads a terminal record: its cost and its floor mark; nothing while running", () => {
    expect(recordedSpend(null)).toEqual({ usd: null, at_least: false });
    expect(recordedSpend({ cost_total: 0.12 })).toEqual({ usd: 0.12, at_least: false });
    expect(recordedSpend({ cost_total: 0.12, cost_at_least: true })).toEqual({ usd: 0.12, at_least: true });
  });
});

describe("the one sum every view uses", () => {
  it("adds the known dollars and keeps floors and unknown figures apart, for each view to say", () => {
    const figures = [
      { usd: 0.1, at_least: false },
      { usd: 0.2, at_least: true },
      { usd: null, at_least: false },
    ];
    expect(addSpend(figures)).toEqual({ usd: 0.3, floors: true, unknown: 1, count: 3 });
    // A Fusion run: an unknown child makes its figure a floor.
    expect(
      sumSpend([
        { usd: 0.1, at_least: false },
        { usd: null, at_least: false },
      ]),
    ).toEqual({ usd: 0.1, at_least: true });
    // The table's total: the unknown are counted, not a floor.
    const row = (cost: number | null, floor = false) => ({ kind: "delegate", cost, cost_at_least: floor });
    expect(spendTotal([row(0.1), row(null)])).toEqual({ usd: 0.1, at_least: false, tasks: 2, unknown: 1 });
    expect(spendTotal([row(0.1), row(0.2, true)])).toEqual({ usd: 0.3, at_least: true, tasks: 2, unknown: 0 });
  });
});

describe("the figure as every view prints it", () => {
  it("beside its cap: 'at least' for a floor, the overshoot named, digits that tell over from equal", () => {
    expect(spendOfCapText({ usd: 0.1207, at_least: true }, 0.5)).toBe("at least $0.1207 of cap $0.5000");
    expect(spendOfCapText({ usd: 0.20004, at_least: false }, 0.2)).toBe(
      "$0.20004 of cap $0.20000, over the cap by $0.000040",
    );
    expect(spendOfCapText({ usd: 0.2, at_least: false }, 0.2)).toBe("$0.2000 of cap $0.2000");
    expect(spendOfCapText({ usd: null, at_least: false }, 0.2)).toBe("spend not reported of cap $0.2000");
    expect(spendOfCapText({ usd: 1.363566, at_least: false }, undefined)).toBe("$1.36");
    expect(spendFigureText({ usd: null, at_least: false }, "?")).toBe("?");
  });

  it("as a table's two cells: the same digits rule, the floor on the spend, no cap cell without a cap", () => {
    expect(spendCells({ usd: 0.20004, at_least: true }, 0.2)).toEqual({ spent: "at least $0.20004", cap: "$0.20000" });
    expect(spendCells({ usd: 0.1005, at_least: false }, 0.2)).toEqual({ spent: "$0.1005", cap: "$0.2000" });
    expect(spendCells({ usd: null, at_least: false }, 0.2, "?")).toEqual({ spent: "?", cap: "$0.2000" });
    expect(spendCells({ usd: 0.1, at_least: false }, null)).toEqual({ spent: "$0.1000", cap: null });
  });
});

describe("a Fusion manifest's terminal record", () => {
  const parseManifest = (value: unknown) => checkDocument(FusionManifestSchema, value, "manifest");
  const manifest = (terminal: Record<string, unknown>) => ({
    schema_version: "pi-bg-delegate.fusion-manifest.v1",
    kind: "fusion",
    run_id: `f${"a".repeat(32)}`,
    workflow: "bg_fusion",
    artifact_dir: `.pi/fusion/f${"a".repeat(32)}`,
    created_at: "2026-12-01T10:00:00.000Z",
    owner: { pid: 1, start_time: "2026-12-01T10:00:00.000Z" },
    state: "cancelled",
    artifacts: [],
    terminal: {
      ended_at: "2026-12-01T10:01:00.000Z",
      failure: { code: "child_cancelled", stage: "candidate" },
      ...terminal,
    },
  });

  it("holds the run's figure, its floor mark only with it, never a negative amount", () => {
    expect(parseManifest(manifest({ cost_total: 0.12, cost_at_least: true })).terminal).toMatchObject({
      cost_total: 0.12,
      cost_at_least: true,
    });
    expect(parseManifest(manifest({})).terminal).not.toHaveProperty("cost_total");
    expect(() => parseManifest(manifest({ cost_at_least: true }))).toThrow(SchemaViolation);
    expect(() => parseManifest(manifest({ cost_total: -1 }))).toThrow(SchemaViolation);
    expect(() => parseManifest(manifest({ cost_total: 0.1, cost_at_least: false }))).toThrow(SchemaViolation);
  });
});

describe("a Fusion run's row", () => {
  it("shows the figure its commit recorded, its floor mark and the run's cap, as recorded and as checked now", async () => {
    const { cwd, handle } = await cancelledSpentRun();
    const expected = {
      id: handle.runId,
      kind: "fusion",
      state: "cancelled",
      cost: 0.1207,
      cost_at_least: true,
      cap: 0.5,
    };
    expect(listRows(cwd, { verify: false })).toEqual([expect.objectContaining(expected)]);
    expect(await listRows(cwd, { verify: true })).toEqual([expect.objectContaining(expected)]);
  });
});
