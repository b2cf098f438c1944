/**
 * The server-sent-events side every streaming wire shares: a writer that honours back-pressure (a
 * 4 MiB answer does not pile up in memory) and stops when the client has gone.
 */
import type { ServerResponse } from "node:http";
import { replyText, type ScriptedReply, splitText, usageClasses } from "./reply.ts";
import type { ModelRequest } from "./request.ts";

export interface SseWriter {
  /** Write one frame. */
  send(frame: string): void;
  /** Send `text` in pieces, one frame each, waiting for the socket after each; false when the client went away. */
  pieces(text: string, frame: (piece: string) => void): Promise<boolean>;
}

export function sseWriter(res: ServerResponse): SseWriter {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  let backlog = false;
  const drain = async (): Promise<void> => {
    if (backlog && !res.destroyed) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
    }
    backlog = false;
  };
  const send = (frame: string): void => {
    if (!res.write(frame)) backlog = true;
  };
  return {
    send,
    async pieces(text, frame) {
      for (const piece of splitText(text)) {
        if (res.destroyed) return false;
        frame(piece);
        await drain();
      }
      return true;
    },
  };
}

/** What every streaming wire but chat completions starts a reply with: its text, its token classes and a writer. */
export function startStream(res: ServerResponse, request: ModelRequest, reply: ScriptedReply) {
  const text = replyText(reply);
  return { text, u: usageClasses(request, reply, text), out: sseWriter(res) };
}
