/**
 * The merged answer of a Fusion run with an outputSchema (docs/tools/bg_fusion.md, "Structured
 * answers"): merged.md holds one JSON document, `{output, basis, agreement, candidates}`. `output`
 * is the merger's output, checked against the schema; `basis` the merger's per-field basis with each
 * citation checked against the merger child's evidence when the run committed; `agreement` one row
 * per top-level field of the schema naming the candidates whose value equals the merged one
 * (canonical JSON), differs from it, or lacks the field. The writer binds the document's hash; the
 * reader parses it back with the one validator before bg_result shows any of it.
 */
import { canonicalJson } from "../core/canonical.ts";
import type { OutputSchema } from "../core/output-schema.ts";
import { CONFIDENCE_LEVELS, parseStructuredAnswer } from "../core/structured-answer.ts";
import { bool, closedObject, count, keyPath, list, nullable, oneOf, sha256, str } from "../core/validate.ts";
import {
  type CheckedCitation,
  type CheckedFieldBasis,
  CITATION_MATCHES,
  CITATION_STATUSES,
  CITATION_WHYS,
} from "../verify/structured-output.ts";

export interface FieldAgreement {
  field: string;
  /** Slots whose value is the merged one. */
  agreed: string[];
  /** Slots whose value differs (or that gave the field the merged answer leaves out). */
  disagreed: string[];
  /** Slots that left the field out (also when the merged answer leaves it out: leaving it out is no agreement). */
  absent: string[];
}

export interface MergedCandidate {
  slot: string;
  route: string;
  sha256: string;
}

export interface StructuredMerged {
  output: Record<string, unknown>;
  basis: CheckedFieldBasis[];
  agreement: FieldAgreement[];
  candidates: MergedCandidate[];
}

/** The agreement map: every top-level property of the schema, each candidate's value against the merged one. */
export function fieldAgreement(
  schema: OutputSchema,
  merged: Record<string, unknown>,
  candidates: readonly { slot: string; output: Record<string, unknown> }[],
): FieldAgreement[] {
  return Object.keys(schema.properties).map((field) => {
    const row: FieldAgreement = { field, agreed: [], disagreed: [], absent: [] };
    const has = Object.hasOwn(merged, field);
    const value = has ? canonicalJson(merged[field]) : undefined;
    for (const c of candidates) {
      const mine = Object.hasOwn(c.output, field) ? canonicalJson(c.output[field]) : undefined;
      if (mine === undefined) row.absent.push(c.slot);
      else if (mine === value) row.agreed.push(c.slot);
      else row.disagreed.push(c.slot);
    }
    return row;
  });
}

/** merged.md of a structured run: the document as indented JSON and one newline. */
export function structuredMergedText(doc: StructuredMerged): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

const SLOT = { maxChars: 64 };

function slots(value: unknown, at: string): string[] {
  return list(value, at, 4, (v, p) => str(v, p, SLOT));
}

function checkedCitation(value: unknown, at: string): CheckedCitation {
  const c = closedObject(value, at, ["path", "start_line", "end_line", "excerpt", "status", "why", "match", "stale"]);
  return {
    path: str(c.path, keyPath(at, "path")),
    start_line: count(c.start_line, keyPath(at, "start_line"), 1),
    end_line: count(c.end_line, keyPath(at, "end_line"), 1),
    excerpt: str(c.excerpt, keyPath(at, "excerpt"), { allowControl: true }),
    status: oneOf(c.status, keyPath(at, "status"), CITATION_STATUSES),
    why: nullable(c.why, keyPath(at, "why"), (v, p) => oneOf(v, p, CITATION_WHYS)),
    match: nullable(c.match, keyPath(at, "match"), (v, p) => oneOf(v, p, CITATION_MATCHES)),
    stale: bool(c.stale, keyPath(at, "stale")),
  };
}

function checkedBasis(value: unknown, at: string): CheckedFieldBasis {
  const b = closedObject(value, at, ["field", "citations", "reasoning", "confidence", "status"]);
  return {
    field: str(b.field, keyPath(at, "field")),
    citations: list(b.citations, keyPath(at, "citations"), 32, checkedCitation),
    reasoning: str(b.reasoning, keyPath(at, "reasoning"), { allowControl: true }),
    confidence: oneOf(b.confidence, keyPath(at, "confidence"), CONFIDENCE_LEVELS),
    status: oneOf(b.status, keyPath(at, "status"), ["verified", "flagged", "uncited"] as const),
  };
}

/**
 * merged.md of a structured run, parsed back: `output` against the schema and `basis` as an answer's
 * (the one parse of core/structured-answer.ts), then every checked status, the agreement rows and the
 * candidates. Throws SchemaViolation naming the first problem.
 */
export function parseStructuredMerged(text: string, schema: OutputSchema): StructuredMerged {
  const o = closedObject(JSON.parse(text), "", ["output", "basis", "agreement", "candidates"]);
  const basis = list(o.basis, "basis", 64, checkedBasis);
  const plain = basis.map(({ status: _status, citations, ...rest }) => ({
    ...rest,
    citations: citations.map(({ path, start_line, end_line, excerpt }) => ({ path, start_line, end_line, excerpt })),
  }));
  const { output } = parseStructuredAnswer(JSON.stringify({ output: o.output, basis: plain }), schema);
  const fields = Object.keys(schema.properties);
  const agreement = list(o.agreement, "agreement", fields.length, (v, at) => {
    const a = closedObject(v, at, ["field", "agreed", "disagreed", "absent"]);
    return {
      field: oneOf(a.field, keyPath(at, "field"), fields),
      agreed: slots(a.agreed, keyPath(at, "agreed")),
      disagreed: slots(a.disagreed, keyPath(at, "disagreed")),
      absent: slots(a.absent, keyPath(at, "absent")),
    };
  });
  const candidates = list(o.candidates, "candidates", 4, (v, at) => {
    const c = closedObject(v, at, ["slot", "route", "sha256"]);
    return {
      slot: str(c.slot, keyPath(at, "slot"), SLOT),
      route: str(c.route, keyPath(at, "route")),
      sha256: sha256(c.sha256, keyPath(at, "sha256")),
    };
  });
  return { output, basis, agreement, candidates };
}

/** The agreement map for the model: one line per field naming the route behind every slot. */
export function agreementLines(doc: StructuredMerged): string[] {
  const who = (slot: string) => {
    const c = doc.candidates.find((x) => x.slot === slot);
    return c === undefined ? slot : `${c.route} (${slot})`;
  };
  const names = (slots: readonly string[]) => (slots.length === 0 ? "none" : slots.map(who).join(", "));
  return [
    "Agreement (per field: each candidate's value against the merged one):",
    ...doc.agreement.map(
      (a) =>
        `- ${a.field}: agreed: ${names(a.agreed)}; disagreed: ${names(a.disagreed)}${a.absent.length > 0 ? `; left out: ${names(a.absent)}` : ""}`,
    ),
  ];
}
