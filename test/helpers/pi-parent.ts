/**
 * The real-pi test harness in one import: the scripted model server, the temp agent dir, and the
 * two ways to drive a pi parent with this package loaded (in-process SDK, or a pi process over RPC).
 */
export * from "./agent-dir.ts";
export * from "./agent-dir-fixture.ts";
export * from "./event-log.ts";
export * from "./model-server.ts";
export * from "./model-server-fixture.ts";
export * from "./pi-paths.ts";
export * from "./pi-rpc-parent.ts";
export * from "./pi-sdk-parent.ts";
export * from "./temp.ts";
