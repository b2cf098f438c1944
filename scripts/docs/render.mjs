/**
 * Renders the bodies of the generated blocks. Pure functions of their inputs: the same tool
 * definitions and failure table always give the same bytes.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";

/** Sorted keys everywhere; `required` is a set, so its order is normalized too. Arrays otherwise keep order. */
export function normalizeSchema(value) {
  // JSON round trip first: what a provider receives is the JSON serialization (symbols and
  // non-enumerable typebox metadata drop out, exactly as on the wire).
  return sortDeep(JSON.parse(JSON.stringify(value)), undefined);
}

function sortDeep(value, key) {
  if (Array.isArray(value)) {
    const items = value.map((item) => sortDeep(item, undefined));
    return key === "required" ? items.sort() : items;
  }
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const k of Object.keys(value).sort()) out[k] = sortDeep(value[k], k);
    return out;
  }
  return value;
}

function listFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(path));
    else if (entry.isFile() && entry.name.endsWith(".ts")) out.push(path);
  }
  return out.sort();
}

/** `src/tools/<file>:<line>` of the tool definition's `name: "<tool>"`; exactly one must exist. */
export function findToolSource(root, tool) {
  const pattern = new RegExp(`\\bname:\\s*["']${tool.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["']`);
  const hits = [];
  for (const file of listFiles(join(root, "src", "tools"))) {
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, index) => {
      if (pattern.test(line)) hits.push(`${relative(root, file).split(sep).join("/")}:${index + 1}`);
    });
  }
  if (hits.length !== 1) {
    throw new Error(
      `expected exactly one \`name: "${tool}"\` under src/tools, found ${hits.length}${hits.length > 0 ? `: ${hits.join(", ")}` : ""}`,
    );
  }
  return hits[0];
}

/**
 * A markdown table cell: pipes escaped, angle brackets as entities (so `<cwd>` is not read as an
 * HTML tag), line breaks flattened so the row stays one line.
 */
function cell(text) {
  return String(text)
    .replace(/\\/g, "\\\\")
    .replace(/\|/g, "\\|")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/\r?\n/g, "<br>");
}

function typeName(schema) {
  if (typeof schema.type === "string") return schema.type;
  if (Array.isArray(schema.type)) return schema.type.join(" | ");
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return union.map(typeName).join(" | ");
  if (Object.hasOwn(schema, "const")) return `const ${JSON.stringify(schema.const)}`;
  return "any";
}

// Keywords shown in their own columns or rows; every other keyword is listed as a constraint.
const SHOWN_ELSEWHERE = new Set(["type", "description", "properties", "required", "items", "anyOf", "oneOf", "title"]);

function constraints(schema) {
  const out = [];
  if (Array.isArray(schema.enum)) out.push(`enum: ${schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(", ")}`);
  for (const key of Object.keys(schema)) {
    if (SHOWN_ELSEWHERE.has(key) || key === "enum") continue;
    out.push(`${key}: \`${JSON.stringify(schema[key])}\``);
  }
  return out.join("; ");
}

function fieldRows(schema, prefix) {
  const rows = [];
  const required = new Set(schema.required ?? []);
  for (const name of Object.keys(schema.properties ?? {})) {
    const field = schema.properties[name];
    const path = `${prefix}${name}`;
    rows.push(
      `| \`${path}\` | ${required.has(name) ? "yes" : "no"} | \`${cell(typeName(field))}\` | ${cell(field.description ?? "")} | ${cell(constraints(field))} |`,
    );
    if (field.properties) rows.push(...fieldRows(field, `${path}.`));
    else if (field.items?.properties) rows.push(...fieldRows(field.items, `${path}[].`));
  }
  return rows;
}

/** Continuation lines of a list item are indented so a multi-line text stays inside the item. */
function listText(text) {
  return String(text).replace(/\r?\n/g, "\n  ");
}

/** Body of `tool-contract-<tool>` (docs/tools/bg_result.md, under its title "`bg_result`", shows the layout). */
export function renderToolContract({ definition, source }) {
  const schema = normalizeSchema(definition.parameters);
  const additional = Object.hasOwn(schema, "additionalProperties")
    ? `\`${JSON.stringify(schema.additionalProperties)}\``
    : "not set";
  return [
    `- Label: **${definition.label}**`,
    `- Source: \`${source}\``,
    `- Description: ${listText(definition.description)}`,
    `- Root schema: \`${typeName(schema)}\`; additionalProperties: ${additional}`,
    "",
    "| Field | Required | Type | Description | Constraints |",
    "| --- | --- | --- | --- | --- |",
    ...fieldRows(schema, ""),
    "",
    "<details>",
    "<summary>Normalized TypeBox contract</summary>",
    "",
    "",
    "```json",
    JSON.stringify(schema, null, 2),
    "```",
    "",
    "</details>",
    ...outputRows(definition.outputSchema),
  ].join("\n");
}

/**
 * What a codemode script's nested call resolves to (docs/tools/bg_result.md, "Structured results
 * for scripts"): the fields of the tool's outputSchema; nothing for a tool without one.
 */
function outputRows(outputSchema) {
  if (outputSchema === undefined) return [];
  const schema = normalizeSchema(outputSchema);
  return [
    "",
    "Structured result (`outputSchema`; what a codemode script's call resolves to):",
    "",
    "| Field | Required | Type | Description | Constraints |",
    "| --- | --- | --- | --- | --- |",
    ...fieldRows(schema, ""),
  ];
}

/** 1048576 → "1,048,576": fixed grouping, independent of the machine's locale. */
function grouped(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** The keys of an object declaration, sorted, each in backticks. */
function keyList(node) {
  return Object.keys(node.properties)
    .sort()
    .map((k) => `\`${k}\``)
    .join(", ");
}

/** What one argument's declaration (src/core/schema/kinds.ts) accepts, from its keywords. */
function check(node) {
  if (node["x-parse"] !== undefined) {
    return "a JSON Schema inside the subset of [Structured answers](#structured-answers) (outside it: `output_schema_unsupported`)";
  }
  if (node.enum !== undefined) return `one of ${node.enum.map((v) => `\`${v}\``).join(", ")}`;
  switch (node.type) {
    case "string": {
      const parts = ["string, not blank after trimming"];
      if (node.maxLength !== undefined) parts.push(`at most ${grouped(node.maxLength)} characters`);
      if (node["x-max-bytes"] !== undefined) parts.push(`at most ${grouped(node["x-max-bytes"])} bytes of UTF-8`);
      if (node["x-control"] !== true) parts.push("no control characters");
      return parts.join(", ");
    }
    case "integer":
      return `integer, ${grouped(node.minimum)} to ${grouped(node.maximum)}`;
    case "number":
      return `number of US dollars, finite, above 0 and at most ${grouped(node.maximum)}`;
    case "boolean":
      return "boolean";
    case "object":
      return `object with only the keys ${keyList(node)}`;
    case "array":
      return `array of ${node.minItems} to ${node.maxItems} objects with only the keys ${keyList(node.items)}`;
    default:
      throw new Error(`unknown argument declaration ${JSON.stringify(node)}`);
  }
}

function defaultText(name, required, defaults) {
  if (required) return "required";
  if (Object.hasOwn(defaults, name)) return `\`${JSON.stringify(defaults[name])}\``;
  return "see description";
}

function checkRows(object, defaults, prefix) {
  const rows = [];
  const required = object.required ?? [];
  for (const name of Object.keys(object.properties).sort()) {
    const node = object.properties[name];
    const path = `${prefix}${name}`;
    const given = defaultText(name, required.includes(name), prefix === "" ? defaults : {});
    rows.push(`| \`${path}\` | ${cell(given)} | ${cell(check(node))} |`);
    if (node.type === "object" && node["x-parse"] === undefined) rows.push(...checkRows(node, {}, `${path}.`));
    if (node.type === "array") rows.push(...checkRows(node.items, {}, `${path}[].`));
  }
  return rows;
}

/** Body of `argument-checks-<tool>`: the strict check run before pi's own validation (src/arguments/tool-arguments.ts). */
export function renderArgumentChecks({ schema, defaults }) {
  return ["| Field | Default | Accepted values |", "| --- | --- | --- |", ...checkRows(schema, defaults, "")].join(
    "\n",
  );
}

/** What the user meets, by the stage the code arises in (FailureStage of src/core/errors.ts). */
const STAGE_SURFACE = {
  admission:
    "The `bg_delegate` or `bg_fusion` call fails with this code; no child is started and no task files are kept.",
  launch:
    "The `bg_delegate` call fails with this code and no child runs; the task's directory stays, with the failure recorded in its `manifest.json`.",
  run: "The task ends as failed; the completion notice and `bg_result` show the code and the output log, and no answer is returned.",
  verify: "The completion notice and `bg_result` show the code; no answer bytes are returned.",
  retrieval: "The `bg_result` call fails with this code; the task itself is unchanged.",
  steer: "The `bg_steer` call fails with this code; nothing is written and the delegate runs on unchanged.",
};
const STAGE_LABEL = {
  admission: "Before launch",
  launch: "At launch",
  run: "In the child",
  verify: "On verification",
  retrieval: "On retrieval",
  steer: "On steering",
};

/** A cancel ends the task in state `cancelled`, every other code of the run in `failed` (src/tasks/adjudicate-task.ts). */
const CANCELLED_CODE = "child_cancelled";

function stageSurface(stage, code) {
  const text = STAGE_SURFACE[stage];
  return stage === "run" && code === CANCELLED_CODE
    ? text.replace("ends as failed", "ends as cancelled (state `cancelled`)")
    : text;
}

function surface(stages, code) {
  if (stages.length === 1) return stageSurface(stages[0], code);
  const lower = (text) => text.charAt(0).toLowerCase() + text.slice(1);
  return stages.map((stage) => `${STAGE_LABEL[stage]}: ${lower(stageSurface(stage, code))}`).join(" ");
}

/** Body of `failure-codes`: every code of src/core/errors.ts, in its order. */
export function renderFailureCodes(rows) {
  return [
    `${rows.length} codes, generated from \`FAILURE_WHEN\` and \`FAILURE_REMEDIATION\` in \`src/core/errors.ts\`.`,
    "",
    "| Code | When | What you see | What to do |",
    "| --- | --- | --- | --- |",
    ...rows.map(
      (row) =>
        `| \`${row.code}\` | ${cell(row.when)} | ${cell(surface(row.stages, row.code))} | ${cell(row.remediation)} |`,
    ),
  ].join("\n");
}

/** The child flags a capability adds (src/launch/argv.ts hostFlags). */
/** Body of `host-probe-checks`, from HOST_PROBE_CHECKS. */
export function renderHostProbeChecks(checks) {
  return [
    "| check | what must hold |",
    "| --- | --- |",
    ...checks.map((c) => `| \`${c.id}\` | ${c.means} |`),
    "",
    "- Source: `HOST_PROBE_CHECKS` in `src/core/host-probe-checks.ts`; the host-proof suite runs the same probe on every proven version.",
  ].join("\n");
}

/** Body of `pi-versions`, from PROVEN_PI_VERSIONS and scripts/hosts.mjs. */
export function renderPiVersions(hosts) {
  return [
    "| Pi version | package | Node |",
    "| --- | --- | --- |",
    ...hosts.map((h) => `| \`${h.version}\` | \`${h.packageName}\` | ≥ ${h.minNode} |`),
    "",
    "- Source: `PROVEN_PI_VERSIONS` in `src/host/proven.ts`, the one place they are written. The",
    "  flags a child gets beyond the common ones (`--no-mcp`, `--no-approve`/`--approve`) are read from",
    "  the host itself, not from this table.",
    "- Any other version proves itself with the host probe on first use (see Self-proof), or is refused",
    "  with `delegate_hook_contract_unsupported`.",
  ].join("\n");
}

/** Body of `setting-trust`, from SETTING_POLICIES and SETTING_RULE_TEXT. */
export function renderSettingTrust({ policies, rules }) {
  return [
    "| key | environment | who may set it | how values combine | an untrusted project's wider value |",
    "| --- | --- | --- | --- | --- |",
    ...policies.map(
      (p) =>
        `| \`bgDelegate.${p.key}\` | ${p.env === null ? "—" : `\`${p.env}\``} | ${rules[p.rule].who} | ${rules[p.rule].combine} | ${p.rule === "anyone" ? "wins (it widens nothing)" : `ignored: ${p.because}`} |`,
    ),
    "",
    "- Source: `SETTING_POLICIES` in `src/core/setting-trust.ts`, the list `loadSettings` combines by.",
  ].join("\n");
}
