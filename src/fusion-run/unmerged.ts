/**
 * The answer of a run whose cap left no room for the merger (docs/subsystems/fusion.md, "Not
 * merged"), pure: the candidates' verified answers, each whole, labelled by slot and route with the
 * SHA-256 of its bound answer, and an agreement map the package computes itself — no model writes it:
 *   - a text run: which answers are identical once whitespace is normalised, and, when the evaluator
 *     completed, the claims of its checked comparison (evaluation.json);
 *   - a structured run: per top-level field of the schema, which candidates give the same value
 *     (canonical JSON, src/fusion/structured-merged.ts fieldAgreement), and which left it out.
 */
import { FUSION_MERGED_MAX_BYTES } from "../core/constants.ts";
import type { FailureCode } from "../core/errors.ts";
import type { OutputSchema } from "../core/output-schema.ts";
import { fieldAgreement } from "../fusion/structured-merged.ts";
import { type UNMERGED_STAGES, UNMERGED_TEXT } from "../fusion/types.ts";
import type { Evaluation } from "./evaluation.ts";
import { type CandidateAnswer, candidateName, claimLines } from "./prompts.ts";

/** The review child that found no room under the cap. */
export interface UnfitReview {
  stage: (typeof UNMERGED_STAGES)[number];
  code: FailureCode;
  message: string | null;
}

export interface UnmergedInput {
  candidates: readonly CandidateAnswer[];
  /** The evaluator's checked comparison when it completed; null when it did not. */
  evaluation: Evaluation | null;
  /** The run's outputSchema; undefined for a text run. */
  schema: OutputSchema | undefined;
  why: UnfitReview;
}

/** Per top-level field: the candidates grouped by equal value, and those that left it out. */
export interface FieldGroups {
  field: string;
  /** Each group: the slots that give one value, in candidate order; one group per distinct value. */
  groups: string[][];
  absent: string[];
}

/**
 * With no merged output to compare against, each candidate's output is taken in turn as the reference
 * of {@link fieldAgreement}: the slots that agree with it are its group for that field.
 */
export function fieldGroups(
  schema: OutputSchema,
  candidates: readonly { slot: string; output: Record<string, unknown> }[],
): FieldGroups[] {
  const byReference = candidates.map((c) => fieldAgreement(schema, c.output, candidates));
  return Object.keys(schema.properties).map((field, i) => {
    const groups: string[][] = [];
    let absent: string[] = [];
    candidates.forEach((c, k) => {
      const row = byReference[k]?.[i];
      if (row === undefined) return;
      absent = row.absent;
      if (!Object.hasOwn(c.output, field) || groups.some((g) => g.includes(c.slot))) return;
      groups.push(row.agreed);
    });
    return { field, groups, absent };
  });
}

/** Groups of two or more answers identical once every run of whitespace is one space (and the ends trimmed). */
export function identicalGroups(candidates: readonly { slot: string; text: string }[]): string[][] {
  const bySame = new Map<string, string[]>();
  for (const c of candidates) {
    const key = c.text.replace(/\s+/g, " ").trim();
    bySame.set(key, [...(bySame.get(key) ?? []), c.slot]);
  }
  return [...bySame.values()].filter((g) => g.length > 1);
}

const REVIEWER: Record<UnfitReview["stage"], string> = {
  evaluate: "the evaluator",
  evaluate_repair: "the evaluator's repair",
  merge: "the merger",
};

/** A fence longer than any backtick run in the text, so the answer inside is shown whole and verbatim. */
function fenceFor(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return "`".repeat(Math.max(3, longest + 1));
}

function agreementLines(input: UnmergedInput): string[] {
  const { candidates, schema, evaluation } = input;
  const names = (slots: readonly string[]) => slots.map((s) => candidateName(candidates, s)).join(", ");
  if (schema !== undefined) {
    const rows = fieldGroups(
      schema,
      candidates.map((c) => ({ slot: c.slot, output: c.output ?? {} })),
    );
    return [
      "Per field of the answers' schema (values compared as canonical JSON):",
      "",
      ...rows.map((r) => {
        const parts = r.groups.map((g) =>
          g.length > 1 ? `the same value from ${names(g)}` : `a value of its own from ${names(g)}`,
        );
        if (r.absent.length > 0) parts.push(`left out by ${names(r.absent)}`);
        return `- ${r.field}: ${parts.join("; ")}`;
      }),
    ];
  }
  const same = identicalGroups(candidates);
  const lines =
    same.length === 0
      ? ["- No two answers are identical once whitespace is normalised: compare them below."]
      : same.map((g) => `- Identical once whitespace is normalised: ${names(g)}`);
  if (evaluation !== null) {
    lines.push("", "The claims of the evaluator's checked comparison (evaluation.json):", "");
    lines.push(...claimLines(candidates, evaluation));
  }
  return lines;
}

/** merged.md of a run whose cap left no room for the merger: the flag, the package's agreement map, every answer whole. */
export function unmergedAnswer(input: UnmergedInput): string {
  const { candidates, why } = input;
  const first = UNMERGED_TEXT.charAt(0).toUpperCase() + UNMERGED_TEXT.slice(1);
  const because = `[${why.code}]${why.message === null ? "" : ` ${why.message.replace(/\s+/g, " ").trim()}`}`;
  const lines = [
    `# ${first}.`,
    "",
    `What was left of the run's spend cap could not buy ${REVIEWER[why.stage]}'s answer (${because}).`,
    `This is not one merged answer: it is the ${candidates.length} candidates' verified answers, each whole, with the`,
    "SHA-256 of its answer as bound in the run's manifest, and an agreement map the package computed from them itself",
    "(no model wrote it).",
    "",
    "## Agreement (computed by the package)",
    "",
    ...agreementLines(input),
    "",
    "## The candidates' answers",
  ];
  const heading = (c: CandidateAnswer) =>
    `### ${c.slot}: ${c.route}, sha256 ${c.sha256}, ${Buffer.byteLength(c.text)} bytes`;
  const inline = candidates.flatMap((c) => {
    const fence = fenceFor(c.text);
    return ["", heading(c), "", fence, c.text, fence];
  });
  const whole = `${[...lines, ...inline].join("\n")}\n`;
  if (Buffer.byteLength(whole) <= FUSION_MERGED_MAX_BYTES) return whole;
  // Too big for one merged.md: each answer stays whole in its own bound file, named here.
  const byPath = candidates.flatMap((c) => [
    "",
    heading(c),
    "",
    `In ${candidateAnswerPath(c.slot)} (bound in the manifest).`,
  ]);
  return `${[...lines, ...byPath].join("\n")}\n`;
}

/** Where a candidate's verified answer is bound in the run (src/fusion-run/pipeline.ts). */
export function candidateAnswerPath(slot: string): string {
  return `answers/${slot}.md`;
}
