/**
 * A screen that fits (docs/subsystems/retrieval.md, "`/delegates` and the footer"): three running
 * delegates in the footer and a project with 40 ended tasks in `/delegates`, read off a real
 * terminal at 80 and 160 columns (Pi's interactive mode, real children held by the scripted model).
 */
import { visibleWidth } from "@mariozechner/pi-tui";
import { describe, expect, it } from "vitest";
import { gate } from "../helpers/drive.ts";
import { useModelServer } from "../helpers/pi-parent.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { driveHeldDelegates, withInteractivePi } from "../helpers/tui-run.ts";

const server = useModelServer();

const NAMES = ["first long-named investigation of the cache", "second audit of the API", "third one"];
const HISTORY = 40;
const ROWS = 40;

describe("a screen that fits", () => {
  for (const cols of [80, 160] as const) {
    it(`at ${cols} columns: three running delegates in the footer, 40 ended tasks in /delegates`, async () => {
      const held = gate();
      driveHeldDelegates(server, held, NAMES, "Started them.");
      const prepare = (cwd: string) => {
        for (let i = 0; i < HISTORY; i++) {
          writeCompletedTask(cwd, { session: "earlier-session", name: `history task ${String(i).padStart(2, "0")}` });
        }
      };
      await withInteractivePi(server, { label: "tui-fit", cols, rows: ROWS, prepare, held }, async (tty) => {
        await tty.waitFor(/Started them\./, "the parent's reply to the receipts");
        // Every running task is on the footer's one line, or counted; entries are separated; the spend is there.
        await tty.waitFor(/⧗ third one \d+s/, "the newest running delegate in the footer");
        const footer = [...tty.screen()].reverse().find((line) => /delegate(s:| spend:) /.test(line)) ?? "";
        if (process.env.PI_BGD_SHOW_SCREEN) console.log(tty.screen().join("\n"));
        expect(visibleWidth(footer)).toBeLessThanOrEqual(cols);
        expect(footer).toContain(" │ ");
        expect(footer).toMatch(/delegate(s:| spend:) /);
        const shown = (footer.match(/⧗/g) ?? []).length;
        if (shown < NAMES.length) expect(footer).toContain(`+${NAMES.length - shown} more running`);
        if (cols === 80) expect(footer).not.toContain("tool calls");
        else expect(shown).toBe(NAMES.length);

        tty.type("/delegates\r");
        await tty.waitFor(/tasks 1–\d+ of 43, newest first · \/delegates more shows older ones/, "the count of rows");
        const table = tty.screen();
        if (process.env.PI_BGD_SHOW_SCREEN) console.log(table.join("\n"));
        for (const line of table) expect(visibleWidth(line)).toBeLessThanOrEqual(cols);
        // The newest rows first: the three running ones are shown, the oldest history is not.
        const running = table.filter((line) => /^ ?d[0-9a-f]{8}\s+running\s/.test(line));
        expect(running).toHaveLength(NAMES.length);
        expect(table.join("\n")).not.toContain("history task 00");
        const rows = table.filter((line) => /^ ?d[0-9a-f]{8}\s/.test(line));
        expect(rows.length).toBeLessThan(HISTORY + NAMES.length);
        expect(table.join("\n")).toContain(`tasks 1–${rows.length} of 43`);
        // No failure code or word in SIZE: a completed row's size is a byte count.
        expect(table.join("\n")).toMatch(/completed\s+\S+\s+\S*\s*\$\d+\.\d{4}\s+\d+ B\s+history task/);

        // Older rows a page at a time, to the oldest.
        for (let shown = rows.length; shown < HISTORY + NAMES.length; shown += rows.length) {
          tty.type("/delegates more\r");
          await tty.waitFor(new RegExp(`tasks ${shown + 1}–`), `the page from task ${shown + 1}`);
        }
        await tty.waitFor(/history task 00[\s\S]*of 43, the oldest · \/delegates shows the newest/, "the oldest page");
        for (const line of tty.screen()) expect(visibleWidth(line)).toBeLessThanOrEqual(cols);
      });
    });
  }
});
