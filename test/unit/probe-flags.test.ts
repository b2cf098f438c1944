/**
 * One list of the child's off flags (src/host/probe-checks.ts, CHILD_OFF_FLAGS): every flag that
 * turns something off in a delegate child's argv (src/launch/argv.ts) has a probe check, or a
 * written reason why it guards nothing; the probe's children get every one of them; and each
 * isolation check fails, naming its flag, on the witness a host that ignores the flag would show.
 */
import { describe, expect, it } from "vitest";
import {
  CHILD_OFF_FLAGS,
  type ChildOffFlag,
  HOST_PROBE_CHECKS,
  isolatedHostFlags,
  OFF_FLAG_VALUES,
  probeOffFlags,
  UNPROBED_OFF_FLAGS,
} from "../../src/host/index.ts";
import { WITNESS_JUDGES, type WitnessObservations } from "../../src/host/probe/witness-checks.ts";
import { buildChildArgv } from "../../src/launch/argv.ts";
import { cleanWitness } from "../helpers/host-proof-fixtures.ts";

function argv(extensionMode: "isolated" | "ambient", noMcp: boolean, projectTrust: boolean): string[] {
  return buildChildArgv({
    piCli: "/pi/dist/cli.js",
    guardPath: "/guard.ts",
    provider: "p",
    model: "m",
    thinkingLevel: "off",
    sessionFile: "/s.jsonl",
    systemPrompt: "sys",
    extensionMode,
    capabilities: { noMcp, projectTrust },
    projectTrusted: false,
  });
}

/** The off flags of an argv as they stand in it: each `--no-*`, and each valued off flag with its value. */
function offFlagArgs(args: string[]): string[] {
  return args.flatMap((arg, i) => {
    if (arg.startsWith("--no-")) return [arg];
    return Object.hasOwn(OFF_FLAG_VALUES, arg) ? [arg, args[i + 1] ?? "<missing>"] : [];
  });
}

/** Their names only. */
const offFlags = (args: string[]) =>
  args.filter((arg) => arg.startsWith("--no-") || Object.hasOwn(OFF_FLAG_VALUES, arg));

describe("the child's off flags and the probe", () => {
  const variants = [
    ["isolated", true, true],
    ["isolated", false, false],
    ["ambient", true, true],
  ] as const;

  it("every off flag a child can get has a probe check or a written reason", () => {
    const seen = new Set(variants.flatMap(([mode, mcp, trust]) => offFlags(argv(mode, mcp, trust))));
    expect(seen.size).toBeGreaterThan(5);
    for (const flag of seen) {
      expect(Object.keys(CHILD_OFF_FLAGS), `${flag} is in the child's argv but not in CHILD_OFF_FLAGS`).toContain(flag);
      const check = CHILD_OFF_FLAGS[flag as ChildOffFlag];
      if (check === null) expect(UNPROBED_OFF_FLAGS[flag as ChildOffFlag], flag).toMatch(/\w/);
      else expect(Object.keys(HOST_PROBE_CHECKS)).toContain(check);
    }
    // And nothing listed that no child gets.
    expect([...seen].sort()).toEqual(Object.keys(CHILD_OFF_FLAGS).sort());
  });

  it("the probe's children get every off flag an isolated child of that host gets, with the same value", () => {
    for (const [, noMcp, projectTrust] of variants) {
      const child = offFlagArgs(argv("isolated", noMcp, projectTrust));
      const probe = probeOffFlags(isolatedHostFlags({ noMcp, projectTrust, missing: [], source: "help" }));
      expect(probe.sort()).toEqual(child.sort());
    }
  });

  it("every child, isolated or ambient, gets an empty --append-system-prompt: no APPEND_SYSTEM.md is appended", () => {
    for (const [mode, noMcp, projectTrust] of variants) {
      const args = argv(mode, noMcp, projectTrust);
      const at = args.indexOf("--append-system-prompt");
      expect(at, mode).toBeGreaterThan(0);
      expect(args[at + 1], mode).toBe("");
      expect(
        args.filter((a) => a === "--append-system-prompt"),
        mode,
      ).toHaveLength(1);
    }
    expect(OFF_FLAG_VALUES["--append-system-prompt"]).toBe("");
  });
});

function clean(): WitnessObservations {
  return {
    witness: cleanWitness(),
    runs: [
      {
        requests: [
          { model: "m", stream: true, messages: [{ role: "system", text: "sys" }], tools: [], maxOutput: null },
        ],
        commands: [],
      },
    ],
  };
}

function withSystem(text: string): WitnessObservations {
  const o = clean();
  const request = o.runs[0]?.requests[0];
  if (request !== undefined) request.messages = [{ role: "system", text: `sys\n${text}` }];
  return o;
}

describe("the isolation checks", () => {
  it("pass on a host that kept every witness out", () => {
    for (const judge of Object.values(WITNESS_JUDGES)) expect(judge(clean()).ok).toBe(true);
  });

  it("each fails naming its flag on the witness a host that ignores it shows", () => {
    const ext = clean();
    ext.witness.extensionRan = ["agent"];
    expect(WITNESS_JUDGES.no_extensions(ext)).toEqual({
      ok: false,
      seen: "--no-extensions was ignored: the extension planted in the agent dir ran",
    });
    expect(WITNESS_JUDGES.no_skills(withSystem("<skill>W-skill-project</skill>")).seen).toBe(
      "--no-skills was ignored: the skill planted in the project reached the model",
    );
    const listed = clean();
    listed.runs[0]?.commands.push({ name: "skill:x", source: "skill", description: "W-skill-agent" });
    expect(WITNESS_JUDGES.no_skills(listed).ok).toBe(false);
    const prompt = clean();
    prompt.runs[0]?.commands.push({ name: "x", source: "prompt", description: "W-prompt-agent" });
    expect(WITNESS_JUDGES.no_prompt_templates(prompt).seen).toContain("--no-prompt-templates was ignored");
    expect(WITNESS_JUDGES.no_context_files(withSystem("W-context-agent W-context-project")).seen).toBe(
      "--no-context-files was ignored: the AGENTS.md planted in the agent dir and the project reached the model",
    );
    const mcp = clean();
    mcp.witness.mcpRan = ["project"];
    expect(WITNESS_JUDGES.no_mcp(mcp).seen).toBe(
      "--no-mcp was ignored: the MCP server configured in the project was started",
    );
    mcp.witness.hostFlags = [];
    expect(WITNESS_JUDGES.no_mcp(mcp).seen).toContain("the host has no --no-mcp");
    expect(WITNESS_JUDGES.no_append_system(withSystem("W-append-agent")).seen).toBe(
      "--append-system-prompt was ignored: the APPEND_SYSTEM.md planted in the agent dir reached the model",
    );
    expect(WITNESS_JUDGES.no_append_system(withSystem("W-append-project")).ok).toBe(false);
    const trusted = clean();
    trusted.witness.ambientExtensionRan = ["agent", "project"];
    expect(WITNESS_JUDGES.project_untrusted(trusted)).toEqual({
      ok: false,
      seen: "--no-approve was ignored: the extension planted in the project loaded in the ambient run",
    });
  });

  it("project trust is judged only when the agent dir's extension shows the ambient run loads extensions", () => {
    const none = clean();
    none.witness.ambientExtensionRan = [];
    expect(WITNESS_JUDGES.project_untrusted(none).ok).toBe(false);
    expect(WITNESS_JUDGES.project_untrusted(none).seen).toContain("project trust could not be seen");
  });

  it("a host without project trust is not asked for it", () => {
    const o = clean();
    o.witness.ambientExtensionRan = ["agent", "project"];
    o.witness.hostFlags = [];
    expect(WITNESS_JUDGES.project_untrusted(o)).toEqual({
      ok: true,
      seen: "the host has no project trust (no --no-approve); the project's extension loaded in the ambient run",
    });
  });
});
