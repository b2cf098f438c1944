/**
 * The declarations bg_delegate and bg_fusion share (docs/tools/bg_delegate.md and
 * docs/tools/bg_fusion.md, "Arguments"): the limits and completion options, the answer's shape, the
 * launch key and the group, worded for each tool — a delegate's limits are its own, a Fusion run's
 * apply to each child (the time and the cap to the whole run) — and a model route.
 */
import {
  ARGUMENT_BOUNDS,
  AUTO_DELIVER_MODES,
  DELEGATE_DEFAULTS,
  FUSION_DEFAULTS,
  INLINE_LIMIT_TEXT,
} from "../core/constants.ts";
import { violationAs } from "../core/errors.ts";
import { GROUP_NAME_MAX_CHARS } from "../core/group.ts";
import { checkOutputSchema, type OutputSchema } from "../core/output-schema.ts";
import { Bool, Closed, Count, Custom, Described, Dollars, OneOf, Text, Type } from "../core/schema/kinds.ts";
import { typeName, violation } from "../core/validate.ts";

/**
 * The arguments of both tools that stay as given (undefined when absent) after the defaults: the
 * spend cap, whose default is a setting applied at admission (src/launch/spend-plan.ts), the
 * answer's shape (docs/tools/bg_delegate.md, "Structured answers"; undefined for a text answer) and
 * the launch key.
 */
export interface AsGiven {
  maxCostUsd: number | undefined;
  outputSchema: OutputSchema | undefined;
  /** The launch key (docs/tools/bg_delegate.md, "Never launched twice"); undefined without one. */
  key: string | undefined;
  /** The group's name (docs/tools/bg_delegate.md, "Groups"); undefined for work of its own. */
  group: string | undefined;
  /** The group's spend cap, as given (a later member takes its group's); undefined without one. */
  groupMaxCostUsd: number | undefined;
}

/** An exact model route {provider, model} (docs/tools/bg_delegate.md, "Arguments"). */
export const RouteArgumentSchema = Closed(
  {
    provider: Text({ control: true, description: "Provider name, exactly as registered." }),
    model: Text({ control: true, description: "Model id within that provider, exactly as registered." }),
  },
  "argument",
);

const COST_TEXT = {
  delegate:
    "Spend cap in US dollars: the delegate is told to answer before its next request could cross it, and is never billed past it. Needs a route with prices. Default: the setting bgDelegate.maxCostUsd; unset means no cap.",
  fusion:
    "Spend cap in US dollars for the whole run, shared between the candidates, the evaluator and the merger; each child is told to answer before crossing its share. Needs priced routes. Default: the setting bgDelegate.maxCostUsd; unset means no cap.",
} as const;

const OUTPUT_SCHEMA_TEXT = {
  delegate:
    "A JSON Schema (closed subset: object with properties, required and additionalProperties false, array with items, string with optional enum, number, integer, boolean, description) the answer must conform to. The delegate then answers one JSON object {output, basis}: output of this shape, and per top-level field the citations (path, lines, verbatim excerpt) it rests on, checked against what the delegate read.",
  fusion:
    "A JSON Schema (the subset of bg_delegate's outputSchema) every candidate answers in and the merged answer conforms to; the candidates are compared field by field and the merged answer carries an agreement map per top-level field.",
} as const;

/** An object (else invalid_arguments), inside the subset of core/output-schema.ts (else output_schema_unsupported). */
function outputSchema(value: unknown, at: string): OutputSchema {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    violation(at, `must be a JSON Schema object, got ${typeName(value)}`);
  }
  return violationAs(
    "output_schema_unsupported",
    () => checkOutputSchema(value, at),
    (error) => error.describe("arguments"),
    { childProcessCreated: false },
  );
}

/** outputSchema, worded for each tool (docs/tools/bg_delegate.md, "Structured answers"). */
export function outputSchemaArgument(tool: "delegate" | "fusion") {
  return Type.Optional(Described(Custom(outputSchema, { type: "object" }), OUTPUT_SCHEMA_TEXT[tool]));
}

/** The launch key and the group with its cap. */
function launchTailArguments(tool: "delegate" | "fusion") {
  const work = tool === "fusion" ? "run" : "task";
  return {
    /** The launch key (docs/tools/bg_delegate.md, "Never launched twice"). */
    key: Type.Optional(
      Text({
        maxChars: ARGUMENT_BOUNDS.keyMaxChars,
        trim: true,
        description: `A name for this piece of work, unique in the project (e.g. "audit-auth-2026-12"). Use one for work you may ask for again after compaction: a second launch with the same key while the first ${work} runs, or after it ended within the retention window, starts nothing and returns the first ${work}'s receipt marked already started, with its state. A launch that failed before its child started does not hold the key.`,
      }),
    ),
    /** The group's name (docs/tools/bg_delegate.md, "Groups"). */
    group: Type.Optional(
      Text({
        maxChars: GROUP_NAME_MAX_CHARS,
        trim: true,
        description: `Launch this ${work} as a member of a group (a name of your choice, e.g. "auth-audit"): the delegates and Fusion runs this session launches with the same group name share a group id, given in the receipt. The group gets one completion notice when its last member ends, listing each member's state, answer size and spend, and its members get none of their own; bg_result with the group id returns every ended member's verified answer. Use it to fan out several pieces of work and be woken once.`,
      }),
    ),
    /** The group's spend cap (docs/tools/bg_delegate.md, "Groups"). */
    groupMaxCostUsd: Type.Optional(
      Described(
        Dollars(ARGUMENT_BOUNDS.maxCostUsd),
        "Only with group: a spend cap in US dollars for the whole group, fixed by its first member (a later member may repeat it or leave it out). Each member then needs its own maxCostUsd (or the setting's), and a member is launched only while its cap fits what the group has left: the caps of the members still running and what the ended ones spent.",
      ),
    ),
  };
}

/** maxTurns … triggerOnCompletion, with the bounds of ARGUMENT_BOUNDS and the tool's own defaults. */
function runOptionArguments(tool: "delegate" | "fusion") {
  const fusion = tool === "fusion";
  const d = fusion ? FUSION_DEFAULTS : DELEGATE_DEFAULTS;
  const who = fusion ? "each child" : "the delegate";
  const answer = fusion ? "verified merged answer" : "verified answer";
  const small = fusion ? `up to ${INLINE_LIMIT_TEXT}` : `answers up to ${INLINE_LIMIT_TEXT}`;
  return {
    maxTurns: Type.Optional(
      Described(Count(1, ARGUMENT_BOUNDS.maxTurns), `Most agent turns ${who} may take. Default ${d.maxTurns}.`),
    ),
    maxToolCalls: Type.Optional(
      Described(Count(1, ARGUMENT_BOUNDS.maxToolCalls), `Most tool calls ${who} may make. Default ${d.maxToolCalls}.`),
    ),
    timeoutSeconds: Type.Optional(
      Described(
        Count(1, ARGUMENT_BOUNDS.timeoutSeconds),
        `Wall-clock limit in seconds${fusion ? " for the whole run" : ""}. Default ${d.timeoutSeconds}.`,
      ),
    ),
    maxCostUsd: Type.Optional(Described(Dollars(ARGUMENT_BOUNDS.maxCostUsd), COST_TEXT[tool])),
    autoDeliver: Type.Optional(
      Described(
        OneOf(AUTO_DELIVER_MODES),
        `Whether the completion notice carries the ${answer}: "never" (default), "when_small" (${small}) or "always" (the answer, or its file reference when larger).`,
      ),
    ),
    notifyOnCompletion: Type.Optional(
      Bool(`Send one completion notice to this session when the ${fusion ? "run" : "task"} ends. Default true.`),
    ),
    triggerOnCompletion: Type.Optional(
      Bool("Let the completion notice start a new turn when the session is idle. Default true."),
    ),
  };
}

/** The arguments both tools end with: the limits and completion options, then the launch key and the group. */
export function closingArguments(tool: "delegate" | "fusion") {
  return { ...runOptionArguments(tool), ...launchTailArguments(tool) };
}
