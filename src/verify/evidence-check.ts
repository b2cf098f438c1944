/**
 * The evidence check of a verified answer (docs/subsystems/retrieval.md, "Evidence"): freshness of
 * the files read and the citations of the answer. The one implementation for bg_result, the TUI and
 * the `show` command. It only reads; it never blocks or fails the answer.
 */
import type { EvidenceCheck, EvidenceRow } from "../core/types.ts";
import { checkCitations } from "./citations.ts";
import { checkFreshness } from "./freshness.ts";

export function checkEvidence(answer: string, rows: readonly EvidenceRow[], root: string): EvidenceCheck {
  return { freshness: checkFreshness(rows, root), citations: checkCitations(answer, rows, root) };
}
