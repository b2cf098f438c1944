/**
 * Argument admission (docs/tools/bg_delegate.md and docs/tools/bg_result.md, "Arguments"): exact
 * JSON types, no coercion, enums, positive safe
 * integers, non-blank well-formed strings, no unknown keys (root and route), and the bounds.
 * Each malformed object must fail as invalid_arguments naming the field, both in the pure parsers
 * and through the tools' prepareArguments (the text pi shows the model starts with the code).
 * Expected values (defaults, bounds) are written here from the spec, not read from our constants.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { validateToolArguments } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../scripts/hosts.mjs";
import {
  DELEGATE_ARGUMENTS,
  parseDelegateArguments,
  withDelegateDefaults,
} from "../../src/arguments/delegate-arguments.ts";
import { FUSION_ARGUMENTS } from "../../src/arguments/fusion-arguments.ts";
import { parseResultArguments, RESULT_ARGUMENTS } from "../../src/arguments/result-arguments.ts";
import { STEER_ARGUMENTS } from "../../src/arguments/steer-arguments.ts";
import { packageTool } from "../../src/tools/define.ts";
import { BG_DELEGATE, BG_RESULT } from "../../src/tools/texts.ts";
import { thrownBy } from "../helpers/failures.ts";

const MiB = 1024 * 1024;
const ok = { name: "Find the parser", prompt: "Where is the config parsed?" };
const route = { provider: "fake", model: "fake-model" };

const neverCalled = async (): Promise<never> => {
  throw new Error("execute must not run in these tests");
};
const delegateTool = packageTool(BG_DELEGATE, DELEGATE_ARGUMENTS, neverCalled);
const resultTool = packageTool(BG_RESULT, RESULT_ARGUMENTS, neverCalled);

type Case = [label: string, args: unknown, field: string];

const delegateCases: Case[] = [
  ["arguments are null", null, "arguments"],
  ["arguments are an array", [ok], "arguments"],
  ["arguments are a string", JSON.stringify(ok), "arguments"],
  ["arguments are a number", 42, "arguments"],
  ["arguments are an empty object (or were not JSON, on Pi 1.x)", {}, "arguments"],
  ["name is missing", { prompt: "p" }, "name"],
  ["prompt is missing", { name: "n" }, "prompt"],
  ["name is a number", { ...ok, name: 7 }, "name"],
  ["name is null", { ...ok, name: null }, "name"],
  ["name is empty", { ...ok, name: "" }, "name"],
  ["name is whitespace only", { ...ok, name: " \t\n\u00a0 " }, "name"],
  ["name has a lone high surrogate", { ...ok, name: "ab\ud800c" }, "name"],
  ["name ends in a lone low surrogate", { ...ok, name: "abc\udc00" }, "name"],
  ["name is 81 characters", { ...ok, name: "n".repeat(81) }, "name"],
  ["name is 81 astral characters", { ...ok, name: "😀".repeat(81) }, "name"],
  ["name holds a NUL", { ...ok, name: "scan\u0000repo" }, "name"],
  ["name holds a terminal escape", { ...ok, name: "scan \u001b[2Jrepo" }, "name"],
  ["name holds a C1 control", { ...ok, name: "scan\u009brepo" }, "name"],
  ["prompt is an array", { ...ok, prompt: ["do", "it"] }, "prompt"],
  ["prompt is an object", { ...ok, prompt: { text: "do it" } }, "prompt"],
  ["prompt is whitespace only", { ...ok, prompt: "\n\n   \t" }, "prompt"],
  ["prompt is over 1 MiB", { ...ok, prompt: "p".repeat(MiB + 1) }, "prompt"],
  [
    "prompt is over 1 MiB of UTF-8 in fewer characters",
    { ...ok, prompt: "€".repeat(Math.ceil(MiB / 3) + 1) },
    "prompt",
  ],
  ["prompt has a lone surrogate", { ...ok, prompt: "look \udfff here" }, "prompt"],
  ["route is null", { ...ok, route: null }, "route"],
  ["route is an array", { ...ok, route: ["fake", "fake-model"] }, "route"],
  ["route is a string", { ...ok, route: "fake/fake-model" }, "route"],
  ["route lacks model", { ...ok, route: { provider: "fake" } }, "route.model"],
  ["route lacks provider", { ...ok, route: { model: "fake-model" } }, "route.provider"],
  ["route has an unknown key", { ...ok, route: { ...route, thinking: "high" } }, "route.thinking"],
  ["route.provider is a number", { ...ok, route: { ...route, provider: 1 } }, "route.provider"],
  ["route.model is blank", { ...ok, route: { ...route, model: "   " } }, "route.model"],
  ["capability is not in the enum", { ...ok, capability: "write" }, "capability"],
  ["capability differs in case", { ...ok, capability: "INSPECT" }, "capability"],
  ["capability is empty", { ...ok, capability: "" }, "capability"],
  ["extensionMode is not in the enum", { ...ok, extensionMode: "none" }, "extensionMode"],
  ["extensionMode is a boolean", { ...ok, extensionMode: true }, "extensionMode"],
  ["maxTurns is a numeric string", { ...ok, maxTurns: "45" }, "maxTurns"],
  ["maxTurns is zero", { ...ok, maxTurns: 0 }, "maxTurns"],
  ["maxTurns is negative zero", { ...ok, maxTurns: -0 }, "maxTurns"],
  ["maxTurns is negative", { ...ok, maxTurns: -1 }, "maxTurns"],
  ["maxTurns is not an integer", { ...ok, maxTurns: 1.5 }, "maxTurns"],
  ["maxTurns is NaN", { ...ok, maxTurns: Number.NaN }, "maxTurns"],
  ["maxTurns is Infinity", { ...ok, maxTurns: Number.POSITIVE_INFINITY }, "maxTurns"],
  ["maxTurns is over 1,000", { ...ok, maxTurns: 1001 }, "maxTurns"],
  ["maxTurns is null", { ...ok, maxTurns: null }, "maxTurns"],
  ["maxToolCalls is a numeric string", { ...ok, maxToolCalls: "120" }, "maxToolCalls"],
  ["maxToolCalls is over 10,000", { ...ok, maxToolCalls: 10_001 }, "maxToolCalls"],
  ["maxToolCalls is not a safe integer", { ...ok, maxToolCalls: 2 ** 53 }, "maxToolCalls"],
  ["timeoutSeconds is over 86,400", { ...ok, timeoutSeconds: 86_401 }, "timeoutSeconds"],
  ["timeoutSeconds is -Infinity", { ...ok, timeoutSeconds: Number.NEGATIVE_INFINITY }, "timeoutSeconds"],
  ["timeoutSeconds is a numeric string", { ...ok, timeoutSeconds: "1200" }, "timeoutSeconds"],
  ["timeoutSeconds is huge", { ...ok, timeoutSeconds: 1e300 }, "timeoutSeconds"],
  ["autoDeliver is not in the enum", { ...ok, autoDeliver: "sometimes" }, "autoDeliver"],
  ["autoDeliver is an array", { ...ok, autoDeliver: ["never"] }, "autoDeliver"],
  ["notifyOnCompletion is the string true", { ...ok, notifyOnCompletion: "true" }, "notifyOnCompletion"],
  ["notifyOnCompletion is 1", { ...ok, notifyOnCompletion: 1 }, "notifyOnCompletion"],
  ["triggerOnCompletion is the string false", { ...ok, triggerOnCompletion: "false" }, "triggerOnCompletion"],
  ["triggerOnCompletion is null", { ...ok, triggerOnCompletion: null }, "triggerOnCompletion"],
  ["an unknown key (the old `task`)", { ...ok, task: "x" }, "task"],
  ["an unknown root key `model`", { ...ok, model: "fake-model" }, "model"],
  ["a JSON `__proto__` key", JSON.parse('{"name":"n","prompt":"p","__proto__":{"x":1}}'), "__proto__"],
];

const resultCases: Case[] = [
  ["arguments are null", null, "arguments"],
  ["arguments are an array", ["abc"], "arguments"],
  ["taskId is missing", { delivery: "inline" }, "taskId"],
  ["arguments are an empty object", {}, "arguments"],
  ["taskId is a number", { taskId: 123 }, "taskId"],
  ["taskId is an array", { taskId: ["abc"] }, "taskId"],
  ["taskId is empty", { taskId: "" }, "taskId"],
  ["taskId is whitespace only", { taskId: "   " }, "taskId"],
  ["taskId has a lone surrogate", { taskId: "abc\ud834" }, "taskId"],
  ["taskId is 129 characters", { taskId: "a".repeat(129) }, "taskId"],
  ["delivery is not in the enum", { taskId: "abc", delivery: "full" }, "delivery"],
  ["delivery differs in case", { taskId: "abc", delivery: "INLINE" }, "delivery"],
  ["delivery is null", { taskId: "abc", delivery: null }, "delivery"],
  ["an unknown key `id`", { taskId: "abc", id: "abc" }, "id"],
  ["an unknown key `wait`", { taskId: "abc", wait: true }, "wait"],
];

function expectInvalid(run: () => unknown, field: string): void {
  const error = thrownBy(run);
  expect(error.code).toBe("invalid_arguments");
  expect(error.message.startsWith(`${field}: `), error.message).toBe(true);
}

/** What `run` throws; a call that returns fails the test. */
function thrownOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw, but the call returned");
}

function expectToolRefusal(prepare: (raw: unknown) => unknown, args: unknown, field: string): void {
  const caught = thrownOf(() => prepare(args));
  expect(caught).toBeInstanceOf(Error);
  const text = (caught as Error).message;
  expect(text.startsWith(`[invalid_arguments] ${field}: `), text.slice(0, 200)).toBe(true);
  expect(text).toContain("Child process created: no");
}

const prepareDelegate = (raw: unknown) => delegateTool.prepareArguments?.(raw);
const prepareResult = (raw: unknown) => resultTool.prepareArguments?.(raw);

describe("bg_delegate refuses malformed arguments", () => {
  it.each(delegateCases)("%s", (_label, args, field) => {
    expectInvalid(() => parseDelegateArguments(args), field);
    expectToolRefusal(prepareDelegate, args, field);
  });
});

describe("bg_result refuses malformed arguments", () => {
  it.each(resultCases)("%s", (_label, args, field) => {
    expectInvalid(() => parseResultArguments(args), field);
    expectToolRefusal(prepareResult, args, field);
  });
});

describe("an empty object", () => {
  it("names every required argument and says it may have been arguments that were not JSON", () => {
    expect(() => parseDelegateArguments({})).toThrow(
      "arguments: none were given — an empty object (arguments that are not valid JSON arrive as one too); required: name, prompt",
    );
    expect(() => parseResultArguments({})).toThrow(/^arguments: none were given .*; required: taskId$/);
  });
});

describe("valid arguments", () => {
  it("bg_delegate applies the spec's defaults", () => {
    expect(parseDelegateArguments(ok)).toEqual({
      name: "Find the parser",
      prompt: "Where is the config parsed?",
      route: undefined,
      capability: "inspect",
      extensionMode: "isolated",
      maxTurns: 24,
      maxToolCalls: 120,
      timeoutSeconds: 1200,
      autoDeliver: "never",
      notifyOnCompletion: true,
      triggerOnCompletion: true,
      previousTaskId: undefined,
      reseed: false,
    });
  });

  it("bg_delegate takes a follow-up's previousTaskId (trimmed) and reseed only with it", () => {
    const followUp = parseDelegateArguments({ ...ok, previousTaskId: "  d0123abcd ", reseed: true });
    expect(followUp).toMatchObject({ previousTaskId: "d0123abcd", reseed: true });
    expect(thrownBy(() => parseDelegateArguments({ ...ok, reseed: false }))).toMatchObject({
      code: "invalid_arguments",
      message: expect.stringContaining("reseed"),
    });
    for (const bad of [
      { previousTaskId: 7 },
      { previousTaskId: "" },
      { previousTaskId: "d\u0007" },
      { reseed: "yes" },
    ]) {
      expect(thrownBy(() => parseDelegateArguments({ ...ok, previousTaskId: "d1", ...bad }))).toMatchObject({
        code: "invalid_arguments",
      });
    }
  });

  it("bg_delegate keeps every given value; the name is trimmed, the prompt is kept byte for byte", () => {
    const given = {
      name: "  Audit  ",
      prompt: "  keep\n my whitespace \n",
      route,
      capability: "inspect",
      extensionMode: "ambient",
      maxTurns: 3,
      maxToolCalls: 9,
      timeoutSeconds: 60,
      autoDeliver: "when_small",
      notifyOnCompletion: false,
      triggerOnCompletion: false,
      previousTaskId: "d0123",
      reseed: true,
    };
    expect(parseDelegateArguments(given)).toEqual({ ...given, name: "Audit" });
  });

  it("bg_delegate accepts every bound exactly", () => {
    const atBounds = {
      name: "😀".repeat(80),
      prompt: "€".repeat(Math.floor(MiB / 3)) + "x".repeat(MiB % 3),
      maxTurns: 1000,
      maxToolCalls: 10_000,
      timeoutSeconds: 86_400,
    };
    expect(Buffer.byteLength(atBounds.prompt)).toBe(MiB);
    const parsed = parseDelegateArguments(atBounds);
    expect(parsed).toMatchObject({ ...atBounds });
    expect(parseDelegateArguments({ ...ok, maxTurns: 1, maxToolCalls: 1, timeoutSeconds: 1 }).maxTurns).toBe(1);
  });

  it("bg_delegate's prepareArguments yields arguments pi's own validator accepts, without an absent route", () => {
    const prepared = prepareDelegate(ok) as Record<string, unknown>;
    expect(Object.hasOwn(prepared, "route")).toBe(false);
    expect(prepared).toEqual(ok); // checked, nothing added: the defaults are applied once, in execute
    expect(withDelegateDefaults(prepared as typeof ok)).toMatchObject({ maxTurns: 24, extensionMode: "isolated" });
    const withRoute = prepareDelegate({ ...ok, route }) as Record<string, unknown>;
    expect(withRoute.route).toEqual(route);
    for (const args of [prepared, withRoute]) {
      const tool = { name: "bg_delegate", description: "", parameters: delegateTool.parameters };
      expect(validateToolArguments(tool, { type: "toolCall", id: "c1", name: "bg_delegate", arguments: args })).toEqual(
        args,
      );
    }
  });

  it("bg_result trims the task id and leaves delivery unset unless given", () => {
    expect(parseResultArguments({ taskId: "  abc123  " })).toEqual({ taskId: "abc123", delivery: undefined });
    expect(parseResultArguments({ taskId: "a".repeat(128), delivery: "artifact" })).toEqual({
      taskId: "a".repeat(128),
      delivery: "artifact",
    });
    expect(prepareResult({ taskId: " abc " })).toEqual({ taskId: "abc" });
    expect(prepareResult({ taskId: "abc", delivery: "inline" })).toEqual({ taskId: "abc", delivery: "inline" });
  });
});

/**
 * A JSON schema's structure as test/integration/package-load.test.ts compares it: descriptions
 * dropped, `required` and `enum` as sorted sets.
 */
function structure(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(structure);
  if (typeof schema !== "object" || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== "description" && !key.startsWith("$"))
      .map(([key, value]) => [
        key,
        (key === "required" || key === "enum") && Array.isArray(value) ? [...value].sort() : structure(value),
      ]),
  );
}

/** Every key at any depth of a JSON value. */
function keysOf(value: unknown): string[] {
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...keysOf(inner)]);
}

/** Paths of properties (at any depth) without a non-empty description. */
function undescribed(schema: Record<string, unknown>, path = ""): string[] {
  const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(properties).flatMap(([name, prop]) => {
    const here = path ? `${path}.${name}` : name;
    const ok = typeof prop.description === "string" && prop.description.trim() !== "";
    return [...(ok ? [] : [here]), ...undescribed(prop, here)];
  });
}

describe("the schema offered to the model", () => {
  const contracts = JSON.parse(readFileSync(join(REPO_ROOT, "test/fixtures/tool-contracts.json"), "utf8"));
  const offered = {
    bg_delegate: DELEGATE_ARGUMENTS.parameters,
    bg_result: RESULT_ARGUMENTS.parameters,
    bg_fusion: FUSION_ARGUMENTS.parameters,
    bg_steer: STEER_ARGUMENTS.parameters,
  };

  it.each(Object.entries(offered))(
    "%s is the documented contract, every field described, no x- keyword",
    (tool, schema) => {
      const json = JSON.parse(JSON.stringify(schema));
      expect(structure(json)).toEqual(structure(contracts[tool]));
      expect(undescribed(json)).toEqual([]);
      expect(keysOf(json).filter((key) => key.startsWith("x-"))).toEqual([]);
    },
  );
});
