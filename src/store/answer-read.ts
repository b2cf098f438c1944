/**
 * The answer-read mark of a task or run (`answer-read.json`: the agent read how it ended, so a prune
 * may remove the tree; docs/cli.md, "prune"). It is a record the package acts on, so it carries this
 * user's MAC (src/store/record-mac.ts, purpose "answer-read") over the id and time, bound to the
 * real path of the tree it lies in (docs/subsystems/launch.md, "The store is yours"): a mark that was
 * shipped, copied from another tree or written by hand does not count.
 */
import { join } from "node:path";
import { ANSWER_READ_FILE, TASK_RECORD_MAX_BYTES } from "../core/constants.ts";
import { readRegularFile } from "../core/fs.ts";
import { recordMacValid, signRecord } from "./record-mac.ts";
import { userAgentDir } from "./tree-trust.ts";

export interface AnswerReadMark {
  id: string;
  read_at: string;
  mac: string;
}

/** The mark this user writes now for the tree at `dir`. */
export function signedAnswerRead(dir: string, id: string, readAt: string, agentDir = userAgentDir()): AnswerReadMark {
  const fields = { id, read_at: readAt };
  return { ...fields, mac: signRecord(agentDir, dir, "answer-read", fields) };
}

/** Whether the tree at `dir` holds this user's answer-read mark for `id` (never follows a link). */
export function answerReadValid(dir: string, id: string, agentDir = userAgentDir()): boolean {
  const read = readRegularFile(join(dir, ANSWER_READ_FILE), TASK_RECORD_MAX_BYTES);
  if (!read.ok) return false;
  let mark: unknown;
  try {
    mark = JSON.parse(read.bytes.toString("utf8"));
  } catch {
    return false;
  }
  if (typeof mark !== "object" || mark === null) return false;
  const { id: markId, read_at: readAt, mac } = mark as Record<string, unknown>;
  if (markId !== id || typeof readAt !== "string") return false;
  return recordMacValid(agentDir, dir, "answer-read", { id, read_at: readAt }, mac);
}
