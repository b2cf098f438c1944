/**
 * Who can make a self-proof record admit a Pi (docs/configuration.md, "Self-proof"): only a record
 * this user's key signed, in a file of this user that group and others cannot write. A hand-written
 * record, one copied from another agent dir (another key), a group- or other-writable one, a link,
 * and any record under a key file others can read admit nothing. bgDelegate.selfProof off is decided
 * before any record is read. And the fingerprint follows the CLI's package to every Pi package it
 * resolves, the way Node does.
 */
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  admitHost,
  hostProofOf,
  piBuildSha256,
  REQUIRED_CHILD_FLAGS,
  readSelfProof,
  recordKeyPath,
  selfProofDir,
  selfProofPath,
  writeSelfProof,
} from "../../src/host/index.ts";
import { selfProofRecord } from "../helpers/host-proof-fixtures.ts";
import { makeTempDir } from "../helpers/temp.ts";

/** A Pi CLI that prints every flag a child needs on --help, and an agent dir beside it. */
async function fakeHost(): Promise<{ agentDir: string; cli: string; root: string }> {
  const root = await makeTempDir("self-proof-record");
  mkdirSync(join(root, "dist"), { recursive: true });
  const cli = join(root, "dist", "cli.js");
  writeFileSync(cli, `console.log(${JSON.stringify(REQUIRED_CHILD_FLAGS.map((f) => `  ${f}`).join("\n"))});\n`);
  const agentDir = join(root, "agent");
  mkdirSync(agentDir);
  return { agentDir, cli, root };
}

const record = (cli: string) => selfProofRecord(cli);

describe("a self-proof record", () => {
  it("is signed with this user's key, created 0600 in the agent dir on first write", async () => {
    const { agentDir, cli } = await fakeHost();
    const path = writeSelfProof(agentDir, record(cli));
    expect(statSync(recordKeyPath(agentDir)).mode & 0o777).toBe(0o600);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const written = JSON.parse(readFileSync(path, "utf8"));
    expect(written.mac).toMatch(/^[0-9a-f]{64}$/);
    expect(hostProofOf("1.99.0", { agentDir, cliPath: cli })).toBe("self-proven");
  });

  it("written by hand admits nothing, with or without a key in the agent dir", async () => {
    const { agentDir, cli } = await fakeHost();
    const path = selfProofPath(agentDir, "1.99.0", piBuildSha256(cli) ?? "");
    mkdirSync(selfProofDir(agentDir), { recursive: true });
    const forged = { schema_version: "pi-bg-delegate.host-self-proof.v3", ...record(cli), mac: "0".repeat(64) };
    writeFileSync(path, JSON.stringify(forged));
    expect(readSelfProof(agentDir, "1.99.0", cli)).toBeUndefined();
    // The key exists now (another version's record was written): the forged MAC is still not its.
    writeSelfProof(agentDir, { ...record(cli), pi_version: "1.98.0" });
    writeFileSync(path, JSON.stringify(forged));
    expect(readSelfProof(agentDir, "1.98.0", cli)).toBeDefined();
    expect(readSelfProof(agentDir, "1.99.0", cli)).toBeUndefined();
    // Nor does a genuine record whose content was edited afterwards.
    const genuine = JSON.parse(readFileSync(writeSelfProof(agentDir, record(cli)), "utf8"));
    writeFileSync(path, JSON.stringify({ ...genuine, cli_path: "/elsewhere/cli.js" }));
    expect(readSelfProof(agentDir, "1.99.0", cli)).toBeUndefined();
  });

  it("copied from another agent dir (another key) admits nothing", async () => {
    const { agentDir: theirs, cli } = await fakeHost();
    const mine = join(await makeTempDir("self-proof-mine"), "agent");
    mkdirSync(mine);
    const path = writeSelfProof(theirs, record(cli));
    writeSelfProof(mine, { ...record(cli), pi_version: "1.98.0" }); // my own key
    mkdirSync(selfProofDir(mine), { recursive: true });
    const copied = selfProofPath(mine, "1.99.0", piBuildSha256(cli) ?? "");
    copyFileSync(path, copied);
    expect(readSelfProof(theirs, "1.99.0", cli)).toBeDefined();
    expect(readSelfProof(mine, "1.99.0", cli)).toBeUndefined();
    // With their key copied too it would be theirs again: the key is what must stay private.
    copyFileSync(recordKeyPath(theirs), recordKeyPath(mine));
    expect(readSelfProof(mine, "1.99.0", cli)).toBeDefined();
  });

  it("writable by group or others, or a link, admits nothing", async () => {
    const { agentDir, cli } = await fakeHost();
    const path = writeSelfProof(agentDir, record(cli));
    const lookup = { agentDir, cliPath: cli };
    for (const [mode, admitted] of [
      [0o620, false],
      [0o602, false],
      [0o664, false],
      [0o644, true],
      [0o600, true],
    ] as const) {
      chmodSync(path, mode);
      expect(hostProofOf("1.99.0", lookup), mode.toString(8)).toBe(admitted ? "self-proven" : undefined);
    }
    const real = join(agentDir, "elsewhere.json");
    copyFileSync(path, real);
    rmSync(path);
    symlinkSync(real, path);
    expect(hostProofOf("1.99.0", lookup)).toBeUndefined();
  });

  it("under a key file others can read or write admits nothing, and no record is written with it", async () => {
    const { agentDir, cli } = await fakeHost();
    writeSelfProof(agentDir, record(cli));
    chmodSync(recordKeyPath(agentDir), 0o640);
    expect(readSelfProof(agentDir, "1.99.0", cli)).toBeUndefined();
    expect(() => writeSelfProof(agentDir, record(cli))).toThrow(/not a self-proof key of this user alone/);
    chmodSync(recordKeyPath(agentDir), 0o600);
    expect(readSelfProof(agentDir, "1.99.0", cli)).toBeDefined();
  });
});

describe("admission with bgDelegate.selfProof off", () => {
  it("reads no record: a valid one admits only while self-proof is on", async () => {
    const { agentDir, cli } = await fakeHost();
    writeSelfProof(agentDir, record(cli));
    const input = { version: "1.99.0", agentDir, configuredPiCli: cli, sessionVersion: 3 };
    const on = await admitHost({ ...input, selfProof: true });
    expect(on.refusal).toBeUndefined();
    expect(on.proof).toBe("self-proven");
    const off = await admitHost({ ...input, selfProof: false });
    expect(off.proof).toBeUndefined();
    expect(off.refusal).toBe("self-proof is off (bgDelegate.selfProof)");
  });
});

describe("the build fingerprint", () => {
  /** A package `name` in `modules` with a dist/index.js and the given Pi dependencies. */
  function pkg(modules: string, name: string, deps: string[] = [], code = "export {};\n"): string {
    const dir = join(modules, ...name.split("/"));
    mkdirSync(join(dir, "dist"), { recursive: true });
    const dependencies = Object.fromEntries(deps.map((d) => [d, "1.0.0"]));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name, version: "1.0.0", dependencies }));
    writeFileSync(join(dir, "dist", "index.js"), code);
    return dir;
  }

  it("covers the CLI's package and every Pi package it resolves, as Node would, and nothing else", async () => {
    const root = await makeTempDir("fingerprint");
    const modules = join(root, "node_modules");
    const cliDir = pkg(modules, "@earendil-works/pi-coding-agent", ["@earendil-works/pi-agent-core", "chalk"]);
    const cli = join(cliDir, "dist", "cli.js");
    writeFileSync(cli, "// cli\n");
    const core = pkg(modules, "@earendil-works/pi-agent-core", ["@earendil-works/pi-ai"]);
    const ai = pkg(modules, "@earendil-works/pi-ai");
    const chalk = pkg(modules, "chalk");
    const before = piBuildSha256(cli);
    expect(before).toMatch(/^[0-9a-f]{64}$/);
    // A non-Pi dependency is not part of it.
    writeFileSync(join(chalk, "dist", "index.js"), "export const changed = 1;\n");
    expect(piBuildSha256(cli)).toBe(before);
    // pi-ai, reached through pi-agent-core, is.
    writeFileSync(join(ai, "dist", "index.js"), "export const patched = 1;\n");
    const afterAi = piBuildSha256(cli);
    expect(afterAi).not.toBe(before);
    writeFileSync(join(core, "dist", "agent-loop.js"), "export const loop = 1;\n");
    expect(piBuildSha256(cli)).not.toBe(afterAi);
    // A nested copy wins over the top-level one, as in Node's resolution.
    const nested = pkg(join(core, "node_modules"), "@earendil-works/pi-ai", [], "export const nested = 1;\n");
    const withNested = piBuildSha256(cli);
    writeFileSync(join(ai, "dist", "index.js"), "export const unseen = 1;\n");
    expect(piBuildSha256(cli)).toBe(withNested);
    writeFileSync(join(nested, "dist", "index.js"), "export const nested = 2;\n");
    expect(piBuildSha256(cli)).not.toBe(withNested);
  });
});
