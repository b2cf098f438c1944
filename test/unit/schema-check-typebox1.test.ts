/**
 * The declared-document checker under TypeBox 1.x, which Pi 1.x's loader maps `@sinclair/typebox` to:
 * every module of this file that imports `@sinclair/typebox` gets the `typebox` 1.x package instead.
 */
import { expect, it, vi } from "vitest";
import { schemaCheckCases } from "./schema/check-cases.ts";

vi.mock("@sinclair/typebox", async () => await import("typebox"));

it("this file's TypeBox is 1.x", async () => {
  const { Type } = await import("@sinclair/typebox");
  const loaded = await import("typebox");
  expect(Type).toBe(loaded.Type);
});

schemaCheckCases("1.x");
