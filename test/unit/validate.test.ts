import { describe, expect, it } from "vitest";
import { closedObject, count, oneOf, SchemaViolation, str } from "../../src/core/validate.ts";

function problem(check: () => unknown): string {
  try {
    check();
  } catch (error) {
    if (error instanceof SchemaViolation) return error.describe("arguments");
    throw error;
  }
  throw new Error("the check passed");
}

describe("the one validator", () => {
  it("names the exact path of an unknown, a missing and a mistyped key", () => {
    expect(problem(() => closedObject({ a: 1, b: 2 }, "route", ["a"]))).toBe("route.b: is not a known key");
    expect(problem(() => closedObject({}, "", ["a"]))).toBe("a: is required");
    expect(closedObject({}, "", ["a"], { optional: ["a"] })).toEqual({});
    expect(problem(() => closedObject({ b: 1 }, "", [], { noun: "argument" }))).toBe("b: is not a known argument");
    expect(problem(() => closedObject([], "", ["a"]))).toBe("arguments: must be an object, got array");
    const long = "k".repeat(65);
    expect(problem(() => closedObject({ [long]: 1 }, "x", []))).toBe("x: has an unknown key of 65 characters");
  });

  it("bounds strings by characters and bytes and refuses what a label must not hold", () => {
    expect(str("é𝄞", "s", { maxChars: 2 })).toBe("é𝄞");
    expect(problem(() => str("abc", "s", { maxChars: 2 }))).toBe("s: must be at most 2 characters");
    expect(problem(() => str("éé", "s", { maxBytes: 3 }))).toBe("s: must be at most 3 bytes of UTF-8");
    expect(problem(() => str(" \n", "s", { allowControl: true }))).toBe("s: must not be blank");
    expect(problem(() => str("a\u001b[31m", "s"))).toBe("s: must not contain control characters");
    expect(str("a\nb", "s", { allowControl: true })).toBe("a\nb");
    expect(problem(() => str("a\ud800", "s"))).toContain("lone surrogate");
    expect(problem(() => str(5, "s"))).toBe("s: must be a string, got number");
  });

  it("checks counts and enums exactly, without coercion", () => {
    expect(count(0, "n")).toBe(0);
    expect(problem(() => count("1", "n"))).toBe("n: must be a number, got string");
    expect(problem(() => count(1.5, "n"))).toBe("n: must be a non-negative integer, got 1.5");
    expect(problem(() => count(0, "n", 1))).toBe("n: must be a positive integer, got 0");
    expect(problem(() => count(11, "n", 1, 10))).toBe("n: must be at most 10");
    expect(oneOf("b", "e", ["a", "b"])).toBe("b");
    expect(problem(() => oneOf("c", "e", ["a", "b"]))).toBe("e: must be one of a | b");
  });
});
