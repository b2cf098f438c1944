/**
 * The launch boundary, proven by what a REAL parent returns and what the REAL child sends to the
 * scripted server: the receipt comes back while the child's first model request is still unanswered
 * (the server holds it until the parent has the receipt: ordering, no timing), the child is offered
 * exactly the inspect tool set under the package-owned system prompt with child-prompt.txt as its
 * prompt, and the task tree is as documented. An extension planted in the project's .pi/extensions/
 * tells isolated from ambient: only ambient loads it, and even then the model sees only the five tools.
 * An APPEND_SYSTEM.md in the project's .pi/ and in the agent dir reaches the parent (Pi appends one of
 * them to every system prompt it builds itself) and neither kind of child: the child's system prompt
 * is the package's alone (an empty --append-system-prompt).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHILD_TOOLS, SCHEMA, TASK_FILES } from "../../src/core/constants.ts";
import { CHILD_SYSTEM_PROMPT } from "../../src/launch/prompt.ts";
import { processStartTime } from "../../src/process/identity.ts";
import { AMBIENT_WARNING, type ReceiptDetails } from "../../src/views/receipt.ts";
import { gate, isChildRequest, type ToolResultView } from "../helpers/drive.ts";
import {
  type AgentDir,
  createAgentDir,
  findProcesses,
  forHost,
  makeTempDir,
  type RecordedRequest,
  type SdkParent,
  startSdkParent,
  useModelServer,
  waitForNoProcesses,
} from "../helpers/pi-parent.ts";
import {
  calls,
  delegateCall,
  parentModel,
  processGroupOf,
  readJson,
  resultOf,
  waitForToolResult,
} from "./launch-support.ts";

const ISOLATED_DIRECTIVE = "ISOLATED-DIRECTIVE: list the files of this project.";
const AMBIENT_DIRECTIVE = "AMBIENT-DIRECTIVE: list the files of this project.";
const APPEND_MARKERS = { project: "APPEND-SYSTEM-PROJECT-5521", agent: "APPEND-SYSTEM-AGENT-5521" } as const;
/** The longest name the argument table admits: the receipt bound must hold with it. */
const LONG_NAME = "survey the project layout and report every planted extension".padEnd(80, ".");

const server = useModelServer({ resetBetweenTests: false });
let agent: AgentDir;
let cwd: string;
let markerDir: string;
let parent: SdkParent;
const isolatedHeld = gate();

/**
 * A project extension that announces itself: loading it writes `loaded-<task id>` into markerDir and
 * registers `planted_tool`. Written without imports from pi so it loads from any directory.
 */
function plantExtension(): void {
  const source = [
    'import { writeFileSync } from "node:fs";',
    'import { join } from "node:path";',
    "export default function planted(pi: { registerTool(tool: unknown): void }): void {",
    `  writeFileSync(join(${JSON.stringify(markerDir)}, \`loaded-\${process.env.PI_BG_DELEGATE_TASK_ID ?? "no-task"}\`), String(process.pid));`,
    "  pi.registerTool({",
    '    name: "planted_tool",',
    '    label: "Planted",',
    '    description: "A tool a project extension registered; a delegate model must never be offered it.",',
    '    parameters: { type: "object", properties: {} },',
    '    execute: async () => ({ content: [{ type: "text", text: "planted ran" }], details: {} }),',
    "  });",
    "}",
    "",
  ].join("\n");
  mkdirSync(join(cwd, ".pi", "extensions"), { recursive: true });
  writeFileSync(join(cwd, ".pi", "extensions", "planted.ts"), source);
}

beforeAll(async () => {
  agent = await createAgentDir({ serverUrl: server.url });
  cwd = await makeTempDir("boundary");
  markerDir = await makeTempDir("boundary-markers");
  plantExtension();
  writeFileSync(join(cwd, ".pi", "APPEND_SYSTEM.md"), `${APPEND_MARKERS.project}\n`);
  writeFileSync(join(agent.dir, "APPEND_SYSTEM.md"), `${APPEND_MARKERS.agent}\n`);
  writeFileSync(join(cwd, "notes.txt"), "project notes\n");
  server.setHandler(
    parentModel({
      onUser: (text) => {
        if (text === "isolated")
          return calls(delegateCall("c_iso", { name: "isolated look", prompt: ISOLATED_DIRECTIVE }));
        if (text === "ambient")
          return calls(delegateCall("c_amb", { name: LONG_NAME, prompt: AMBIENT_DIRECTIVE, extensionMode: "ambient" }));
        return { text: "noted" }; // the completion notifications
      },
      onChild: async (request) => {
        if (request.messages.some((m) => m.text.includes(ISOLATED_DIRECTIVE))) await isolatedHeld.wait;
        return { text: "The project holds notes.txt." };
      },
    }),
  );
  parent = await startSdkParent({ agentDir: agent, cwd });
});

afterAll(async () => {
  isolatedHeld.release();
  await parent?.dispose();
  expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
});

function childRequestWith(directive: string): Promise<RecordedRequest> {
  return server.waitForRequest((r) => isChildRequest(r) && r.messages.some((m) => m.text.includes(directive)));
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

/** What each host appends to --system-prompt (1.x renders it as its `cwd` section). */
const CWD_SECTION = /^\n\n<cwd>\n.+\n<\/cwd>$/;
const SYSTEM_PROMPT_SUFFIX: Record<string, RegExp> = {
  "0.73.1": /^\nCurrent date: \d{4}-\d{2}-\d{2}\nCurrent working directory: .+$/,
  "1.3.0": CWD_SECTION,
  "1.4.0": CWD_SECTION,
  "1.5.0": CWD_SECTION,
  "1.5.2": CWD_SECTION,
  "1.6.0": CWD_SECTION,
};

/** What the child's model saw, against what the parent wrote: system prompt, one user prompt, five tools. */
function expectChildBoundary(request: RecordedRequest, taskDir: string): void {
  expect([...request.tools].sort()).toEqual([...CHILD_TOOLS].sort());
  expect(request.tools).not.toContain("planted_tool");
  // pi appends only the working directory (0.73.1: and the date) to --system-prompt.
  expect(request.systemPrompt.startsWith(CHILD_SYSTEM_PROMPT)).toBe(true);
  expect(request.systemPrompt.slice(CHILD_SYSTEM_PROMPT.length)).toMatch(forHost(SYSTEM_PROMPT_SUFFIX));
  expect(request.messages.map((m) => m.role)).toEqual(["system", "user"]);
  expect(request.messages[1]?.text).toBe(readFileSync(join(taskDir, TASK_FILES.prompt), "utf8"));
  expect(request.model).toBe("fake-model");
  // Neither APPEND_SYSTEM.md, anywhere in what the child's model received.
  const seen = [request.systemPrompt, ...request.messages.map((m) => m.text)].join("\n");
  expect(seen).not.toContain(APPEND_MARKERS.project);
  expect(seen).not.toContain(APPEND_MARKERS.agent);
}

/** The APPEND_SYSTEM.md markers in the parent's system prompt: the witnesses are live on this host. */
function parentAppendMarkers(): string[] {
  const parentRequest = server.requests.find((r) => !isChildRequest(r));
  expect(parentRequest).toBeDefined();
  return Object.values(APPEND_MARKERS).filter((m) => parentRequest?.systemPrompt.includes(m));
}

function receiptOf(result: ToolResultView): ReceiptDetails {
  expect(result.isError).toBe(false);
  return result.details as unknown as ReceiptDetails;
}

describe("isolated launch (the default)", () => {
  let receipt: ReceiptDetails;
  let request: RecordedRequest;

  it("returns the receipt while the child's first model request is still held by the server", async () => {
    const childRequest = childRequestWith(ISOLATED_DIRECTIVE);
    const run = parent.prompt("isolated");
    // The server answers the child only after the parent has the tool result: if bg_delegate waited
    // for the child in any way, this would never resolve.
    const result = await waitForToolResult(parent.log, "c_iso");
    receipt = receiptOf(result);
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(700);
    expect(result.text).toMatch(new RegExp(`^Delegate ${receipt.task_id} started: isolated look\\n`));
    expect(result.text).toContain("isolated mode");
    expect(result.text).not.toContain("WARNING");
    expect(receipt.ambient_warning).toBeNull();
    request = await childRequestWith(ISOLATED_DIRECTIVE);
    expect(await childRequest).toBe(request);
    expect(request.reply).toBeUndefined(); // still unanswered
    await run;
  });

  it("offered the child exactly read, grep, find, ls, delegate_read_artifact with the package prompts", () => {
    expectChildBoundary(request, receipt.artifact_dir);
  });

  it("appended neither APPEND_SYSTEM.md to the child's system prompt, while the parent's Pi appended one", () => {
    // 0.73.1 reads the project's file before the agent dir's; 1.x the project's only when trusted.
    expect(parentAppendMarkers()).toHaveLength(1);
    expect(request.systemPrompt).not.toMatch(/APPEND-SYSTEM-/);
  });

  it("did not load the project's extension (--no-extensions)", () => {
    // The child is past startup (it is waiting on its model), so every extension it loads is loaded.
    expect(readdirSync(markerDir)).toEqual([]);
  });

  it("wrote the documented tree: directories 0700, files 0600", () => {
    const dir = receipt.artifact_dir;
    expect(dir).toBe(join(cwd, ".pi", "delegate", parent.sessionManager.getSessionId(), receipt.task_id));
    for (const name of [TASK_FILES.sessionDir, TASK_FILES.spillDir]) {
      expect(statSync(join(dir, name)).isDirectory()).toBe(true);
      expect(mode(join(dir, name))).toBe(0o700);
    }
    expect(mode(dir)).toBe(0o700);
    expect(mode(join(dir, ".."))).toBe(0o700);
    const files = [
      TASK_FILES.seed,
      TASK_FILES.prompt,
      TASK_FILES.ledger,
      TASK_FILES.budgetPlan,
      TASK_FILES.manifest,
      TASK_FILES.sessionFile,
      TASK_FILES.output,
    ];
    for (const name of files) {
      expect(statSync(join(dir, name)).isFile(), name).toBe(true);
      expect(mode(join(dir, name)), name).toBe(0o600);
    }
    expect(readJson(join(dir, TASK_FILES.seed)).schema_version).toBe(SCHEMA.seed);
    expect(readJson(join(dir, TASK_FILES.ledger)).schema_version).toBe(SCHEMA.ledger);
    expect(readJson(join(dir, TASK_FILES.budgetPlan)).schema_version).toBe(SCHEMA.budgetPlan);
  });

  it("records the child's pid, its own process group and a delegate-<32hex> session id in manifest.json", async () => {
    const dir = receipt.artifact_dir;
    const manifest = readJson(join(dir, TASK_FILES.manifest));
    expect(manifest).toMatchObject({
      schema_version: SCHEMA.manifest,
      task_id: receipt.task_id,
      state: "running",
      extension_mode: "isolated",
      child_session_dir: join(dir, TASK_FILES.sessionDir),
      child: { pid: receipt.child_pid, pgid: receipt.child_pid },
    });
    expect(manifest.child_session_id).toMatch(/^delegate-[0-9a-f]{32}$/);
    expect(manifest.child_session_id).toBe(receipt.child_session_id);
    expect(readJson(join(dir, TASK_FILES.seed)).child_session_id).toBe(receipt.child_session_id);
    // The recorded pid is a live process leading its own group, and it is ours (our agent dir in its env).
    expect(processGroupOf(receipt.child_pid)).toBe(receipt.child_pid);
    // Its recorded start time is that live process's (docs/subsystems/launch.md, "One launch at a time").
    expect((manifest.child as { start_time?: string }).start_time).toBe(processStartTime(receipt.child_pid));
    const live = await findProcesses(agent.dir, { includeEnv: true });
    expect(live.map((p) => p.pid)).toContain(receipt.child_pid);
  });

  it("after release: the child finishes in the session file whose header carries that id", async () => {
    isolatedHeld.release();
    await parent.log.waitForCount("agent_end", 2, { timeoutMs: 45_000 }); // the notification's turn
    await parent.waitForIdle(45_000);
    const dir = receipt.artifact_dir;
    expect(readJson(join(dir, TASK_FILES.manifest)).state).toBe("completed");
    const lines = readFileSync(join(dir, TASK_FILES.sessionFile), "utf8").trim().split("\n");
    expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ type: "session", id: receipt.child_session_id });
    // pi wrote the child's conversation into that same file (our pre-written header was not replaced).
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.slice(1).some((line) => line.includes("The project holds notes.txt."))).toBe(true);
    expect(readdirSync(join(dir, TASK_FILES.sessionDir))).toEqual(["session.jsonl"]);
    expect(readdirSync(markerDir)).toEqual([]);
  });
});

describe("ambient launch", () => {
  let result: ToolResultView;

  it("loads the planted extension in the child, still offers only the five tools, and warns in the receipt", async () => {
    const ended = parent.log.count("agent_end");
    await parent.prompt("ambient");
    result = resultOf(parent.messages(), "c_amb");
    const receipt = receiptOf(result);
    expect(result.text).toContain("ambient mode");
    expect(result.text).toContain(`WARNING: ${AMBIENT_WARNING}`);
    expect(AMBIENT_WARNING).toMatch(/arbitrary code/);
    expect(receipt.ambient_warning).toBe(AMBIENT_WARNING);
    expect(readJson(join(receipt.artifact_dir, TASK_FILES.seed)).extension_mode).toBe("ambient");

    const request = await childRequestWith(AMBIENT_DIRECTIVE);
    expectChildBoundary(request, receipt.artifact_dir);
    // Loaded in this task's child, and nowhere else (not in the parent, not in the isolated child).
    expect(readdirSync(markerDir)).toEqual([`loaded-${receipt.task_id}`]);

    await parent.log.waitForCount("agent_end", ended + 2, { timeoutMs: 45_000 });
    await parent.waitForIdle(45_000);
    expect(readJson(join(receipt.artifact_dir, TASK_FILES.manifest)).state).toBe("completed");
    expect(existsSync(join(receipt.artifact_dir, TASK_FILES.result))).toBe(true);
  });

  // A long but ordinary receipt: ambient (warning line), the default notification line, an
  // 80-character name, an artifact path under a short temp dir. The bound: ≤ 700 bytes of text.
  it("keeps this long receipt's text within 700 bytes", () => {
    expect([...LONG_NAME]).toHaveLength(80);
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(700);
  });
});
