/**
 * The outputSchema subset (src/core/output-schema.ts) and the structured answer
 * (src/core/structured-answer.ts): what is inside, what is refused and with which path, and the
 * messages a value or an answer gets (the repair request quotes them).
 */
import { describe, expect, it } from "vitest";
import { DELEGATE_FIELDS } from "../../src/arguments/delegate-arguments.ts";
import { checkArguments } from "../../src/arguments/fields.ts";
import { DelegateError } from "../../src/core/errors.ts";
import { checkOutputSchema, checkValue, OUTPUT_SCHEMA_BOUNDS } from "../../src/core/output-schema.ts";
import { parseStructuredAnswer, structuredAnswerProblem } from "../../src/core/structured-answer.ts";
import { answerJsonText, SchemaViolation } from "../../src/core/validate.ts";

const SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["items"],
  properties: {
    items: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["path"],
        properties: { path: { type: "string", description: "file" }, line: { type: "integer" } },
      },
    },
    kind: { type: "string", enum: ["a", "b"] },
    score: { type: "number" },
    ok: { type: "boolean" },
  },
} as const;

function problem(raw: unknown): string {
  try {
    checkOutputSchema(raw);
  } catch (error) {
    if (error instanceof SchemaViolation) return error.message;
    throw error;
  }
  return "accepted";
}

describe("the outputSchema subset", () => {
  it("accepts every keyword of the subset and rebuilds the schema from checked parts", () => {
    expect(checkOutputSchema(JSON.parse(JSON.stringify(SCHEMA)))).toEqual(SCHEMA);
  });

  it.each([
    [{ type: "object", properties: { a: { type: "string" } } }, "outputSchema.additionalProperties: must be false"],
    [{ type: "array", items: { type: "string" } }, 'outputSchema.type: must be "object" at the root'],
    [{ type: ["object"], properties: {} }, "outputSchema.type: must be one of object"],
    [
      { type: "object", additionalProperties: false, properties: { a: { $ref: "#/x" } } },
      "outputSchema.properties.a.type: must be one of",
    ],
    [
      { type: "object", additionalProperties: false, properties: { a: { type: "string", pattern: "x" } } },
      "outputSchema.properties.a.pattern: is not a known keyword for a string in the subset",
    ],
    [{ type: "object", additionalProperties: false, properties: { a: { type: "array" } } }, "items: is required"],
    [
      { type: "object", additionalProperties: false, properties: { a: { type: "string" } }, required: ["b"] },
      "outputSchema.required[0]: names no property (b)",
    ],
    [
      { type: "object", additionalProperties: false, properties: { a: { type: "string", enum: ["x", "x"] } } },
      'repeats "x"',
    ],
    [{ type: "object", additionalProperties: false, properties: {} }, "must name at least one property"],
  ])("refuses %j", (raw, message) => {
    expect(problem(raw)).toContain(message);
  });

  it("bounds depth, nodes and bytes", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i <= OUTPUT_SCHEMA_BOUNDS.maxDepth + 1; i++) deep = { type: "array", items: deep };
    expect(problem({ type: "object", additionalProperties: false, properties: { a: deep } })).toContain(
      "nested deeper than",
    );
    const wide = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`p${i}`, { type: "string" }]));
    expect(problem({ type: "object", additionalProperties: false, properties: wide })).toContain(
      "more than 64 properties",
    );
    const long = {
      type: "object",
      additionalProperties: false,
      properties: { a: { type: "string" } },
      description: "x".repeat(17_000),
    };
    expect(problem(long)).toContain("bytes as JSON");
  });

  it("is refused at admission as output_schema_unsupported; a non-object is invalid_arguments", () => {
    const refuse = (outputSchema: unknown) => {
      try {
        checkArguments(DELEGATE_FIELDS, { name: "n", prompt: "p", outputSchema });
      } catch (error) {
        return error instanceof DelegateError ? error.code : String(error);
      }
      return "accepted";
    };
    expect(refuse({ type: "object", properties: { a: { type: "string" } } })).toBe("output_schema_unsupported");
    expect(refuse("object")).toBe("invalid_arguments");
    expect(refuse(SCHEMA)).toBe("accepted");
  });
});

describe("a value against a schema", () => {
  const schema = checkOutputSchema(JSON.parse(JSON.stringify(SCHEMA)));
  const at = (value: unknown) => {
    try {
      checkValue(schema, value, "output");
      return "ok";
    } catch (error) {
      return (error as SchemaViolation).message;
    }
  };

  it("names the path that fails", () => {
    expect(at({ items: [{ path: "a.ts", line: 3 }], kind: "a", score: 1.5, ok: true })).toBe("ok");
    expect(at({ items: [{ path: "a.ts", line: 3.5 }] })).toBe("output.items[0].line: must be an integer, got 3.5");
    expect(at({ items: [], kind: "c" })).toBe('output.kind: must be one of "a" | "b"');
    expect(at({ items: [{ path: "a", extra: 1 }] })).toBe("output.items[0].extra: is not a known property");
    expect(at({})).toBe("output.items: is required");
    expect(at({ items: [], score: "1" })).toBe("output.score: must be a number, got string");
  });
});

describe("the structured answer", () => {
  const schema = checkOutputSchema(JSON.parse(JSON.stringify(SCHEMA)));
  const basis = [
    {
      field: "items",
      citations: [{ path: "a.ts", start_line: 1, end_line: 2, excerpt: "x" }],
      reasoning: "r",
      confidence: "high",
    },
  ];

  it("parses {output, basis}, bare or in one json fence", () => {
    const text = JSON.stringify({ output: { items: [] }, basis });
    expect(parseStructuredAnswer(text, schema).basis[0]?.field).toBe("items");
    expect(answerJsonText(`\`\`\`json\n${text}\n\`\`\``)).toBe(text);
    expect(structuredAnswerProblem(`\`\`\`json\n${text}\n\`\`\``, schema)).toBeUndefined();
  });

  it("says what is wrong", () => {
    expect(structuredAnswerProblem("prose", schema)).toMatch(/^the answer: is not one JSON object/);
    expect(structuredAnswerProblem(JSON.stringify({ output: { items: [] }, basis: [] }), schema)).toBe(
      "basis: has no entry for items",
    );
    const other = [{ ...basis[0], field: "kind" }];
    expect(structuredAnswerProblem(JSON.stringify({ output: { items: [] }, basis: other }), schema)).toBe(
      "basis[0].field: names no top-level field of output (kind)",
    );
    const backwards = [{ ...basis[0], citations: [{ path: "a", start_line: 3, end_line: 2, excerpt: "x" }] }];
    expect(structuredAnswerProblem(JSON.stringify({ output: { items: [] }, basis: backwards }), schema)).toBe(
      "basis[0].citations[0].end_line: must be at least start_line (3)",
    );
  });
});
