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
import { checkDocument } from "../core/schema/check.ts";
import { SeedDocumentSchema } from "../core/schema/seed.ts";
import type { SeedDocument } from "../core/types.ts";
import { decodeUtf8Strict } from "../core/utf8.ts";
import { SchemaViolation } from "../core/validate.ts";

export interface VerifiedTask {
  seed: SeedDocument;
  /** The exact text pi must deliver as the prompt. */
  prompt: string;
}

const mismatch = (message: string): DelegateError => new DelegateError("seed_hash_mismatch", message);

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
  let parsed: unknown;
  try {
    parsed = JSON.parse(seedBytes.toString("utf8"));
  } catch {
    throw mismatch("seed.json is not JSON");
  }
  // The numbers the guard enforces must be present and sane, or the seed is not one we wrote.
  let seed: SeedDocument;
  try {
    seed = checkDocument(SeedDocumentSchema, parsed);
  } catch (error) {
    if (!(error instanceof SchemaViolation)) throw error;
    throw mismatch(`seed.json ${error.message}`);
  }
  if (seed.task_id !== handover.taskId) throw mismatch(`seed task_id ${seed.task_id} ≠ ${handover.taskId}`);
  if (seed.launch_nonce !== handover.launchNonce) throw mismatch("seed launch_nonce differs from the handover");
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
