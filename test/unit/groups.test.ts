/**
 * Groups' pure logic (docs/tools/bg_delegate.md, "Groups"): the group id derived from the session and
 * the name, and a recorded group checked against its record's session (a manifest's or a Fusion run
 * record's); bg_result's group view and text; its structured result, each member as its own result
 * would be and conforming to RESULT_OUTPUT; the usage a group's retrieval carries; the notices a
 * session holds after a group's notice. No process is started, no file is written.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Value } from "@sinclair/typebox/value";
import { describe, expect, it } from "vitest";
import { withDelegateDefaults } from "../../src/arguments/delegate-arguments.ts";
import { NOTIFICATION_CUSTOM_TYPE, SCHEMA } from "../../src/core/constants.ts";
import {
  GROUP_NAME_MAX_CHARS,
  groupFor,
  groupIdOf,
  looksLikeGroupId,
  parseTaskGroup,
  type TaskGroup,
} from "../../src/core/group.ts";
import { checkDocument } from "../../src/core/schema/check.ts";
import { FusionRunRecordSchema } from "../../src/core/schema/fusion-run.ts";
import { DelegateManifestSchema } from "../../src/core/schema/manifest.ts";
import type { DelegateManifest } from "../../src/core/types.ts";
import { SchemaViolation } from "../../src/core/validate.ts";
import type { FusionRunRecord } from "../../src/fusion/run-record.ts";
import type { FusionCompletedView } from "../../src/fusion/types.ts";
import { buildManifest, newTaskIdentity } from "../../src/launch/task-documents.ts";
import { type GroupMemberView, groupResultText, groupView } from "../../src/retrieval/group-view.ts";
import { noticesInSession } from "../../src/tasks/notice.ts";
import { type PiUsage, sumUsage } from "../../src/tools/books.ts";
import { RESULT_OUTPUT } from "../../src/tools/output-schemas.ts";
import { resultOutput } from "../../src/tools/structured.ts";
import { checkEvidence } from "../../src/verify/evidence-check.ts";
import type { TaskOutput } from "../../src/verify/structured-output.ts";
import { completedText, completedView, runningView } from "../../src/views/result.ts";
import { fusionFailureView, fusionRunRecord } from "../helpers/fusion-fixtures.ts";
import { completedTerminal, makeResultFile, OBSERVED_USAGE } from "../helpers/result-fixtures.ts";

const SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const OTHER_SESSION = "0199a1b2-c3d4-7e5f-8a9b-ffffffffffff";

/** What a SchemaViolation thrown by `run` says: its path, its problem and its message. */
const parseRunRecord = (value: unknown) => checkDocument(FusionRunRecordSchema, value);

function violationOf(run: () => unknown): { path: string; problem: string; message: string } {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaViolation);
    const v = error as SchemaViolation;
    return { path: v.path, problem: v.problem, message: v.message };
  }
  throw new Error("no SchemaViolation was thrown");
}

describe("the group id", () => {
  it("is g and 32 lowercase hex digits, the same for the same session and name, another for another of either", () => {
    const id = groupIdOf(SESSION, "auth-audit");
    expect(id).toMatch(/^g[0-9a-f]{32}$/);
    expect(groupIdOf(SESSION, "auth-audit")).toBe(id);
    expect(groupIdOf(OTHER_SESSION, "auth-audit")).not.toBe(id);
    expect(groupIdOf(SESSION, "auth-audit2")).not.toBe(id);
    expect(groupIdOf(SESSION, "Auth-audit")).not.toBe(id);
    // The separator keeps a session and a name apart: moving a character across them is another group.
    expect(groupIdOf("ab", "c")).not.toBe(groupIdOf("a", "bc"));
    expect(groupIdOf(SESSION, "認証監査🔐チーム")).toMatch(/^g[0-9a-f]{32}$/);
  });

  it("groupFor: the group of a name with its cap; nothing without a name", () => {
    expect(groupFor(SESSION, undefined, 5)).toBeUndefined();
    expect(groupFor(SESSION, "auth-audit")).toEqual({ id: groupIdOf(SESSION, "auth-audit"), name: "auth-audit" });
    expect(groupFor(SESSION, "auth-audit", 2.5)).toEqual({
      id: groupIdOf(SESSION, "auth-audit"),
      name: "auth-audit",
      max_cost_usd: 2.5,
    });
  });

  it("looksLikeGroupId: g and 1 to 32 lowercase hex digits (a prefix too), nothing else", () => {
    const id = groupIdOf(SESSION, "auth-audit");
    expect(looksLikeGroupId(id)).toBe(true);
    expect(looksLikeGroupId(id.slice(0, 5))).toBe(true);
    expect(looksLikeGroupId("g0")).toBe(true);
    expect(looksLikeGroupId("g")).toBe(false);
    expect(looksLikeGroupId(`${id}0`)).toBe(false);
    expect(looksLikeGroupId(id.toUpperCase())).toBe(false);
    expect(looksLikeGroupId(`G${id.slice(1)}`)).toBe(false);
    expect(looksLikeGroupId(`d${"a".repeat(32)}`)).toBe(false);
    expect(looksLikeGroupId(`f${"a".repeat(31)}`)).toBe(false);
    expect(looksLikeGroupId("gxyz")).toBe(false);
    expect(looksLikeGroupId(` ${id}`)).toBe(false);
    expect(looksLikeGroupId("")).toBe(false);
  });
});

describe("a recorded group is checked against its record's session", () => {
  const group = groupFor(SESSION, "auth-audit", 3)!;

  it("accepts the group of its session and name, with or without a cap", () => {
    expect(parseTaskGroup({ ...group }, "group", SESSION)).toEqual(group);
    const { max_cost_usd: _cap, ...uncapped } = group;
    expect(parseTaskGroup(uncapped, "group", SESSION)).toEqual(uncapped);
    const wide = groupFor(SESSION, "認証監査🔐チーム")!;
    expect(parseTaskGroup(wide, "group", SESSION)).toEqual(wide);
    const longest = groupFor(SESSION, "n".repeat(GROUP_NAME_MAX_CHARS))!;
    expect(parseTaskGroup(longest, "group", SESSION)).toEqual(longest);
  });

  it("refuses another session's group: the id does not fit this session", () => {
    const theirs = groupFor(OTHER_SESSION, "auth-audit")!;
    expect(violationOf(() => parseTaskGroup(theirs, "group", SESSION))).toEqual({
      path: "group.id",
      problem: "is not this session's group of that name",
      message: "group.id: is not this session's group of that name",
    });
  });

  it("refuses an id that does not fit its name (a renamed group, or another group's id)", () => {
    const renamed = { ...group, name: "auth-audit-2" };
    expect(violationOf(() => parseTaskGroup(renamed, "group", SESSION)).message).toBe(
      "group.id: is not this session's group of that name",
    );
    const swapped = { ...group, id: groupIdOf(SESSION, "other") };
    expect(violationOf(() => parseTaskGroup(swapped, "group", SESSION)).path).toBe("group.id");
  });

  it("refuses a malformed id, before it is compared", () => {
    for (const id of [group.id.toUpperCase(), group.id.slice(0, 20), `${group.id}0`, `d${group.id.slice(1)}`, ""]) {
      expect(violationOf(() => parseTaskGroup({ ...group, id }, "group", SESSION))).toEqual({
        path: "group.id",
        problem: "must be g followed by 32 lowercase hex digits",
        message: "group.id: must be g followed by 32 lowercase hex digits",
      });
    }
    expect(violationOf(() => parseTaskGroup({ ...group, id: 7 }, "group", SESSION)).message).toBe(
      "group.id: must be a string, got number",
    );
  });

  it("refuses an unknown key, a missing one and a value that is not an object", () => {
    expect(violationOf(() => parseTaskGroup({ ...group, members: 3 }, "group", SESSION)).message).toBe(
      "group.members: is not a known key",
    );
    expect(violationOf(() => parseTaskGroup({ name: group.name }, "group", SESSION)).message).toBe(
      "group.id: is required",
    );
    expect(violationOf(() => parseTaskGroup(group.id, "group", SESSION)).message).toBe(
      "group: must be an object, got string",
    );
    expect(violationOf(() => parseTaskGroup(null, "group", SESSION)).message).toBe(
      "group: must be an object, got null",
    );
  });

  it("refuses a name out of bounds (blank, too long, control characters)", () => {
    const named = (name: string) => ({ id: groupIdOf(SESSION, name), name });
    expect(violationOf(() => parseTaskGroup(named("  "), "group", SESSION)).message).toBe(
      "group.name: must not be blank",
    );
    expect(violationOf(() => parseTaskGroup(named("n".repeat(65)), "group", SESSION)).message).toBe(
      `group.name: must be at most ${GROUP_NAME_MAX_CHARS} characters`,
    );
    expect(violationOf(() => parseTaskGroup(named("a\u001b[2Jb"), "group", SESSION)).path).toBe("group.name");
  });

  it("refuses a max_cost_usd out of bounds: zero, negative, above 10000, not a finite number", () => {
    for (const [cap, problem] of [
      [0, "must be a finite number above 0, got 0"],
      [-1, "must be a finite number above 0, got -1"],
      [10_000.01, "must be at most 10000"],
      ["1", "must be a number, got string"],
      [null, "must be a number, got null"],
    ] as const) {
      expect(violationOf(() => parseTaskGroup({ ...group, max_cost_usd: cap }, "group", SESSION))).toEqual({
        path: "group.max_cost_usd",
        problem,
        message: `group.max_cost_usd: ${problem}`,
      });
    }
    expect(parseTaskGroup({ ...group, max_cost_usd: 10_000 }, "group", SESSION).max_cost_usd).toBe(10_000);
  });
});

/** A running delegate's manifest of `session`, as launch writes it (a group given by name and cap). */
function memberManifest(session: string, group?: { name: string; cap?: number }): DelegateManifest {
  const identity = newTaskIdentity("/home/ana/shop", session);
  return {
    ...buildManifest({
      identity,
      args: withDelegateDefaults({
        name: "map auth",
        prompt: "Map the auth flow.",
        ...(group === undefined ? {} : { group: group.name, groupMaxCostUsd: group.cap }),
      }),
      route: { provider: "scripted", model: "scripted-model" },
      owner: { pid: 1, start_time: "1" },
      host: { pi_version: "1.6.0", proof: "proven", flags_from: "parse_args", host_flags: [] },
    }),
    schema_version: SCHEMA.manifest,
    seed_sha256: "e".repeat(64),
    seed_bytes: 2,
    artifacts: {},
  };
}

/** manifest.json's parsed JSON, checked against its declaration. */
const parseManifest = (value: unknown): DelegateManifest => checkDocument(DelegateManifestSchema, value);

/** A value as it comes back from disk (JSON), so nothing but its text reaches the parser. */
const fromDisk = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe("a manifest's group", () => {
  it("a manifest whose group is of its own parent session parses, the group kept (and its cap)", () => {
    const m = memberManifest(SESSION, { name: "auth-audit", cap: 2 });
    expect(m.group).toEqual(groupFor(SESSION, "auth-audit", 2));
    expect(parseManifest(fromDisk(m))).toEqual(m);
    const plain = memberManifest(SESSION);
    expect(plain.group).toBeUndefined();
    expect(parseManifest(fromDisk(plain))).toEqual(plain);
  });

  it("a manifest naming a group made for another session is refused, as is a forged one", () => {
    const m = memberManifest(SESSION, { name: "auth-audit" });
    const theirs = { ...m, group: groupFor(OTHER_SESSION, "auth-audit") };
    expect(violationOf(() => parseManifest(fromDisk(theirs))).message).toBe(
      "group.id: is not this session's group of that name",
    );
    // Moved to another session's directory with its parent_session_id rewritten: its group no longer fits.
    const moved = { ...m, parent_session_id: OTHER_SESSION };
    expect(violationOf(() => parseManifest(fromDisk(moved))).path).toBe("group.id");
    const extra = { ...m, group: { ...m.group, joined_by: "me" } };
    expect(violationOf(() => parseManifest(fromDisk(extra))).message).toBe("group.joined_by: is not a known key");
  });
});

function runRecord(fields: Partial<FusionRunRecord> = {}): FusionRunRecord {
  return fusionRunRecord({
    run_id: `f${"1".repeat(31)}`,
    name: "cache question",
    parent_session_id: SESSION,
    limits: { max_turns: 4, max_tool_calls: 4, timeout_seconds: 60, max_cost_usd: 0.5 },
    ...fields,
  });
}

describe("a Fusion run record's group", () => {
  it("a run record whose group is of its own parent session parses; one without a group too", () => {
    const record = runRecord({ group: groupFor(SESSION, "auth-audit", 1.5)! });
    expect(parseRunRecord(fromDisk(record))).toEqual(record);
    expect(parseRunRecord(fromDisk(runRecord()))).toEqual(runRecord());
  });

  it("a run record naming a group made for another session is refused", () => {
    const record = runRecord({ group: groupFor(OTHER_SESSION, "auth-audit")! });
    expect(violationOf(() => parseRunRecord(fromDisk(record)))).toEqual({
      path: "group.id",
      problem: "is not this session's group of that name",
      message: "group.id: is not this session's group of that name",
    });
    const capped = runRecord({ group: { ...groupFor(SESSION, "auth-audit")!, max_cost_usd: 0 } });
    expect(violationOf(() => parseRunRecord(fromDisk(capped))).path).toBe("group.max_cost_usd");
  });
});

// ---------------------------------------------------------------------------------------------
// bg_result on a group: the view, its text and its structured result.

const CWD = "/home/ana/shop";
const TEXT_OUTPUT: TaskOutput = { type: "text", content: null, basis: [] };
const ANSWER = "The session cookie is checked in src/auth.ts:42.\n";
const USAGE = OBSERVED_USAGE;
const GROUP: TaskGroup = groupFor(SESSION, "auth-audit", 1)!;

function completedMember(name: string): GroupMemberView {
  const base = memberManifest(SESSION, { name: GROUP.name, cap: 1 });
  const m: DelegateManifest = {
    ...base,
    name,
    state: "completed",
    terminal: completedTerminal(ANSWER),
  };
  const { result } = makeResultFile({ answer: ANSWER, usage: USAGE, turns: 2, tool_calls: 3, evidence: [] });
  const dir = `${CWD}/.pi/delegate/${SESSION}/${m.task_id}`;
  const view = completedView(m, dir, result, "inline", null, checkEvidence(ANSWER, [], dir), TEXT_OUTPUT);
  return {
    id: m.task_id,
    kind: "delegate",
    name,
    state: "completed",
    details: view,
    text: completedText(view, ANSWER),
    failure: null,
    spend: { usd: 0.0042, at_least: false },
  };
}

function runningMember(name: string): GroupMemberView {
  const m = { ...memberManifest(SESSION, { name: GROUP.name }), name };
  const view = runningView(
    m,
    `${CWD}/.pi/delegate/${SESSION}/${m.task_id}`,
    { turns: 1, tool_calls: 2, cost_total: null },
    null,
  );
  return {
    id: m.task_id,
    kind: "delegate",
    name,
    state: "running",
    details: view,
    text: "still running",
    failure: null,
    spend: { usd: null, at_least: false },
  };
}

/** A delegate whose retrieval failed: no details, its failure's code and message, its recorded spend. */
function failedMember(name: string): GroupMemberView {
  const id = `d${"7".repeat(32)}`;
  const message = "the wall-clock timeout passed; the child's process group was killed";
  return {
    id,
    kind: "delegate",
    name,
    state: "failed",
    details: null,
    text: `[child_timeout] ${message}`,
    failure: { code: "child_timeout", message },
    spend: { usd: 0.0101, at_least: true },
  };
}

const RUN_ID = `f${"2".repeat(31)}`;
const RUN_DIR = `${CWD}/.pi/fusion/${RUN_ID}`;

function fusionCompletedMember(name: string): GroupMemberView {
  const view: FusionCompletedView = {
    schema_version: SCHEMA.fusionView,
    run_id: RUN_ID,
    state: "completed",
    delivery: "artifact",
    delivery_reason: "requested_artifact",
    workflow: "fusion",
    artifact_dir: RUN_DIR,
    ended_at: "2026-12-01T10:00:14.000Z",
    answer: { present: true, byte_length: 600, sha256: "e".repeat(64), path: `${RUN_DIR}/merged.md` },
    merged: true,
    usage_status: "already_reported",
    spend: { usd: 0.02, at_least: false, cap_usd: 0.5 },
  };
  return {
    id: RUN_ID,
    kind: "fusion",
    name,
    state: "completed",
    details: view,
    text: "Fusion run answer in merged.md",
    failure: null,
    spend: { usd: 0.02, at_least: false },
  };
}

function fusionFailedMember(name: string): GroupMemberView {
  const id = `f${"3".repeat(31)}`;
  const view = fusionFailureView(id, `${CWD}/.pi/fusion/${id}`);
  return {
    id,
    kind: "fusion",
    name,
    state: "failed",
    details: view,
    text: "Fusion run failed",
    failure: null,
    spend: { usd: 0.0123, at_least: false },
  };
}

describe("the group view and its text", () => {
  it("running while a member runs; its spend a floor then (the running member's is not known)", () => {
    const v = groupView(GROUP, [completedMember("token path"), runningMember("cookie checks")]);
    expect(v).toMatchObject({
      kind: "bg_group_result",
      group_id: GROUP.id,
      name: "auth-audit",
      state: "running",
      spend: { usd: 0.0042, at_least: true },
      max_cost_usd: 1,
    });
    const text = groupResultText(v);
    const head = text.split("\n")[0];
    expect(head).toBe(
      `Group "auth-audit" ${GROUP.id}: 2 members (1 completed, 1 running). Group spend at least $0.0042 of cap $1.00. Still running: ${v.members[1]!.id}; the group's one notification comes when the last ends — do not poll.`,
    );
  });

  it("ended once every member ended; spend summed (rounded), a floor when a member's is one; each member's own section", () => {
    const members = [completedMember("token path"), failedMember("cookie checks"), fusionCompletedMember("cache")];
    const v = groupView(GROUP, members);
    expect(v.state).toBe("ended");
    expect(v.spend).toEqual({ usd: 0.0343, at_least: true }); // 0.0042 + 0.0101 + 0.02, the failed one a floor
    const text = groupResultText(v);
    const parts = text.split("\n\n");
    expect(parts[0]).toBe(
      `Group "auth-audit" ${GROUP.id}: 3 members (2 completed, 1 failed). Group spend at least $0.0343 of cap $1.00.`,
    );
    expect(text).not.toContain("Still running");
    expect(text).toContain(`=== Delegate ${members[0]!.id} (token path): completed ===\n${members[0]!.text}`);
    expect(text).toContain(
      `=== Delegate ${members[1]!.id} (cookie checks): failed [child_timeout] ===\n[child_timeout] the wall-clock timeout`,
    );
    expect(text).toContain(`=== Fusion run ${RUN_ID} (cache): completed ===\nFusion run answer in merged.md`);
    // Oldest first, as given.
    expect(text.indexOf(members[0]!.id)).toBeLessThan(text.indexOf(members[1]!.id));
    expect(text.indexOf(members[1]!.id)).toBeLessThan(text.indexOf(RUN_ID));
  });

  it("no spend known and no cap: no spend sentence; a known spend without a cap: the figure alone", () => {
    const uncapped = groupFor(SESSION, "quick")!;
    const unknown = groupView(uncapped, [runningMember("a")]);
    expect(unknown.spend.usd).toBeNull();
    expect(unknown.max_cost_usd).toBeNull();
    expect(groupResultText(unknown).split("\n")[0]).not.toContain("Group spend");
    const known = groupView(uncapped, [completedMember("a"), completedMember("b")]);
    expect(known.spend).toEqual({ usd: 0.0084, at_least: false });
    expect(groupResultText(known).split("\n")[0]).toContain("Group spend $0.0084.");
  });
});

describe("bg_result's structured result for a group", () => {
  it("kind group, each member as its own result would be, verified only when every member is; conforms to RESULT_OUTPUT", () => {
    const done = completedMember("token path");
    const run = fusionCompletedMember("cache");
    const ended = groupView(GROUP, [done, run]);
    const out = resultOutput(ended, groupResultText(ended));
    expect(Value.Check(RESULT_OUTPUT, out)).toBe(true);
    expect(out).toMatchObject({
      id: GROUP.id,
      kind: "group",
      state: "ended",
      verified: true,
      answer: null,
      output: null,
      answer_file: null,
      answer_bytes: null,
      spend_usd: 0.0242,
      spend_at_least: false,
      failure_code: null,
    });
    // Each member: its own result (its own kind replaced by delegate or fusion, its name added).
    const { kind: _dk, ...ownDelegate } = resultOutput(done.details!, done.text);
    const { kind: _fk, ...ownFusion } = resultOutput(run.details!, run.text);
    expect(out.members).toEqual([
      { ...ownDelegate, kind: "delegate", name: "token path" },
      { ...ownFusion, kind: "fusion", name: "cache" },
    ]);
    expect(out.members![0]).toMatchObject({ verified: true, answer: ANSWER, answer_bytes: Buffer.byteLength(ANSWER) });
    expect(out.members![1]).toMatchObject({ verified: true, answer_file: `${RUN_DIR}/merged.md`, answer_bytes: 600 });
  });

  it("a failed member carries its failure_code and verified false, and the group is not verified", () => {
    const members = [
      completedMember("token path"),
      failedMember("cookie checks"),
      fusionFailedMember("cache"),
      runningMember("slow"),
    ];
    const v = groupView(GROUP, members);
    const out = resultOutput(v, groupResultText(v));
    expect(
      [...Value.Errors(RESULT_OUTPUT, out)].map((e) => `${e.path}: ${e.message} (${JSON.stringify(e.value)})`),
    ).toEqual([]);
    expect(Value.Check(RESULT_OUTPUT, out)).toBe(true);
    expect(out).toMatchObject({ kind: "group", state: "running", verified: false, spend_at_least: true });
    expect(out.members).toHaveLength(4);
    expect(out.members![1]).toEqual({
      id: members[1]!.id,
      kind: "delegate",
      name: "cookie checks",
      state: "failed",
      verified: false,
      answer: null,
      output: null,
      answer_file: null,
      answer_bytes: null,
      spend_usd: 0.0101,
      spend_at_least: true,
      failure_code: "child_timeout",
    });
    expect(out.members![2]).toMatchObject({
      kind: "fusion",
      state: "failed",
      verified: false,
      failure_code: "fusion_evaluation_invalid",
      spend_usd: 0.0123,
    });
    expect(out.members![3]).toMatchObject({ kind: "delegate", state: "running", verified: false, answer: null });
    // One failed member is enough for the group not to be verified.
    const oneFailed = groupView(GROUP, [completedMember("a"), failedMember("b")]);
    expect(resultOutput(oneFailed, "").verified).toBe(false);
  });

  it("a task's own structured result has no members and conforms too", () => {
    const done = completedMember("token path");
    const own = resultOutput(done.details!, done.text);
    expect(own).not.toHaveProperty("members");
    expect(Value.Check(RESULT_OUTPUT, own)).toBe(true);
    // A member's shape is closed: a group nested in a member is not a result.
    const v = groupView(GROUP, [done]);
    const out = resultOutput(v, "");
    expect(Value.Check(RESULT_OUTPUT, { ...out, members: [{ ...out.members![0], kind: "group" }] })).toBe(false);
    expect(Value.Check(RESULT_OUTPUT, { ...out, members: [{ ...out.members![0], extra: 1 }] })).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// One spend in Pi's books for a group's retrieval.

function usage(tokens: number, usd: number): PiUsage {
  return {
    input: tokens,
    output: tokens * 2,
    cacheRead: tokens * 3,
    cacheWrite: tokens * 4,
    totalTokens: tokens * 10,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: usd },
  };
}

describe("sumUsage", () => {
  it("is undefined when no retrieval carries usage", () => {
    expect(sumUsage([])).toBeUndefined();
    expect(sumUsage([undefined, undefined])).toBeUndefined();
  });

  it("is the one usage when one carries it, whatever the others", () => {
    expect(sumUsage([undefined, usage(5, 0.25), undefined])).toEqual(usage(5, 0.25));
  });

  it("sums tokens by class and dollars, the total rounded so a binary sum reads as what was spent", () => {
    const sum = sumUsage([usage(100, 0.1), undefined, usage(20, 0.2), usage(3, 0.0042)]);
    expect(sum).toEqual({
      input: 123,
      output: 246,
      cacheRead: 369,
      cacheWrite: 492,
      totalTokens: 1230,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.3042 },
    });
    expect(sumUsage([usage(1, 0.1), usage(1, 0.2)])?.cost.total).toBe(0.3);
    expect(0.1 + 0.2).not.toBe(0.3);
  });
});

// ---------------------------------------------------------------------------------------------
// The notices a session holds after a /reload or /resume.

/** A context whose session holds these entries, as Pi's session manager returns them. */
function sessionWith(entries: unknown[]): ExtensionContext {
  return { sessionManager: { getEntries: () => entries } } as unknown as ExtensionContext;
}

const notice = (details: unknown) => ({
  type: "custom_message",
  customType: NOTIFICATION_CUSTOM_TYPE,
  content: "…",
  details,
});

describe("noticesInSession", () => {
  it("a group's notice holds each of its members (id → artifact_dir), not the group id", () => {
    const held = noticesInSession(
      sessionWith([
        notice({
          kind: "group",
          taskId: GROUP.id,
          name: GROUP.name,
          members: [
            { taskId: `d${"1".repeat(32)}`, artifact_dir: "/p/.pi/delegate/s/d1" },
            { kind: "fusion", taskId: RUN_ID, artifact_dir: RUN_DIR },
            { taskId: `d${"4".repeat(32)}` },
            { name: "no id" },
            null,
          ],
          cost_total: null,
          cost_at_least: false,
          max_cost_usd: null,
        }),
      ]),
    );
    expect([...held]).toEqual([
      [`d${"1".repeat(32)}`, "/p/.pi/delegate/s/d1"],
      [RUN_ID, RUN_DIR],
      [`d${"4".repeat(32)}`, undefined],
    ]);
    expect(held.has(GROUP.id)).toBe(false);
  });

  it("a plain notice as before; other entries and other custom messages are not notices", () => {
    const held = noticesInSession(
      sessionWith([
        { type: "message", message: { role: "user", content: "hi" } },
        { type: "custom_message", customType: "something-else", details: { taskId: "dzzz", artifact_dir: "/x" } },
        { type: "custom", customType: NOTIFICATION_CUSTOM_TYPE, data: { taskId: "dyyy" } },
        notice({ taskId: `d${"5".repeat(32)}`, artifact_dir: "/p/.pi/delegate/s/d5", state: "completed" }),
        notice({ taskId: `d${"6".repeat(32)}`, artifact_dir: 42 }),
        notice({ taskId: 7 }),
        notice(undefined),
        notice({ members: "not a list", taskId: `d${"8".repeat(32)}`, artifact_dir: "/p/d8" }),
      ]),
    );
    expect([...held]).toEqual([
      [`d${"5".repeat(32)}`, "/p/.pi/delegate/s/d5"],
      [`d${"6".repeat(32)}`, undefined],
      [`d${"8".repeat(32)}`, "/p/d8"],
    ]);
  });
});
