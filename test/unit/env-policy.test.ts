import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildChildEnv } from "../../src/launch/argv.ts";
import { conventionalKeyVariable, providerEnvRules, providerKeyVariables } from "../../src/launch/env-policy.ts";

const agentDir = mkdtempSync(join(tmpdir(), "env-policy-"));
afterAll(() => rmSync(agentDir, { recursive: true, force: true }));
writeFileSync(
  join(agentDir, "models.json"),
  JSON.stringify({
    providers: {
      bare: { apiKey: "BARE_KEY" },
      templ: { apiKey: ["Bearer $", "{TEMPL_KEY}"].join(""), headers: { "x-org": "$TEMPL_ORG" } },
      literal: { apiKey: "sk-literal" },
    },
  }),
);
const handover = { taskDir: "/t", taskId: "id", launchNonce: "n", seedSha256: "h" };
const parentEnv = {
  PATH: "/usr/bin",
  HOME: "/home/u",
  LC_ALL: "C",
  PI_CODING_AGENT_DIR: agentDir,
  HTTPS_PROXY: "http://proxy",
  OPENAI_API_KEY: "openai-secret",
  ANTHROPIC_API_KEY: "anthropic-secret",
  GITHUB_TOKEN: "gh",
  AWS_SECRET_ACCESS_KEY: "aws",
  BARE_KEY: "bare",
  TEMPL_KEY: "templ",
  TEMPL_ORG: "org",
  PI_CODING_AGENT_SESSION: "parent-session",
};

describe("the isolated child's environment", () => {
  it("passes the allowlist and the pinned provider's key, nothing foreign", () => {
    const env = buildChildEnv(parentEnv, { ...handover, extensionMode: "isolated", provider: "openai", agentDir });
    expect(env.OPENAI_API_KEY).toBe("openai-secret");
    for (const name of ["PATH", "HOME", "LC_ALL", "PI_CODING_AGENT_DIR", "HTTPS_PROXY"])
      expect(env[name]).toBeDefined();
    for (const name of ["ANTHROPIC_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "BARE_KEY", "TEMPL_KEY"])
      expect(env[name], name).toBeUndefined();
    expect(env.PI_CODING_AGENT_SESSION).toBeUndefined();
    expect(env.PI_OFFLINE).toBe("1");
  });

  it("bedrock gets AWS_*, ambient gets everything but the parent session", () => {
    const bedrock = buildChildEnv(parentEnv, {
      ...handover,
      extensionMode: "isolated",
      provider: "amazon-bedrock",
      agentDir,
    });
    expect(bedrock.AWS_SECRET_ACCESS_KEY).toBe("aws");
    expect(bedrock.OPENAI_API_KEY).toBeUndefined();
    const ambient = buildChildEnv(parentEnv, { ...handover, extensionMode: "ambient", provider: "openai", agentDir });
    expect(ambient.GITHUB_TOKEN).toBe("gh");
    expect(ambient.ANTHROPIC_API_KEY).toBe("anthropic-secret");
    expect(ambient.PI_CODING_AGENT_SESSION).toBeUndefined();
  });

  it("follows models.json references: a bare variable name (Pi 0.73) and $NAME or its braced form (Pi 1.x)", () => {
    const names = (provider: string) =>
      providerEnvRules(provider, agentDir, parentEnv).flatMap((r) => ("name" in r ? [r.name] : []));
    expect(names("bare")).toContain("BARE_KEY");
    expect(names("templ")).toEqual(expect.arrayContaining(["TEMPL_KEY", "TEMPL_ORG"]));
    expect(names("literal")).toEqual(["LITERAL_API_KEY"]);
  });

  it("names key variables for the refusal text", () => {
    expect(conventionalKeyVariable("my-llm.v2")).toBe("MY_LLM_V2_API_KEY");
    expect(providerKeyVariables("openai")).toEqual(["OPENAI_API_KEY"]);
    expect(providerKeyVariables("amazon-bedrock")).toEqual(["AWS_*"]);
    expect(providerKeyVariables("deepseek")).toEqual(["DEEPSEEK_API_KEY"]);
  });
});
