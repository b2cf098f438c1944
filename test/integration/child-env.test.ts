/**
 * Least privilege in isolated mode, through a REAL pi parent and child: foreign secrets planted in the
 * parent's environment are absent from the isolated child's /proc/<pid>/environ while the child is
 * held at the model server, and the pinned provider (fake, whose models.json apiKey refers to the
 * variable FAKE_PINNED_KEY) still authenticates: the server sees the child's request with that key.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { gate, isChildRequest } from "../helpers/drive.ts";
import { makeTempDir, startSdkParent, useServerAndAgentDir, waitForNoProcesses } from "../helpers/pi-parent.ts";
import { IS_EARENDIL_HOST } from "../helpers/pi-paths.ts";
import { calls, delegateCall, parentModel, readJson, resultOf, taskDirs } from "./launch-support.ts";

const PINNED_KEY = "sk-pinned-provider-key";
const FOREIGN: Record<string, string> = {
  OPENAI_API_KEY: "foreign-openai-secret",
  ANTHROPIC_API_KEY: "foreign-anthropic-secret",
  GITHUB_TOKEN: "foreign-github-secret",
  AWS_SECRET_ACCESS_KEY: "foreign-aws-secret",
  MY_COMPANY_DB_PASSWORD: "foreign-db-secret",
};
const KEY_VAR = "FAKE_PINNED_KEY";
const PLANTED = { ...FOREIGN, [KEY_VAR]: PINNED_KEY };

const { server, agent } = useServerAndAgentDir();
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  const models = JSON.parse(readFileSync(agent.modelsPath, "utf8")) as {
    providers: Record<string, Record<string, unknown>>;
  };
  const fake = models.providers.fake;
  if (fake === undefined) throw new Error("no fake provider");
  // How models.json names a variable: its bare name on Pi 0.73, a `$NAME` reference on Pi 1.x.
  fake.apiKey = IS_EARENDIL_HOST ? `$${KEY_VAR}` : KEY_VAR;
  writeFileSync(agent.modelsPath, JSON.stringify(models));
  for (const [key, value] of Object.entries(PLANTED)) {
    saved[key] = process.env[key];
    process.env[key] = value;
  }
});
afterAll(async () => {
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

function environOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
}

async function runHeld(mode: "isolated" | "ambient"): Promise<{ env: Map<string, string>; auth: unknown }> {
  const cwd = await makeTempDir(`env-${mode}`);
  const held = gate();
  server.setHandler(
    parentModel({
      onUser: (text) =>
        text === "go"
          ? calls(
              delegateCall("c_env", {
                name: "env",
                prompt: "look",
                extensionMode: mode,
                notifyOnCompletion: false,
              }),
            )
          : { text: "ok" },
      onChild: async () => {
        await held.wait;
        return { text: "the child's answer" };
      },
    }),
  );
  const parent = await startSdkParent({ agentDir: agent, cwd });
  try {
    await parent.prompt("go");
    const receipt = resultOf(parent.messages(), "c_env");
    expect(receipt.isError).toBe(false);
    const request = await server.waitForRequest(isChildRequest);
    const [taskDir] = taskDirs(cwd);
    if (taskDir === undefined) throw new Error("no task dir");
    const child = readJson(join(taskDir, "manifest.json")).child as { pid: number };
    const env = environOf(child.pid);
    held.release();
    expect(await waitForNoProcesses(agent.dir, { includeEnv: true, timeoutMs: 30_000 })).toEqual([]);
    await expect.poll(() => readJson(join(taskDir, "manifest.json")).state, { timeout: 10_000 }).toBe("completed");
    return { env, auth: request.headers.authorization };
  } finally {
    held.release();
    await parent.dispose();
  }
}

it("isolated: the child holds no foreign secret, yet the pinned provider authenticates with its key", async () => {
  const { env, auth } = await runHeld("isolated");
  for (const name of Object.keys(FOREIGN)) expect(env.has(name), name).toBe(false);
  expect(env.get(KEY_VAR)).toBe(PINNED_KEY);
  expect(env.get("PI_CODING_AGENT_DIR")).toBe(agent.dir);
  expect(env.has("PATH")).toBe(true);
  expect(auth).toBe(`Bearer ${PINNED_KEY}`);
});

it("ambient: the child inherits the whole environment, foreign secrets included", async () => {
  const { env, auth } = await runHeld("ambient");
  for (const [name, value] of Object.entries(FOREIGN)) expect(env.get(name), name).toBe(value);
  expect(auth).toBe(`Bearer ${PINNED_KEY}`);
});
