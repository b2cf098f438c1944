import { randomBytes } from "node:crypto";

const hex = (bytes: number): string => randomBytes(bytes).toString("hex");

/** "d" + 32 hex: delegate task ids. */
export const newTaskId = (): string => `d${hex(16)}`;
/** 64 hex: ties the child's files to this one launch. */
export const newLaunchNonce = (): string => hex(32);
/** "delegate-" + 32 hex: the child's session id (pi 0.73.1 has no --session-id; it is the session file header id). */
export const newChildSessionId = (): string => `delegate-${hex(16)}`;
