/**
 * docs/documents.md is generated from the documents' declarations (scripts/docs/documents.mjs over
 * src/core/schema/documents.ts): every declared document has a table, every key of it a row, and a
 * field's row says what its keywords and refinements accept.
 */
import { describe, expect, it } from "vitest";
import { loadDocuments, renderDocuments } from "../../scripts/docs/documents.mjs";
import { REPO_ROOT } from "../../scripts/hosts.mjs";
import { DOCUMENTS } from "../../src/core/schema/documents.ts";
import { Closed, Count, Refine, Text, Type } from "../../src/core/schema/kinds.ts";

describe("the documents page", () => {
  it("has a table per declared document and a row per top-level key", async () => {
    const text = renderDocuments(await loadDocuments(REPO_ROOT));
    for (const doc of DOCUMENTS) {
      expect(text).toContain(`### \`${doc.file}\``);
      const properties = (doc.schema as { properties?: Record<string, unknown> }).properties ?? {};
      for (const key of Object.keys(properties)) expect(text, `${doc.file} ${key}`).toContain(`| \`${key}\` |`);
    }
  });

  it("says what each field accepts, from the declaration's keywords and rules", () => {
    const text = renderDocuments([
      {
        file: "x.json",
        writer: "a test",
        schema: Closed({
          n: Count(1, 8),
          label: Type.Optional(Text({ maxChars: 64 })),
          id: Refine(Text(), () => {}, "bound to its session"),
          rows: Type.Array(Closed({ at: Count() }), { maxItems: 3 }),
        }),
      },
    ]);
    expect(text).toContain("The document: object, no other keys.");
    expect(text).toContain("| `n` | integer ≥ 1, at most 8 |");
    expect(text).toContain("| `label` | optional; text, not blank, at most 64 characters, no control characters |");
    expect(text).toContain("| `id` | text, not blank, no control characters; bound to its session |");
    expect(text).toContain("| `rows[].at` | integer ≥ 0 |");
  });
});
