/**
 * The evaluator's comparison (docs/subsystems/fusion.md, "The evaluation"): one JSON object that names,
 * per claim, the candidates that support and contradict it, and the findings only one candidate made.
 * Checked by the one validator; the candidates it may name are exactly the verified ones.
 */
import { answerObject, closedObject, list, SchemaViolation, str, violation } from "../core/validate.ts";

export interface EvaluatedClaim {
  claim: string;
  supported_by: string[];
  contradicted_by: string[];
}

export interface UniqueFinding {
  candidate: string;
  finding: string;
}

export interface Evaluation {
  claims: EvaluatedClaim[];
  unique_findings: UniqueFinding[];
}

const MAX_CLAIMS = 32;
const MAX_UNIQUE = 32;
const TEXT_MAX_CHARS = 2_000;

/** The shape the evaluator is asked for, as the prompt shows it. */
export const EVALUATION_EXAMPLE =
  '{"claims":[{"claim":"<one key claim>","supported_by":["candidate-1"],"contradicted_by":["candidate-2"]}],' +
  '"unique_findings":[{"candidate":"candidate-2","finding":"<a finding only that candidate made>"}]}';

/** The candidate slots a claim names: each one of `known`, none twice. */
function slots(value: unknown, at: string, known: readonly string[]): string[] {
  const names = list(value, at, known.length, (item, itemAt) => {
    const name = str(item, itemAt, { maxChars: 64 });
    if (!known.includes(name)) violation(itemAt, `must be one of ${known.join(", ")}`);
    return name;
  });
  if (new Set(names).size !== names.length) violation(at, "must not name a candidate twice");
  return names;
}

/** Parse and check an evaluator answer against the verified candidates' slots. Throws SchemaViolation. */
export function parseEvaluation(answer: string, candidates: readonly string[]): Evaluation {
  const o = answerObject(answer, ["claims", "unique_findings"]);
  const claims = list(o.claims, "claims", MAX_CLAIMS, (item, at) => {
    const c = closedObject(item, at, ["claim", "supported_by", "contradicted_by"]);
    const claim: EvaluatedClaim = {
      claim: str(c.claim, `${at}.claim`, { maxChars: TEXT_MAX_CHARS }),
      supported_by: slots(c.supported_by, `${at}.supported_by`, candidates),
      contradicted_by: slots(c.contradicted_by, `${at}.contradicted_by`, candidates),
    };
    if (claim.supported_by.length === 0) violation(`${at}.supported_by`, "must name at least one candidate");
    if (claim.supported_by.some((slot) => claim.contradicted_by.includes(slot))) {
      violation(`${at}.contradicted_by`, "must not name a candidate that supports the claim");
    }
    return claim;
  });
  if (claims.length === 0) violation("claims", "must hold at least one claim");
  const unique_findings = list(o.unique_findings, "unique_findings", MAX_UNIQUE, (item, at) => {
    const u = closedObject(item, at, ["candidate", "finding"]);
    const candidate = str(u.candidate, `${at}.candidate`, { maxChars: 64 });
    if (!candidates.includes(candidate)) violation(`${at}.candidate`, `must be one of ${candidates.join(", ")}`);
    return { candidate, finding: str(u.finding, `${at}.finding`, { maxChars: TEXT_MAX_CHARS }) };
  });
  return { claims, unique_findings };
}

/** parseEvaluation as a result: the comparison, or the violation that the repair attempt is shown. */
export function checkEvaluation(
  answer: string,
  candidates: readonly string[],
): { ok: true; evaluation: Evaluation } | { ok: false; problem: string } {
  try {
    return { ok: true, evaluation: parseEvaluation(answer, candidates) };
  } catch (error) {
    if (error instanceof SchemaViolation) return { ok: false, problem: error.describe("the comparison") };
    throw error;
  }
}
