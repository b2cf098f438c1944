/**
 * The `pi-bg-delegate` command (docs/cli.md): parse, resolve the id with bg_result's rules, run one
 * command, return its exit status. Failures read exactly as the tools' (docs/failure-codes.md, "How a
 * failure reads"). Nothing imports this folder; bin/pi-bg-delegate.mjs loads it.
 */
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { DELEGATE_ROOT, FUSION_ROOT } from "../core/constants.ts";
import { DelegateError } from "../core/errors.ts";
import { boundedMessage } from "../core/failure-text.ts";
import { writeFileAtomic } from "../core/fs.ts";
import { looksLikeGroupId } from "../core/group.ts";
import { safeJson, visible, visibleLines } from "../core/terminal-text.ts";
import { formatBytes } from "../core/units.ts";
import { diskFull, isDiskFull } from "../core/write-failure.ts";
import { requireMineRef, resolveTaskRef } from "../store/lookup.ts";
import { userAgentDir } from "../store/tree-trust.ts";
import { adjudicateStrandedRuns } from "../tasks/adjudicate.ts";
import { projectGroupMembers } from "../tasks/group-members.ts";
import { pruneTasks } from "../tasks/prune.ts";
import type { TaskRow } from "../tasks/row.ts";
import { loadRowCache, saveRowCache } from "../tasks/row-cache-file.ts";
import { listRows } from "../tasks/seam.ts";
import { spendTotal } from "../views/spend-total.ts";
import { EXIT, type ParsedCommand, parseArgs, UsageError } from "./args.ts";
import { cancelTask } from "./cancel.ts";
import { cliFailureText, cliRemediation, unexpectedFailureText } from "./failure.ts";
import { helpText } from "./help.ts";
import type { CliIo } from "./io.ts";
import { findProjectRoot } from "./project-root.ts";
import { proveHost } from "./prove-host.ts";
import { pruneJson, renderPrune } from "./prune.ts";
import { adjudicateStrandedRun } from "./refs.ts";
import { LIST_SCHEMA, renderFacts, renderList } from "./render.ts";
import { waitForAnswer } from "./result.ts";
import { taskFacts } from "./show.ts";
import { SHOW_SCHEMA } from "./show-facts.ts";
import { renderVerify, verifyTask } from "./verify.ts";

export type { CliIo } from "./io.ts";

/**
 * Everything the command prints but the answer bytes goes through here: what a task tree says may
 * hold terminal control sequences, which are shown escaped ({@link visibleLines}), never acted on.
 */
function say(io: CliIo, stream: "stdout" | "stderr", text: string): void {
  io[stream](`${visibleLines(text)}\n`);
}

/**
 * The id resolved as bg_result resolves it; this process has seen no task, so nothing is "known". A
 * group's id names its members instead: the command line reads one task or run at a time.
 */
function resolveRef(io: CliIo, id: string) {
  try {
    return resolveTaskRef(io.cwd, id, new Map());
  } catch (error) {
    if (!(error instanceof DelegateError) || error.code !== "task_unknown" || !looksLikeGroupId(id)) throw error;
    const members = projectGroupMembers(io.cwd, (g) => g.startsWith(id));
    if (members.length === 0) throw error;
    const group = members[0]!.group;
    throw new DelegateError(
      "task_unknown",
      `"${id}" is group "${group.name}" (${group.id}), not a task: give one member's id — ${members.map((m) => `${m.ref.id} (${m.name}, ${m.state})`).join(", ")}; bg_result reads them together in the session that launched them`,
      {},
      { cause: error },
    );
  }
}

/** The same, for a command that returns or verifies its answer: a foreign tree is task_foreign (docs/cli.md). */
function resolveMine(io: CliIo, id: string) {
  return requireMineRef(resolveRef(io, id));
}

function printJson(io: CliIo, value: unknown): void {
  io.stdout(`${safeJson(value)}\n`);
}

/** Of rows newest first: the delegates of the newest session only, and every Fusion run. */
function newestSessionOnly(rows: readonly TaskRow[]): TaskRow[] {
  const newestSession = rows.find((r) => r.kind === "delegate")?.session;
  return rows.filter((r) => r.kind === "fusion" || r.session === newestSession);
}

/**
 * The rows to print (without `--all` only the newest session's, saying how many more `--all` shows),
 * chosen from every row as recorded (an ended row kept from the last run while its manifest is the
 * same file: src/tasks/row-cache-file.ts), then only those read and verified once each
 * (src/tasks/seam.ts, `listRows`; docs/cli.md, "list"): a month of trees costs what one screen
 * does. `--verify` verifies every tree, printed or not. A stranded Fusion run is adjudicated first.
 */
async function list(io: CliIo, p: ParsedCommand): Promise<number> {
  await adjudicateStrandedRuns(io.cwd);
  // The ended rows kept from the last run: each tree examined, only new or changed ones read.
  const agentDir = userAgentDir();
  const cache = p.verify ? undefined : loadRowCache(io.cwd, agentDir, { settledSessions: true });
  const every =
    cache === undefined ? await listRows(io.cwd, { verify: true }) : listRows(io.cwd, { verify: false, cache });
  if (cache !== undefined) saveRowCache(io.cwd, agentDir, cache);
  const chosen = p.all ? every : newestSessionOnly(every);
  const rows = p.verify ? chosen : await listRows(io.cwd, { verify: true, only: new Set(chosen.map((r) => r.id)) });
  if (every.length === 0 && !p.json && !findProjectRoot(io.cwd).found) {
    const here = io.here ?? io.cwd;
    say(io, "stdout", `No tasks: no ${DELEGATE_ROOT} or ${FUSION_ROOT} in ${visible(here)} or any directory above it.`);
    return EXIT.ok;
  }
  const verified = p.verify ? "all" : "shown";
  if (p.json)
    printJson(io, {
      schema_version: LIST_SCHEMA,
      all: p.all,
      verified,
      tasks: rows,
      spend_total: spendTotal(rows),
    });
  else say(io, "stdout", renderList(rows, p.all, every.length - rows.length, verified));
  return EXIT.ok;
}

/** Exit 1 when the task's result (or manifest) fails a check just now; the failure goes to stderr. */
async function show(io: CliIo, p: ParsedCommand): Promise<number> {
  const ref = resolveRef(io, p.id!);
  if (!ref.trust.mine) {
    // A foreign tree is marked, and nothing it says of itself is shown as fact (docs/cli.md, "show").
    const facts = { schema_version: SHOW_SCHEMA, id: ref.id, kind: ref.kind, state: "foreign", foreign: ref.trust.why };
    if (p.json) printJson(io, { ...facts, dir: ref.dir });
    else say(io, "stdout", `${ref.id} ${ref.kind}\nstate   foreign (${ref.trust.why})\ndir     ${ref.dir}`);
    say(
      io,
      "stderr",
      `[task_foreign] ${ref.id} is foreign: ${ref.trust.why}\nRemediation: ${cliRemediation("task_foreign")}`,
    );
    return EXIT.failure;
  }
  await adjudicateStrandedRun(ref);
  const facts = await taskFacts(ref);
  if (p.json) printJson(io, facts);
  else say(io, "stdout", renderFacts(facts));
  const { failure } = facts;
  if (failure === null || (facts.state !== "completed" && facts.state !== "unreadable")) return EXIT.ok;
  say(io, "stderr", `[${failure.code}] ${boundedMessage(failure.message)}\nRemediation: ${failure.remediation}`);
  return EXIT.failure;
}

async function verify(io: CliIo, p: ParsedCommand): Promise<number> {
  const { report, failureText } = await verifyTask(resolveMine(io, p.id!));
  if (p.json) printJson(io, report);
  else say(io, "stdout", renderVerify(report));
  if (failureText !== null) say(io, "stderr", failureText);
  return report.outcome === "verified" ? EXIT.ok : report.outcome === "running" ? EXIT.running : EXIT.failure;
}

function errnoText(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : error instanceof Error ? error.message : String(error);
}

/**
 * --out must name a file in an existing directory this process can create a file in, checked before
 * the id is looked up or anything is waited for: a bad --out changes nothing and exits 2. Whether a
 * file can be created is tried (an exclusive temporary file, removed at once): permission bits do not
 * say it for root, a read-only mount or /proc.
 */
function checkOut(out: string | undefined, cwd: string): string | undefined {
  if (out === undefined) return undefined;
  const path = resolve(cwd, out);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--out: ${dir} is not a directory`, "result");
  if (existsSync(path) && statSync(path).isDirectory()) throw new UsageError(`--out: ${path} is a directory`, "result");
  const probe = join(dir, `.pi-bg-delegate-out.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    closeSync(openSync(probe, "wx", 0o600));
  } catch (error) {
    throw new UsageError(`--out: ${dir} is not writable (${errnoText(error)})`, "result");
  }
  rmSync(probe, { force: true });
  return path;
}

const OUT_REMEDIATION =
  "Check that the --out directory is writable and the disk has space, then run the command again.";

async function result(io: CliIo, p: ParsedCommand): Promise<number> {
  const out = checkOut(p.out, io.here ?? io.cwd);
  const ref = resolveMine(io, p.id!);
  const started = Date.now();
  const answer = await waitForAnswer(ref, p.waitSeconds ?? 0, () =>
    say(
      io,
      "stderr",
      `${ref.id} is running; waiting up to ${p.waitSeconds}s for it (read-only: it is never cancelled)…`,
    ),
  );
  if (answer.kind === "running") {
    const waited = p.waitSeconds === undefined ? "" : ` after waiting ${Math.round((Date.now() - started) / 1000)}s`;
    say(io, "stderr", `${ref.id} is still running${waited}; nothing was cancelled or changed. Try again later.`);
    return EXIT.running;
  }
  if (answer.kind === "ended") {
    say(io, "stderr", answer.text);
    return EXIT.failure;
  }
  // --json: {run, output} in the retrieval API's shape (docs/cli.md, "The result document").
  const bytes = p.json ? Buffer.from(`${JSON.stringify(answer.result, null, 2)}\n`) : answer.bytes;
  // The verified answer's own bytes, unescaped: they are the answer (a terminal shows them as it would a file).
  if (out === undefined) {
    io.stdout(bytes);
    // The output ends with a newline (docs/cli.md, "result"); --out writes the answer's exact bytes.
    if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a) io.stdout("\n");
    return EXIT.ok;
  }
  try {
    writeFileAtomic(out, bytes);
  } catch (error) {
    // A full disk is disk_full naming the file (src/core/write-failure.ts).
    if (isDiskFull(error)) {
      throw diskFull(`could not write --out ${out}`, out, {
        childProcessCreated: true,
        remediation: "Free space on the filesystem holding the --out file, then run the command again.",
      });
    }
    throw new DelegateError("artifact_error", `could not write --out ${out}: ${errnoText(error)}`, {
      childProcessCreated: true,
      remediation: OUT_REMEDIATION,
    });
  }
  say(io, "stderr", `Wrote the verified answer of ${ref.id} (${formatBytes(bytes.length)}) to ${out}`);
  return EXIT.ok;
}

async function prune(io: CliIo, p: ParsedCommand): Promise<number> {
  // A run whose owner died is adjudicated first (as list does); then it is an ended run like any other.
  await adjudicateStrandedRuns(io.cwd);
  const outcome = await pruneTasks(
    io.cwd,
    { olderThanDays: p.olderThanDays, keep: p.keep, undelivered: p.undelivered, unlink: p.unlink, foreign: p.foreign },
    { dryRun: p.dryRun },
  );
  if (p.json) printJson(io, pruneJson(outcome));
  else say(io, "stdout", renderPrune(outcome));
  for (const { candidate, message } of outcome.errors)
    say(io, "stderr", `could not remove ${visible(candidate.id)}: ${visible(message)}`);
  return outcome.errors.length === 0 ? EXIT.ok : EXIT.failure;
}

const RUNNERS = {
  list,
  show,
  verify,
  result,
  cancel: (io: CliIo, p: ParsedCommand) => cancelTask(io, resolveRef(io, p.id!)),
  prune,
  "prove-host": (io: CliIo, p: ParsedCommand) => proveHost(io, p),
} satisfies Record<ParsedCommand["command"], (io: CliIo, p: ParsedCommand) => Promise<number> | number>;

/**
 * Run one command and return its exit status (docs/cli.md, "Exit statuses"). Nothing escapes as a
 * stack trace: a wrong command line is status 2 with a usage line, a typed failure status 1 with its
 * [code] line, and anything else that goes wrong (a write, a stream) status 1 as artifact_error.
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  let command = "pi-bg-delegate";
  try {
    const invocation = parseArgs(argv);
    if (invocation.kind === "help") {
      io.stdout(`${helpText(invocation.command)}\n`);
      return EXIT.ok;
    }
    command = `pi-bg-delegate ${invocation.parsed.command}`;
    // Run in a subdirectory, a command reads the project above it, as git does (docs/cli.md, "Which project").
    const project: CliIo = { ...io, cwd: findProjectRoot(io.cwd).root, here: io.here ?? io.cwd };
    return await RUNNERS[invocation.parsed.command](project, invocation.parsed);
  } catch (error) {
    try {
      if (error instanceof UsageError) {
        const hint = error.command ? `pi-bg-delegate ${error.command} --help` : "pi-bg-delegate --help";
        // Every problem of the call, one line each (docs/cli.md, "Exit statuses").
        const lines = error.problems.map((problem) => `pi-bg-delegate: ${problem}`);
        say(io, "stderr", `${lines.join("\n")}\nSee: ${hint}`);
        return EXIT.usage;
      }
      say(io, "stderr", error instanceof DelegateError ? cliFailureText(error) : unexpectedFailureText(command, error));
    } catch {
      // stderr itself is gone: the status still says it failed
    }
    return EXIT.failure;
  }
}
