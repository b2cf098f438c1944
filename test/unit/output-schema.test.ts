/**
 * The outputSchema subset (src/core/output-schema.ts) and the structured answer
 * (src/core/structured-answer.ts): what is inside, what is refused and with which path, and the
 * messages a value or an answer gets (the repair request quotes them).
 */
import { describe, expect, it } from "vitest";
import { DelegateArgumentsSchema } from "../../src/arguments/delegate-arguments.ts";
import { checkArguments } from "../../src/arguments/tool-arguments.ts";
import { canonicalJson } from "../../src/core/canonical.ts";
import { DelegateError } from "../../src/core/errors.ts";
import {
  checkOutputSchema,
  checkValue,
  OUTPUT_SCHEMA_BOUNDS,
  type OutputSchemaNode,
} from "../../src/core/output-schema.ts";
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
        checkArguments(DelegateArgumentsSchema, { name: "n", prompt: "p", outputSchema });
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

describe("a basis entry for a field that does not exist", () => {
  const schema = checkOutputSchema(JSON.parse(JSON.stringify(SCHEMA)));
  const entry = (field: string) => ({ field, citations: [], reasoning: "r", confidence: "low" });

  it("is named, even when the basis has more entries than the output has fields", () => {
    const text = JSON.stringify({
      output: { items: [], ok: true },
      basis: [entry("items"), entry("ok"), entry("nope")],
    });
    expect(structuredAnswerProblem(text, schema)).toBe("basis[2].field: names no top-level field of output (nope)");
    const repeated = JSON.stringify({ output: { items: [] }, basis: [entry("items"), entry("items")] });
    expect(structuredAnswerProblem(repeated, schema)).toBe("basis[1].field: repeats items");
    const many = JSON.stringify({ output: { items: [] }, basis: Array.from({ length: 65 }, () => entry("items")) });
    expect(structuredAnswerProblem(many, schema)).toBe("basis: has more than 64 entries");
  });
});

describe("property names that are Object.prototype's (__proto__, constructor, prototype)", () => {
  const NAMES = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty"];
  // JSON.parse makes each an own property, as a tool argument or a child's answer arrives.
  const raw = JSON.parse(
    `{"type":"object","additionalProperties":false,"required":${JSON.stringify(NAMES)},"properties":{${NAMES.map(
      (n) =>
        `${JSON.stringify(n)}:{"type":"object","additionalProperties":false,"properties":{"__proto__":{"type":"string"}}}`,
    ).join(",")}}}`,
  );

  it("are plain names in a schema: kept as own properties, none becomes a prototype", () => {
    const schema = checkOutputSchema(raw);
    expect(Object.keys(schema.properties)).toEqual(NAMES);
    expect(Object.getPrototypeOf(schema.properties)).toBe(Object.prototype);
    const inner = Object.getOwnPropertyDescriptor(schema.properties, "__proto__")?.value as
      | OutputSchemaNode
      | undefined;
    expect(inner?.type).toBe("object");
    expect(inner?.type === "object" ? Object.keys(inner.properties) : []).toEqual(["__proto__"]);
    // Its canonical JSON (what the seed hash covers) keeps every name, so a stored schema reads back the same.
    const json = canonicalJson(schema);
    expect(json).toContain('"__proto__":{"additionalProperties":false');
    expect(checkOutputSchema(JSON.parse(json))).toEqual(schema);
    expect(canonicalJson(JSON.parse(json))).toBe(json);
  });

  it("are plain names in an answer: checked, kept, and each one's basis entry accepted", () => {
    const schema = checkOutputSchema(raw);
    const output = `{${NAMES.map((n) => `${JSON.stringify(n)}:{"__proto__":"v-${n}"}`).join(",")}}`;
    const basis = NAMES.map((n) => ({ field: n, citations: [], reasoning: "r", confidence: "low" }));
    const text = `{"output":${output},"basis":${JSON.stringify(basis)}}`;
    const answer = parseStructuredAnswer(text, schema);
    expect(Object.keys(answer.output)).toEqual(NAMES);
    expect(
      Object.getOwnPropertyDescriptor(Object.getOwnPropertyDescriptor(answer.output, "__proto__")?.value, "__proto__")
        ?.value,
    ).toBe("v-__proto__");
    expect(answer.basis.map((b) => b.field)).toEqual(NAMES);
    expect(canonicalJson(answer.output)).toContain('"__proto__":{"__proto__":"v-__proto__"}');
    // A value of the wrong type under such a name is named like any other.
    const wrong = text.replace('"constructor":{"__proto__":"v-constructor"}', '"constructor":{"__proto__":5}');
    expect(structuredAnswerProblem(wrong, schema)).toBe("output.constructor.__proto__: must be a string, got number");
    // A name the schema does not have is refused, never looked up on the prototype.
    const extra = text.replace('"toString":{', '"valueOf":{"__proto__":"x"},"toString":{');
    expect(structuredAnswerProblem(extra, schema)).toBe("output.valueOf: is not a known property");
  });
});
