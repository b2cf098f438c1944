/**
 * Nothing from a tree or a model reaches the person's terminal raw (docs/subsystems/retrieval.md,
 * "What a person sees"): Pi's interactive mode in a real pseudo-terminal, a repository shipping task
 * trees whose names hold OSC 52 (clipboard write), OSC 0 (window title) and CSI 2J (erase the
 * screen), and a running delegate whose model-given name holds bidi overrides and zero-width
 * characters. The table, the cancel picker and the footer show every such character escaped, and
 * the terminal acts on none of them (no title, no clipboard write, no erase from a name).
 */
import { describe, expect, it } from "vitest";
import { gate } from "../helpers/drive.ts";
import { useModelServer } from "../helpers/pi-parent.ts";
import { writeCompletedTask } from "../helpers/task-tree.ts";
import { driveHeldDelegates, withInteractivePi } from "../helpers/tui-run.ts";

const server = useModelServer();

/** Shipped names: each one sequence a terminal would act on. */
const SHIPPED = ["t1 \u001b]52;c;aGk=\u0007", "t2 \u001b]0;PWNED\u0007", "t3 \u001b[2J"];
/** How each is drawn: the sequence written out in printable characters. */
const SHIPPED_SHOWN = ["t1 \\x1b]52;c;aGk=\\x07", "t2 \\x1b]0;PWNED\\x07", "t3 \\x1b[2J"];
/** A model-given name: a right-to-left override, a pop, and a zero-width space (control characters are refused). */
const BIDI_NAME = "cv\u202eexe.txt\u202c\u200b";
const BIDI_SHOWN = "cv\\u202eexe.txt\\u202c\\u200b";

describe("names a person sees", () => {
  it("are escaped in /delegates, its cancel picker and the footer, at 80 columns, and nothing is acted on", async () => {
    const held = gate();
    driveHeldDelegates(server, held, [BIDI_NAME], "Started it.");
    const prepare = (cwd: string) => {
      for (const name of SHIPPED) writeCompletedTask(cwd, { name, session: "shipped-session" });
    };
    await withInteractivePi(server, { label: "tui-escape", cols: 80, rows: 40, prepare, held }, async (tty) => {
      await tty.waitFor(/Started it\./, "the parent's reply to the receipt");
      const footer = `⧗ ${BIDI_SHOWN}`.replace(/[\\.]/g, "\\$&");
      await tty.waitFor(new RegExp(footer), "the running delegate's name in the footer, escaped");
      tty.type("/delegates\r");
      await tty.waitFor(/ID\s+STATE\s+ROUTE\s+RUN TIME\s+COST\s+SIZE\s+NAME/, "the /delegates table");
      await tty.waitFor(/\/delegates cancel <id> stops a running task/, "the whole table");
      const table = tty.screen();
      // Each shipped name's row starts with its sequence written out (the name column may cut the rest).
      for (const shown of SHIPPED_SHOWN) {
        const start = shown.slice(0, 7);
        expect(
          table.some((line) => /completed/.test(line) && line.includes(start)),
          table.join("\n"),
        ).toBe(true);
      }
      expect(table.some((line) => /running/.test(line) && line.includes("cv\\u202"))).toBe(true);
      for (const line of table) expect(line.length).toBeLessThanOrEqual(80);

      tty.type("/delegates cancel\r");
      await tty.waitFor(/Cancel which delegate\?/, "the pick list of running tasks");
      await tty.waitFor(
        new RegExp(`d[0-9a-f]{8} {2}${BIDI_SHOWN.replace(/[\\.]/g, "\\$&")}`),
        "the running task, escaped",
      );
      tty.type("\u001b");

      // Nothing of a name reached the terminal as what it is.
      const raw = tty.raw();
      for (const name of [...SHIPPED, BIDI_NAME]) expect(raw).not.toContain(name);
      expect(raw).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200b]/);
      const actions = tty.actions();
      expect(actions.filter((a) => a.startsWith("clipboard"))).toEqual([]);
      expect(actions.filter((a) => a.includes("PWNED"))).toEqual([]);
      expect(raw).not.toContain("t3 \u001b[2J");
      for (const shown of SHIPPED_SHOWN)
        expect(tty.history().join("\n")).not.toContain(shown.replace(/\\x1b/, "\u001b"));
    });
  });
});
