/**
 * The messages of one session branch, as the host's `buildSessionContext(entries, leafId).messages`
 * gives them, built in one walk from the leaf to the root (docs/subsystems/launch.md, "The
 * projection"). Pi 0.73.1's own function builds the path with `Array.prototype.unshift`, which is
 * quadratic in the branch length (seconds at 100,000 messages); 1.6.0's is linear but walks the path
 * twice. Both lines' rules are written out here (which a proven version follows is src/host's
 * sessionContextRules), and test/integration/seed-branch.test.ts compares the result with each
 * host's own function on random session trees.
 *
 * Only the entry shapes whose handling is written out below are taken. For anything else (an entry
 * type this file does not know, a context edit, a message without content, a parent cycle)
 * {@link branchMessages} returns undefined and the caller uses the host's `buildSessionContext`, so a
 * session this code cannot prove it reads the same way is read by the host itself.
 */

import { isRecord } from "../core/validate.ts";
import { type PiLine, sessionContextRules } from "../host/index.ts";

type Rec = Record<string, unknown>;

/** How a host turns a branch into messages: Pi 0.73.1's, or Pi 1.x's (system messages, context edits). */
type ContextRules = PiLine;

/** Entry types that never put a message on the branch, per rule set (besides the three that may). */
const SILENT_TYPES: Readonly<Record<ContextRules, ReadonlySet<string>>> = {
  "pi-0.73": new Set(["thinking_level_change", "model_change", "custom", "label", "session_info"]),
  "pi-1.x": new Set(["thinking_level_change", "model_change", "custom", "label", "session_info", "usage"]),
};

/** Roles whose missing content Pi 1.x replaces (with "" or []): such a message is left to the host. */
const CONTENT_FILLED_ROLES = new Set(["system", "user", "assistant", "toolResult"]);

/** The same number the host's `new Date(timestamp).getTime()` gives. */
function millis(timestamp: unknown): number {
  return new Date(timestamp as string).getTime();
}

/** An entry by id: the last of `entries` with that id, as the host's own index gives it. */
export type EntryLookup = (id: string) => unknown;

/** The host's index: the last entry per id. */
function indexOf(entries: readonly unknown[]): EntryLookup {
  const byId = new Map<unknown, unknown>();
  for (const entry of entries) byId.set((entry as Rec).id, entry);
  return (id) => byId.get(id);
}

/** The path from the root to the leaf, the host's way; undefined on a parent cycle. */
function branchPath(
  entries: readonly unknown[],
  leafId: string | null | undefined,
  byId: EntryLookup,
): Rec[] | undefined {
  if (leafId === null) return [];
  let leaf = leafId ? byId(leafId) : undefined;
  if (!leaf) leaf = entries[entries.length - 1];
  const path: Rec[] = [];
  let current = leaf;
  while (current) {
    if (!isRecord(current) || path.length > entries.length) return undefined;
    path.push(current);
    current = current.parentId ? byId(current.parentId as string) : undefined;
  }
  return path.reverse();
}

/** Whether every entry on the path has a shape whose messages this file builds as the host does. */
function provenShapes(path: readonly Rec[], rules: ContextRules): boolean {
  const silent = SILENT_TYPES[rules];
  for (const entry of path) {
    const type = entry.type;
    if (type === "message") {
      const message = entry.message;
      if (!isRecord(message)) return false;
      if (rules === "pi-1.x" && message.content == null && CONTENT_FILLED_ROLES.has(message.role as string)) {
        return false;
      }
    } else if (type === "custom_message") {
      if (rules === "pi-1.x" && entry.content == null) return false;
    } else if (type !== "compaction" && type !== "branch_summary" && !silent.has(type as string)) {
      return false;
    }
  }
  return true;
}

/** The messages one entry contributes (compactions are handled by the caller). */
function pushMessages(messages: unknown[], entry: Rec): void {
  if (entry.type === "message") {
    messages.push(entry.message);
  } else if (entry.type === "custom_message") {
    messages.push({
      role: "custom",
      customType: entry.customType,
      content: entry.content,
      display: entry.display,
      details: entry.details,
      timestamp: millis(entry.timestamp),
    });
  } else if (entry.type === "branch_summary" && entry.summary) {
    messages.push({
      role: "branchSummary",
      summary: entry.summary,
      fromId: entry.fromId,
      timestamp: millis(entry.timestamp),
    });
  }
}

function compactionSummary(compaction: Rec) {
  return {
    role: "compactionSummary",
    summary: compaction.summary,
    tokensBefore: compaction.tokensBefore,
    timestamp: millis(compaction.timestamp),
  };
}

/**
 * The branch's messages as the host would build them, or undefined when the session holds a shape
 * left to the host (see the file comment) or the host version has no rules here. `byId` may be the
 * session manager's own `getEntry`: on both proven hosts its index holds exactly the last entry per
 * id of `getEntries()` (it is rebuilt from the file's entries and kept in step with every append), so
 * the launch need not index 20,000 entries a second time. Without it, the entries are indexed here.
 */
export function branchMessages(
  entries: readonly unknown[],
  leafId: string | null | undefined,
  piVersion: string,
  byId: EntryLookup = indexOf(entries),
): unknown[] | undefined {
  const rules = sessionContextRules(piVersion);
  if (rules === undefined) return undefined;
  const path = branchPath(entries, leafId, byId);
  if (path === undefined || !provenShapes(path, rules)) return undefined;

  let compactionIdx = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i]!.type === "compaction") {
      compactionIdx = i;
      break;
    }
  }
  const messages: unknown[] = [];
  if (compactionIdx < 0) {
    for (const entry of path) pushMessages(messages, entry);
    return messages;
  }
  // The newest compaction stands for everything before its first kept entry; older compactions
  // within the kept range contribute nothing (0.73.1 ignores them; 1.x projects them to no message).
  const compaction = path[compactionIdx]!;
  if (rules === "pi-1.x" && compaction.systemMessage) messages.push(compaction.systemMessage);
  messages.push(compactionSummary(compaction));
  let kept = false;
  for (let i = 0; i < compactionIdx; i++) {
    const entry = path[i]!;
    if (entry.id === compaction.firstKeptEntryId) kept = true;
    if (!kept) continue;
    // 1.x keeps the system prompt at the compaction (its systemMessage), not the kept range's.
    if (rules === "pi-1.x" && entry.type === "message" && (entry.message as Rec).role === "system") continue;
    pushMessages(messages, entry);
  }
  for (let i = compactionIdx + 1; i < path.length; i++) pushMessages(messages, path[i]!);
  return messages;
}
