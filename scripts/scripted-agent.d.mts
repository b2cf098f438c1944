export interface ScriptedModelSpec {
  id: string;
  name?: string;
  contextWindow?: number;
  maxTokens?: number;
  reasoning?: boolean;
  input?: ("text" | "image")[];
  /** Dollars per million tokens (default all zero). */
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
}
export function scriptedModel(spec: ScriptedModelSpec): Record<string, unknown>;
export function scriptedSettings(retry?: boolean | number): Record<string, unknown>;
export function writeScriptedAgentDir(
  dir: string,
  options: {
    provider: string;
    baseUrl: string;
    apiKey: string;
    models: readonly ScriptedModelSpec[];
    settings?: Record<string, unknown>;
    /** More providers at the scripted server, each with its own API (e.g. "anthropic-messages"). */
    extraProviders?: readonly {
      provider: string;
      baseUrl: string;
      api: string;
      models: readonly ScriptedModelSpec[];
    }[];
  },
): { models: Record<string, unknown>; settings: Record<string, unknown> };
export function assistantsAfter(messages: readonly { role: string }[], index: number): number;
