/**
 * The one model-server fixture: `const server = useModelServer()` at the top of a test file starts
 * one scripted server before the file's own hooks, resets it between tests (requests, handler,
 * pending failures) unless told not to, and closes it after the file.
 */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { type ModelServer, type ModelServerOptions, startModelServer } from "./model-server.ts";

export interface ModelServerFixtureOptions extends ModelServerOptions {
  /** Keep requests and the handler across tests (files whose tests read one shared run). Default true. */
  resetBetweenTests?: boolean;
}

export function useModelServer(options: ModelServerFixtureOptions = {}): ModelServer {
  const { resetBetweenTests = true, ...serverOptions } = options;
  let current: ModelServer | undefined;
  beforeAll(async () => {
    current = await startModelServer(serverOptions);
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  if (resetBetweenTests) beforeEach(() => current?.reset());
  return new Proxy({} as ModelServer, {
    get(_target, key) {
      if (current === undefined) throw new Error("the model server is used outside its file's tests");
      const value: unknown = Reflect.get(current, key);
      return typeof value === "function" ? value.bind(current) : value;
    },
  });
}
