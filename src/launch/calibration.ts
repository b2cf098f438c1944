/**
 * Route-family calibration for the launch admission estimate (docs/subsystems/launch.md, "The
 * budget"): how many prompt bytes one token holds on average for large prompts. It only ever applies
 * to a child prompt of at least CALIBRATION_MIN_PROMPT_BYTES; everything else is counted at the
 * provable 1.00 byte per token.
 *
 * A family is a pi provider name (the `provider` of the pinned route). Every entry names its source.
 * We have not measured these ourselves; the source says so.
 */
export interface CalibrationEntry {
  family: string;
  /** Bytes per token in hundredths, so the estimate is integer arithmetic (1.73 → 173). */
  bytes_per_token_x100: number;
  source: string;
}

const REPORTED = "reported by an earlier implementation; not re-measured here";

export const CALIBRATION_TABLE: readonly CalibrationEntry[] = [
  { family: "anthropic", bytes_per_token_x100: 173, source: REPORTED },
  { family: "openai-codex", bytes_per_token_x100: 289, source: REPORTED },
];

export function calibrationFor(provider: string): CalibrationEntry | undefined {
  return CALIBRATION_TABLE.find((entry) => entry.family === provider);
}
