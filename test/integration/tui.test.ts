/**
 * What a person sees: Pi's interactive mode in a real pseudo-terminal with this package loaded, a
 * real delegate child, the scripted model. Delegate → notification → bg_result → /delegates, read
 * off the screen at 160 and 80 columns.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { call, gate, isChildRequest, until } from "../helpers/drive.ts";
import { directiveOf, FUSION_MODELS, fusionRoute, installFusionDriver } from "../helpers/fusion-run-driver.ts";
import { FAKE_MODELS, HOST, script, useModelServer } from "../helpers/pi-parent.ts";
import { driveHeldDelegates, withInteractivePi } from "../helpers/tui-run.ts";

const server = useModelServer();

const ANSWER = [
  "# Auth flow",
  "",
  "The session cookie is checked in **two** places:",
  "",
  "| file | line |",
  "| --- | --- |",
  "| src/auth.ts | 42 |",
  "| src/api.ts | 7 |",
  "",
  ...Array.from({ length: 12 }, (_, i) => `- finding ${i + 1}`),
].join("\n");

/** The parent delegates on "go", fetches the answer when notified, and otherwise just replies. */
function driveParent(): void {
  server.setHandler((req) => {
    if (isChildRequest(req)) return undefined;
    const last = req.messages.at(-1);
    if (last?.role === "user" && last.text === "go") {
      return {
        toolCalls: [
          { name: "bg_delegate", args: { name: "map auth", prompt: `Map the auth flow. ${script({ text: ANSWER })}` } },
        ],
      };
    }
    const notice =
      last?.role === "user" ? /Background delegate (d[0-9a-f]{32}) \(map auth\) completed/.exec(last.text) : null;
    if (notice) return { toolCalls: [{ name: "bg_result", args: { taskId: notice[1] } }] };
    return { text: last?.role === "tool" ? "Noted." : "Nothing else to do." };
  });
}

describe("Pi's interactive terminal", () => {
  for (const [cols, rows] of [
    [160, 48],
    [80, 40],
  ] as const) {
    it(`shows the answer's first lines, the cost and the /delegates table at ${cols} columns`, async () => {
      const models = [
        {
          id: FAKE_MODELS.default,
          contextWindow: 200_000,
          maxTokens: 8192,
          cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
        },
      ];
      driveParent();
      await withInteractivePi(server, { label: "tui", cols, rows, models }, async (tty) => {
        // The whole bg_result block (its last line is the expand hint), not just its first line.
        await tty.waitFor(
          /✓ map auth · answer \d+ B, verified[\s\S]*ctrl\+o to expand\)/,
          "the verified answer on screen",
        );
        const shown = tty.history().join("\n");
        // The receipt and the notification in words: short id, name, run time, cost.
        expect(shown).toMatch(/▸ started d[0-9a-f]{8} on fake\/fake-model/);
        expect(shown).toMatch(/● delegate d[0-9a-f]{8} map auth completed in \d+s · \$\d+\.\d{4}/);
        // The answer's first lines rendered as markdown, and Pi's own expand hint.
        expect(shown).toMatch(/^ *Auth flow *$/m);
        expect(shown).not.toContain("# Auth flow");
        expect(shown).toMatch(/src\/auth\.ts\s*│\s*42/);
        expect(shown).toMatch(/\.\.\. \(\d+ more lines, ctrl\+o to expand\)/);
        expect(shown).not.toContain("finding 12");
        // The cost on the bg_result line; model-facing wording stays out.
        expect(shown).toMatch(/✓ map auth · answer \d+ B, verified · \d+s · 1 turn · 0 tool calls · \$\d+\.\d{4}/);
        expect(shown).not.toMatch(/sha256|Do not poll|B\/token|pinned \(/);

        // The footer says how much of the delegates' spend Pi's own $ counts: on Pi 1.x the retrieved
        // task's, which bg_result's result carried; on 0.73.1 none (its tool results carry no usage).
        await tty.waitFor(
          HOST.version.startsWith("0.")
            ? /delegate spend: \$\d+\.\d{4} \(not in the session's \$\)/
            : /delegate spend: \$(\d+\.\d{4}) · \$\1 counted in the session's \$/,
          "the delegate spend",
        );

        tty.type("/delegates\r");
        await tty.waitFor(/ID\s+STATE\s+ROUTE\s+RUN TIME\s+COST\s+SIZE\s+NAME/, "the /delegates table");
        tty.type("thanks\r");
        await tty.waitFor(/Nothing else to do\./, "the reply to the next message");
        // The table survives the next message: it is still on screen.
        const screen = tty.screen().join("\n");
        expect(screen).toMatch(/ID\s+STATE\s+ROUTE\s+RUN TIME\s+COST\s+SIZE\s+NAME/);
        expect(screen).toMatch(/d[0-9a-f]{8}\s+completed\s+fake\/fake-model\s+\d+s\s+\$\d+\.\d{4}\s+\d+ B\s+map auth/);
        for (const line of tty.screen()) expect(line.length).toBeLessThanOrEqual(cols);

        // A wrong id is said plainly, without the model's failure block.
        tty.type("/delegates cancel zzz\r");
        await tty.waitFor(/No task matches "zzz"\. \/delegates lists this project's tasks\./, "the plain error");
        expect(tty.history().join("\n")).not.toMatch(/Child process created|Fusion run/);
        // A word /delegates does not know is named, with what it does know.
        tty.type("/delegates foo\r");
        await tty.waitFor(/\/delegates has no "foo"\. Usage: \/delegates \[list \| more/, "the unknown word named");
      });
    });
  }

  it("offers cancel on a running row; the person's cancel ends it without starting a model turn", async () => {
    const held = gate();
    driveHeldDelegates(server, held, ["slow audit"], "Started it.", "too late");
    const parentRequests = () => server.requests.filter((r) => !isChildRequest(r)).length;
    await withInteractivePi(server, { label: "tui-cancel", cols: 120, rows: 40, held }, async (tty, { cwd }) => {
      await tty.waitFor(/Started it\./, "the parent's reply to the receipt");
      await tty.waitFor(/⧗ slow audit \d+s · 0 turns · 0 tool calls/, "the running delegate in the footer");
      tty.type("/delegates\r");
      await tty.waitFor(
        /d[0-9a-f]{8}\s+running\s+fake\/fake-model[\s\S]*\/delegates cancel <id> stops a running task/,
        "the running row",
      );
      const before = parentRequests();
      tty.type("/delegates cancel\r");
      await tty.waitFor(/Cancel which delegate\?[\s\S]*d[0-9a-f]{8} {2}slow audit/, "the pick list of running tasks");
      tty.type("\r");
      await tty.waitFor(/■ delegate d[0-9a-f]{8} slow audit cancelled after \d+s/, "the cancel notice");
      await tty.waitFor(/d[0-9a-f]{8}\s+cancelled\s+fake\/fake-model/, "the table row updated");
      // The notice landed without a model turn; the next message carries it to the model.
      expect(parentRequests()).toBe(before);
      tty.type("anything new?\r");
      await tty.waitFor(/Nothing else to do\./, "the reply to the next message");
      const last = server.requests.filter((r) => !isChildRequest(r)).at(-1);
      expect(
        last?.messages.some(
          (m) => m.role === "user" && /Background delegate d[0-9a-f]{32} \(slow audit\) cancelled/.test(m.text),
        ),
      ).toBe(true);

      // /delegates prune: a dry run first, then the ended (and notified) tree goes, said plainly.
      const taskDirs = () => readdirSync(join(cwd, ".pi/delegate")).filter((name) => !name.startsWith(".")).length;
      tty.type("/delegates prune --older-than 0 --dry-run\r");
      await tty.waitFor(
        /Would remove 1 task tree, \d+\.\d KiB \(dry run: nothing removed\)\. d[0-9a-f]{8}/,
        "the dry run",
      );
      expect(taskDirs()).toBe(1);
      tty.type("/delegates prune --older-than 0\r");
      await tty.waitFor(/Removed 1 task tree, \d+\.\d KiB freed\. d[0-9a-f]{8} \d+\.\d KiB/, "the prune");
      expect(taskDirs()).toBe(0);
      expect(parentRequests()).toBe(before + 1);
    });
  });

  it("a running follow-up's bg_result names the task it follows and its place in the chain", async () => {
    const held = gate();
    let firstId: string | undefined;
    server.setHandler(async (req) => {
      const last = req.messages.at(-1);
      if (isChildRequest(req)) {
        if (req.messages.some((m) => m.role === "user" && m.text.includes("And the refresh path?"))) {
          await held.wait;
          return { text: "The refresh path is in src/api.ts." };
        }
        return undefined; // the first child answers from its script
      }
      if (last?.role === "user" && last.text === "go") {
        return {
          toolCalls: [
            {
              name: "bg_delegate",
              args: { name: "map auth", prompt: `Map the auth flow. ${script({ text: ANSWER })}` },
            },
          ],
        };
      }
      const notice =
        last?.role === "user" ? /Background delegate (d[0-9a-f]{32}) \(map auth\) completed/.exec(last.text) : null;
      if (notice) {
        firstId = notice[1];
        return {
          toolCalls: [
            {
              name: "bg_delegate",
              args: { name: "refresh path", prompt: "And the refresh path?", previousTaskId: firstId },
            },
          ],
        };
      }
      const started =
        last?.role === "tool" && firstId !== undefined
          ? [...last.text.matchAll(/d[0-9a-f]{32}/g)].map((m) => m[0]).find((id) => id !== firstId)
          : undefined;
      if (started !== undefined && /follow-up/.test(last?.text ?? "")) {
        return { toolCalls: [{ name: "bg_result", args: { taskId: started } }] };
      }
      return { text: last?.role === "tool" ? "Noted." : "Nothing else to do." };
    });
    await withInteractivePi(server, { label: "tui-follow-up", cols: 160, rows: 48, held }, async (tty) => {
      await tty.waitFor(
        /⧗ refresh path is still running · follow-up of d[0-9a-f]{8} \(2nd in chain\) · \d+s · \d+ turns? · \d+ tool calls?/,
        "the running follow-up's bg_result",
      );
      expect(tty.history().join("\n")).toContain(`follow-up of ${firstId?.slice(0, 9)} (2nd in chain)`);
      expect(tty.history().join("\n")).not.toMatch(/Do not poll|in the chain after/);
    });
  });

  it("the footer shows a Fusion run as one part: its stage and how many candidates are verified", async () => {
    // candidate-1 (model-a) answers at once; candidate-2 (model-b) waits until released.
    const held = gate();
    installFusionDriver(server, (req) =>
      req.model === "model-b" && !directiveOf(req).first.startsWith("Fusion ") ? held.wait : undefined,
    );
    const message = call("bg_fusion", {
      name: "cache question",
      prompt: "Where is the session cache invalidated?",
      candidates: [fusionRoute("model-a"), fusionRoute("model-b")],
    });
    const options = { label: "tui-fusion", cols: 160, rows: 48, models: FUSION_MODELS, message, held };
    await withInteractivePi(server, options, async (tty) => {
      await tty.waitFor(
        /⧗ fusion f[0-9a-f]{8} \(cache question\): asking the candidates, 1\/2 candidates verified \d+s │ delegate spend: /,
        "the run in the footer, one candidate verified",
      );
      // The run's children are not listed one by one beside it.
      expect(tty.screen().join("\n")).not.toMatch(/⧗ candidate-\d: cache question/);
      held.release();
      await until(() => {
        const shown = tty.screen().join("\n");
        return !shown.includes("⧗ fusion f") && /delegate spend: \$\d/.test(shown);
      }, "the run gone from the footer");
    });
  });
});
