/**
 * The load check (docs/subsystems/child-guard.md, "At load and at `session_start`: is this the task
 * the parent wrote?"): the env handover names the task dir, task id, launch nonce and
 * seed hash; seed.json must hash to exactly that and carry the same identity, and child-prompt.txt
 * must hash to the seed's child_prompt_sha256. Only then are the limits in the seed trusted.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHILD_ENV, TASK_FILES } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import type { Handover } from "../core/handover-env.ts";
import { sha256Hex } from "../core/hash.ts";
import { checkOutputSchema } from "../core/output-schema.ts";
import type { SeedDocument } from "../core/types.ts";
import { decodeUtf8Strict } from "../core/utf8.ts";

export interface VerifiedTask {
  seed: SeedDocument;
  /** The exact text pi must deliver as the prompt. */
  prompt: string;
}

const mismatch = (message: string): DelegateError => new DelegateError("seed_hash_mismatch", message);

function positiveInteger(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value > 0;
}

/** The numbers the guard enforces must be present and sane, or the seed is not one we wrote. */
function checkSeedShape(seed: SeedDocument): void {
  const limits = seed.limits as unknown as Record<string, unknown> | undefined;
  const budget = seed.budget as unknown as Record<string, unknown> | undefined;
  const route = seed.route as unknown as Record<string, unknown> | undefined;
  if (typeof route?.provider !== "string" || typeof route.model !== "string") throw mismatch("seed.json has no route");
  for (const key of [
    "max_turns",
    "max_tool_calls",
    "spill_threshold_bytes",
    "aggregate_tool_output_bytes",
    "answer_capture_bytes",
    "read_artifact_max_response_bytes",
  ]) {
    if (!positiveInteger(limits?.[key])) throw mismatch(`seed.json limits.${key} is not a positive integer`);
  }
  if (seed.output_schema !== undefined && seed.output_schema !== null) {
    try {
      seed.output_schema = checkOutputSchema(seed.output_schema, "seed.json output_schema");
    } catch (error) {
      throw mismatch(error instanceof Error ? error.message : String(error));
    }
  }
  for (const key of ["growth_budget_tokens", "low_runway_trigger_tokens", "finalization_runway_tokens"]) {
    const value = budget?.[key];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw mismatch(`seed.json budget.${key} is not a non-negative integer`);
    }
  }
  if (seed.spend !== undefined) checkSpendShape(seed.spend);
}

/** A spend block, when present, must hold a positive finite cap, finite prices and token counts. */
function checkSpendShape(spend: SeedDocument["spend"]): void {
  const block = spend as unknown as Record<string, unknown> | null;
  const prices = block?.prices_usd_per_mtok as Record<string, unknown> | undefined;
  const finite = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= 0;
  const cap = block?.cap_usd;
  if (typeof cap !== "number" || !Number.isFinite(cap) || cap <= 0)
    throw mismatch("seed.json spend.cap_usd is not a positive amount");
  for (const key of ["input", "output", "cache_read", "cache_write"]) {
    if (!finite(prices?.[key])) throw mismatch(`seed.json spend.prices_usd_per_mtok.${key} is not a finite amount`);
  }
  for (const key of ["output_reserve_tokens", "turn_growth_tokens", "first_request_tokens", "framing_tokens"]) {
    const value = block?.[key];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw mismatch(`seed.json spend.${key} is not a non-negative integer`);
    }
  }
}

/** Verify seed.json and child-prompt.txt against the handover. Throws seed_hash_mismatch. */
export function verifyTask(handover: Handover): VerifiedTask {
  if (handover.taskId === "" || handover.launchNonce === "" || handover.seedSha256 === "") {
    throw mismatch(
      `incomplete handover: ${CHILD_ENV.taskId}, ${CHILD_ENV.nonce} and ${CHILD_ENV.seedSha256} must all be set`,
    );
  }
  let seedBytes: Buffer;
  try {
    seedBytes = readFileSync(join(handover.taskDir, TASK_FILES.seed));
  } catch (error) {
    throw mismatch(`cannot read seed.json: ${(error as Error).message}`);
  }
  const seedSha = sha256Hex(seedBytes);
  if (seedSha !== handover.seedSha256) {
    throw mismatch(`seed.json hashes to ${seedSha}, the parent handed over ${handover.seedSha256}`);
  }
  let seed: SeedDocument;
  try {
    seed = JSON.parse(seedBytes.toString("utf8")) as SeedDocument;
  } catch {
    throw mismatch("seed.json is not JSON");
  }
  if (seed.task_id !== handover.taskId) throw mismatch(`seed task_id ${seed.task_id} ≠ ${handover.taskId}`);
  if (seed.launch_nonce !== handover.launchNonce) throw mismatch("seed launch_nonce differs from the handover");
  checkSeedShape(seed);
  let promptBytes: Buffer;
  try {
    promptBytes = readFileSync(join(handover.taskDir, TASK_FILES.prompt));
  } catch (error) {
    throw mismatch(`cannot read child-prompt.txt: ${(error as Error).message}`);
  }
  const promptSha = sha256Hex(promptBytes);
  if (promptSha !== seed.child_prompt_sha256) {
    throw mismatch(`child-prompt.txt hashes to ${promptSha}, the seed binds ${seed.child_prompt_sha256}`);
  }
  const prompt = decodeUtf8Strict(promptBytes);
  if (prompt === null) throw mismatch("child-prompt.txt is not well-formed UTF-8");
  return { seed, prompt };
}

/** The prompt pi delivered must be exactly child-prompt.txt (pi trims stdin; the file never has edge whitespace). */
export function checkDeliveredPrompt(delivered: string, expected: string, hasImages: boolean): void {
  if (hasImages) throw mismatch("the delivered prompt carries images; the task prompt has none");
  if (delivered !== expected) {
    throw mismatch(
      `the delivered prompt (${Buffer.byteLength(delivered, "utf8")} bytes, sha256 ${sha256Hex(delivered)}) is not child-prompt.txt (sha256 ${sha256Hex(expected)})`,
    );
  }
}
