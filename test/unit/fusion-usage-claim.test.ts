/**
 * The usage claim when it cannot be recorded: usage is withheld (at most once), never attached
 * unrecorded. Our own fs helper is replaced here because root ignores permission bits, so no real
 * file system state on this machine makes an exclusive create fail with anything but EEXIST.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { expect, it, vi } from "vitest";
import { FUSION_FILES } from "../../src/core/constants.ts";
import { retrieveFusion } from "../../src/fusion/retrieve.ts";
import type { FusionCompletedView } from "../../src/fusion/types.ts";
import { buildCompletedRun, isRunning, MERGED, newProject } from "../helpers/fusion-fixtures.ts";

const failing = vi.hoisted(() => ({ on: false }));

vi.mock("../../src/core/fs.ts", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/core/fs.ts")>();
  return {
    ...original,
    writeFileExclusive: (path: string, data: string | Uint8Array) => {
      if (failing.on) throw Object.assign(new Error("read-only file system"), { code: "EROFS" });
      return original.writeFileExclusive(path, data);
    },
  };
});

it("a claim that cannot be written withholds usage; a later recorded claim attaches it once", async () => {
  const handle = buildCompletedRun(await newProject());
  failing.on = true;
  const withheld = await retrieveFusion(handle.runDir, {}, isRunning.no);
  expect(withheld.details).toMatchObject({ state: "completed", usage_status: "claim_failed" });
  expect(withheld.details).not.toHaveProperty("usage");
  expect(withheld.text).toContain("Usage: withheld; the report could not be recorded (EROFS)");
  expect(withheld.text.endsWith(MERGED)).toBe(true);
  expect(existsSync(join(handle.runDir, FUSION_FILES.usageClaim))).toBe(false);

  failing.on = false;
  const first = await retrieveFusion(handle.runDir, {}, isRunning.no);
  expect((first.details as FusionCompletedView).usage_status).toBe("attached");
  const second = await retrieveFusion(handle.runDir, {}, isRunning.no);
  expect((second.details as FusionCompletedView).usage_status).toBe("already_reported");
});
