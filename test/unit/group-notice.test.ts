/**
 * A group's one completion notice (docs/tools/bg_delegate.md, "Groups"; src/views/group-notification.ts,
 * src/tasks/group-notice.ts): each member listed with its id, name, state, answer size or failure code
 * and spend under a head that counts the states, states the group's spend once (with its cap) and the
 * steering messages never read; its own text within 2 KiB however many members (the rest counted),
 * and the answers autoDeliver carries after it in full. Pure: no process, no file.
 */
import { describe, expect, it } from "vitest";
import { groupFor, type TaskGroup } from "../../src/core/group.ts";
import { groupNotice } from "../../src/tasks/group-notice.ts";
import type { Notice } from "../../src/tasks/notice.ts";
import {
  type ComposedMember,
  GROUP_NOTIFICATION_TEXT_MAX_BYTES,
  groupDetails,
  groupNotificationText,
} from "../../src/views/group-notification.ts";
import type { NotificationDetails } from "../../src/views/notification.ts";

const SESSION = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
const GROUP: TaskGroup = groupFor(SESSION, "auth-audit", 1)!;
const UNCAPPED: TaskGroup = groupFor(SESSION, "auth-audit")!;

const delegateId = (n: number) => `d${n.toString(16).padStart(32, "0")}`;
const runId = (n: number) => `f${n.toString(16).padStart(31, "0")}`;

/** A member's notice details as its own notice would carry them: a completed delegate unless told otherwise. */
function details(n: number, over: Partial<NotificationDetails> = {}): NotificationDetails {
  return {
    kind: "delegate",
    taskId: delegateId(n),
    name: `member ${n}`,
    state: "completed",
    code: null,
    answer_bytes: 787,
    answer_sha256: "c".repeat(64),
    auto_delivered: null,
    artifact_dir: `/p/.pi/delegate/${SESSION}/${delegateId(n)}`,
    run_seconds: 14,
    cost_total: 0.0042,
    cost_at_least: false,
    max_cost_usd: 0.5,
    message: null,
    ...over,
  };
}

const member = (d: NotificationDetails, content = `own notice of ${d.taskId}`): ComposedMember => ({
  details: d,
  content,
});

/** The notice's own text: what comes before the first answer autoDeliver carries (a member line holds no blank line). */
const ownText = (text: string) => text.split("\n\n")[0]!;

const failed = (n: number, over: Partial<NotificationDetails> = {}) =>
  details(n, {
    state: "failed",
    code: "child_timeout",
    answer_bytes: null,
    answer_sha256: null,
    cost_total: 0.0101,
    cost_at_least: true,
    message: "the wall-clock timeout passed",
    ...over,
  });

const fusion = (n: number, over: Partial<NotificationDetails> = {}) =>
  details(n, { kind: "fusion", taskId: runId(n), answer_bytes: 1200, cost_total: 0.02, ...over });

describe("the group's notice text", () => {
  it("a head counting the states and the group's spend once of its cap; a line per member; what to call", () => {
    const members = [
      member(details(1, { name: "token refresh path" })),
      member(failed(2, { name: "session cookie checks" })),
      member(fusion(3, { name: "cache question" })),
    ];
    const text = groupNotificationText(GROUP, members);
    expect(text.split("\n")).toEqual([
      `Background group "auth-audit" ${GROUP.id}: 3 members ended (2 completed, 1 failed). Group spend at least $0.0343 of cap $1.00.`,
      `- delegate ${delegateId(1)} (token refresh path) completed, answer 787 bytes, $0.0042`,
      `- delegate ${delegateId(2)} (session cookie checks) failed [child_timeout], at least $0.0101`,
      `- Fusion run ${runId(3)} (cache question) completed, merged answer 1200 bytes, $0.0200`,
      `Call bg_result {"taskId":"${GROUP.id}"} once for every verified answer (each member's id works too); do not poll.`,
    ]);
    // The group's spend is stated once: in the head, not again after the members.
    expect(text.match(/Group spend/g)).toHaveLength(1);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(GROUP_NOTIFICATION_TEXT_MAX_BYTES);
  });

  it("states counted in the order they first occur, singular for one member; no spend sentence when none is known and no cap", () => {
    const one = groupNotificationText(UNCAPPED, [member(details(1, { cost_total: null }))]);
    expect(one.split("\n")[0]).toBe(`Background group "auth-audit" ${UNCAPPED.id}: 1 member ended (1 completed).`);
    // A member whose spend is not known shows none (never a guess).
    expect(one.split("\n")[1]).toBe(`- delegate ${delegateId(1)} (member 1) completed, answer 787 bytes`);
    const mixed = groupNotificationText(UNCAPPED, [
      member(details(1, { state: "cancelled", code: "child_cancelled", answer_bytes: null })),
      member(details(2)),
      member(failed(3)),
      member(details(4, { state: "cancelled", code: "child_cancelled", answer_bytes: null })),
    ]);
    expect(mixed.split("\n")[0]).toBe(
      `Background group "auth-audit" ${UNCAPPED.id}: 4 members ended (2 cancelled, 1 completed, 1 failed). Group spend at least $0.0227.`,
    );
    expect(mixed).toContain(`- delegate ${delegateId(1)} (member 1) cancelled [child_cancelled], $0.0042`);
  });

  it("a completed member without an answer size shows none; a failed one without a code shows none", () => {
    const text = groupNotificationText(UNCAPPED, [
      member(details(1, { answer_bytes: null })),
      member(failed(2, { code: null })),
    ]);
    expect(text).toContain(`- delegate ${delegateId(1)} (member 1) completed, $0.0042`);
    expect(text).toContain(`- delegate ${delegateId(2)} (member 2) failed, at least $0.0101`);
  });

  it("clips a long name to 24 characters (code points, not bytes), the group's name in the head too", () => {
    const long = "セッション管理の確認とトークン更新経路の調査をお願いします";
    const groupName = "認証監査🔐チームの長い長い長い長い長い長い名前です";
    const group = groupFor(SESSION, groupName)!;
    const text = groupNotificationText(group, [member(details(1, { name: long }))]);
    const clipped = `${[...long].slice(0, 23).join("")}…`;
    expect(text).toContain(`(${clipped}) completed`);
    expect(text).not.toContain(long);
    expect([...groupName].length).toBeGreaterThan(24);
    expect(text.split("\n")[0]).toContain(`"${[...groupName].slice(0, 23).join("")}…" ${group.id}:`);
    // A name of exactly 24 characters is shown whole.
    const exact = "a".repeat(24);
    expect(groupNotificationText(UNCAPPED, [member(details(1, { name: exact }))])).toContain(`(${exact}) completed`);
  });

  it("says how many steering messages were never delivered, summed over the members", () => {
    const text = groupNotificationText(GROUP, [
      member(details(1, { steering_undelivered: 2 })),
      member(details(2)),
      member(failed(3, { steering_undelivered: 1 })),
    ]);
    expect(text.split("\n")[0]).toContain(
      " 3 steering messages were not delivered (sent after a delegate's last request).",
    );
    const single = groupNotificationText(GROUP, [member(details(1, { steering_undelivered: 1 }))]);
    expect(single.split("\n")[0]).toContain(" 1 steering message was not delivered (");
    expect(groupNotificationText(GROUP, [member(details(1, { steering_undelivered: 0 }))])).not.toContain("steering");
  });

  it("stays within 2 KiB with 60 members of long CJK names, the rest counted; the head's sentences never dropped", () => {
    const name = "認証フローとセッション管理の調査・トークン更新経路の確認と報告";
    const members = Array.from({ length: 60 }, (_, i) =>
      member(
        i % 3 === 2
          ? failed(i + 1, { name: `${name}${i}`, steering_undelivered: 1 })
          : details(i + 1, { name: `${name}${i}`, steering_undelivered: 1 }),
      ),
    );
    const text = groupNotificationText(GROUP, members);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(GROUP_NOTIFICATION_TEXT_MAX_BYTES);
    const lines = text.split("\n");
    // The head: every member counted, the spend once of its cap, the unread steering.
    expect(lines[0]).toContain(`${GROUP.id}: 60 members ended (40 completed, 20 failed).`);
    expect(lines[0]).toContain(" at least $0.3700 of cap $1.00.");
    expect(lines[0]).toContain(" 60 steering messages ");
    const shown = lines.filter((l) => /^- (delegate|Fusion run) /.test(l));
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThan(60);
    // Oldest first, as given: the first members are the ones listed.
    shown.forEach((line, i) => {
      expect(line).toContain(delegateId(i + 1));
    });
    expect(lines.at(-2)).toBe(`- … and ${60 - shown.length} more`);
    // The request for bg_result stays (its words are pinned below).
    expect(lines.at(-1)).toMatch(/^Call bg_result /);
    expect(lines.at(-1)).toContain(`{"taskId":"${GROUP.id}"}`);
    // As many lines as fit: one more would not.
    const next = `- delegate ${delegateId(shown.length + 1)} (${[...`${name}${shown.length}`].slice(0, 23).join("")}…) `;
    expect(Buffer.byteLength(text) + Buffer.byteLength(next) + 1).toBeGreaterThan(GROUP_NOTIFICATION_TEXT_MAX_BYTES);
  });

  it("every line fits when the members are few, however long their names", () => {
    const members = Array.from({ length: 8 }, (_, i) => member(details(i + 1, { name: "長".repeat(64) })));
    const text = groupNotificationText(GROUP, members);
    expect(text).not.toContain("more");
    expect(text.split("\n").filter((l) => l.startsWith("- delegate "))).toHaveLength(8);
  });

  it("appends each autoDelivered member's own notice after its text, in full, even when its line was cut", () => {
    const answer = `# Findings\n\n${"- the session cookie is checked in src/auth.ts:42\n".repeat(400)}`;
    const carried = `Background delegate ${delegateId(60)} (member 60) completed: verified answer. The verified answer follows (autoDeliver); bg_result is not needed.\n\n${answer}`;
    const file = `Background delegate ${delegateId(2)} (member 2) completed: the answer is in answer.txt (plain text); open it with read.`;
    const members = Array.from({ length: 60 }, (_, i) => {
      const n = i + 1;
      if (n === 2) return member(details(n, { auto_delivered: "artifact" }), file);
      if (n === 60) return member(details(n, { auto_delivered: "answer" }), carried);
      return member(details(n, { name: "長".repeat(40) }));
    });
    const text = groupNotificationText(GROUP, members);
    const own = ownText(text);
    expect(Buffer.byteLength(own)).toBeLessThanOrEqual(GROUP_NOTIFICATION_TEXT_MAX_BYTES);
    expect(own).toMatch(new RegExp(`^- delegate ${delegateId(2)} \\(member 2\\) completed, .* \\(file below\\)$`, "m"));
    expect(own).not.toContain(delegateId(60)); // its line was cut to fit …
    expect(text).toBe(`${own}\n\n${file}\n\n${carried}`); // … its answer was not, nor cut itself
    expect(text.endsWith(answer)).toBe(true);
    // A member autoDeliver carried inline says so on its line.
    const few = groupNotificationText(GROUP, [member(details(1, { auto_delivered: "answer" }), carried)]);
    expect(few).toMatch(
      new RegExp(`^- delegate ${delegateId(1)} \\(member 1\\) completed, .* \\(answer below\\)$`, "m"),
    );
    expect(few.endsWith(`\n\n${carried}`)).toBe(true);
  });

  it("asks for bg_result only for what does not ride along: every answer below, some of them, none, or only failures", () => {
    const own = (members: Parameters<typeof groupNotificationText>[1]) =>
      groupNotificationText(GROUP, members).split("\n\n")[0]!.split("\n").at(-1);
    const carried = (n: number) => member(details(n, { auto_delivered: "answer" }), `own notice of ${n}`);
    expect(own([carried(1), carried(2)])).toBe("The verified answers follow (autoDeliver); bg_result is not needed.");
    expect(own([carried(1), member(details(2))])).toBe(
      `The answers of the members marked below follow; call bg_result {"taskId":"${GROUP.id}"} once for the others; do not poll.`,
    );
    expect(own([member(details(1)), member(details(2))])).toBe(
      `Call bg_result {"taskId":"${GROUP.id}"} once for every verified answer (each member's id works too); do not poll.`,
    );
    expect(own([member(failed(1))])).toBe(
      `Call bg_result {"taskId":"${GROUP.id}"} for the failure details; do not poll.`,
    );
  });

  it("carries nothing after its text when no member was autoDelivered", () => {
    const text = groupNotificationText(GROUP, [member(details(1)), member(details(2))]);
    expect(text).not.toContain("own notice of");
    expect(text).not.toContain("\n\n");
  });
});

describe("the group's notice details", () => {
  it("each member's details, the group's id, name and cap, its spend summed with addSpend", () => {
    const ds = [details(1), fusion(2), details(3, { cost_total: 0.1 })];
    expect(
      groupDetails(
        GROUP,
        ds.map((d) => member(d)),
      ),
    ).toEqual({
      kind: "group",
      taskId: GROUP.id,
      name: "auth-audit",
      members: ds,
      cost_total: 0.1242,
      cost_at_least: false,
      max_cost_usd: 1,
    });
    // A binary floating-point sum reads as what was spent.
    const tenths = [details(1, { cost_total: 0.1 }), details(2, { cost_total: 0.2 })].map((d) => member(d));
    expect(groupDetails(UNCAPPED, tenths)).toMatchObject({ cost_total: 0.3, cost_at_least: false, max_cost_usd: null });
  });

  it("a floor when a member's figure is one, or is not known; null (and no floor) when none is known", () => {
    const floor = groupDetails(GROUP, [member(details(1)), member(failed(2))]);
    expect(floor).toMatchObject({ cost_total: 0.0143, cost_at_least: true });
    const unknown = groupDetails(GROUP, [member(details(1)), member(details(2, { cost_total: null }))]);
    expect(unknown).toMatchObject({ cost_total: 0.0042, cost_at_least: true });
    const none = groupDetails(GROUP, [
      member(details(1, { cost_total: null })),
      member(details(2, { cost_total: null })),
    ]);
    expect(none).toMatchObject({ cost_total: null, cost_at_least: false });
    // A figure not known is unknown, never a floor of nothing.
    const unknownFloor = groupDetails(GROUP, [member(details(1, { cost_total: null, cost_at_least: true }))]);
    expect(unknownFloor).toMatchObject({ cost_total: null, cost_at_least: false });
  });

  it("says a capped group's spend is not reported when no member's is known (never 'spend spend')", () => {
    const text = groupNotificationText(GROUP, [member(details(1, { cost_total: null }))]);
    expect(text.split("\n")[0]).toContain(" Group spend not reported (cap $1.00).");
    expect(text).not.toContain("spend spend");
    expect(groupNotificationText(UNCAPPED, [member(details(1, { cost_total: null }))])).not.toContain("Group spend");
  });

  it("the text says the figure the details carry", () => {
    const members = [member(details(1)), member(details(2, { cost_total: null }))];
    expect(groupNotificationText(UNCAPPED, members).split("\n")[0]).toContain(" Group spend at least $0.0042.");
    expect(groupNotificationText(GROUP, [member(failed(1, { cost_total: 0, cost_at_least: true }))])).toContain(
      "Group spend no request finished, cap $1.00.",
    );
  });
});

/** A member's notice as the session link holds it: composes to `d`, records when it was composed. */
function heldNotice(d: NotificationDetails, wanted: boolean, trigger: boolean, composed: string[]): Notice {
  return {
    id: d.taskId,
    dir: d.artifact_dir,
    sessionId: SESSION,
    wanted,
    trigger,
    group: GROUP,
    compose: async () => {
      composed.push(d.taskId);
      return { content: `own notice of ${d.taskId}`, details: d };
    },
    markNotified: () => {},
  };
}

describe("groupNotice", () => {
  it("wanted when a member wants it, a turn when a member lets it; composed from each member in order", async () => {
    const composed: string[] = [];
    const ds = [details(1), failed(2), fusion(3)];
    const n = groupNotice(GROUP, [
      heldNotice(ds[0]!, false, false, composed),
      heldNotice(ds[1]!, true, false, composed),
      heldNotice(ds[2]!, false, true, composed),
    ]);
    expect(n).toMatchObject({ group: GROUP, sessionId: SESSION, wanted: true, trigger: true });
    expect(composed).toEqual([]); // nothing is composed before the link decides to send it
    const { content, details: d } = await n.compose();
    expect(composed).toEqual([delegateId(1), delegateId(2), runId(3)]);
    expect(d).toEqual(
      groupDetails(
        GROUP,
        ds.map((x) => member(x)),
      ),
    );
    expect(content).toBe(
      groupNotificationText(
        GROUP,
        ds.map((x) => member(x)),
      ),
    );
    const quiet = groupNotice(GROUP, [heldNotice(ds[0]!, false, false, []), heldNotice(ds[1]!, false, false, [])]);
    expect(quiet).toMatchObject({ wanted: false, trigger: false });
  });
});
