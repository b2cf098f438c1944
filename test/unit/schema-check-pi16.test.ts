/**
 * The declared-document checker under the very TypeBox Pi 1.6.0 ships (1.3.27, which marks an optional
 * copy of a declaration with a visible `~optional`): what Pi 1.6.0's loader maps `@sinclair/typebox` to.
 */
import { expect, it, vi } from "vitest";
import { schemaCheckCases } from "./schema/check-cases.ts";

// Where package-lock.json puts it: Pi 1.6.0's own dependency, beside the devDependency `typebox`.
vi.mock(
  "@sinclair/typebox",
  async () =>
    await import(
      new URL(
        "../../node_modules/@earendil-works/pi-coding-agent/node_modules/typebox/build/index.mjs",
        import.meta.url,
      ).href
    ),
);

it("this file's TypeBox is the one Pi 1.6.0 ships", async () => {
  const { Type } = await import("@sinclair/typebox");
  expect(Object.keys(Type.Optional({ ...Type.String() }))).toContain("~optional");
});

schemaCheckCases("1.x as Pi 1.6.0 ships it");
