import { describe, expect, it } from "vitest";
import { canonicalJson } from "../../src/core/canonical.ts";
import { projectConversation } from "../../src/launch/projection.ts";
import { buildChildPrompt, CHILD_SYSTEM_PROMPT } from "../../src/launch/prompt.ts";

const seedJson = canonicalJson(
  projectConversation([{ role: "user", content: "earlier question", timestamp: 1 }], "call_x").projection,
);

/** Parse the documented layout: header line, then the fenced directive located by its byte count. */
function parse(prompt: string) {
  const bytes = Buffer.from(prompt, "utf8");
  const firstNewline = bytes.indexOf(0x0a);
  const open = /^<<<DIRECTIVE utf8_bytes=(\d+)\n/.exec(bytes.subarray(firstNewline + 1).toString("utf8"));
  if (open === null) throw new Error("no directive fence right after the header");
  const start = firstNewline + 1 + Buffer.byteLength(open[0]);
  const length = Number(open[1]);
  const directive = bytes.subarray(start, start + length).toString("utf8");
  const after = bytes.subarray(start + length).toString("utf8");
  return { header: bytes.subarray(0, firstNewline).toString("utf8"), directive, after };
}

/** What pi does to piped stdin (main.js readPipedStdin): `data.trim()`. */
const piDelivers = (stdin: string) => stdin.trim();

describe("buildChildPrompt", () => {
  const directives = [
    "Find where the session file is written.",
    "   leading and trailing spaces   ",
    "\n\tnewlines and tabs around\n\n",
    "\uFEFF BOM-led directive with ü and 😀 \u00A0",
    "contains DIRECTIVE>>> and <<<BACKGROUND fences\nDIRECTIVE>>>\n",
  ];

  for (const directive of directives) {
    it(`keeps the directive first and verbatim: ${JSON.stringify(directive).slice(0, 40)}`, () => {
      const prompt = buildChildPrompt({ directive, seedJson });
      expect(piDelivers(prompt)).toBe(prompt);
      const parsed = parse(prompt);
      expect(parsed.header).toMatch(/^pi-bg-delegate task\./);
      expect(parsed.header).not.toContain("\n");
      expect(parsed.directive).toBe(directive);
      expect(parsed.after.startsWith("\nDIRECTIVE>>>\n<<<BACKGROUND")).toBe(true);
      // The projection follows the directive, marked untrusted, and the prompt closes with one short line.
      const background = parsed.after.indexOf("untrusted");
      expect(background).toBeGreaterThan(0);
      expect(parsed.after.indexOf(seedJson)).toBeGreaterThan(background);
      const lastLine = prompt.slice(prompt.lastIndexOf("\n") + 1);
      expect(prompt.slice(0, prompt.lastIndexOf("\n"))).toMatch(/\nBACKGROUND>>>$/);
      expect(lastLine.length).toBeGreaterThan(0);
      expect(lastLine.length).toBeLessThan(120);
    });
  }

  it("states the byte length of the seed JSON and embeds it unchanged", () => {
    const prompt = buildChildPrompt({ directive: "d", seedJson });
    expect(prompt).toContain(`<<<BACKGROUND utf8_bytes=${Buffer.byteLength(seedJson)} `);
    expect(prompt).toContain(`\n${seedJson}\nBACKGROUND>>>\n`);
  });

  it("is a pure function of its inputs", () => {
    const a = buildChildPrompt({ directive: " x ", seedJson });
    const b = buildChildPrompt({ directive: " x ", seedJson });
    expect(a).toBe(b);
    expect(buildChildPrompt({ directive: " y ", seedJson })).not.toBe(a);
  });
});

describe("CHILD_SYSTEM_PROMPT", () => {
  it("covers authority, receipts, spill reads, finalization and the answer rule", () => {
    expect(CHILD_SYSTEM_PROMPT).toMatch(/read-only/);
    expect(CHILD_SYSTEM_PROMPT).toMatch(/DIRECTIVE[^\n]*authoritative/);
    expect(CHILD_SYSTEM_PROMPT).toMatch(/untrusted/);
    expect(CHILD_SYSTEM_PROMPT).toMatch(/Do not guess/);
    expect(CHILD_SYSTEM_PROMPT).toMatch(/delegate_read_artifact/);
    expect(CHILD_SYSTEM_PROMPT).toMatch(/base64/);
    expect(CHILD_SYSTEM_PROMPT).toMatch(/finalization/);
    expect(CHILD_SYSTEM_PROMPT).toMatch(/no tool calls/);
  });

  it("is plain text without leading or trailing whitespace (pi uses --system-prompt text as given)", () => {
    expect(CHILD_SYSTEM_PROMPT.trim()).toBe(CHILD_SYSTEM_PROMPT);
  });
});
