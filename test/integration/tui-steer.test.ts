/**
 * bg_steer as a person sees it in Pi's interactive terminal (docs/tools/bg_steer.md, "What a person
 * sees"): the call line with the message's head, the queued line, and the answer's note that it was
 * steered, at 80 columns, with no model-facing wording.
 */
import { describe, expect, it } from "vitest";
import { gate, isChildRequest, until } from "../helpers/drive.ts";
import { useModelServer } from "../helpers/pi-parent.ts";
import { withInteractivePi } from "../helpers/tui-run.ts";

const server = useModelServer();

describe("bg_steer in Pi's interactive terminal", () => {
  it("draws the call, the queued message and the steered answer within 80 columns", async () => {
    const held = gate();
    let taskId = "";
    let childAsked = 0;
    server.setHandler(async (req) => {
      if (isChildRequest(req)) {
        childAsked++;
        if (req.messages.some((m) => m.role === "user" && m.text.includes("[Steering message 1"))) {
          return { text: "Steered: the v2 handler drops the header." };
        }
        if (req.messages.some((m) => m.role === "tool")) return { text: "Not steered." };
        await held.wait;
        return { toolCalls: [{ name: "ls", args: { path: "." } }] };
      }
      const last = req.messages.at(-1);
      if (last?.role === "user" && last.text === "go") {
        return { toolCalls: [{ name: "bg_delegate", args: { name: "find the bug", prompt: "Find the bug." } }] };
      }
      if (last?.role === "user" && last.text === "steer") {
        return {
          toolCalls: [
            {
              name: "bg_steer",
              args: {
                taskId,
                message: "The bug is in the v2 API handler, not in the client; skip the tests folder entirely.",
              },
            },
          ],
        };
      }
      const started = last?.role === "tool" ? /Delegate (d[0-9a-f]{32}) started/.exec(last.text) : null;
      if (started) taskId = started[1]!;
      const notice =
        last?.role === "user" ? /Background delegate (d[0-9a-f]{32}) \(find the bug\) completed/.exec(last.text) : null;
      if (notice) return { toolCalls: [{ name: "bg_result", args: { taskId: notice[1] } }] };
      return { text: last?.role === "tool" ? "Noted." : "Nothing else to do." };
    });
    await withInteractivePi(server, { label: "tui-steer", cols: 80, rows: 40, held }, async (tty) => {
      await tty.waitFor(/▸ started d[0-9a-f]{8}/, "the receipt");
      await tty.waitFor(/Noted\./, "the launch turn's end");
      await until(() => childAsked === 1, "the child's first request");
      tty.type("steer\r");
      await tty.waitFor(/✓ steering 1 queued for d[0-9a-f]{8} find the bug/, "the queued line");
      const shown = tty.history().join("\n");
      // One line each at 80 columns: the short id, the message's head; the queued line with what is left.
      expect(shown).toMatch(/^ bg_steer d[0-9a-f]{8} “The bug is in the v2 API handler, not in the cl…”$/m);
      expect(shown).toMatch(/^ ✓ steering 1 queued for d[0-9a-f]{8} find the bug · 7 more allowed$/m);
      held.release();
      await tty.waitFor(/steered by\s+1 message before it answered/, "the steered answer");
      expect(tty.history().join("\n")).toMatch(
        /✓ find the bug · answer \d+ B, verified · \d+s · 2 turns · 1 tool call/,
      );
      const all = tty.history().join("\n");
      expect(all).not.toMatch(/If it makes no further request|previousTaskId|sha256/);
      for (const line of tty.history()) expect(line.length).toBeLessThanOrEqual(80);
      if (process.env.SHOW_SCREEN === "1") console.log(tty.history().join("\n"));
    });
  });
});
