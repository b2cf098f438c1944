/**
 * A group's spend cap over real, signed trees in a temp project (src/launch/group-cap.ts;
 * docs/tools/bg_delegate.md, "Groups"): the cap a launch's group has (the one its first member fixed,
 * or the one it gives a new group) and group_cap_conflict; the room a capped group has left, the
 * members still running holding their caps and the ended ones what they spent (their cap when that
 * is not known); group_cap_exceeded naming it. Trees are written by the production builders
 * (test/helpers/task-tree.ts, test/helpers/fusion-fixtures.ts); no process is started.
 */
import { describe, expect, it } from "vitest";
import { DelegateError } from "../../src/core/errors.ts";
import { groupFor, type TaskGroup } from "../../src/core/group.ts";
import type { DelegateManifest } from "../../src/core/types.ts";
import { requireGroupRoom, resolveGroupCap } from "../../src/launch/group-cap.ts";
import { writeManifest } from "../../src/store/lookup.ts";
import { groupMembers } from "../../src/tasks/group-members.ts";
import { startRun, writeRunRecord } from "../helpers/fusion-fixtures.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { makeTempDir } from "../helpers/temp.ts";

const SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const OTHER_SESSION = "0199a1b2-c3d4-7e5f-8a9b-ffffffffffff";

interface MemberSpec {
  session?: string;
  group: TaskGroup;
  /** Its own spend cap (limits.max_cost_usd); none when undefined. */
  capUsd?: number;
  /** "running": as launch wrote it; else ended with this recorded spend (null: not recorded). */
  state: "running" | { spentUsd: number | null };
}

/** A delegate tree of the group, signed by this user, as launch and the parent's adjudication leave it. */
function writeMember(cwd: string, spec: MemberSpec): DelegateManifest {
  const session = spec.session ?? SESSION;
  const task = writeCompletedTask(cwd, { session, name: "member", adjudicate: spec.state !== "running" });
  const m = task.manifest;
  const limits = { ...m.limits, ...(spec.capUsd === undefined ? {} : { max_cost_usd: spec.capUsd }) };
  let terminal = m.terminal;
  if (spec.state !== "running" && terminal !== null) {
    const { cost_total: _recorded, ...rest } = terminal;
    terminal = spec.state.spentUsd === null ? rest : { ...rest, cost_total: spec.state.spentUsd };
  }
  const manifest: DelegateManifest = { ...m, limits, terminal, group: spec.group };
  writeManifest(task.taskDir, manifest);
  return manifest;
}

/** What a DelegateError thrown by `run` says. */
function refusal(run: () => unknown): { code: string; message: string; childProcessCreated: boolean | undefined } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(DelegateError);
    const e = error as DelegateError;
    return { code: e.code, message: e.message, childProcessCreated: e.facts.childProcessCreated };
  }
  throw new Error("nothing was refused");
}

/** The cap resolveGroupCap gives this session's group "auth-audit" in `cwd` for a launch asking `groupMaxCostUsd`. */
const auditCap = (cwd: string, groupMaxCostUsd: number | undefined) =>
  resolveGroupCap(cwd, SESSION, { group: "auth-audit", groupMaxCostUsd });

/** A refusal before any child was started: `code`, saying `message`. */
const refusedBefore = (code: string, message: string) => ({ code, message, childProcessCreated: false });

/** A group_cap_conflict refusal saying `message`. */
const conflict = (message: string) => refusedBefore("group_cap_conflict", message);

/**
 * The dollar figures of the group_cap_exceeded refusal a member capped at `capUsd` gets, in order:
 * what the group has left, its cap, what its members hold and this member's cap (the refusal's full
 * wording is pinned once, below).
 */
function roomFigures(cwd: string, group: TaskGroup, capUsd: number): string[] {
  const { code, message } = refusal(() => requireGroupRoom(cwd, SESSION, group, capUsd));
  expect(code).toBe("group_cap_exceeded");
  return message.match(/\$[0-9.]+/g) ?? [];
}

describe("resolveGroupCap: the cap a launch's group has", () => {
  it("no group: no cap; groupMaxCostUsd without a group is group_cap_conflict", async () => {
    const cwd = await makeTempDir("group-cap-none");
    expect(resolveGroupCap(cwd, SESSION, { group: undefined, groupMaxCostUsd: undefined })).toBeUndefined();
    expect(refusal(() => resolveGroupCap(cwd, SESSION, { group: undefined, groupMaxCostUsd: 2 }))).toEqual(
      conflict("groupMaxCostUsd needs group"),
    );
  });

  it("a group without members yet: the cap this launch gives it (or none)", async () => {
    const cwd = await makeTempDir("group-cap-new");
    expect(auditCap(cwd, 2)).toBe(2);
    expect(auditCap(cwd, undefined)).toBeUndefined();
  });

  it("a later member takes the cap its first member fixed, may repeat it, and is refused another", async () => {
    const cwd = await makeTempDir("group-cap-inherit");
    const group = groupFor(SESSION, "auth-audit", 1)!;
    writeMember(cwd, { group, capUsd: 0.3, state: { spentUsd: 0.1 } });
    expect(groupMembers(cwd, SESSION, (id) => id === group.id)).toHaveLength(1);
    expect(auditCap(cwd, undefined)).toBe(1);
    expect(auditCap(cwd, 1)).toBe(1);
    expect(refusal(() => auditCap(cwd, 2))).toEqual(
      conflict('group "auth-audit" has a spend cap of $1.00 (fixed by its first member), not $2.00'),
    );
  });

  it("a group started without a cap cannot be given one later", async () => {
    const cwd = await makeTempDir("group-cap-uncapped");
    writeMember(cwd, { group: groupFor(SESSION, "auth-audit")!, state: "running" });
    expect(auditCap(cwd, undefined)).toBeUndefined();
    expect(refusal(() => auditCap(cwd, 0.5))).toEqual(
      conflict('group "auth-audit" was started without a spend cap; groupMaxCostUsd cannot be added later'),
    );
  });

  it("another session's group of the same name, and this session's other groups, fix nothing", async () => {
    const cwd = await makeTempDir("group-cap-apart");
    writeMember(cwd, { session: OTHER_SESSION, group: groupFor(OTHER_SESSION, "auth-audit", 1)!, state: "running" });
    writeMember(cwd, { group: groupFor(SESSION, "other-group", 5)!, capUsd: 1, state: "running" });
    expect(auditCap(cwd, 3)).toBe(3);
    expect(auditCap(cwd, undefined)).toBeUndefined();
    // And the other session sees its own group's cap.
    expect(resolveGroupCap(cwd, OTHER_SESSION, { group: "auth-audit", groupMaxCostUsd: undefined })).toBe(1);
  });

  it("a Fusion run of the group fixes its cap as a delegate does", async () => {
    const cwd = await makeTempDir("group-cap-fusion");
    const group = groupFor(SESSION, "auth-audit", 4)!;
    writeRunRecord(startRun(cwd), { parent_session_id: SESSION, group });
    expect(auditCap(cwd, undefined)).toBe(4);
    expect(refusal(() => auditCap(cwd, 3)).code).toBe("group_cap_conflict");
  });
});

describe("requireGroupRoom: a member is launched only while its cap fits what its group has left", () => {
  it("a group without a cap (or no group) has room for anything", async () => {
    const cwd = await makeTempDir("group-room-uncapped");
    const group = groupFor(SESSION, "auth-audit")!;
    writeMember(cwd, { group, capUsd: 100, state: "running" });
    expect(() => requireGroupRoom(cwd, SESSION, group, undefined)).not.toThrow();
    expect(() => requireGroupRoom(cwd, SESSION, group, 1_000)).not.toThrow();
    expect(() => requireGroupRoom(cwd, SESSION, undefined, 1_000)).not.toThrow();
  });

  it("each member of a capped group needs its own cap", async () => {
    const cwd = await makeTempDir("group-room-own-cap");
    const group = groupFor(SESSION, "auth-audit", 1)!;
    expect(refusal(() => requireGroupRoom(cwd, SESSION, group, undefined))).toEqual(
      refusedBefore(
        "group_cap_exceeded",
        'group "auth-audit" has a spend cap of $1.00: each member needs its own maxCostUsd',
      ),
    );
    // The first member: the whole cap is left.
    expect(() => requireGroupRoom(cwd, SESSION, group, 1)).not.toThrow();
    expect(roomFigures(cwd, group, 1.01)).toEqual(["$1.00", "$1.00", "$0.0000", "$1.01"]);
  });

  it("running members hold their caps, ended ones what they spent (their cap when not known)", async () => {
    const cwd = await makeTempDir("group-room-held");
    const group = groupFor(SESSION, "auth-audit", 1)!;
    writeMember(cwd, { group, capUsd: 0.3, state: "running" }); // holds 0.30
    writeMember(cwd, { group, capUsd: 0.5, state: { spentUsd: 0.12 } }); // holds 0.12, not its 0.50
    writeMember(cwd, { group, capUsd: 0.2, state: { spentUsd: null } }); // holds its cap, 0.20
    // Not of the group: another group of this session, the same name in another session.
    writeMember(cwd, { group: groupFor(SESSION, "other", 1)!, capUsd: 0.9, state: "running" });
    writeMember(cwd, {
      session: OTHER_SESSION,
      group: groupFor(OTHER_SESSION, "auth-audit", 1)!,
      capUsd: 0.9,
      state: "running",
    });
    const members = groupMembers(cwd, SESSION, (id) => id === group.id);
    expect(members.map((m) => [m.state, m.capUsd, m.spend.usd]).sort()).toEqual(
      [
        ["completed", 0.2, null],
        ["completed", 0.5, 0.12],
        ["running", 0.3, null],
      ].sort(),
    );
    // 1 - (0.30 + 0.12 + 0.20) = 0.38 left: a cap of exactly that fits, a cent more does not.
    expect(() => requireGroupRoom(cwd, SESSION, group, 0.38)).not.toThrow();
    expect(refusal(() => requireGroupRoom(cwd, SESSION, group, 0.39))).toEqual(
      refusedBefore(
        "group_cap_exceeded",
        'group "auth-audit" has $0.3800 of its $1.00 spend cap left (its members hold $0.6200); this member\'s cap is $0.3900',
      ),
    );
  });

  it("a running Fusion run holds its whole run's cap", async () => {
    const cwd = await makeTempDir("group-room-fusion");
    const group = groupFor(SESSION, "auth-audit", 1)!;
    const base = { max_turns: 4, max_tool_calls: 4, timeout_seconds: 60 };
    writeRunRecord(startRun(cwd), { parent_session_id: SESSION, group, limits: { ...base, max_cost_usd: 0.7 } });
    writeMember(cwd, { group, capUsd: 0.1, state: { spentUsd: 0.05 } });
    expect(() => requireGroupRoom(cwd, SESSION, group, 0.25)).not.toThrow();
    expect(roomFigures(cwd, group, 0.26)).toEqual(["$0.2500", "$1.00", "$0.7500", "$0.2600"]);
  });

  it("sums in decimal: 0.1 + 0.2 of a 0.3 cap leaves nothing, never a binary remainder", async () => {
    const cwd = await makeTempDir("group-room-decimal");
    const group = groupFor(SESSION, "tenths", 0.3)!;
    writeMember(cwd, { group, capUsd: 0.1, state: "running" });
    writeMember(cwd, { group, capUsd: 0.2, state: "running" });
    expect(roomFigures(cwd, group, 0.000001)).toEqual(["$0.0000", "$0.3000", "$0.3000", "$0.0000010"]);
    const roomy = groupFor(SESSION, "tenths-2", 0.4)!;
    writeMember(cwd, { group: roomy, capUsd: 0.1, state: "running" });
    writeMember(cwd, { group: roomy, capUsd: 0.2, state: "running" });
    expect(() => requireGroupRoom(cwd, SESSION, roomy, 0.1)).not.toThrow();
  });

  it("members that overspent leave no room, never a negative one", async () => {
    const cwd = await makeTempDir("group-room-over");
    const group = groupFor(SESSION, "auth-audit", 0.5)!;
    writeMember(cwd, { group, capUsd: 0.5, state: { spentUsd: 0.62 } });
    expect(roomFigures(cwd, group, 0.01)).toEqual(["$0.0000", "$0.5000", "$0.6200", "$0.0100"]);
  });
});
