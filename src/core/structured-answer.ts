/**
 * A structured answer (docs/tools/bg_delegate.md, "Structured answers"): the child's final message
 * when the task has an `outputSchema` is one JSON object `{"output": …, "basis": [...]}`, the output
 * conforming to the schema and one basis entry per top-level field of the output. The guard checks
 * it before committing (and asks once more with the message of the first problem); the parent checks
 * it again before any byte is returned. Both use this one parse, on the one validator.
 */
import { checkValue, OUTPUT_SCHEMA_BOUNDS, type OutputSchema } from "./output-schema.ts";
import {
  answerObject,
  closedObject,
  count,
  keyPath,
  list,
  oneOf,
  SchemaViolation,
  str,
  violation,
} from "./validate.ts";

export const CONFIDENCE_LEVELS = ["low", "medium", "high"] as const;
export type Confidence = (typeof CONFIDENCE_LEVELS)[number];

/** Bounds of a basis (a model's answer must not make the parent's views unbounded). */
export const BASIS_BOUNDS = { citationsPerField: 32, excerptChars: 4_000, reasoningChars: 8_000, pathChars: 4_096 };

export interface BasisCitation {
  /** Relative to the project root, as the child's `read` takes it. */
  path: string;
  start_line: number;
  end_line: number;
  /** Text the child quotes from those lines. */
  excerpt: string;
}

export interface FieldBasis {
  field: string;
  citations: BasisCitation[];
  reasoning: string;
  confidence: Confidence;
}

export interface StructuredAnswer {
  output: Record<string, unknown>;
  basis: FieldBasis[];
}

/** The answer format as the child is told it (the directive and the repair request). */
export const STRUCTURED_ANSWER_FORMAT = [
  'Your final message must be exactly one JSON object and nothing else: {"output": <a value that conforms to',
  'the OUTPUT SCHEMA>, "basis": [{"field": <a top-level property of output>, "citations": [{"path": <file path',
  'relative to the project root>, "start_line": <integer>, "end_line": <integer>, "excerpt": <text copied verbatim',
  'from those lines>}], "reasoning": <why the evidence supports the field>, "confidence": "low" | "medium" | "high"}]}.',
  "Give one basis entry for every top-level property present in output. Cite only lines you read with your tools,",
  "and copy excerpts exactly as they appear in the file: they are checked against the file.",
].join("\n");

function citation(value: unknown, at: string): BasisCitation {
  const c = closedObject(value, at, ["path", "start_line", "end_line", "excerpt"]);
  const path = str(c.path, keyPath(at, "path"), { maxChars: BASIS_BOUNDS.pathChars });
  const start = count(c.start_line, keyPath(at, "start_line"), 1);
  const end = count(c.end_line, keyPath(at, "end_line"), 1);
  if (end < start) violation(keyPath(at, "end_line"), `must be at least start_line (${start})`);
  const excerpt = str(c.excerpt, keyPath(at, "excerpt"), { maxChars: BASIS_BOUNDS.excerptChars, allowControl: true });
  return { path, start_line: start, end_line: end, excerpt };
}

function fieldBasis(value: unknown, at: string, fields: readonly string[]): FieldBasis {
  const b = closedObject(value, at, ["field", "citations", "reasoning", "confidence"]);
  const field = str(b.field, keyPath(at, "field"));
  if (!fields.includes(field)) violation(keyPath(at, "field"), `names no top-level field of output (${field})`);
  return {
    field,
    citations: list(b.citations, keyPath(at, "citations"), BASIS_BOUNDS.citationsPerField, citation),
    reasoning: str(b.reasoning, keyPath(at, "reasoning"), {
      maxChars: BASIS_BOUNDS.reasoningChars,
      allowControl: true,
    }),
    confidence: oneOf(b.confidence, keyPath(at, "confidence"), CONFIDENCE_LEVELS),
  };
}

/**
 * The structured answer of `text` for `schema`. Throws SchemaViolation naming the first problem
 * (JSON paths from the answer object: `output.items[2].line`, `basis[0].citations[1].excerpt`).
 */
export function parseStructuredAnswer(text: string, schema: OutputSchema): StructuredAnswer {
  const answer = answerObject(text, ["output", "basis"]);
  checkValue(schema, answer.output, "output");
  const output = answer.output as Record<string, unknown>;
  const present = Object.keys(output);
  // Each entry is checked to name a present field (and none twice), so the list is never longer than
  // the output's fields; the bound only keeps a hostile list from being walked whole.
  const basis = list(answer.basis, "basis", OUTPUT_SCHEMA_BOUNDS.maxProperties, (v, at) => fieldBasis(v, at, present));
  basis.forEach((b, i) => {
    if (basis.findIndex((other) => other.field === b.field) !== i) violation(`basis[${i}].field`, `repeats ${b.field}`);
  });
  const missing = present.filter((field) => !basis.some((b) => b.field === field));
  if (missing.length > 0) violation("basis", `has no entry for ${missing.join(", ")}`);
  return { output, basis };
}

/** The first problem of `text` as a structured answer, in words; undefined when it is one. */
export function structuredAnswerProblem(text: string, schema: OutputSchema): string | undefined {
  try {
    parseStructuredAnswer(text, schema);
    return undefined;
  } catch (error) {
    if (error instanceof SchemaViolation) return error.describe("the answer");
    throw error;
  }
}
