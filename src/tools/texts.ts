/**
 * What the model reads of the package's four tools, in one place: each tool's name, description,
 * prompt snippet and guidelines (its label is made from the name, src/tools/define.ts). The tool
 * pages of docs/tools/ are generated from the registered definitions, so they quote these words.
 */

import { INLINE_LIMIT_TEXT, STEER_MAX_PER_TASK } from "../core/constants.ts";

export type ToolName = "bg_delegate" | "bg_fusion" | "bg_result" | "bg_steer";

export interface ToolTexts {
  name: ToolName;
  description: string;
  promptSnippet: string;
  promptGuidelines?: string[];
}

export const BG_RESULT: ToolTexts = {
  name: "bg_result",
  description: `Get the result of a bg_delegate task or a background Fusion run. Never waits: a running task returns a typed not-ready view. A finished task's answer is verified (identity, seed, route, hashes, base64, UTF-8) before any of it is returned, inline up to ${INLINE_LIMIT_TEXT} or as a file reference; it is never truncated.`,
  promptSnippet: "bg_result: fetch the verified answer of a finished bg_delegate task (never blocks)",
};

export const BG_DELEGATE: ToolTexts = {
  name: "bg_delegate",
  description:
    'Start one background Pi agent that investigates read-only (read, grep, find, ls) on a model route pinned now and never substituted. It receives a frozen, hash-accounted copy of this conversation and its own session, and this call returns a receipt at once. When it ends you get one notification; then fetch the verified answer with bg_result. Extensions are not loaded in the child unless extensionMode is "ambient".',
  promptSnippet: "bg_delegate: hand a read-only investigation to a background Pi agent; fetch it with bg_result",
  promptGuidelines: [
    "Use bg_delegate for a self-contained read-only investigation that can run while you work; restate in its prompt any fact that only a tool result showed, because tool output is not copied to the delegate.",
    "After bg_delegate, do not poll bg_result in a loop: wait for the completion notification, then call bg_result once.",
    "Give bg_delegate a key for work you may ask for again after compaction: the same key returns the task already started instead of paying for it twice.",
    'To ask an ended delegate something more, or to continue one that stopped at a limit or was cancelled ("continue"), call bg_delegate with previousTaskId: it resumes that delegate\'s session and reads instead of starting over.',
  ],
};

export const BG_FUSION: ToolTexts = {
  name: "bg_fusion",
  description:
    "Ask the same read-only question of 2-4 pinned models in the background and get one merged answer that says where they agreed and where they did not, naming the model behind each claim. Each candidate is a guarded read-only delegate with a frozen copy of this conversation; a model on the merge route compares the verified answers and writes the merged one. The call returns a receipt at once; one notification arrives when the run ends; then fetch the verified answer with bg_result.",
  promptSnippet:
    "bg_fusion: ask 2-4 models the same read-only question in the background; one merged, attributed answer via bg_result",
  promptGuidelines: [
    "Use bg_fusion when a read-only question benefits from independent answers of several models (a review, a diagnosis, a design question); use bg_delegate for a single investigation.",
    "After bg_fusion, do not poll bg_result: wait for the completion notification, then call bg_result once with the run id.",
    "Give bg_fusion a key for a run you may ask for again after compaction: the same key returns the run already started.",
  ],
};

export const BG_STEER: ToolTexts = {
  name: "bg_steer",
  description: `Send a message to a running bg_delegate task: the delegate reads it as a user message before its next model request and takes it into account, without starting over. Returns at once ("queued"). A message that arrives after the delegate's last request is reported as not delivered in its completion notice and bg_result. At most ${STEER_MAX_PER_TASK} messages per delegate; ended tasks and Fusion runs cannot be steered.`,
  promptSnippet: "bg_steer: redirect a running bg_delegate task with a message it reads before its next request",
  promptGuidelines: [
    "Use bg_steer when you learn something a running delegate needs (a scope change, a fact, a correction) instead of cancelling it and launching again; to ask an ended delegate more, use bg_delegate with previousTaskId.",
  ],
};
