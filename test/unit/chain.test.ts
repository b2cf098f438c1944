/**
 * The walk of a follow-up chain (docs/subsystems/retrieval.md, "Verification order"): bounded by
 * FOLLOW_UP_CHAIN_MAX and cycle-safe in every walker — bg_result's chainOf (and so adjudicateDelegate),
 * show's wholeChain, list's threadRows and prune's linked-tree keep. Trees are written by the
 * production writers (test/helpers/task-tree.ts), linked as a follow-up's manifest records its link.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FOLLOW_UP_CHAIN_MAX, TASK_FILES } from "../../src/core/constants.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { EvidenceRow } from "../../src/core/types.ts";
import { admitPrevious } from "../../src/launch/follow-up.ts";
import { chainOf, wholeChain } from "../../src/retrieval/chain.ts";
import { adjudicateDelegate } from "../../src/retrieval/retrieve.ts";
import { readManifest, writeManifest } from "../../src/store/lookup.ts";
import { decidePrune, type PruneCandidate } from "../../src/tasks/prune-policy.ts";
import { type TaskRow, threadRows, unreadRow } from "../../src/tasks/row.ts";
import { thrownBy } from "../helpers/failures.ts";
import { EVIDENCE_FIXTURE } from "../helpers/result-fixtures.ts";
import { type CompletedTask, writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

/** A completed task with a session file and evidence rows of its own. */
function task(cwd: string, evidence: EvidenceRow[]): CompletedTask {
  const t = writeCompletedTask(cwd, { evidence });
  mkdirSync(join(t.taskDir, TASK_FILES.sessionDir), { recursive: true });
  writeFileSync(join(t.taskDir, TASK_FILES.sessionFile), `{"type":"session","id":"${t.manifest.task_id}"}\n`);
  return t;
}

/** Record in `from`'s manifest a link to `to` as admission records it (both files' hashes now). */
function link(from: CompletedTask, to: CompletedTask, position: number, dir = to.taskDir): void {
  const hash = (file: string) => sha256Hex(readFileSync(join(to.taskDir, file)));
  const manifest = readManifest(from.taskDir);
  writeManifest(from.taskDir, {
    ...manifest,
    follow_up: {
      previous_task_id: to.manifest.task_id,
      previous_result_sha256: hash(TASK_FILES.result),
      previous_session_sha256: hash(TASK_FILES.sessionFile),
      previous_end: "completed",
      chain_position: position,
      carried_session_bytes: 0,
      reseed: false,
      previous_task_dir: dir,
      carried_tokens: null,
    },
  });
}

/** The DelegateError a chain is refused with (a chain accepted fails the test). */
const chainFailure = thrownBy;

describe("a follow-up chain", () => {
  it("carries the evidence of every intact link, earliest first, and names the trees it rests on", () => {
    const cwd = makeTempDirSync("chain");
    const [a, b, c] = [task(cwd, [EVIDENCE_FIXTURE[0]!]), task(cwd, [EVIDENCE_FIXTURE[1]!]), task(cwd, [])];
    link(b, a, 2);
    link(c, b, 3);
    const chain = chainOf(readManifest(c.taskDir), c.taskDir);
    expect(chain.evidence).toEqual([EVIDENCE_FIXTURE[0], EVIDENCE_FIXTURE[1]]);
    expect(chain.trees.map((t) => t.task_id)).toEqual([b.manifest.task_id, a.manifest.task_id]);
    expect(chain.view).toMatchObject({ link: "intact", chain_position: 3, carried_evidence_rows: 2 });
    const ids = wholeChain(readManifest(b.taskDir), b.taskDir)?.map((e) => [e.id, e.link, e.current]);
    expect(ids).toEqual([
      [a.manifest.task_id, null, false],
      [b.manifest.task_id, "intact", true],
      [c.manifest.task_id, "intact", false],
    ]);
  });

  it("that loops back on itself is follow_up_chain_invalid naming the task, in bg_result and in show", () => {
    const cwd = makeTempDirSync("chain");
    const [a, b] = [task(cwd, []), task(cwd, [])];
    // Each link claims a place far down the chain, as the recursion bound used to trust.
    link(a, b, 1_000_000_000);
    link(b, a, 999_999_999);
    for (const t of [a, b]) {
      const error = chainFailure(() => chainOf(readManifest(t.taskDir), t.taskDir));
      expect(error.code).toBe("follow_up_chain_invalid");
      expect(error.message).toContain(t.manifest.task_id);
      expect(chainFailure(() => adjudicateDelegate(t.taskDir)).code).toBe("follow_up_chain_invalid");
    }
    // Places that do follow one another, and still a cycle.
    link(a, b, 3);
    link(b, a, 2);
    const cycle = chainFailure(() => chainOf(readManifest(a.taskDir), a.taskDir));
    expect(cycle.message).toContain("cycle");
    const entries = wholeChain(readManifest(a.taskDir), a.taskDir) ?? [];
    expect(entries.map((e) => e.id)).toEqual([b.manifest.task_id, a.manifest.task_id]);
  });

  it("is invalid past its maximum length, out of the store, at a place that does not follow, or at the wrong tree", () => {
    const cwd = makeTempDirSync("chain");
    const [a, b, c] = [task(cwd, []), task(cwd, []), task(cwd, [])];
    const invalid = (t: CompletedTask) => chainFailure(() => chainOf(readManifest(t.taskDir), t.taskDir)).message;
    link(b, a, FOLLOW_UP_CHAIN_MAX + 1);
    expect(invalid(b)).toContain(`past the ${FOLLOW_UP_CHAIN_MAX}`);
    link(b, a, 3);
    expect(invalid(b)).toContain("is a first task");
    link(b, a, 2);
    link(c, b, 5);
    expect(invalid(c)).toContain("the task after it is at 5");
    const elsewhere = makeTempDirSync("elsewhere");
    link(c, b, 3, join(elsewhere, "s", b.manifest.task_id));
    expect(invalid(c)).toContain("not a tree of this project's store");
    link(c, b, 3, join(a.taskDir, "..", b.manifest.task_id));
    expect(chainOf(readManifest(c.taskDir), c.taskDir).view?.link).toBe("intact");
    // A tree whose manifest is another task's.
    writeManifest(b.taskDir, { ...readManifest(b.taskDir), task_id: c.manifest.task_id });
    expect(invalid(c)).toContain(`not ${b.manifest.task_id}`);
  });
});

describe("show's follow-ups", () => {
  it("are found in any session changed since the task was made, and no older session is read", async () => {
    const cwd = makeTempDirSync("chain-sessions");
    // A session last changed before the shown task was made: its tree cannot follow it.
    const old = writeCompletedTask(cwd, { session: "old-session" });
    await new Promise((r) => setTimeout(r, 1_200));
    const first = writeCompletedTask(cwd, { session: "first-session" });
    const later = writeCompletedTask(cwd, { session: "later-session" });
    linkBySession(later, first);
    expect(wholeChain(readManifest(first.taskDir), first.taskDir)?.map((e) => e.id)).toEqual([
      first.manifest.task_id,
      later.manifest.task_id,
    ]);
    // Probe: the old session's tree rewritten in place (its session directory unchanged) to claim it
    // follows the task. Were every session read, it would be listed; the old session is not opened.
    linkBySession(old, first);
    expect(wholeChain(readManifest(first.taskDir), first.taskDir)?.map((e) => e.id)).not.toContain(
      old.manifest.task_id,
    );
  });
});

/** Record in `from`'s manifest that it follows `to` (the fields show reads), in place. */
function linkBySession(from: CompletedTask, to: CompletedTask): void {
  const manifest = readManifest(from.taskDir);
  writeManifest(from.taskDir, {
    ...manifest,
    follow_up: {
      previous_task_id: to.manifest.task_id,
      previous_result_sha256: sha256Hex(readFileSync(join(to.taskDir, TASK_FILES.result))),
      previous_session_sha256: "0".repeat(64),
      previous_end: "completed",
      chain_position: 2,
      carried_session_bytes: 0,
      reseed: false,
      previous_task_dir: to.taskDir,
      carried_tokens: null,
    },
  });
}

describe("a chain at its maximum length", () => {
  it("is read whole, and a follow-up of its last task is refused with follow_up_chain_invalid", () => {
    const cwd = makeTempDirSync("chain-long");
    const tasks = Array.from({ length: FOLLOW_UP_CHAIN_MAX }, () => task(cwd, []));
    tasks.forEach((t, i) => {
      if (i > 0) link(t, tasks[i - 1]!, i + 1);
    });
    const last = tasks.at(-1)!;
    expect(chainOf(readManifest(last.taskDir), last.taskDir).trees).toHaveLength(FOLLOW_UP_CHAIN_MAX - 1);
    const refused = chainFailure(() => admitPrevious(cwd, last.manifest.task_id));
    expect(refused.code).toBe("follow_up_chain_invalid");
    expect(refused.message).toContain(`a follow-up of it would be the ${FOLLOW_UP_CHAIN_MAX + 1}th`);
  });
});

describe("list and prune over a cycle or a long chain", () => {
  const row = (id: string, previous: string | null, created: string): TaskRow => ({
    ...unreadRow({ id, kind: "delegate", dir: `/x/${id}`, trust: { mine: true } }),
    id,
    previous_id: previous,
    children: [],
    created_at: created,
  });

  it("lists every row once, indenting no deeper than a chain may be", () => {
    const cycle = threadRows([row("d1", "d2", "2"), row("d2", "d1", "1")]);
    expect(cycle.map((r) => r.id).sort()).toEqual(["d1", "d2"]);
    const long = Array.from({ length: FOLLOW_UP_CHAIN_MAX + 10 }, (_, i) =>
      row(`d${i}`, i === 0 ? null : `d${i - 1}`, String(i).padStart(4, "0")),
    ).reverse();
    const threaded = threadRows(long);
    expect(threaded).toHaveLength(long.length);
    expect(new Set(threaded.map((r) => r.id)).size).toBe(long.length);
    expect(Math.max(...threaded.map((r) => r.depth))).toBe(FOLLOW_UP_CHAIN_MAX - 1);
  });

  it("keeps both trees of a cycle one kept follow-up points into, and ends", () => {
    const candidate = (id: string, previousId: string, status: PruneCandidate["status"]): PruneCandidate => ({
      id,
      kind: "delegate",
      dir: `/x/${id}`,
      status,
      state: "completed",
      createdAt: "2026-01-01T00:00:00.000Z",
      endedAt: "2026-01-01T00:00:00.000Z",
      previousId,
    });
    const decisions = decidePrune(
      [candidate("d1", "d2", "ended"), candidate("d2", "d1", "ended"), candidate("d3", "d1", "running")],
      { olderThanDays: 0 },
      Date.parse("2026-02-01T00:00:00.000Z"),
    );
    expect(decisions.map((d) => [d.candidate.id, d.remove])).toEqual(
      expect.arrayContaining([
        ["d1", false],
        ["d2", false],
        ["d3", false],
      ]),
    );
  });
});
