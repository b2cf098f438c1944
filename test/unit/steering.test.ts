/**
 * The steering record's pure rules (src/core/steering.ts): the hash chain the parent writes, the
 * entries the signed manifest vouches for, the check that ties what the child committed to them,
 * and the closed shapes of steering.json, result.json's `steering` and the manifest's `steering`
 * (declared once in src/core/schema/steering.ts, checked by src/core/schema/check.ts).
 */
import { describe, expect, it } from "vitest";
import { SCHEMA, STEER_MAX_PER_TASK, STEER_MESSAGE_MAX_BYTES } from "../../src/core/constants.ts";
import { checkDocument } from "../../src/core/schema/check.ts";
import {
  ManifestSteeringSchema,
  type ResultSteering,
  ResultSteeringSchema,
  type SteeringRecord,
  SteeringRecordSchema,
} from "../../src/core/schema/steering.ts";
import {
  appendSteering,
  chainProblem,
  checkSteering,
  emptySteering,
  steeringGenesis,
  steeringText,
  vouchedEntries,
} from "../../src/core/steering.ts";
import { SchemaViolation } from "../../src/core/validate.ts";

const parseSteeringRecord = (value: unknown) => checkDocument(SteeringRecordSchema, value);
const parseResultSteering = (value: unknown, at: string) => checkDocument(ResultSteeringSchema, value, at);
const parseManifestSteering = (value: unknown, at: string) => checkDocument(ManifestSteeringSchema, value, at);

const TASK = "delegate-0123456789abcdef0123456789abcdef";
const NONCE = "9f86d081884c7d659a2feaa0c55ad015";
const AT = ["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z", "2026-01-01T00:00:03.000Z"];

/** A record of these messages, chained as the parent writes it. */
function record(messages: readonly string[], taskId = TASK, nonce = NONCE): SteeringRecord {
  let r = emptySteering(taskId, nonce);
  for (const [i, m] of messages.entries()) r = appendSteering(r, m, AT[i % AT.length]!);
  return r;
}

/** A deep copy of `r` after `mutate`. */
function edited(r: SteeringRecord, mutate: (copy: SteeringRecord) => void): SteeringRecord {
  const copy = structuredClone(r);
  mutate(copy);
  return copy;
}

/** The JSON a record reads back as from steering.json. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

function violation(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (error instanceof SchemaViolation) return error.message;
    throw error;
  }
  throw new Error("accepted");
}

describe("the steering chain", () => {
  it("appendSteering numbers each entry and chains it to the one before (the first to the task's genesis)", () => {
    const empty = emptySteering(TASK, NONCE);
    const one = appendSteering(empty, "look at src/b.ts too", AT[0]!);
    const two = appendSteering(one, "ignore the tests", AT[1]!);
    expect(empty.entries).toEqual([]); // the record given is not changed
    expect(one.entries).toHaveLength(1);
    expect(two).toMatchObject({ schema_version: SCHEMA.steering, task_id: TASK, launch_nonce: NONCE });
    const [e1, e2] = two.entries;
    expect(e1).toMatchObject({
      n: 1,
      at: AT[0],
      message: "look at src/b.ts too",
      prev_sha256: steeringGenesis(TASK, NONCE),
    });
    expect(e2).toMatchObject({ n: 2, at: AT[1], message: "ignore the tests", prev_sha256: e1!.sha256 });
    expect(e1!.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(e2!.sha256).not.toBe(e1!.sha256);
    expect(chainProblem(two, TASK, NONCE)).toBeUndefined();
    expect(chainProblem(empty, TASK, NONCE)).toBeUndefined();
  });

  it("the genesis is the task's: another task or launch starts another chain", () => {
    expect(steeringGenesis(TASK, NONCE)).toMatch(/^[0-9a-f]{64}$/);
    expect(steeringGenesis(TASK, NONCE)).toBe(steeringGenesis(TASK, NONCE));
    expect(steeringGenesis(TASK, "0".repeat(32))).not.toBe(steeringGenesis(TASK, NONCE));
    expect(steeringGenesis(`${TASK.slice(0, -1)}0`, NONCE)).not.toBe(steeringGenesis(TASK, NONCE));
  });

  it("chainProblem names an edited message", () => {
    const r = record(["one", "two", "three"]);
    expect(
      chainProblem(
        edited(r, (c) => (c.entries[1]!.message = "TWO")),
        TASK,
        NONCE,
      ),
    ).toBe("entry 2 does not match its sha256");
    expect(
      chainProblem(
        edited(r, (c) => (c.entries[0]!.at = AT[2]!)),
        TASK,
        NONCE,
      ),
    ).toBe("entry 1 does not match its sha256");
  });

  it("an edited message re-hashed in place breaks the link of the entry after it", () => {
    const r = record(["one", "two", "three"]);
    const rehashed = edited(r, (c) => {
      const again = appendSteering(emptySteering(TASK, NONCE), "ONE", c.entries[0]!.at);
      c.entries[0] = again.entries[0]!;
    });
    expect(chainProblem(rehashed, TASK, NONCE)).toBe("entry 2 does not follow entry 1");
  });

  it("chainProblem names a renumbered entry", () => {
    const r = record(["one", "two"]);
    expect(
      chainProblem(
        edited(r, (c) => (c.entries[1]!.n = 3)),
        TASK,
        NONCE,
      ),
    ).toBe("entry 2 is numbered 3");
    expect(
      chainProblem(
        edited(r, (c) => c.entries.reverse()),
        TASK,
        NONCE,
      ),
    ).toBe("entry 1 is numbered 2");
    // A dropped first entry: the second is now first, still numbered 2.
    expect(
      chainProblem(
        edited(r, (c) => c.entries.shift()),
        TASK,
        NONCE,
      ),
    ).toBe("entry 1 is numbered 2");
  });

  it("chainProblem names a re-chained entry (its prev_sha256 that of another)", () => {
    const r = record(["one", "two", "three"]);
    expect(
      chainProblem(
        edited(r, (c) => (c.entries[2]!.prev_sha256 = c.entries[0]!.sha256)),
        TASK,
        NONCE,
      ),
    ).toBe("entry 3 does not follow entry 2");
    expect(
      chainProblem(
        edited(r, (c) => (c.entries[1]!.prev_sha256 = steeringGenesis(TASK, NONCE))),
        TASK,
        NONCE,
      ),
    ).toBe("entry 2 does not follow entry 1");
  });

  it("chainProblem names a record of another task or launch, and one whose ids were rewritten to this task's", () => {
    const r = record(["one"]);
    expect(chainProblem(r, `${TASK.slice(0, -1)}0`, NONCE)).toBe("it names another task or launch");
    expect(chainProblem(r, TASK, "0".repeat(32))).toBe("it names another task or launch");
    expect(
      chainProblem(
        edited(r, (c) => (c.launch_nonce = "x")),
        TASK,
        NONCE,
      ),
    ).toBe("it names another task or launch");
    // Another task's record with this task's ids written over its own: its chain starts elsewhere.
    const other = record(["one"], TASK, "0".repeat(32));
    const relabelled = edited(other, (c) => (c.launch_nonce = NONCE));
    expect(chainProblem(relabelled, TASK, NONCE)).toBe("entry 1 does not follow entry 0");
  });
});

describe("vouchedEntries", () => {
  it("no vouch and no entries: none", () => {
    expect(vouchedEntries(emptySteering(TASK, NONCE), undefined)).toEqual([]);
  });

  it("the first `count` entries when the last of them is the head the manifest records", () => {
    const r = record(["one", "two"]);
    expect(vouchedEntries(r, { count: 2, head_sha256: r.entries[1]!.sha256 })).toEqual(r.entries);
  });

  it("entries written past the vouched count are left out", () => {
    const r = record(["one", "two", "three"]);
    expect(vouchedEntries(r, { count: 1, head_sha256: r.entries[0]!.sha256 })).toEqual([r.entries[0]]);
    expect(vouchedEntries(r, { count: 2, head_sha256: r.entries[1]!.sha256 })).toEqual(r.entries.slice(0, 2));
  });

  it("a vouched count greater than the entries held is a problem", () => {
    const r = record(["one"]);
    expect(vouchedEntries(r, { count: 2, head_sha256: r.entries[0]!.sha256 })).toBe(
      "it holds 1 entries; the manifest records 2",
    );
    expect(vouchedEntries(emptySteering(TASK, NONCE), { count: 1, head_sha256: "a".repeat(64) })).toBe(
      "it holds 0 entries; the manifest records 1",
    );
  });

  it("a head that is not entry `count` is a problem", () => {
    const r = record(["one", "two"]);
    expect(vouchedEntries(r, { count: 1, head_sha256: r.entries[1]!.sha256 })).toBe(
      "entry 1 is not the one the manifest records",
    );
    expect(vouchedEntries(r, { count: 2, head_sha256: "a".repeat(64) })).toBe(
      "entry 2 is not the one the manifest records",
    );
  });

  it("entries with no vouch yet are left out like those past a vouched count (none vouched: none)", () => {
    // The parent writes steering.json before the manifest that vouches for it (src/tasks/steer.ts):
    // between the two writes of the first bg_steer the record holds one entry and the manifest none.
    // With a vouch of 1 an entry 2 written in the same window is left out; an entry 1 must be too.
    const r = record(["one"]);
    expect(vouchedEntries(r, undefined)).toEqual([]);
  });
});

describe("checkSteering", () => {
  const r = record(["one", "two", "three"]);
  const [e1, e2, e3] = r.entries as [(typeof r.entries)[0], (typeof r.entries)[0], (typeof r.entries)[0]];
  const d1 = { n: 1, sha256: e1.sha256, request: 2, at: "2026-01-01T00:00:05.000Z" };
  const d2 = { n: 2, sha256: e2.sha256, request: 4, at: "2026-01-01T00:00:06.000Z" };

  it("a delivered list that matches: the delivered messages and the undelivered rest", () => {
    const committed: ResultSteering = { entries: 3, head_sha256: e3.sha256, delivered: [d1, d2] };
    expect(checkSteering(r.entries, committed)).toEqual({
      delivered: [
        { ...d1, message: "one" },
        { ...d2, message: "two" },
      ],
      undelivered: [{ n: 3, message: "three", at: e3.at }],
    });
  });

  it("the child saw fewer entries than were vouched for at the end: the rest is undelivered", () => {
    const committed: ResultSteering = { entries: 1, head_sha256: e1.sha256, delivered: [d1] };
    expect(checkSteering(r.entries, committed)).toEqual({
      delivered: [{ ...d1, message: "one" }],
      undelivered: [
        { n: 2, message: "two", at: e2.at },
        { n: 3, message: "three", at: e3.at },
      ],
    });
  });

  it("nothing committed: every vouched entry is undelivered; no entries: an empty view", () => {
    expect(checkSteering(r.entries, undefined)).toEqual({
      delivered: [],
      undelivered: r.entries.map((e) => ({ n: e.n, message: e.message, at: e.at })),
    });
    expect(checkSteering([], undefined)).toEqual({ delivered: [], undelivered: [] });
  });

  it("a delivered entry whose sha256 differs is a problem", () => {
    const committed: ResultSteering = {
      entries: 3,
      head_sha256: e3.sha256,
      delivered: [d1, { ...d2, sha256: "a".repeat(64) }],
    };
    expect(checkSteering(r.entries, committed)).toBe("delivered steering entry 2 is not entry 2 of the record");
  });

  it("delivered entries out of order, or numbered otherwise, are a problem", () => {
    const swapped: ResultSteering = {
      entries: 3,
      head_sha256: e3.sha256,
      delivered: [
        { ...d2, n: 2 },
        { ...d1, n: 1 },
      ],
    };
    expect(checkSteering(r.entries, swapped)).toBe("delivered steering entry 2 is not entry 1 of the record");
    const renumbered: ResultSteering = { entries: 3, head_sha256: e3.sha256, delivered: [{ ...d1, n: 2 }] };
    expect(checkSteering(r.entries, renumbered)).toBe(checkSteering(r.entries, swapped)); // the same problem
  });

  it("committed entries greater than those vouched for is a problem", () => {
    const committed: ResultSteering = { entries: 3, head_sha256: e3.sha256, delivered: [d1] };
    expect(checkSteering(r.entries.slice(0, 2), committed)).toBe(
      "result.json saw 3 steering entries; the record vouches for 2",
    );
  });

  it("a head that is not entry `entries` of the record is a problem", () => {
    expect(checkSteering(r.entries, { entries: 2, head_sha256: e3.sha256, delivered: [] })).toBe(
      "the steering head result.json saw is not entry 2 of the record",
    );
    expect(checkSteering(r.entries, { entries: 1, head_sha256: "b".repeat(64), delivered: [d1] })).toMatch(
      / is not entry 1 of the record$/,
    );
  });

  it("more delivered than seen is a problem", () => {
    expect(checkSteering(r.entries, { entries: 1, head_sha256: e1.sha256, delivered: [d1, d2] })).toBe(
      "result.json delivered more entries than it saw",
    );
  });
});

describe("steeringText", () => {
  it("names the entry and carries its message whole", () => {
    const text = steeringText({ n: 2, message: "now check src/c.ts\nand stop there" });
    expect(text).toContain("Steering message 2");
    expect(text.endsWith("\nnow check src/c.ts\nand stop there")).toBe(true);
  });
});

describe("parseSteeringRecord", () => {
  it("reads back a record as written, newlines and all", () => {
    const r = record(["one", "two\n\tindented", "é ✓"]);
    expect(parseSteeringRecord(asJson(r))).toEqual(r);
    expect(parseSteeringRecord(asJson(emptySteering(TASK, NONCE)))).toEqual(emptySteering(TASK, NONCE));
  });

  it("rejects unknown keys, at the top and in an entry, and missing ones", () => {
    const r = record(["one"]);
    expect(violation(() => parseSteeringRecord({ ...(asJson(r) as object), extra: 1 }))).toContain("extra");
    const entryExtra = edited(r, (c) => Object.assign(c.entries[0]!, { delivered: true }));
    expect(violation(() => parseSteeringRecord(asJson(entryExtra)))).toContain("delivered");
    const { entries: _entries, ...noEntries } = r;
    expect(violation(() => parseSteeringRecord(noEntries))).toContain("entries");
    expect(violation(() => parseSteeringRecord({ ...r, schema_version: "pi-bg-delegate.steering.v2" }))).toContain(
      "schema_version",
    );
  });

  it(`rejects a ${STEER_MAX_PER_TASK + 1}th entry`, () => {
    expect(STEER_MAX_PER_TASK).toBe(8);
    const full = record(Array.from({ length: 8 }, (_, i) => `message ${i + 1}`));
    expect(parseSteeringRecord(asJson(full)).entries).toHaveLength(8);
    const over = appendSteering(full, "message 9", AT[0]!);
    expect(chainProblem(over, TASK, NONCE)).toBeUndefined(); // a well-chained ninth is still refused
    expect(violation(() => parseSteeringRecord(asJson(over)))).toContain("has more than 8 entries");
  });

  it(`rejects a message over ${STEER_MESSAGE_MAX_BYTES} bytes of UTF-8, a blank one, a bad time or hash`, () => {
    expect(STEER_MESSAGE_MAX_BYTES).toBe(4096);
    const atMost = "é".repeat(2048); // 4096 bytes, 2048 characters
    expect(parseSteeringRecord(asJson(record([atMost]))).entries[0]!.message).toBe(atMost);
    const over = `${atMost}a`; // 4097 bytes, 2049 characters
    expect(violation(() => parseSteeringRecord(asJson(record([over]))))).toContain("at most 4096 bytes");
    expect(violation(() => parseSteeringRecord(asJson(record(["  \n"]))))).toContain("blank");
    const badAt = edited(record(["one"]), (c) => (c.entries[0]!.at = "2026-01-01T00:00:01Z"));
    expect(violation(() => parseSteeringRecord(asJson(badAt)))).toContain("entries[0].at");
    const badHash = edited(record(["one"]), (c) => (c.entries[0]!.sha256 = c.entries[0]!.sha256.toUpperCase()));
    expect(violation(() => parseSteeringRecord(asJson(badHash)))).toContain("entries[0].sha256");
    const zero = edited(record(["one"]), (c) => (c.entries[0]!.n = 0));
    expect(violation(() => parseSteeringRecord(asJson(zero)))).toContain("entries[0].n");
  });
});

describe("parseResultSteering and parseManifestSteering: closed shapes", () => {
  const sha = "c".repeat(64);
  const good: ResultSteering = {
    entries: 2,
    head_sha256: sha,
    delivered: [{ n: 1, sha256: "d".repeat(64), request: 3, at: AT[0]! }],
  };

  it("result.json's steering: read as written; nothing else, nothing missing", () => {
    expect(parseResultSteering(asJson(good), "steering")).toEqual(good);
    expect(parseResultSteering({ ...good, delivered: [] }, "steering")).toEqual({ ...good, delivered: [] });
    expect(violation(() => parseResultSteering({ ...good, undelivered: [] }, "steering"))).toContain("undelivered");
    const { head_sha256: _h, ...noHead } = good;
    expect(violation(() => parseResultSteering(noHead, "steering"))).toContain("head_sha256");
    expect(
      violation(() =>
        parseResultSteering({ ...good, delivered: [{ ...good.delivered[0], message: "one" }] }, "steering"),
      ),
    ).toContain("message");
    expect(violation(() => parseResultSteering({ ...good, entries: 0 }, "steering"))).toContain("steering.entries");
    expect(violation(() => parseResultSteering({ ...good, entries: 9 }, "steering"))).toContain("at most 8");
    expect(
      violation(() => parseResultSteering({ ...good, delivered: [{ ...good.delivered[0], request: 0 }] }, "steering")),
    ).toContain("request");
    expect(
      violation(() =>
        parseResultSteering({ ...good, delivered: Array.from({ length: 9 }, () => good.delivered[0]) }, "steering"),
      ),
    ).toContain("has more than 8 entries");
    expect(violation(() => parseResultSteering([good], "steering"))).toContain("must be an object");
  });

  it("the manifest's steering: count and head only", () => {
    expect(parseManifestSteering({ count: 1, head_sha256: sha }, "steering")).toEqual({ count: 1, head_sha256: sha });
    expect(parseManifestSteering({ count: 8, head_sha256: sha }, "steering").count).toBe(8);
    expect(violation(() => parseManifestSteering({ count: 1, head_sha256: sha, entries: [] }, "steering"))).toContain(
      "entries",
    );
    expect(violation(() => parseManifestSteering({ count: 1 }, "steering"))).toContain("head_sha256");
    expect(violation(() => parseManifestSteering({ count: 0, head_sha256: sha }, "steering"))).toContain("count");
    expect(violation(() => parseManifestSteering({ count: 9, head_sha256: sha }, "steering"))).toContain("at most 8");
    expect(violation(() => parseManifestSteering({ count: 1.5, head_sha256: sha }, "steering"))).toContain("count");
    expect(violation(() => parseManifestSteering({ count: 1, head_sha256: "xyz" }, "steering"))).toContain(
      "head_sha256",
    );
  });
});
