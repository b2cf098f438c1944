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
import { checkDocument } from "../core/schema/check.ts";
import { type FieldAgreement, type StructuredMerged, StructuredMergedSchema } from "../core/schema/fusion-merged.ts";
import { parseStructuredAnswer } from "../core/structured-answer.ts";
import { oneOf, violation } from "../core/validate.ts";

export type { FieldAgreement, MergedCandidate, StructuredMerged } from "../core/schema/fusion-merged.ts";

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

/**
 * merged.md of a structured run, parsed back: its declaration (../core/schema/fusion-merged.ts), then
 * `output` against the schema and `basis` as an answer's (the one parse of core/structured-answer.ts),
 * and the agreement rows' fields as the schema's. Throws SchemaViolation naming the first problem.
 */
export function parseStructuredMerged(text: string, schema: OutputSchema): StructuredMerged {
  const doc = checkDocument(StructuredMergedSchema, JSON.parse(text));
  const plain = doc.basis.map(({ status: _status, citations, ...rest }) => ({
    ...rest,
    citations: citations.map(({ path, start_line, end_line, excerpt }) => ({ path, start_line, end_line, excerpt })),
  }));
  const { output } = parseStructuredAnswer(JSON.stringify({ output: doc.output, basis: plain }), schema);
  const fields = Object.keys(schema.properties);
  if (doc.agreement.length > fields.length) violation("agreement", `has more than ${fields.length} entries`);
  doc.agreement.forEach((row, index) => {
    oneOf(row.field, `agreement[${index}].field`, fields);
  });
  return { ...doc, output };
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
