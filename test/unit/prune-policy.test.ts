import { describe, expect, it } from "vitest";
import { decidePrune, type PruneCandidate } from "../../src/tasks/prune-policy.ts";

const NOW = Date.parse("2026-06-30T00:00:00.000Z");
const DAY = 86_400_000;

/** An ended task created and ended `daysAgo` days before NOW. */
function ended(id: string, daysAgo: number, status: PruneCandidate["status"] = "ended"): PruneCandidate {
  const at = new Date(NOW - daysAgo * DAY).toISOString();
  return { id, kind: "delegate", dir: `/p/${id}`, status, state: "completed", createdAt: at, endedAt: at };
}

function verdicts(candidates: PruneCandidate[], policy: Parameters<typeof decidePrune>[1]) {
  return decidePrune(candidates, policy, NOW).map((d) => `${d.candidate.id}:${d.remove ? "remove" : d.reason}`);
}

describe("which ended trees a prune removes", () => {
  it("removes ended tasks at least --older-than days old, newest first", () => {
    const tasks = [ended("old", 40), ended("young", 3), ended("edge", 30)];
    expect(verdicts(tasks, { olderThanDays: 30 })).toEqual(["young:recent", "edge:remove", "old:remove"]);
    expect(verdicts(tasks, { olderThanDays: 0 })).toEqual(["young:remove", "edge:remove", "old:remove"]);
  });

  it("keeps the --keep newest ended tasks, and with an age too removes only what both allow", () => {
    const tasks = [ended("a", 1), ended("b", 10), ended("c", 50), ended("d", 60)];
    expect(verdicts(tasks, { keep: 2 })).toEqual(["a:kept", "b:kept", "c:remove", "d:remove"]);
    expect(verdicts(tasks, { keep: 0 })).toEqual(["a:remove", "b:remove", "c:remove", "d:remove"]);
    expect(verdicts(tasks, { keep: 1, olderThanDays: 20 })).toEqual(["a:kept", "b:recent", "c:remove", "d:remove"]);
  });

  it("never removes a running, unadjudicated, notice-pending or unreadable tree, whatever the limits", () => {
    const tasks = [
      ended("run", 90, "running"),
      ended("dead", 90, "unadjudicated"),
      ended("pending", 90, "notification_pending"),
      { ...ended("broken", 90, "unreadable"), createdAt: null, endedAt: null },
      ended("done", 90),
    ];
    expect(verdicts(tasks, { olderThanDays: 0, keep: 0 })).toEqual([
      "dead:unadjudicated",
      "done:remove",
      "pending:notification_pending",
      "run:running",
      "broken:unreadable",
    ]);
  });

  it("a delivered answer not yet read goes only with undelivered, like a pending notice", () => {
    const tasks = [ended("unread", 40, "answer_unread"), ended("read", 50)];
    expect(verdicts(tasks, { olderThanDays: 0, keep: 0 })).toEqual(["unread:answer_unread", "read:remove"]);
    expect(verdicts(tasks, { olderThanDays: 0, undelivered: true })).toEqual(["unread:remove", "read:remove"]);
  });

  it("a spared id (its notice was just handed to the session) is never removed, whatever its age", () => {
    const tasks = [ended("old", 90), ended("older", 120)];
    expect(verdicts(tasks, { olderThanDays: 30, spare: new Set(["older"]) })).toEqual([
      "old:remove",
      "older:notified_now",
    ]);
  });

  it("a notice-pending tree goes only with undelivered, and still within the age and keep limits", () => {
    const tasks = [ended("pending-old", 40, "notification_pending"), ended("pending-new", 2, "notification_pending")];
    expect(verdicts(tasks, { olderThanDays: 30 })).toEqual([
      "pending-new:notification_pending",
      "pending-old:notification_pending",
    ]);
    expect(verdicts(tasks, { olderThanDays: 30, undelivered: true })).toEqual([
      "pending-new:recent",
      "pending-old:remove",
    ]);
    expect(verdicts([...tasks, ended("run", 50, "running")], { keep: 0, undelivered: true })).toEqual([
      "pending-new:remove",
      "pending-old:remove",
      "run:running",
    ]);
  });

  it("running tasks do not count toward --keep", () => {
    const tasks = [ended("run", 0, "running"), ended("x", 5), ended("y", 6)];
    expect(verdicts(tasks, { keep: 1 })).toEqual(["run:running", "x:kept", "y:remove"]);
  });

  it("removes nothing without a limit, and keeps an ended task with no recorded end under an age", () => {
    expect(verdicts([ended("x", 100)], {})).toEqual(["x:kept"]);
    expect(verdicts([{ ...ended("x", 100), endedAt: null }], { olderThanDays: 1 })).toEqual(["x:recent"]);
  });

  it("keeps a tree a kept follow-up resumes from, down the chain, unless asked to unlink", () => {
    const first = ended("first", 60);
    const second = { ...ended("second", 50), previousId: "first" };
    const third = { ...ended("third", 2), previousId: "second" };
    const lone = ended("lone", 55);
    const tasks = [first, second, third, lone];
    expect(verdicts(tasks, { olderThanDays: 30 })).toEqual([
      "third:recent",
      "second:linked",
      "lone:remove",
      "first:linked",
    ]);
    expect(verdicts(tasks, { olderThanDays: 30, unlink: true })).toEqual([
      "third:recent",
      "second:remove",
      "lone:remove",
      "first:remove",
    ]);
    // When the follow-up goes too, nothing holds its previous tree.
    expect(verdicts(tasks, { olderThanDays: 0 })).toEqual([
      "third:remove",
      "second:remove",
      "lone:remove",
      "first:remove",
    ]);
  });
});
