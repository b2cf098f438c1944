/**
 * The task-directory half of the verification (docs/subsystems/retrieval.md, "Verification order"):
 * result.json read whole within its bound (step 0), {@link verifyDelegateResult}'s steps 1–9 on
 * those bytes, then seed.json compared with the launched seed (step 10) and the answer with the one
 * the parent recorded when it adjudicated the task (step 11). Each file is opened once.
 */
import { closeSync, existsSync, readSync } from "node:fs";
import { join } from "node:path";
import {
  CHILD_FILE_MAX_BYTES,
  MiB,
  STEER_MAX_PER_TASK,
  STEER_MESSAGE_MAX_BYTES,
  TASK_FILES,
} from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { openRegularFile, readRegularFile, refusalText } from "../core/fs.ts";
import { sha256Stream } from "../core/hash.ts";
import { checkDocument } from "../core/schema/check.ts";
import {
  type ManifestSteering,
  type SteeringEntry,
  type SteeringRecord,
  SteeringRecordSchema,
} from "../core/schema/steering.ts";
import { chainProblem, checkSteering, type SteeringView, vouchedEntries } from "../core/steering.ts";
import {
  type ExpectedResultIdentity,
  failResult,
  type StepObserver,
  type VerifiedAnswer,
  verifyDelegateResult,
} from "./delegate-result.ts";

/**
 * Read a task file whole, refusing one over `maxBytes` before reading it (a child's file must not
 * grow the parent's memory), and anything but a regular file without opening it for a read that
 * could block (a FIFO, a device) or follow a link (src/core/fs.ts, readRegularFile). Missing → null;
 * over the bound → child_result_invalid; not a regular file, or unreadable → artifact_read_failed.
 */
export function readTaskFile(path: string, maxBytes: number): Buffer | null {
  const read = readRegularFile(path, maxBytes);
  if (read.ok) return read.bytes;
  if (read.reason === "missing") return null;
  const code = read.reason === "too_large" ? "child_result_invalid" : "artifact_read_failed";
  throw new DelegateError(code, `${path} ${refusalText(read, maxBytes)}`, { artifacts: [path] });
}

/** How much of seed.json is hashed per read: the seed is never held whole. */
const SEED_CHUNK_BYTES = 1 * MiB;

/**
 * Step 10: seed.json holds exactly the launched seed. Gone, replaced by something that is not a
 * regular file, or of another length or hash → seed_hash_mismatch; unreadable → artifact_read_failed.
 */
function step10SeedFile(taskDir: string, seedSha256: string, seedBytes: number | null): void {
  const path = join(taskDir, TASK_FILES.seed);
  const mismatch = (problem: string): never => {
    throw new DelegateError("seed_hash_mismatch", `${TASK_FILES.seed} ${problem}: it is not the launched seed`, {
      artifacts: [path],
    });
  };
  const opened = openRegularFile(path);
  if (!opened.ok) {
    if (opened.reason !== "unreadable") mismatch(refusalText(opened));
    throw new DelegateError("artifact_read_failed", `${path} ${refusalText(opened)}`, { artifacts: [path] });
  }
  const { fd, size } = opened;
  try {
    if (seedBytes !== null && size !== seedBytes) mismatch(`holds ${size} bytes, not ${seedBytes}`);
    const hash = sha256Stream();
    const chunk = Buffer.allocUnsafe(Math.min(SEED_CHUNK_BYTES, Math.max(size, 1)));
    let done = 0;
    while (done < size) {
      const n = readSync(fd, chunk, 0, Math.min(chunk.length, size - done), done);
      if (n === 0) break;
      hash.update(chunk.subarray(0, n));
      done += n;
    }
    if (done !== size) mismatch(`holds ${done} bytes, not the ${size} it had when opened`);
    if (hash.hex() !== seedSha256) mismatch("does not match its sha256 in manifest.json");
  } catch (error) {
    if (error instanceof DelegateError) throw error;
    throw new DelegateError(
      "artifact_read_failed",
      `${path} cannot be read: ${(error as Error).message}`,
      { artifacts: [path] },
      { cause: error },
    );
  } finally {
    closeSync(fd);
  }
}

/** Step 11: the verified answer is the one the parent recorded when it adjudicated the task. */
function step11Adjudicated(
  verified: VerifiedAnswer,
  recorded: NonNullable<ExpectedResultIdentity["adjudicated"]>,
): void {
  const bytes = verified.answerBytes.length;
  const sha256 = verified.result.answer.sha256; // step 8: the hash of exactly these bytes
  if (recorded.answerBytes !== bytes || recorded.answerSha256 !== sha256) {
    failResult(
      "answer_hash_mismatch",
      `the answer (${bytes} bytes, sha256 ${sha256}) is not the one recorded when the task was adjudicated ` +
        `(manifest.json: ${recorded.answerBytes ?? "no"} bytes, sha256 ${recorded.answerSha256 ?? "none"})`,
    );
  }
}

/** The verified answer with the steering view of step 12. */
function withSteering(verified: VerifiedAnswer, steering: SteeringView): VerifiedAnswer {
  return {
    result: verified.result,
    answerBytes: verified.answerBytes,
    steering,
    get text() {
      return verified.text;
    },
  };
}

/** The most bytes steering.json may hold: eight entries of at most 4 KiB of message each, and their frame. */
const STEERING_FILE_MAX_BYTES = STEER_MAX_PER_TASK * (STEER_MESSAGE_MAX_BYTES * 7 + 1024) + 1024;

/**
 * steering.json's entries that the signed manifest vouches for, chain checked; [] when none was
 * vouched for and none is there. Anything else is steering_record_invalid (a missing, replaced,
 * edited or forged record), or artifact_read_failed when it cannot be read.
 */
export function readVouchedSteering(
  taskDir: string,
  identity: { taskId: string; launchNonce: string },
  vouched: ManifestSteering | null,
): SteeringEntry[] {
  const path = join(taskDir, TASK_FILES.steering);
  const invalid = (problem: string): never => {
    throw new DelegateError("steering_record_invalid", `${TASK_FILES.steering} ${problem}`, { artifacts: [path] });
  };
  const read = readRegularFile(path, STEERING_FILE_MAX_BYTES);
  if (!read.ok) {
    if (read.reason === "missing") return vouched === null ? [] : invalid("is gone, but manifest.json vouches for it");
    if (read.reason === "unreadable") {
      throw new DelegateError("artifact_read_failed", `${path} ${refusalText(read)}`, { artifacts: [path] });
    }
    return invalid(refusalText(read, STEERING_FILE_MAX_BYTES));
  }
  let record: SteeringRecord;
  try {
    record = checkDocument(SteeringRecordSchema, JSON.parse(read.bytes.toString("utf8")));
  } catch (error) {
    return invalid(`is not a steering record: ${error instanceof Error ? error.message : String(error)}`);
  }
  const broken = chainProblem(record, identity.taskId, identity.launchNonce);
  if (broken !== undefined) invalid(`is not intact: ${broken}`);
  const entries = vouchedEntries(record, vouched ?? undefined);
  return typeof entries === "string" ? invalid(`is not the one this user wrote: ${entries}`) : entries;
}

/** Step 12: the steering result.json says it delivered is the steering this user wrote. */
function step12Steering(
  taskDir: string,
  verified: VerifiedAnswer,
  expected: ExpectedResultIdentity,
): SteeringView | undefined {
  const vouched = expected.steering ?? null;
  const committed = verified.result.steering;
  if (vouched === null && committed === undefined && !existsSync(join(taskDir, TASK_FILES.steering))) return undefined;
  const entries = readVouchedSteering(taskDir, expected, vouched);
  const view = checkSteering(entries, committed);
  if (typeof view === "string") {
    throw new DelegateError("steering_record_invalid", view, {
      artifacts: [join(taskDir, TASK_FILES.steering), join(taskDir, TASK_FILES.result)],
    });
  }
  return entries.length === 0 ? undefined : view;
}

/** result.json of a task dir, verified (steps 0–12); null when the child committed none. */
export function readVerifiedResult(
  taskDir: string,
  expected: ExpectedResultIdentity,
  passed?: StepObserver,
): VerifiedAnswer | null {
  const path = join(taskDir, TASK_FILES.result);
  const bytes = readTaskFile(path, CHILD_FILE_MAX_BYTES);
  if (bytes === null) return null;
  passed?.(0);
  const naming = (error: unknown, artifacts: string[]) =>
    error instanceof DelegateError ? error.withFacts({ artifacts }) : error;
  let verified: VerifiedAnswer;
  try {
    verified = verifyDelegateResult(bytes, expected, passed);
  } catch (error) {
    throw naming(error, [path]);
  }
  if (expected.seedBytes !== undefined) {
    try {
      step10SeedFile(taskDir, expected.seedSha256, expected.seedBytes);
    } catch (error) {
      throw naming(error, [join(taskDir, TASK_FILES.seed), path]);
    }
    passed?.(10);
  }
  if (expected.adjudicated !== undefined) {
    try {
      step11Adjudicated(verified, expected.adjudicated);
    } catch (error) {
      throw naming(error, [path, join(taskDir, TASK_FILES.manifest)]);
    }
    passed?.(11);
  }
  if (expected.steering !== undefined) {
    const steering = step12Steering(taskDir, verified, expected);
    passed?.(12);
    if (steering !== undefined) return withSteering(verified, steering);
  }
  return verified;
}
