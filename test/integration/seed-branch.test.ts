/**
 * The launch's one-walk branch messages (src/launch/session-branch.ts) against the host's own
 * buildSessionContext, on random session trees the host's SessionManager writes (branches, branch
 * summaries, compactions, custom messages, state entries, labels; on 1.x system messages and
 * context edits) and on random raw entry lists with odd shapes. Wherever the walk answers, its
 * messages are strictly equal to the host's and so is the projection's canonical JSON; where it
 * declines, the launch uses the host's function. Runs on each host (0.73.1 and every 1.x).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical.ts";
import { projectConversation } from "../../src/launch/projection.ts";
import { branchMessages } from "../../src/launch/session-branch.ts";
import { ONE_TOKEN_USAGE } from "../helpers/host-session.ts";
import { HOST, IS_EARENDIL_HOST } from "../helpers/pi-paths.ts";
import { prng } from "../helpers/prng.ts";

type PiSdk = typeof import("@mariozechner/pi-coding-agent");
const sdk = (await import(HOST.sdkUrl)) as PiSdk;

/** The slice of 1.6's SessionManager this test uses beyond 0.73.1's. */
interface EarendilSessionManager {
  appendContextEdit(targetId: string, replacement: { content: string } | null): string;
  appendUsage(kind: string, provider: string, model: string, usage: unknown): unknown;
}

/** Draws from the seeded PRNG, so a failing tree can be rebuilt from its seed. */
function seededDraws(seed: number) {
  const next = prng(seed);
  return {
    int: (n: number) => Math.floor(next() * n),
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}
type Rng = ReturnType<typeof seededDraws>;

let clock = 1_700_000_000_000;
const stamp = () => ++clock;

type AppendedMessage = Parameters<ReturnType<PiSdk["SessionManager"]["inMemory"]>["appendMessage"]>[0];

function randomMessage(rng: Rng, n: number): AppendedMessage {
  switch (rng.int(IS_EARENDIL_HOST ? 6 : 5)) {
    case 0:
      return {
        role: "user",
        content: rng.chance(0.5) ? `question ${n}` : [{ type: "text", text: `q ${n}` }],
        timestamp: stamp(),
      };
    case 1:
      return {
        role: "assistant",
        content: [
          { type: "text", text: `answer ${n}` },
          ...(rng.chance(0.3) ? [{ type: "thinking" as const, thinking: `thought ${n}` }] : []),
          ...(rng.chance(0.3)
            ? [{ type: "toolCall" as const, id: `call_${n}`, name: "read", arguments: { path: `f${n}` } }]
            : []),
        ],
        api: "openai-completions",
        provider: "fake",
        model: "fake-model",
        usage: ONE_TOKEN_USAGE,
        stopReason: rng.pick(["stop", "stop", "toolUse", "error", "aborted"] as const),
        timestamp: stamp(),
      };
    case 2:
      return {
        role: "toolResult",
        toolCallId: `call_${n}`,
        toolName: "read",
        content: [{ type: "text", text: `result ${n}` }],
        isError: rng.chance(0.2),
        timestamp: stamp(),
      };
    case 3:
      return {
        role: "bashExecution",
        command: `ls ${n}`,
        output: `out ${n}`,
        exitCode: 0,
        cancelled: false,
        truncated: false,
        excludeFromContext: rng.chance(0.3),
        timestamp: stamp(),
      } as never;
    case 4:
      return { role: "user", content: `plain ${n}`, timestamp: stamp() };
    default:
      return { role: "system", content: "", sections: { preamble: `SYSTEM ${n}` }, timestamp: stamp() } as never;
  }
}

/** A random tree through the host's SessionManager; returns it and the ids it holds. */
function randomSession(seed: number, withEdits: boolean) {
  const rng = seededDraws(seed);
  const sm = sdk.SessionManager.inMemory("/project");
  const ids: string[] = [];
  const ops = 5 + rng.int(60);
  for (let n = 0; n < ops; n++) {
    const op = rng.int(20);
    const some = () => rng.pick(ids);
    if (op < 9 || ids.length === 0) ids.push(sm.appendMessage(randomMessage(rng, n)));
    else if (op === 9)
      ids.push(sm.appendCompaction(`SUMMARY ${n}`, rng.chance(0.8) ? some() : `nowhere-${n}`, 100 + n));
    else if (op === 10) ids.push(sm.branchWithSummary(some(), rng.chance(0.8) ? `BRANCH ${n}` : ""));
    else if (op === 11) sm.branch(some());
    else if (op === 12) ids.push(sm.appendCustomEntry("state", { n }));
    else if (op === 13) {
      const content = rng.chance(0.5) ? `note ${n}` : [{ type: "text" as const, text: `note ${n}` }];
      ids.push(sm.appendCustomMessageEntry("note", content, rng.chance(0.5), rng.chance(0.5) ? { n } : undefined));
    } else if (op === 14) ids.push(sm.appendThinkingLevelChange(rng.pick(["off", "low", "high"])));
    else if (op === 15) ids.push(sm.appendModelChange("fake", `model-${n}`));
    else if (op === 16) ids.push(sm.appendLabelChange(some(), rng.chance(0.7) ? `label ${n}` : undefined));
    else if (op === 17) ids.push(sm.appendSessionInfo(`name ${n}`));
    else if (op === 18 && IS_EARENDIL_HOST) {
      (sm as unknown as EarendilSessionManager).appendUsage("cache_warm", "fake", "fake-model", ONE_TOKEN_USAGE);
    } else if (op === 19 && IS_EARENDIL_HOST && withEdits) {
      const edits = sm as unknown as EarendilSessionManager;
      try {
        ids.push(edits.appendContextEdit(some(), rng.chance(0.5) ? null : { content: `EDITED ${n}` }));
      } catch {
        // 1.x refuses a target that contributes no editable content (a state entry, a summary)
      }
    } else ids.push(sm.appendMessage(randomMessage(rng, n)));
  }
  return { sm, ids, rng };
}

/** Whether the host's walk from this leaf would never end (the host would hang; the walk declines). */
function walkCycles(entries: readonly Record<string, unknown>[], leafId: string | null | undefined): boolean {
  if (leafId === null) return false;
  const byId = new Map(entries.map((e) => [e.id, e]));
  const seen = new Set<unknown>();
  let current = (leafId ? byId.get(leafId) : undefined) ?? entries.at(-1);
  while (current) {
    if (seen.has(current)) return true;
    seen.add(current);
    current = current.parentId ? byId.get(current.parentId) : undefined;
  }
  return false;
}

/** The host's messages, or the error it throws. */
function hostMessages(entries: readonly unknown[], leafId: string | null | undefined) {
  try {
    return { messages: sdk.buildSessionContext(entries as never, leafId).messages as unknown[] };
  } catch (error) {
    return { error };
  }
}

function projectionJson(messages: readonly unknown[]): string {
  return canonicalJson(projectConversation(messages, "no-active-call").projection);
}

describe(`pi ${HOST.version}: branch messages in one walk`, () => {
  it("equal the host's buildSessionContext on random session trees, at every leaf", () => {
    let compared = 0;
    let declined = 0;
    let withCompaction = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const withEdits = seed % 4 === 0;
      const { sm, ids, rng } = randomSession(seed, withEdits);
      const entries = sm.getEntries();
      const leaves: (string | null | undefined)[] = [sm.getLeafId(), undefined, null, "no-such-id"];
      for (let k = 0; k < 4; k++) leaves.push(rng.pick(ids));
      const hasEdit = entries.some((e) => (e as { type: string }).type === "context_edit");
      for (const leafId of leaves) {
        const host = hostMessages(entries, leafId);
        const fast = branchMessages(entries, leafId, HOST.version);
        // The launch looks entries up through the session manager's own index: the same messages.
        const viaIndex = branchMessages(entries, leafId, HOST.version, (id) => sm.getEntry(id));
        expect(viaIndex).toStrictEqual(fast);
        if (fast === undefined) {
          declined++;
          // Declined only for what is left to the host: context edits on 1.x.
          expect(hasEdit).toBe(true);
          continue;
        }
        expect(host.error).toBeUndefined();
        expect(fast).toStrictEqual(host.messages);
        expect(projectionJson(fast)).toBe(projectionJson(host.messages ?? []));
        compared++;
        if (fast.some((m) => (m as { role: string }).role === "compactionSummary")) withCompaction++;
      }
    }
    expect(compared).toBeGreaterThan(2000);
    expect(withCompaction).toBeGreaterThan(300);
    if (!IS_EARENDIL_HOST) expect(declined).toBe(0);
  });

  it("equal the host's on odd raw entries, or decline them (and so does the host where it throws)", () => {
    const rng = seededDraws(7);
    const types = [
      "message",
      "message",
      "message",
      "compaction",
      "branch_summary",
      "custom_message",
      "custom",
      "label",
      "model_change",
      "thinking_level_change",
      "session_info",
      "usage",
      "context_edit",
      "mystery",
    ];
    let compared = 0;
    for (let round = 0; round < 3000; round++) {
      const count = 1 + rng.int(12);
      const entries: Record<string, unknown>[] = [];
      for (let i = 0; i < count; i++) {
        const id = rng.chance(0.1) ? `e${rng.int(count)}` : `e${i}`; // sometimes a repeated id
        const parentId = i === 0 || rng.chance(0.1) ? null : rng.chance(0.1) ? "gone" : `e${rng.int(i)}`;
        const entry: Record<string, unknown> = {
          type: rng.pick(types),
          id,
          parentId,
          timestamp: new Date(stamp()).toISOString(),
        };
        if (entry.type === "message") {
          entry.message = rng.chance(0.1)
            ? null
            : {
                role: rng.pick(["user", "assistant", "toolResult", "system", "custom", "bashExecution"]),
                content: rng.chance(0.2) ? undefined : rng.chance(0.5) ? "text" : [{ type: "text", text: "t" }],
                timestamp: stamp(),
              };
        } else if (entry.type === "compaction") {
          Object.assign(entry, {
            summary: rng.chance(0.8) ? `S${i}` : "",
            firstKeptEntryId: rng.chance(0.7) ? `e${rng.int(count)}` : "gone",
            tokensBefore: i,
            ...(rng.chance(0.3) ? { systemMessage: { role: "system", content: "", timestamp: 1 } } : {}),
          });
        } else if (entry.type === "branch_summary") {
          Object.assign(entry, { summary: rng.chance(0.7) ? `B${i}` : "", fromId: `e${rng.int(count)}` });
        } else if (entry.type === "custom_message") {
          Object.assign(entry, {
            customType: "note",
            content: rng.chance(0.2) ? undefined : "note",
            display: rng.chance(0.5),
            ...(rng.chance(0.5) ? { details: { i } } : {}),
          });
        } else if (entry.type === "context_edit") {
          Object.assign(entry, { targetId: `e${rng.int(count)}`, replacement: null });
        }
        entries.push(entry);
      }
      const leafId = rng.pick([undefined, null, "", "gone", `e${rng.int(count)}`, `e${count - 1}`]);
      if (walkCycles(entries, leafId)) {
        expect(branchMessages(entries, leafId, HOST.version)).toBeUndefined();
        continue;
      }
      const host = hostMessages(entries, leafId);
      const fast = branchMessages(entries, leafId, HOST.version);
      if (host.error !== undefined) {
        expect(fast).toBeUndefined();
        continue;
      }
      if (fast === undefined) continue;
      expect(fast).toStrictEqual(host.messages);
      compared++;
    }
    expect(compared).toBeGreaterThan(500);
  });

  it("reads a session file with a repeated id through the session manager's index as the host does", () => {
    const dir = mkdtempSync(join(tmpdir(), "pi-bgd-branch-"));
    try {
      const file = join(dir, "session.jsonl");
      const at = new Date(stamp()).toISOString();
      const message = (id: string, parentId: string | null, content: string) => ({
        type: "message",
        id,
        parentId,
        timestamp: at,
        message: { role: "user", content, timestamp: stamp() },
      });
      const lines = [
        { type: "session", version: 3, id: "s", timestamp: at, cwd: dir },
        message("a", null, "first"),
        message("b", "a", "second"),
        message("a", null, "a repeated id: the index keeps this one"),
        message("c", "a", "leaf"),
      ];
      writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
      const sm = sdk.SessionManager.open(file, dir);
      const entries = sm.getEntries();
      for (const leafId of [sm.getLeafId(), "c", "b", undefined]) {
        const host = sdk.buildSessionContext(entries, leafId).messages;
        expect(branchMessages(entries, leafId, HOST.version, (id) => sm.getEntry(id))).toStrictEqual(host);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("declines a version it has no rules for, and a parent cycle", () => {
    const sm = sdk.SessionManager.inMemory("/project");
    sm.appendMessage({ role: "user", content: "hi", timestamp: stamp() });
    expect(branchMessages(sm.getEntries(), sm.getLeafId(), "9.9.9")).toBeUndefined();
    const cycle = [
      { type: "message", id: "a", parentId: "b", timestamp: "", message: { role: "user", content: "a" } },
      { type: "message", id: "b", parentId: "a", timestamp: "", message: { role: "user", content: "b" } },
    ];
    expect(branchMessages(cycle, "a", HOST.version)).toBeUndefined();
  });
});
