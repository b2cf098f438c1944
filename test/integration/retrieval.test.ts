import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { packAnswer } from "../../src/core/answer.ts";
import { sha256Hex } from "../../src/core/hash.ts";
import type { DelegateResultFile } from "../../src/core/types.ts";
import { bgResultVia, delegateVia, notifications, toolResults, until } from "../helpers/drive.ts";
import { drivenSdkParent, taskDirOf } from "../helpers/held-project.ts";
import { script, useModelServer } from "../helpers/pi-parent.ts";
import { recommit } from "../helpers/result-fixtures.ts";

const server = useModelServer();

const LINE = `${"The cache is invalidated in src/cache.ts:42 when the session reloads.".padEnd(99, ".")}\n`;

/** A fresh agent dir and project (`label`), the parent driver installed, and an SDK parent on them. */
describe("bg_result against real children", () => {
  it("delivers large answers as artifacts, refuses inline, and rejects every tampered verification step", async () => {
    const { cwd, parent } = await drivenSdkParent(server, "proj");
    try {
      const id = await delegateVia(parent, {
        name: "large answer",
        prompt: `Report everything. ${script({ text: LINE, repeat: 600 })}`,
      });
      await until(() => notifications(parent.messages()).length === 1, "the notification");
      await parent.waitForIdle();
      const expected = LINE.repeat(600);
      const note = notifications(parent.messages())[0] as { content: string; details: Record<string, unknown> };
      expect(Buffer.byteLength(note.content)).toBeLessThanOrEqual(500);
      expect(note.content).toContain(sha256Hex(expected));
      expect(note.details.answer_bytes).toBe(Buffer.byteLength(expected));

      // Default delivery of a 60,000-byte answer is an artifact reference with a verified text copy.
      const byDefault = await bgResultVia(parent, { taskId: id });
      expect(byDefault.isError).toBe(false);
      expect(byDefault.details?.delivery).toBe("artifact");
      const dir = taskDirOf(cwd, parent, id);
      expect(readFileSync(join(dir, "answer.txt"), "utf8")).toBe(expected);
      expect(byDefault.text).toContain(join(dir, "answer.txt"));
      expect(byDefault.text).not.toContain(LINE.trim());

      const inline = await bgResultVia(parent, { taskId: id, delivery: "inline" });
      expect(inline.isError).toBe(true);
      expect(inline.text).toMatch(/^\[result_too_large_for_inline\]/);
      expect(inline.text).toContain(join(dir, "result.json"));
      expect(inline.text).not.toContain(LINE.trim());

      // Each verification step, failing on a tampered result.json, gives its code and no answer bytes.
      const resultPath = join(dir, "result.json");
      const original = readFileSync(resultPath);
      const result = JSON.parse(original.toString("utf8")) as DelegateResultFile;
      const badUtf8 = packAnswer(Buffer.from([0x41, 0xff, 0x42]));
      const cases: [string, Buffer][] = [
        ["child_result_invalid", Buffer.concat([original, Buffer.from(" ")])],
        [
          "child_result_invalid",
          recommit(result, (d) => {
            d.task_id = `d${"0".repeat(32)}`;
          }),
        ],
        [
          "child_result_invalid",
          recommit(result, (d) => {
            d.launch_nonce = "0".repeat(64);
          }),
        ],
        [
          "seed_hash_mismatch",
          recommit(result, (d) => {
            d.seed_sha256 = "0".repeat(64);
          }),
        ],
        [
          "route_mismatch",
          recommit(result, (d) => {
            d.route = { provider: "fake", model: "big-model" };
          }),
        ],
        [
          "route_attestation_missing",
          recommit(result, (d) => {
            d.route_attestations = [];
          }),
        ],
        [
          "route_mismatch",
          recommit(result, (d) => {
            d.route_attestations[0]!.model = "big-model";
          }),
        ],
        [
          "child_result_encoding_invalid",
          recommit(result, (d) => {
            (d.answer as { encoding: string }).encoding = "latin1";
          }),
        ],
        [
          "child_result_encoding_invalid",
          recommit(result, (d) => {
            d.answer.blocks[0]!.data_base64 += "=";
          }),
        ],
        [
          "answer_hash_mismatch",
          recommit(result, (d) => {
            d.answer.blocks[0]!.sha256 = "0".repeat(64);
          }),
        ],
        [
          "answer_hash_mismatch",
          recommit(result, (d) => {
            d.answer.sha256 = "0".repeat(64);
          }),
        ],
        [
          "child_result_encoding_invalid",
          recommit(result, (d) => {
            d.answer = badUtf8;
          }),
        ],
      ];
      for (const [code, bytes] of cases) {
        writeFileSync(resultPath, bytes);
        const r = await bgResultVia(parent, { taskId: id, delivery: "artifact" });
        expect(r.isError, `${code}: ${r.text}`).toBe(true);
        expect(r.text.startsWith(`[${code}]`), `${code}: ${r.text}`).toBe(true);
        expect(r.text).toContain("Child process created: yes");
        expect(r.text).not.toContain(LINE.trim());
      }
      writeFileSync(resultPath, original);
      expect((await bgResultVia(parent, { taskId: id, delivery: "artifact" })).isError).toBe(false);

      // Unknown, then ambiguous once a second task shares the prefix; a removed task dir is result_unavailable.
      const unknown = await bgResultVia(parent, { taskId: "dffff" });
      expect(unknown.text).toMatch(/^\[task_unknown\]/);
      const second = await delegateVia(parent, { name: "second", prompt: `Answer. ${script({ text: "small" })}` });
      await until(() => notifications(parent.messages()).length === 2, "the second notification");
      const ambiguous = await bgResultVia(parent, { taskId: "d" });
      expect(ambiguous.text).toMatch(/^\[task_ambiguous\]/);
      expect(ambiguous.text).toContain(id);
      expect(ambiguous.text).toContain(second);
      rmSync(taskDirOf(cwd, parent, second), { recursive: true });
      const gone = await bgResultVia(parent, { taskId: second });
      expect(gone.text).toMatch(/^\[result_unavailable\]/);
    } finally {
      await parent.dispose();
    }
  });

  it("a task tree where answer.txt cannot be written still delivers the verified answer, from result.json", async () => {
    const { cwd, parent } = await drivenSdkParent(server, "proj-readonly");
    let id = "";
    const dir = () => taskDirOf(cwd, parent, id);
    try {
      id = await delegateVia(parent, {
        name: "read-only tree",
        prompt: `Report everything. ${script({ text: LINE, repeat: 600 })}`,
      });
      await until(() => notifications(parent.messages()).length === 1, "the notification");
      await parent.waitForIdle();
      // The tree is made read-only; as root, permissions do not stop a write, so answer.txt is also
      // taken by a directory, which no rename can replace.
      mkdirSync(join(dir(), "answer.txt"));
      chmodSync(dir(), 0o500);
      const before = readdirSync(dir()).sort();

      const r = await bgResultVia(parent, { taskId: id });
      expect(r.isError, r.text).toBe(false);
      expect(r.details?.state).toBe("completed");
      expect(r.details?.delivery).toBe("artifact");
      expect(r.details?.answer).toMatchObject({
        text_path: null,
        result_path: join(dir(), "result.json"),
        text_unwritable: expect.stringMatching(/^answer\.txt cannot be written \(E[A-Z]+\)$/),
      });
      expect(r.text).toContain(`The complete verified answer is in ${join(dir(), "result.json")}`);
      expect(r.text).toContain(`pi-bg-delegate result ${id} --out <file>`);
      expect(r.text).toContain(sha256Hex(LINE.repeat(600)));
      expect(r.text).not.toContain(LINE.trim());
      // Nothing was left behind: no temp file, no partial copy. The records bg_result adds are
      // answer-read.json and usage-claim.json (each written whole or not at all, as root can write
      // into a 0500 dir; prune reads the first, Pi's books the second: src/store/usage-claim.ts).
      expect(
        readdirSync(dir())
          .sort()
          .filter((name) => name !== "answer-read.json" && name !== "usage-claim.json"),
      ).toEqual(before);
    } finally {
      if (id !== "") chmodSync(dir(), 0o700);
      await parent.dispose();
    }
  });

  it("autoDeliver carries verified answers; notifyOnCompletion false sends nothing", async () => {
    const { cwd, parent } = await drivenSdkParent(server, "proj");
    try {
      await delegateVia(parent, {
        name: "small auto",
        autoDeliver: "when_small",
        prompt: `Answer briefly. ${script({ text: "AUTO-SMALL-ANSWER" })}`,
      });
      await until(() => notifications(parent.messages()).length === 1, "when_small notification");
      const big = await delegateVia(parent, {
        name: "big auto",
        autoDeliver: "always",
        prompt: `Report. ${script({ text: LINE, repeat: 600 })}`,
      });
      await until(() => notifications(parent.messages()).length === 2, "always notification");
      const silent = await delegateVia(parent, {
        name: "silent",
        notifyOnCompletion: false,
        prompt: `Answer. ${script({ text: "SILENT-ANSWER" })}`,
      });
      const [small, large] = notifications(parent.messages()) as {
        content: string;
        details: Record<string, unknown>;
      }[];
      expect(small?.content).toContain("AUTO-SMALL-ANSWER");
      expect(small?.details.auto_delivered).toBe("answer");
      expect(large?.details.auto_delivered).toBe("artifact");
      expect(large?.content).toContain(relative(cwd, join(taskDirOf(cwd, parent, big), "answer.txt")));
      expect(large?.content).not.toContain(LINE.trim());
      // The silent task ends without a notification; bg_result still returns it.
      await until(() => {
        const m = JSON.parse(readFileSync(join(taskDirOf(cwd, parent, silent), "manifest.json"), "utf8"));
        return m.state !== "running";
      }, "the silent task to end");
      const r = await bgResultVia(parent, { taskId: silent });
      expect(r.text).toContain("SILENT-ANSWER");
      expect(notifications(parent.messages())).toHaveLength(2);
      expect(toolResults(parent.messages(), "bg_result")).toHaveLength(1);
      expect(existsSync(join(taskDirOf(cwd, parent, silent), "outcome.json"))).toBe(true);
    } finally {
      await parent.dispose();
    }
  });
});
