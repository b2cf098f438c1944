/**
 * A group as a person sees it in Pi's interactive terminal (docs/tools/bg_delegate.md, "Groups"):
 * the footer's one entry for the running members, the group's one notice with a line per member, and
 * bg_result on the group id as one head line and a line per member, at 80 columns, with no
 * model-facing wording.
 */
import { describe, expect, it } from "vitest";
import { gate, isChildRequest, until } from "../helpers/drive.ts";
import { useModelServer } from "../helpers/pi-parent.ts";
import { withInteractivePi } from "../helpers/tui-run.ts";

const server = useModelServer();

describe("a group in Pi's interactive terminal", () => {
  it("draws the footer entry, the one notice and the group's result within 80 columns", async () => {
    const held = gate();
    let childAsked = 0;
    server.setHandler(async (req) => {
      if (isChildRequest(req)) {
        childAsked++;
        await held.wait;
        const text = req.messages.map((m) => m.text).join("\n");
        return {
          text: text.includes("TUI-SECOND") ? "The retry loop is in retry.ts." : "The cache lives in cache.ts.",
        };
      }
      const last = req.messages.at(-1);
      if (last?.role === "user" && last.text === "go") {
        return {
          toolCalls: [
            { name: "bg_delegate", args: { name: "find cache", prompt: "Find it. TUI-FIRST", group: "fan-out" } },
            { name: "bg_delegate", args: { name: "find retry", prompt: "Find it. TUI-SECOND", group: "fan-out" } },
          ],
        };
      }
      const notice = last?.role === "user" ? /Background group "fan-out" (g[0-9a-f]{32})/.exec(last.text) : null;
      if (notice) return { toolCalls: [{ name: "bg_result", args: { taskId: notice[1] } }] };
      return { text: last?.role === "tool" ? "Noted." : "Nothing else to do." };
    });
    await withInteractivePi(server, { label: "tui-group", cols: 80, rows: 50, held }, async (tty) => {
      await tty.waitFor(/▸ started d[0-9a-f]{8}[\s\S]*▸ started d[0-9a-f]{8}/, "both receipts");
      await until(() => childAsked === 2, "both children's requests");
      await tty.waitFor(/fan-out:? 2\/2/, "the footer's group entry");
      held.release();
      await tty.waitFor(/◆ group fan-out g[0-9a-f]{8} · 2 members ended/, "the group's notice");
      await tty.waitFor(/◆ group fan-out g[0-9a-f]{8} · 2 members: 2 completed/, "the group's result");
      const all = tty.history().join("\n");
      expect(all.match(/◆ group fan-out g[0-9a-f]{8} · 2 members ended/g)).toHaveLength(1);
      expect(all).toMatch(/● delegate d[0-9a-f]{8} find cache completed/);
      expect(all).toMatch(/● delegate d[0-9a-f]{8} find retry completed/);
      // Model-facing wording stays out of the person's view.
      expect(all).not.toMatch(/do not poll|sha256|Call bg_result/);
      for (const line of tty.history()) expect(line.length).toBeLessThanOrEqual(80);
      if (process.env.SHOW_SCREEN === "1") console.log(all);
    });
  });
});
