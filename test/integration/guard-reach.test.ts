/**
 * A real pi child asked to read outside its project: `..`, an absolute path, `~`, a `file://` URL,
 * a link and a linked directory pointing out, grep/find/ls of an outside directory, Pi's agent dir
 * (here inside the project), the task store and a walk of the project that reaches the agent dir. Each call is refused (or its
 * output withheld) with the reason as the tool result, no secret byte reaches the model server, and
 * the run ends in a verified answer; grep/find of the project do not walk its outward links. Then a
 * real parent grants a root in user settings and in the environment, and a project that tries to
 * widen the grant is ignored and named (docs/subsystems/child-guard.md, "What a delegate may read").
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/core/hash.ts";
import { type AgentDir, createAgentDir } from "../helpers/agent-dir.ts";
import { useAgentDir } from "../helpers/agent-dir-fixture.ts";
import { type ChildRun, prepareChildTask, runPreparedChild, verifyCommitted } from "../helpers/child-task.ts";
import { bgResultVia, isChildRequest } from "../helpers/drive.ts";
import type { ModelServer } from "../helpers/model-server.ts";
import { script } from "../helpers/model-server.ts";
import { useModelServer } from "../helpers/model-server-fixture.ts";
import { settledDelegate } from "../helpers/spend-route.ts";
import { makeTempDir, waitForNoProcesses } from "../helpers/temp.ts";

const server = useModelServer({ resetBetweenTests: false });
const SECRET = `S3CR3T-${sha256Hex(String(process.pid)).slice(0, 12)}`;
const NOTES = "the answer is 42\n";
const ANSWER = "The notes say 42; nothing outside the project was read.";
const REFUSED = "is not readable by this delegate";

let base: string;
let agent: AgentDir;
let run: ChildRun;

/** Every tool result the child's model saw, in call order (the second request carries them). */
function toolTexts(): string[] {
  const request = server.requests.filter(isChildRequest).find((r) => r.messages.some((m) => m.role === "tool"));
  return (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => m.text);
}

/** Nothing any request to the model server carried holds the secret. */
function noSecretSent(requests: ModelServer["requests"]): void {
  expect(JSON.stringify(requests)).not.toContain(SECRET);
}

beforeAll(async () => {
  base = await makeTempDir("reach");
  const project = join(base, "proj");
  const outside = join(base, "outside");
  await mkdir(join(outside, "sub"), { recursive: true });
  await mkdir(join(base, "home"));
  await mkdir(join(project, "src"), { recursive: true });
  await writeFile(join(outside, "secret.txt"), `reach-${SECRET}\n`);
  await writeFile(join(outside, "sub", "deeper.txt"), `reach-${SECRET}\n`);
  await writeFile(join(base, "home", "secret.txt"), `reach-${SECRET}\n`);
  await writeFile(join(project, "notes.txt"), NOTES);
  await writeFile(join(project, "src", "own.txt"), "reach-own\n");
  await symlink(join(outside, "secret.txt"), join(project, "link-out"));
  await symlink(outside, join(project, "dir-out"));
  await symlink(join(outside, "secret.txt"), join(project, "src", "link.txt"));
  await symlink(outside, join(project, "src", "linkdir"));
  // Pi's agent dir inside the project: closed even there.
  agent = await createAgentDir({ serverUrl: server.url, parentDir: project });
  await writeFile(join(agent.dir, "marker.txt"), `reach-${SECRET}\n`);
  const prompt = `Read what is there. ${script(
    {
      tools: [
        { tool: "read", args: { path: "../outside/secret.txt" } },
        { tool: "read", args: { path: join(outside, "secret.txt") } },
        { tool: "read", args: { path: "~/secret.txt" } },
        { tool: "read", args: { path: `file://${join(outside, "secret.txt")}` } },
        { tool: "read", args: { path: "link-out" } },
        { tool: "read", args: { path: "dir-out/sub/deeper.txt" } },
        { tool: "grep", args: { pattern: "reach-", path: "../outside" } },
        { tool: "find", args: { pattern: "*", path: outside } },
        { tool: "ls", args: { path: "dir-out" } },
        { tool: "ls", args: { path: "agent" } },
        { tool: "read", args: { path: "agent/marker.txt" } },
        { tool: "grep", args: { pattern: "reach-", path: "src" } },
        { tool: "find", args: { pattern: "*", path: "src" } },
        { tool: "ls", args: { path: "src" } },
        { tool: "grep", args: { pattern: "reach-" } },
        { tool: "ls", args: { path: ".pi/delegate" } },
        { tool: "read", args: { path: "notes.txt" } },
      ],
    },
    { text: ANSWER },
  )}`;
  const task = await prepareChildTask({
    agentDir: agent.dir,
    prompt,
    cwd: project,
    env: { HOME: join(base, "home") },
    limits: { max_tool_calls: 40 },
  });
  run = await runPreparedChild(task);
}, 90_000);

afterAll(async () => {
  expect(await waitForNoProcesses(agent.dir, { includeEnv: true })).toEqual([]);
});

describe("a delegate reads only its project", () => {
  it("refuses every outward path with the reason as the tool result", () => {
    const texts = toolTexts();
    expect(texts).toHaveLength(17);
    const outside = "its real location is outside the project and outside the directories you granted";
    for (const [i, path] of [
      [0, "../outside/secret.txt"],
      [1, join(base, "outside", "secret.txt")],
      [2, "~/secret.txt"],
      [3, `file://${join(base, "outside", "secret.txt")}`],
      [4, "link-out"],
      [5, "dir-out/sub/deeper.txt"],
      [6, "../outside"],
      [7, join(base, "outside")],
      [8, "dir-out"],
    ] as const) {
      expect(texts[i]).toBe(
        `[delegate] ${path} ${REFUSED}: ${outside} (bgDelegate.readRoots). A delegate reads only the project and the directories the user granted.`,
      );
    }
    expect(texts[9]).toContain(`[delegate] agent ${REFUSED}: it lies in Pi's agent directory`);
    expect(texts[10]).toContain(`[delegate] agent/marker.txt ${REFUSED}: it lies in Pi's agent directory`);
  });

  it("walks the project without following its outward links, and withholds a walk that reaches the agent dir", () => {
    const texts = toolTexts();
    expect(texts[11]).toContain("own.txt:1: reach-own");
    expect(texts[11]).not.toContain("link");
    expect(texts[12]).toContain("own.txt");
    expect(texts[13]).toContain("own.txt");
    expect(texts[14]).toBe(
      "[delegate] The grep output was withheld: it reached agent, a place a delegate never reads (Pi's agent directory or a delegate store). Search a narrower path that does not contain it.",
    );
    expect(texts[15]).toBe(
      `[delegate] .pi/delegate ${REFUSED}: it lies in the delegate store (the conversations of tasks; this task's own files are read with delegate_read_artifact), which a delegate never reads. A delegate reads only the project and the directories the user granted.`,
    );
    expect(texts[16]).toBe(NOTES);
  });

  it("sends no secret byte to the provider and answers, verified, with the project's evidence only", () => {
    noSecretSent(server.requests);
    expect(run.files.terminal, run.output).toBeUndefined();
    const verified = verifyCommitted(run);
    expect(verified.text).toBe(ANSWER);
    expect(verified.text).not.toContain(SECRET);
    const evidence = run.files.result?.evidence ?? [];
    expect(evidence.map((row) => row.tool)).toEqual(["grep", "find", "ls", "read"]);
    expect(JSON.stringify(evidence)).not.toContain("outside");
  });
});

describe("a ripgrep config that asks to follow links", () => {
  it("does not make an ambient child's grep walk through an outward link", async () => {
    const config = join(base, "rg-follow.conf");
    await writeFile(config, "--follow\n");
    const marker = "RG-CONFIG";
    const prompt = `${marker}: search. ${script({ tool: "grep", args: { pattern: "reach-", path: "src" } }, { text: "searched" })}`;
    const task = await prepareChildTask({
      agentDir: agent.dir,
      prompt,
      cwd: join(base, "proj"),
      extensionMode: "ambient",
      env: { HOME: join(base, "home"), RIPGREP_CONFIG_PATH: config },
    });
    const followed = await runPreparedChild(task);
    const request = server.requests
      .filter(isChildRequest)
      .find((r) => r.messages.some((m) => m.role === "tool") && JSON.stringify(r).includes(marker));
    const texts = (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => m.text);
    expect(texts).toHaveLength(1);
    expect(texts[0]).toContain("own.txt:1: reach-own");
    noSecretSent(server.requests);
    expect(followed.files.terminal, followed.output).toBeUndefined();
    expect(verifyCommitted(followed).text).toBe("searched");
  }, 90_000);
});

describe("directories the user grants", () => {
  const granted = useAgentDir(server);

  async function grantedRun(label: string, prepare: (cwd: string) => void, expectIgnored: RegExp[]): Promise<void> {
    const root = join(base, "granted");
    const other = join(base, "outside", "secret.txt");
    const prompt = `GRANT-${label}: read. ${script(
      {
        tools: [
          { tool: "read", args: { path: join(root, "shared.txt") } },
          { tool: "read", args: { path: other } },
        ],
      },
      { text: "granted read" },
    )}`;
    await settledDelegate(
      server,
      granted,
      { label, child: () => undefined, args: { prompt }, prepare },
      async ({ parent, taskId, files }) => {
        const request = server.requests
          .filter(isChildRequest)
          .find(
            (r) =>
              r.messages.some((m) => m.role === "tool") &&
              r.messages.some((m) => m.role === "user" && m.text.includes(`GRANT-${label}`)),
          );
        const texts = (request?.messages ?? []).filter((m) => m.role === "tool").map((m) => m.text);
        expect(texts[0]).toBe("shared by the user\n");
        expect(texts[1]).toContain(`${other} ${REFUSED}`);
        noSecretSent(server.requests);
        const manifest = JSON.parse(readFileSync(join(files.dir, "manifest.json"), "utf8")) as {
          settings_ignored?: string[];
        };
        const ignored = manifest.settings_ignored ?? [];
        expect(ignored).toHaveLength(expectIgnored.length);
        expectIgnored.forEach((line, i) => {
          expect(ignored[i]).toMatch(line);
        });
        // The granted file is evidence, named by its absolute path; the refused one is not.
        const filesRead = files.result().evidence.map((row) => (row.tool === "read" ? row.file : row.tool));
        expect(filesRead).toEqual([join(root, "shared.txt")]);
        expect((await bgResultVia(parent, { taskId })).text).toMatch(/^Verified answer of d[0-9a-f]{32}/);
      },
    );
  }

  beforeAll(async () => {
    await mkdir(join(base, "granted"), { recursive: true });
    await writeFile(join(base, "granted", "shared.txt"), "shared by the user\n");
  });

  it("reads a root granted in user settings; a project that widens it to / is ignored and named", async () => {
    await granted.updateSettings({ bgDelegate: { readRoots: [join(base, "granted")] } });
    try {
      await grantedRun(
        "user",
        (cwd) => {
          mkdirSync(join(cwd, ".pi"), { recursive: true });
          writeFileSync(join(cwd, ".pi", "settings.json"), JSON.stringify({ bgDelegate: { readRoots: ["/"] } }));
        },
        [
          /^bgDelegate\.readRoots \["\/"\] in \.pi\/settings\.json ignored: a project may only name directories inside yours \(yours: \["\//,
        ],
      );
    } finally {
      await granted.updateSettings({ bgDelegate: {} });
    }
  }, 120_000);

  it("reads a root granted in the environment (PI_BG_DELEGATE_READ_ROOTS)", async () => {
    process.env.PI_BG_DELEGATE_READ_ROOTS = join(base, "granted");
    try {
      await grantedRun("env", () => {}, []);
    } finally {
      delete process.env.PI_BG_DELEGATE_READ_ROOTS;
    }
  }, 120_000);
});
