/**
 * The directives of a Fusion run's evaluate, evaluate_repair and merge children, and the agreement
 * section appended to the merged answer (docs/subsystems/fusion.md, "The run"). Pure functions.
 */
import { EVALUATION_EXAMPLE, type Evaluation } from "./evaluation.ts";

/** A verified candidate answer as the later stages see it. */
export interface CandidateAnswer {
  slot: string;
  /** "provider/model" */
  route: string;
  sha256: string;
  text: string;
  /** A structured run's candidate output (its schema checked); absent in a text run. */
  output?: Record<string, unknown>;
}

/** First lines of the two stage directives (the scripted test models recognise them). */
export const EVALUATE_HEADING = "Fusion evaluation.";
export const MERGE_HEADING = "Fusion merge.";

function question(prompt: string): string {
  return ["QUESTION (what every candidate was asked):", "<<<QUESTION", prompt, "QUESTION>>>"].join("\n");
}

function answers(candidates: readonly CandidateAnswer[]): string {
  return candidates
    .map((c) =>
      [`<<<ANSWER ${c.slot} utf8_bytes=${Buffer.byteLength(c.text)}`, c.text, `ANSWER ${c.slot}>>>`].join("\n"),
    )
    .join("\n");
}

/** The field-by-field instruction of a structured run's stages (the answers are JSON of one schema). */
function fieldByField(candidates: readonly CandidateAnswer[], what: string): string[] {
  if (!candidates.some((c) => c.output !== undefined)) return [];
  return [`The ANSWERS are JSON objects {output, basis} of one OUTPUT SCHEMA. Compare them field by field: ${what}`];
}

export function evaluateDirective(prompt: string, candidates: readonly CandidateAnswer[]): string {
  const slots = candidates.map((c) => c.slot).join(", ");
  return [
    EVALUATE_HEADING,
    ...fieldByField(
      candidates,
      'make one claim per top-level field of output, its text "<field>: <the value you judge right>", supported by the candidates that give that value.',
    ),
    `Candidates ${slots} answered the QUESTION independently. Compare their ANSWERS: list the key claims, and for`,
    "each the candidates that support it and the ones that contradict it; then the findings only one candidate made.",
    "You may check claims with your tools. Your final message must be exactly one JSON object and nothing else, of",
    `this shape: ${EVALUATION_EXAMPLE}`,
    `Name candidates only as ${slots}. Every claim needs at least one supporting candidate.`,
    question(prompt),
    answers(candidates),
  ].join("\n");
}

export function repairDirective(
  prompt: string,
  candidates: readonly CandidateAnswer[],
  previous: string,
  problem: string,
): string {
  return [
    evaluateDirective(prompt, candidates),
    `A previous comparison of these answers was refused, because ${problem}. It was:`,
    "<<<PREVIOUS",
    previous,
    "PREVIOUS>>>",
    "Write the comparison again, as exactly one JSON object of the shape above.",
  ].join("\n");
}

export function mergeDirective(prompt: string, candidates: readonly CandidateAnswer[], evaluation: Evaluation): string {
  return [
    MERGE_HEADING,
    "Write the one best answer to the QUESTION from the candidate ANSWERS and the COMPARISON of them. Prefer claims",
    "several candidates support; where they disagree, say so and say which view the evidence favours (check it with",
    "your tools when you can). Do not add a section on agreement: it is appended to your answer from the COMPARISON.",
    ...fieldByField(
      candidates,
      "for each top-level field choose the value the evidence supports. Your final message is the JSON object of the ANSWER FORMAT, its basis citing what you read.",
    ),
    question(prompt),
    answers(candidates),
    "<<<COMPARISON",
    JSON.stringify(evaluation),
    "COMPARISON>>>",
  ].join("\n");
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** What a merger-written line that reads like the generated section is marked with. */
export const MERGER_MARK = "[merger's text]";

/** The titles of the generated section, as {@link titleOf} reduces them. */
const GENERATED_TITLES = new Set([
  "agreement",
  "found by one candidate only",
  "candidates (verified answers, bound in the run's manifest)",
]);

/** Indentation, block quotes, then one heading or list marker: what stays before the mark. */
const LINE_PREFIX = /^(\s*(?:>\s*)*(?:#{1,6}\s+|[-*+]\s+|\d{1,9}[.)]\s+)?)(.*)$/s;
/** A fence of at least three backticks or tildes, indented at most three spaces. */
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

function titleOf(body: string): string {
  return body.replace(/^[*_\s]+|[*_:#\s]+$/g, "").toLowerCase();
}

/** A line that reads like a row of the generated section: "agreed:", "disagreed:", "candidate-N:". */
function readsAsAttribution(body: string): boolean {
  return (
    /\b(?:dis)?agreed\s*:/i.test(body) ||
    /^[*_]*candidate-\d+[*_]*\s*:/i.test(body) ||
    /\(candidate-\d+\)\s*:/i.test(body)
  );
}

/**
 * The merger's text with nothing in it that reads as the generated attribution (docs/subsystems/
 * fusion.md, "The merged answer"). Outside fenced code, a line whose title is one of the generated
 * section's ("Agreement", "Found by one candidate only", "Candidates (verified answers, …)"), as a
 * heading, bold or plain, and a line that reads like one of its rows ("agreed:", "disagreed:", a line
 * starting "candidate-N:") get {@link MERGER_MARK} after their indentation, quote and heading or list
 * marker: "## Agreement" becomes "## [merger's text] Agreement". Nothing is removed. A fence left open
 * at the end is closed, so the generated section never renders inside the merger's code block.
 */
export function neutralizeMergerText(text: string): string {
  const out: string[] = [];
  let fence: string | null = null; // the opening fence while inside fenced code
  for (const line of text.split("\n")) {
    const marker = FENCE.exec(line)?.[1];
    if (fence !== null) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker)
        fence = null;
      out.push(line);
    } else if (marker !== undefined) {
      fence = marker;
      out.push(line);
    } else {
      const [, prefix = "", body = ""] = LINE_PREFIX.exec(line) ?? [];
      const generatedLike = GENERATED_TITLES.has(titleOf(body)) || readsAsAttribution(body);
      out.push(generatedLike ? `${prefix}${MERGER_MARK} ${body}` : line);
    }
  }
  if (fence !== null) out.push(fence);
  return out.join("\n");
}

/**
 * The merged answer: the merger's text ({@link neutralizeMergerText}), then the agreement section,
 * which names the route behind every candidate of every claim, from the checked comparison (never
 * from the merger's prose).
 */
export function mergedAnswer(merger: string, candidates: readonly CandidateAnswer[], evaluation: Evaluation): string {
  const lines = [neutralizeMergerText(merger.trimEnd()), "", "## Agreement", "", ...claimLines(candidates, evaluation)];
  lines.push("", "Candidates (verified answers, bound in the run's manifest):", "");
  for (const c of candidates) lines.push(`- ${c.slot}: ${c.route}, sha256 ${c.sha256}`);
  return `${lines.join("\n")}\n`;
}

/** A slot as a person knows it: "provider/model (candidate-1)". */
export function candidateName(candidates: readonly CandidateAnswer[], slot: string): string {
  const c = candidates.find((x) => x.slot === slot);
  return c === undefined ? slot : `${c.route} (${slot})`;
}

/**
 * The checked comparison as lines: each claim with the candidates that agreed and disagreed, then the
 * findings only one candidate made. Shared by the merged answer and the unmerged one.
 */
export function claimLines(candidates: readonly CandidateAnswer[], evaluation: Evaluation): string[] {
  const who = (slot: string) => candidateName(candidates, slot);
  const names = (slots: readonly string[]) => (slots.length === 0 ? "none" : slots.map(who).join(", "));
  const lines = evaluation.claims.map(
    (claim) =>
      `- ${oneLine(claim.claim)} — agreed: ${names(claim.supported_by)}; disagreed: ${names(claim.contradicted_by)}`,
  );
  if (evaluation.unique_findings.length > 0) {
    lines.push("", "Found by one candidate only:", "");
    for (const u of evaluation.unique_findings) lines.push(`- ${who(u.candidate)}: ${oneLine(u.finding)}`);
  }
  return lines;
}
