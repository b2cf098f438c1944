/**
 * The isolated child's environment allowlist (docs/subsystems/launch.md, "Environment and
 * credentials"): the one list of what an isolated child may inherit. Everything else the parent
 * holds (other providers' keys, cloud and git tokens) stays behind.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fieldOf } from "../core/validate.ts";

/** A rule matches a variable name exactly, or every name starting with `prefix`. */
export type EnvRule = { name: string } | { prefix: string };

/** What Pi, Node and the child's tools need on any route: process basics, locale, terminal, network. */
export const BASE_ENV_RULES: readonly EnvRule[] = [
  ...["PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "TZ", "LANG", "LANGUAGE"].map((name) => ({ name })),
  { prefix: "LC_" },
  ...["TMPDIR", "TMP", "TEMP", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR"].map((name) => ({ name })),
  { prefix: "XDG_" },
  // Pi's own settings (agent dir, offline, telemetry, package dir); the parent-session ones are removed later.
  { prefix: "PI_" },
  // Proxies and certificates: the provider must be reachable the way the parent reaches it.
  ...["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "all_proxy", "no_proxy"].map(
    (name) => ({ name }),
  ),
  ...["NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_TLS_REJECT_UNAUTHORIZED"].map((name) => ({ name })),
];

/**
 * The variables each built-in provider reads besides auth.json (Pi's `--help` lists them): its key
 * or token, and the settings that say where and as whom it connects. A provider not listed here
 * still gets `<PROVIDER>_API_KEY` (see providerEnvRules).
 */
export const PROVIDER_ENV_RULES: Readonly<Record<string, readonly EnvRule[]>> = {
  anthropic: [{ name: "ANTHROPIC_API_KEY" }, { name: "ANTHROPIC_OAUTH_TOKEN" }, { name: "ANTHROPIC_AUTH_TOKEN" }],
  openai: [{ name: "OPENAI_API_KEY" }],
  "azure-openai-responses": [{ prefix: "AZURE_OPENAI_" }],
  azure: [{ prefix: "AZURE_OPENAI_" }],
  google: [{ name: "GEMINI_API_KEY" }],
  "google-vertex": [
    { name: "GOOGLE_CLOUD_API_KEY" },
    { name: "GOOGLE_APPLICATION_CREDENTIALS" },
    { name: "GOOGLE_CLOUD_PROJECT" },
    { name: "GOOGLE_CLOUD_LOCATION" },
    { name: "GCLOUD_PROJECT" },
  ],
  "amazon-bedrock": [{ prefix: "AWS_" }],
  "github-copilot": [{ name: "COPILOT_GITHUB_TOKEN" }, { name: "GH_TOKEN" }, { name: "GITHUB_TOKEN" }],
  "vercel-ai-gateway": [{ name: "AI_GATEWAY_API_KEY" }],
  moonshotai: [{ name: "MOONSHOT_API_KEY" }],
  "moonshotai-cn": [{ name: "MOONSHOT_API_KEY" }],
  huggingface: [{ name: "HF_TOKEN" }],
  "opencode-go": [{ name: "OPENCODE_API_KEY" }],
  "kimi-coding": [{ name: "KIMI_API_KEY" }],
  "cloudflare-workers-ai": [{ name: "CLOUDFLARE_API_KEY" }, { name: "CLOUDFLARE_ACCOUNT_ID" }],
  "cloudflare-ai-gateway": [
    { name: "CLOUDFLARE_API_KEY" },
    { name: "CLOUDFLARE_ACCOUNT_ID" },
    { name: "CLOUDFLARE_GATEWAY_ID" },
  ],
};

/** `my-llm` → `MY_LLM_API_KEY`: the conventional key variable of a provider (deepseek, groq, xai, …). */
export function conventionalKeyVariable(provider: string): string {
  return `${provider.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}_API_KEY`;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Variables the provider's models.json entry names in its `apiKey` or header values: a value that is
 * a set variable's name (Pi 0.73), or `$NAME` / `${NAME}` inside a value (Pi 1.x).
 */
function modelsJsonVariables(agentDir: string, provider: string, env: NodeJS.ProcessEnv): EnvRule[] {
  const path = join(agentDir, "models.json");
  if (!existsSync(path)) return [];
  let entry: unknown;
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    entry = fieldOf(fieldOf(parsed, "providers"), provider);
  } catch {
    return []; // Pi reports a broken models.json itself; nothing extra passes.
  }
  if (typeof entry !== "object" || entry === null) return [];
  const apiKey = fieldOf(entry, "apiKey");
  const headers = fieldOf(entry, "headers");
  const values = [apiKey, ...(typeof headers === "object" && headers !== null ? Object.values(headers) : [])];
  const names = values.flatMap((v) => {
    if (typeof v !== "string") return [];
    // Pi 0.73: a value that is a variable's name; Pi 1.x: `$NAME` or `${NAME}` references in the value.
    const referenced = [...v.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g)].map((m) => m[1] ?? "");
    return ENV_NAME.test(v) ? [v, ...referenced] : referenced;
  });
  return names.filter((name) => name !== "" && env[name] !== undefined).map((name) => ({ name }));
}

/** The pinned provider's rules: its table entry, its conventional key variable, its models.json references. */
export function providerEnvRules(provider: string, agentDir: string, env: NodeJS.ProcessEnv): EnvRule[] {
  return [
    ...(PROVIDER_ENV_RULES[provider] ?? []),
    { name: conventionalKeyVariable(provider) },
    ...modelsJsonVariables(agentDir, provider, env),
  ];
}

/** The key variable names to suggest for a provider (the failure text of route_credentials_missing). */
export function providerKeyVariables(provider: string): string[] {
  const named = (PROVIDER_ENV_RULES[provider] ?? []).map((rule) => ("name" in rule ? rule.name : `${rule.prefix}*`));
  return named.length > 0 ? named : [conventionalKeyVariable(provider)];
}

export function matchesRule(name: string, rules: readonly EnvRule[]): boolean {
  return rules.some((rule) => ("name" in rule ? rule.name === name : name.startsWith(rule.prefix)));
}
