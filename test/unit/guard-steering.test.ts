/**
 * Steering in the child guard (src/child/steering.ts) and its reading of steering.json
 * (src/verify/result-file.ts readVouchedSteering), on a real task tree
 * <project>/.pi/delegate/<session>/<task>: the parent's record written with appendSteering, its
 * vouch with the signing manifest writer (src/store/lookup.ts writeManifest), the per-user key of
 * this test file's agent dir (test/helpers/default-agent-dir.ts). No process is started.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ContextEvent } from "@mariozechner/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { beforeRequest } from "../../src/child/request-gate.ts";
import { type GuardState, newState } from "../../src/child/state.ts";
import { lastSteeringLook, lookAtSteering, resultSteering, steeredMessages } from "../../src/child/steering.ts";
import { SCHEMA, TASK_FILES } from "../../src/core/constants.ts";
import { writeJsonRecord } from "../../src/core/fs.ts";
import type { SteeringEntry, SteeringRecord } from "../../src/core/schema/steering.ts";
import { appendSteering, emptySteering, steeringText } from "../../src/core/steering.ts";
import type { DelegateManifest, SeedDocument } from "../../src/core/types.ts";
import { newTaskIdentity } from "../../src/launch/task-documents.ts";
import { writeManifest } from "../../src/store/lookup.ts";
import { readSteeringSeen } from "../../src/store/progress.ts";
import { signManifest, userAgentDir } from "../../src/store/tree-trust.ts";
import { readVouchedSteering } from "../../src/verify/result-file.ts";
import { codeOf } from "../helpers/failures.ts";
import { runningManifest, TREE_ROUTE } from "../helpers/task-tree.ts";
import { makeTempDirSync } from "../helpers/temp.ts";

type Messages = ContextEvent["messages"];

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A conversation of `n` user messages m0, m1, … (where steering lands is all these tests look at). */
function conversation(n: number): Messages {
  return Array.from({ length: n }, (_, i) => ({
    role: "user" as const,
    content: [{ type: "text" as const, text: `m${i}` }],
    timestamp: i,
  }));
}

/** Each message's text: "m3" for the conversation's, "S2" for steering entry 2. */
function texts(messages: Messages): string[] {
  return messages.map((m) => {
    const content = (m as { content: unknown }).content;
    const text = Array.isArray(content) ? (content[0] as { text: string }).text : String(content);
    const steer = /^\[Steering message (\d+) /.exec(text);
    return steer === null ? text : `S${steer[1]}`;
  });
}

interface Task {
  taskDir: string;
  agentDir: string;
  manifest: DelegateManifest;
  state: GuardState;
  taskId: string;
  launchNonce: string;
  /** The record as the parent holds it: every message written so far. */
  record: SteeringRecord;
  /** Chain a message onto the record and write steering.json (not yet vouched for). */
  write(message: string): SteeringEntry;
  /** Sign the manifest vouching for the first `count` entries (all by default). */
  vouch(count?: number): void;
  /** write, then vouch: what bg_steer does. */
  steer(message: string): SteeringEntry;
  /** steeredMessages for request `request` of this conversation. */
  request(request: number, messages: Messages): Messages;
}

function task(): Task {
  const project = makeTempDirSync("guard-steering", "each");
  const identity = newTaskIdentity(project, "steer-session");
  mkdirSync(identity.taskDir, { recursive: true, mode: 0o700 });
  const manifest = runningManifest(identity, "steered", TREE_ROUTE, { pid: process.pid, start_time: "0" });
  writeManifest(identity.taskDir, manifest);
  const state = newState();
  state.seed = { task_id: identity.taskId, launch_nonce: identity.launchNonce } as unknown as SeedDocument;
  const t: Task = {
    taskDir: identity.taskDir,
    agentDir: userAgentDir(),
    manifest,
    state,
    taskId: identity.taskId,
    launchNonce: identity.launchNonce,
    record: emptySteering(identity.taskId, identity.launchNonce),
    write(message) {
      t.record = appendSteering(t.record, message, new Date().toISOString());
      writeJsonRecord(join(t.taskDir, TASK_FILES.steering), t.record);
      return t.record.entries.at(-1)!;
    },
    vouch(count = t.record.entries.length) {
      const head = t.record.entries[count - 1]!;
      t.manifest = { ...t.manifest, steering: { count, head_sha256: head.sha256 }, updated_at: head.at };
      writeManifest(t.taskDir, t.manifest);
    },
    steer(message) {
      const entry = t.write(message);
      t.vouch();
      return entry;
    },
    request(request, messages) {
      t.state.requests = request;
      return steeredMessages(t.state, t.taskDir, t.agentDir, messages);
    },
  };
  return t;
}

const manifestPath = (t: Task) => join(t.taskDir, TASK_FILES.manifest);
const steeringPath = (t: Task) => join(t.taskDir, TASK_FILES.steering);
const seenPath = (t: Task) => join(t.taskDir, TASK_FILES.steeringSeen);

describe("the guard's delivery of steering", () => {
  it("no steering.json: the messages go out unchanged (the same array), nothing is seen or written", () => {
    const t = task();
    const messages = conversation(2);
    expect(t.request(1, messages)).toBe(messages);
    expect(t.state.latched).toBeUndefined();
    expect(resultSteering(t.state)).toBeUndefined();
    expect(existsSync(seenPath(t))).toBe(false);
    lastSteeringLook(t.state, t.taskDir, t.agentDir);
    expect(t.state.latched).toBeUndefined();
    expect(resultSteering(t.state)).toBeUndefined();
  });

  it("a vouched entry is appended to the next request as a user message, its delivery recorded", () => {
    const t = task();
    expect(t.request(1, conversation(2))).toHaveLength(2);
    const e1 = t.steer("Also look at src/b.ts.");
    const messages = conversation(3);
    const out = t.request(2, messages);
    expect(t.state.latched).toBeUndefined();
    expect(out).toHaveLength(4);
    expect(out.slice(0, 3)).toEqual(messages);
    expect(out[3]).toMatchObject({
      role: "user",
      content: [{ type: "text", text: steeringText(e1) }],
      timestamp: Date.parse(e1.at),
    });
    expect(steeringText(e1)).toContain("Also look at src/b.ts.");
    const steering = resultSteering(t.state)!;
    expect(steering).toEqual({
      entries: 1,
      head_sha256: e1.sha256,
      delivered: [{ n: 1, sha256: e1.sha256, request: 2, at: expect.stringMatching(ISO) }],
    });
    // steering-seen.json says the same at once.
    const seen = JSON.parse(readFileSync(seenPath(t), "utf8"));
    expect(seen).toEqual({
      schema_version: SCHEMA.steeringSeen,
      task_id: t.taskId,
      launch_nonce: t.launchNonce,
      ...steering,
    });
    expect(readSteeringSeen(t.taskDir, t.taskId, t.launchNonce)).toEqual(steering.delivered);
  });

  it("a delivered entry is put back at its place in every later request; a newly vouched one goes at the end", () => {
    const t = task();
    const e1 = t.steer("first direction");
    expect(texts(t.request(1, conversation(2)))).toEqual(["m0", "m1", "S1"]);
    // The next request: Pi's conversation does not hold the steering message; it is put back where it was.
    expect(texts(t.request(2, conversation(4)))).toEqual(["m0", "m1", "S1", "m2", "m3"]);
    expect(resultSteering(t.state)?.delivered).toHaveLength(1);
    const e2 = t.steer("second direction");
    const out = t.request(3, conversation(6));
    expect(texts(out)).toEqual(["m0", "m1", "S1", "m2", "m3", "m4", "m5", "S2"]);
    expect((out[2] as { content: { text: string }[] }).content[0]!.text).toBe(steeringText(e1));
    expect((out[7] as { content: { text: string }[] }).content[0]!.text).toBe(steeringText(e2));
    expect(texts(t.request(4, conversation(7)))).toEqual(["m0", "m1", "S1", "m2", "m3", "m4", "m5", "S2", "m6"]);
    const steering = resultSteering(t.state)!;
    expect(steering).toMatchObject({
      entries: 2,
      head_sha256: e2.sha256,
      delivered: [
        { n: 1, sha256: e1.sha256, request: 1 },
        { n: 2, sha256: e2.sha256, request: 3 },
      ],
    });
    expect(readSteeringSeen(t.taskDir, t.taskId, t.launchNonce)).toEqual(steering.delivered);
    expect(t.state.latched).toBeUndefined();
  });

  it("two entries vouched for between two requests are both delivered before the next, in order", () => {
    const t = task();
    t.steer("one");
    t.steer("two");
    expect(texts(t.request(1, conversation(1)))).toEqual(["m0", "S1", "S2"]);
    expect(resultSteering(t.state)?.delivered.map((d) => [d.n, d.request])).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });

  it("an entry written to steering.json but not vouched for in the manifest is not delivered", () => {
    const t = task();
    const e1 = t.steer("vouched");
    t.write("not vouched yet"); // the parent's manifest write has not happened (yet)
    expect(texts(t.request(1, conversation(1)))).toEqual(["m0", "S1"]);
    expect(t.state.latched).toBeUndefined();
    expect(resultSteering(t.state)).toMatchObject({ entries: 1, head_sha256: e1.sha256 });
    expect(texts(t.request(2, conversation(2)))).toEqual(["m0", "S1", "m1"]);
    // Once vouched for, it is delivered.
    t.vouch();
    expect(texts(t.request(3, conversation(3)))).toEqual(["m0", "S1", "m1", "m2", "S2"]);
    expect(t.state.latched).toBeUndefined();
  });

  it("the first bg_steer seen between its two writes (record written, manifest not yet re-signed) delivers nothing and stops nothing", () => {
    // src/tasks/steer.ts writes steering.json, then the manifest that vouches for it. A request of
    // the child between the two must go out as if nothing was written, as it does for every later
    // bg_steer (the case above); the entry is delivered once the manifest vouches for it.
    const t = task();
    t.write("first direction");
    const messages = conversation(2);
    expect(t.request(1, messages)).toBe(messages);
    expect(t.state.latched).toBeUndefined();
    t.vouch();
    expect(texts(t.request(2, conversation(3)))).toEqual(["m0", "m1", "m2", "S1"]);
  });

  it("an entry written at the end of the run is seen by the last look and reported, not delivered", () => {
    const t = task();
    const e1 = t.steer("one");
    t.request(1, conversation(1));
    const e2 = t.steer("two");
    lastSteeringLook(t.state, t.taskDir, t.agentDir);
    expect(t.state.latched).toBeUndefined();
    expect(resultSteering(t.state)).toEqual({
      entries: 2,
      head_sha256: e2.sha256,
      delivered: [{ n: 1, sha256: e1.sha256, request: 1, at: expect.stringMatching(ISO) }],
    });
  });

  it("resultSteering: the last vouched head seen and the deliveries, even with none delivered", () => {
    const t = task();
    const e1 = t.steer("one");
    expect(lookAtSteering(t.state, t.taskDir, t.agentDir).map((e) => e.n)).toEqual([1]);
    expect(resultSteering(t.state)).toEqual({ entries: 1, head_sha256: e1.sha256, delivered: [] });
  });

  it("an ended or latched run, or one without its seed, looks at nothing", () => {
    const t = task();
    t.steer("one");
    const messages = conversation(1);
    t.state.finished = true;
    expect(t.request(1, messages)).toBe(messages);
    t.state.finished = false;
    t.state.latched = { code: "child_turn_limit", message: "x" };
    expect(t.request(1, messages)).toBe(messages);
    expect(t.state.latched.code).toBe("child_turn_limit");
    t.state.latched = undefined;
    const seedless = newState();
    seedless.requests = 1;
    expect(steeredMessages(seedless, t.taskDir, t.agentDir, messages)).toBe(messages);
    expect(resultSteering(t.state)).toBeUndefined();
  });
});

describe("a record or manifest that is not the one written latches steering_record_invalid", () => {
  /** A task that delivered entry 1 at request 1. */
  function delivered(): { t: Task; e1: SteeringEntry } {
    const t = task();
    const e1 = t.steer("first direction");
    expect(texts(t.request(1, conversation(1)))).toEqual(["m0", "S1"]);
    return { t, e1 };
  }

  function expectLatched(t: Task, request: number, message?: RegExp) {
    const messages = conversation(request + 1);
    const out = t.request(request, messages);
    expect(t.state.latched?.code).toBe("steering_record_invalid");
    if (message !== undefined) expect(t.state.latched?.message).toMatch(message);
    // Nothing new is delivered.
    expect(texts(out).filter((s) => s.startsWith("S"))).not.toContain("S2");
    return out;
  }

  it("an edited message of a delivered entry (the file rewritten)", () => {
    const { t } = delivered();
    const tampered = structuredClone(t.record);
    tampered.entries[0]!.message = "a different direction";
    t.record = tampered;
    writeJsonRecord(steeringPath(t), tampered);
    t.steer("second"); // chained onto the edit and vouched: still refused
    expectLatched(t, 2, /entry 1 does not match its sha256/);
    expect(resultSteering(t.state)?.delivered).toHaveLength(1);
    // The latch stays: a later request looks no more.
    const later = conversation(4);
    expect(t.request(3, later)).toBe(later);
  });

  it("a delivered entry replaced by a well-chained, re-vouched one", () => {
    const { t } = delivered();
    t.record = emptySteering(t.taskId, t.launchNonce);
    t.steer("a different first direction");
    expectLatched(t, 2, /changed after it was delivered/);
  });

  it("entries lost after they were seen (re-vouched for fewer)", () => {
    const t = task();
    t.steer("one");
    t.steer("two");
    lookAtSteering(t.state, t.taskDir, t.agentDir); // both seen, none delivered
    t.vouch(1);
    const out = t.request(1, conversation(1));
    expect(t.state.latched).toMatchObject({ code: "steering_record_invalid", message: expect.stringMatching(/lost/) });
    expect(texts(out)).toEqual(["m0"]);
  });

  it("steering.json removed after steering was seen", () => {
    const { t } = delivered();
    rmSync(steeringPath(t));
    expectLatched(t, 2, /gone/);
  });

  it("the vouched head is not the record's entry", () => {
    const t = task();
    t.steer("one");
    t.manifest = { ...t.manifest, steering: { count: 1, head_sha256: "a".repeat(64) } };
    writeManifest(t.taskDir, t.manifest);
    expectLatched(t, 1, /not the one this user wrote/);
  });

  it("the manifest vouches for more entries than steering.json holds", () => {
    const t = task();
    const e1 = t.steer("one");
    t.manifest = { ...t.manifest, steering: { count: 2, head_sha256: e1.sha256 } };
    writeManifest(t.taskDir, t.manifest);
    expectLatched(t, 1, /holds 1 entries/);
  });

  it("a manifest whose MAC is removed, changed, no longer of its fields, or another user's", () => {
    for (const forge of [
      (t: Task) => {
        const { mac: _mac, ...rest } = signManifest("delegate", t.taskDir, t.manifest);
        writeJsonRecord(manifestPath(t), rest);
      },
      (t: Task) => {
        const doc = signManifest("delegate", t.taskDir, t.manifest);
        writeJsonRecord(manifestPath(t), { ...doc, mac: "0".repeat(64) });
      },
      (t: Task) => {
        // Signed as this user, then one field changed.
        const doc = signManifest("delegate", t.taskDir, t.manifest);
        writeJsonRecord(manifestPath(t), { ...doc, name: "renamed" });
      },
      (t: Task) => {
        const otherUser = makeTempDirSync("guard-steering-other-key", "each");
        writeJsonRecord(manifestPath(t), signManifest("delegate", t.taskDir, t.manifest, otherUser));
      },
    ]) {
      const t = task();
      t.steer("one");
      expect(JSON.parse(readFileSync(manifestPath(t), "utf8")).mac).toMatch(/^[0-9a-f]{64}$/);
      forge(t);
      expectLatched(t, 1, /manifest\.json is not yours/);
      expect(resultSteering(t.state)).toBeUndefined();
    }
  });

  it("a manifest of another task, signed as this user", () => {
    const t = task();
    t.steer("one");
    writeManifest(t.taskDir, { ...t.manifest, launch_nonce: "0".repeat(32) });
    expectLatched(t, 1, /another task or launch/);
  });

  it("a record of another launch of the task", () => {
    const t = task();
    t.record = emptySteering(t.taskId, "0".repeat(32));
    t.steer("one");
    expectLatched(t, 1, /another task or launch/);
  });

  it("a manifest that is missing or not JSON", () => {
    const t = task();
    t.steer("one");
    writeFileSync(manifestPath(t), "{not json", { mode: 0o600 });
    expectLatched(t, 1, /not JSON/);
    const u = task();
    u.steer("one");
    rmSync(manifestPath(u));
    expectLatched(u, 1, /manifest\.json is gone/);
  });

  it("the last look latches as a request does", () => {
    const { t } = delivered();
    writeJsonRecord(steeringPath(t), { ...t.record, entries: [] });
    lastSteeringLook(t.state, t.taskDir, t.agentDir);
    expect(t.state.latched?.code).toBe("steering_record_invalid");
  });
});

describe("readVouchedSteering", () => {
  const ids = (t: Task) => ({ taskId: t.taskId, launchNonce: t.launchNonce });

  it("the vouched entries of an intact record; the unvouched rest left out", () => {
    const t = task();
    const e1 = t.write("one");
    const e2 = t.write("two");
    expect(readVouchedSteering(t.taskDir, ids(t), { count: 2, head_sha256: e2.sha256 })).toEqual([e1, e2]);
    expect(readVouchedSteering(t.taskDir, ids(t), { count: 1, head_sha256: e1.sha256 })).toEqual([e1]);
  });

  it("missing without a vouch: none; missing with a vouch: steering_record_invalid", () => {
    const t = task();
    expect(readVouchedSteering(t.taskDir, ids(t), null)).toEqual([]);
    expect(codeOf(() => readVouchedSteering(t.taskDir, ids(t), { count: 1, head_sha256: "a".repeat(64) }))).toBe(
      "steering_record_invalid",
    );
    expect(() => readVouchedSteering(t.taskDir, ids(t), { count: 1, head_sha256: "a".repeat(64) })).toThrow(
      /is gone, but manifest\.json vouches for it/,
    );
  });

  it("an entry written without its vouch, with no vouch at all yet: none (what bg_steer chains onto after a failed first vouch)", () => {
    // src/tasks/steer.ts chains "only onto what the manifest vouches for (a message whose vouch was
    // never written is dropped)": after a first bg_steer whose manifest write failed, the next one
    // reads steering.json with one entry and no vouch, as the guard does between the two writes.
    const t = task();
    t.write("its vouch was never written");
    expect(readVouchedSteering(t.taskDir, ids(t), null)).toEqual([]);
  });

  it("a symbolic link at steering.json, even to an intact record: steering_record_invalid", () => {
    const t = task();
    const e1 = t.write("one");
    const elsewhere = join(t.taskDir, "..", "steering-elsewhere.json");
    writeJsonRecord(elsewhere, t.record);
    rmSync(steeringPath(t));
    symlinkSync(elsewhere, steeringPath(t));
    const vouch = { count: 1, head_sha256: e1.sha256 };
    expect(codeOf(() => readVouchedSteering(t.taskDir, ids(t), vouch))).toBe("steering_record_invalid");
    expect(codeOf(() => readVouchedSteering(t.taskDir, ids(t), null))).toBe("steering_record_invalid");
  });

  it("a directory, a non-JSON file, a record of another shape or chain: steering_record_invalid", () => {
    const t = task();
    const e1 = t.write("one");
    const vouch = { count: 1, head_sha256: e1.sha256 };
    writeFileSync(steeringPath(t), "{", { mode: 0o600 });
    expect(codeOf(() => readVouchedSteering(t.taskDir, ids(t), vouch))).toBe("steering_record_invalid");
    writeJsonRecord(steeringPath(t), { ...t.record, extra: true });
    expect(codeOf(() => readVouchedSteering(t.taskDir, ids(t), vouch))).toBe("steering_record_invalid");
    const broken = structuredClone(t.record);
    broken.entries[0]!.message = "edited";
    writeJsonRecord(steeringPath(t), broken);
    expect(() => readVouchedSteering(t.taskDir, ids(t), vouch)).toThrow(/is not intact/);
    rmSync(steeringPath(t));
    mkdirSync(steeringPath(t));
    expect(codeOf(() => readVouchedSteering(t.taskDir, ids(t), vouch))).toBe("steering_record_invalid");
  });
});

describe("steering in the request's accounting", () => {
  /** The counted growth of one request of `messages`, as the request gate records it (src/child/request-gate.ts). */
  function countedGrowth(t: Task, messages: Messages, steer: boolean): number {
    t.state.seed = {
      ...t.state.seed,
      limits: { max_turns: 10, max_tool_calls: 10, timeout_seconds: 600 },
      budget: { admission_estimate_tokens: 0 },
    } as unknown as SeedDocument;
    t.state.prompt = "m0";
    t.state.startedAt = Date.now();
    t.state.runway.budget = { growthBudgetTokens: 1_000_000, triggerTokens: 8_192 };
    if (steer) t.steer("Look only at the v2 API.");
    t.state.requests = 1;
    const decision = beforeRequest(t.state, steeredMessages(t.state, t.taskDir, t.agentDir, messages));
    expect(decision.stop).toBe(false);
    return t.state.runway.requests.at(-1)!.counted_growth_bytes;
  }

  it("a delivered message counts in the runway (and so under a spend cap) like any message of the request", () => {
    const plain = countedGrowth(task(), conversation(3), false);
    const steered = countedGrowth(task(), conversation(3), true);
    expect(steered).toBeGreaterThan(
      plain + Buffer.byteLength(steeringText({ n: 1, message: "Look only at the v2 API." })) - 1,
    );
  });
});
