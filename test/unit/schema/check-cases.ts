/**
 * The declared-document checker's cases (src/core/schema/check.ts over src/core/schema/kinds.ts), run
 * once under the TypeBox the tests load (0.34) and once under the TypeBox 1.x Pi 1.x maps the same
 * import to (../schema-check-typebox1.test.ts): both must build the same keywords and give the same
 * typed values and the same path-and-problem messages as the one validator's primitives.
 */
import { describe, expect, it } from "vitest";
import { DelegateArgumentsSchema } from "../../../src/arguments/delegate-arguments.ts";
import { FusionArgumentsSchema } from "../../../src/arguments/fusion-arguments.ts";
import { ResultArgumentsSchema } from "../../../src/arguments/result-arguments.ts";
import { SteerArgumentsSchema } from "../../../src/arguments/steer-arguments.ts";
import { ReadArtifactArgumentsSchema } from "../../../src/child/read-artifact.ts";
import { checkDocument, vetDeclaration } from "../../../src/core/schema/check.ts";
import { DOCUMENTS } from "../../../src/core/schema/documents.ts";
import {
  Amount,
  AnyString,
  Bool,
  Closed,
  Count,
  Custom,
  Described,
  Dict,
  Dollars,
  List,
  Nullable,
  OneOf,
  Refine,
  Sha256,
  Text,
  Timestamp,
  Type,
} from "../../../src/core/schema/kinds.ts";
import { SchemaViolation, violation } from "../../../src/core/validate.ts";

/** The message a check throws ("path: problem"), or "passed". */
function problem(run: () => unknown): string {
  try {
    run();
    return "passed";
  } catch (error) {
    if (error instanceof SchemaViolation) return error.message;
    throw error;
  }
}

const SHA = "a".repeat(64);

export function schemaCheckCases(typebox: string): void {
  const Doc = Closed({
    id: Text({ maxChars: 8, pattern: /^[a-z]+$/u }),
    note: Type.Optional(Text({ maxBytes: 6, control: true })),
    hash: Sha256(),
    at: Timestamp(),
    n: Count(1, 3),
    cost: Amount(),
    cap: Dollars(10),
    mode: OneOf(["fast", "slow"] as const),
    version: Type.Literal("v1"),
    flag: Type.Boolean(),
    tags: List(AnyString(), 2, 1),
    prev: Nullable(Sha256()),
  });
  const good = {
    id: "abc",
    hash: SHA,
    at: "2026-01-01T00:00:00.000Z",
    n: 2,
    cost: 0,
    cap: 1.5,
    mode: "fast",
    version: "v1",
    flag: false,
    tags: ["x"],
    prev: null,
  };

  describe(`checkDocument under TypeBox ${typebox}`, () => {
    it("every real declaration (each document, each tool's arguments) uses only keywords the checker reads", () => {
      const tools = [
        DelegateArgumentsSchema,
        FusionArgumentsSchema,
        ResultArgumentsSchema,
        SteerArgumentsSchema,
        ReadArtifactArgumentsSchema,
      ];
      for (const schema of [...DOCUMENTS.map((d) => d.schema), ...tools])
        expect(() => vetDeclaration(schema)).not.toThrow();
      expect(() => vetDeclaration(Type.Intersect([Closed({ a: Count() }), Closed({ b: Count() })]))).toThrow(
        /unsupported declaration/,
      );
    });

    it("returns the checked value, rebuilt in declaration order, optional keys only when present", () => {
      const value = checkDocument(Doc, { ...good, note: "a\nb" });
      expect(value).toEqual({ ...good, note: "a\nb" });
      expect(Object.keys(checkDocument(Doc, Object.fromEntries(Object.entries(good).reverse())))).toEqual(
        Object.keys(good),
      );
      expect(checkDocument(Doc, good)).not.toHaveProperty("note");
    });

    it("names the path and the problem, as the validator's primitives do", () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ ...good, extra: 1 }, "extra: is not a known key"],
        [{ ...good, id: 7 }, "id: must be a string, got number"],
        [{ ...good, id: " " }, "id: must not be blank"],
        [{ ...good, id: "a\u0001" }, "id: must not contain control characters"],
        [{ ...good, id: "abcdefghi" }, "id: must be at most 8 characters"],
        [{ ...good, id: "ABC" }, "id: does not match /^[a-z]+$/u"],
        [{ ...good, id: "\ud800" }, "id: must be well-formed Unicode (lone surrogate found)"],
        [{ ...good, note: "ééé€" }, "note: must be at most 6 bytes of UTF-8"],
        [{ ...good, hash: "A".repeat(64) }, "hash: must be lowercase hex SHA-256"],
        [{ ...good, at: "2026-02-30T00:00:00.000Z" }, "at: is not a real time"],
        [{ ...good, at: "yesterday" }, "at: must be an ISO-8601 UTC timestamp"],
        [{ ...good, n: 0 }, "n: must be a positive integer, got 0"],
        [{ ...good, n: 1.5 }, "n: must be a positive integer, got 1.5"],
        [{ ...good, n: 4 }, "n: must be at most 3"],
        [{ ...good, n: "2" }, "n: must be a number, got string"],
        [{ ...good, cost: -1 }, "cost: must be a finite non-negative number"],
        [{ ...good, cap: 0 }, "cap: must be a finite number above 0, got 0"],
        [{ ...good, cap: 11 }, "cap: must be at most 10"],
        [{ ...good, mode: "medium" }, "mode: must be one of fast | slow"],
        [{ ...good, version: "v2" }, 'version: must be "v1"'],
        [{ ...good, flag: "no" }, "flag: must be a boolean, got string"],
        [{ ...good, tags: [] }, "tags: must have at least 1 entries"],
        [{ ...good, tags: ["a", "b", "c"] }, "tags: has more than 2 entries"],
        [{ ...good, tags: [1] }, "tags[0]: must be a string, got number"],
        [{ ...good, prev: "x" }, "prev: must be lowercase hex SHA-256"],
      ];
      for (const [value, message] of cases) expect(problem(() => checkDocument(Doc, value))).toBe(message);
      const { hash: _, ...noHash } = good;
      expect(problem(() => checkDocument(Doc, noHash))).toBe("hash: is required");
      expect(problem(() => checkDocument(Doc, [], "doc"))).toBe("doc: must be an object, got array");
      expect(problem(() => checkDocument(Doc, { ...good, n: 9 }, "outer"))).toBe("outer.n: must be at most 3");
    });

    it("an open object keeps what it does not declare; a map checks each value by its name", () => {
      const Open = Type.Object({ a: Count() });
      expect(checkDocument(Open, { a: 1, b: "kept" })).toEqual({ a: 1, b: "kept" });
      expect(problem(() => checkDocument(Open, { b: 1 }))).toBe("a: is required");
      const Costs = Dict(Amount());
      expect(checkDocument(Costs, { x: 1, y: 2 })).toEqual({ x: 1, y: 2 });
      expect(problem(() => checkDocument(Costs, { x: -1 }, "m"))).toBe("m.x: must be a finite non-negative number");
    });

    it("an unknown value is kept as it is; a construct the checker does not know is an error, not a pass", () => {
      const Carried = Closed({ receipt: Type.Unknown() });
      expect(checkDocument(Carried, { receipt: { any: [1] } })).toEqual({ receipt: { any: [1] } });
      expect(problem(() => checkDocument(Carried, {}))).toBe("receipt: is required");
      expect(() => checkDocument(Type.Intersect([Closed({ a: Count() }), Closed({ b: Count() })]), {})).toThrow(
        /unsupported declaration/,
      );
    });

    it("a name that is __proto__ (JSON.parse keeps it as a key) stays a key of a map or an open object", () => {
      const parsed = JSON.parse('{"__proto__": {"path": "x"}, "a": {"path": "y"}}') as unknown;
      const map = checkDocument(Dict(Type.Object({ path: AnyString() })), parsed);
      expect(Object.getPrototypeOf(map)).toBe(Object.prototype);
      expect(Object.keys(map)).toEqual(["__proto__", "a"]);
      expect((map as Record<string, unknown>).path).toBeUndefined();
      const open = checkDocument(Type.Object({ a: Count() }), JSON.parse('{"a": 1, "__proto__": {"b": 2}}'));
      expect(Object.getPrototypeOf(open)).toBe(Object.prototype);
      expect(Object.keys(open)).toEqual(["a", "__proto__"]);
    });

    it("a union of objects is told apart by the key each fixes to a constant", () => {
      const Usage = Type.Union([
        Closed({ status: Type.Literal("observed"), input: Count() }),
        Closed({ status: Type.Literal("unavailable"), reason: AnyString() }),
      ]);
      expect(checkDocument(Usage, { status: "observed", input: 3 })).toEqual({ status: "observed", input: 3 });
      expect(checkDocument(Usage, { status: "unavailable", reason: "r" })).toEqual({
        status: "unavailable",
        reason: "r",
      });
      expect(problem(() => checkDocument(Usage, { status: "unavailable", input: 3 }, "usage"))).toBe(
        "usage.input: is not a known key",
      );
      expect(problem(() => checkDocument(Usage, { status: "maybe" }, "usage"))).toBe(
        'usage.status: must be "observed" or "unavailable"',
      );
      expect(problem(() => checkDocument(Usage, 3, "usage"))).toBe("usage: must be an object, got number");
    });

    it("a refinement runs on the checked value; a custom parser replaces the check", () => {
      const Absolute = Refine(AnyString(), (value, at) => {
        if (!value.startsWith("/")) violation(at, "must be an absolute path");
      });
      expect(checkDocument(List(Absolute, 4), ["/a"])).toEqual(["/a"]);
      // Optional around a refined (copied) declaration: TypeBox 1.x marks the copy `~optional`.
      const Roots = Closed({ roots: Type.Optional(Refine(List(AnyString(), 2), () => {}, "rule")), n: Count() });
      expect(checkDocument(Roots, { n: 1 })).toEqual({ n: 1 });
      expect(checkDocument(Roots, { n: 1, roots: ["x"] })).toEqual({ n: 1, roots: ["x"] });
      expect(problem(() => checkDocument(Roots, { roots: [] }))).toBe("n: is required");
      const Labels = Closed({ label: Type.Optional(Described(Text(), "a label")) });
      expect(checkDocument(Labels, {})).toEqual({});
      expect(problem(() => checkDocument(List(Absolute, 4), ["/a", "b"], "roots"))).toBe(
        "roots[1]: must be an absolute path",
      );
      const Upper = Custom((value, at) => {
        if (typeof value !== "string") violation(at, "must be text");
        return value.toUpperCase();
      });
      expect(checkDocument(Closed({ u: Upper }), { u: "x" })).toEqual({ u: "X" });
      expect(problem(() => checkDocument(Closed({ u: Upper }), { u: 1 }))).toBe("u: must be text");
    });

    it("a trimmed text is checked as given and kept without its edge whitespace; a description changes no check", () => {
      const Label = Closed({ name: Described(Text({ maxChars: 6, trim: true }), "a label"), on: Bool("on?") });
      expect(checkDocument(Label, { name: "  ab ", on: true })).toEqual({ name: "ab", on: true });
      expect(problem(() => checkDocument(Label, { name: "   ", on: true }))).toBe("name: must not be blank");
      expect(Label.properties.name.description).toBe("a label");
    });

    it("a closed object names its keys with its noun, and an unknown long key only by its length", () => {
      const Args = Closed({ a: Type.Optional(Count()) }, "argument");
      expect(problem(() => checkDocument(Args, { b: 1 }))).toBe("b: is not a known argument");
      expect(problem(() => checkDocument(Args, { ["k".repeat(65)]: 1 }))).toBe(
        "the document: has an unknown argument of 65 characters",
      );
    });
  });
}
