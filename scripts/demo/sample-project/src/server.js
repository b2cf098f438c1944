import { createServer } from "node:http";
import { sessionCache } from "./session-cache.js";

// Every request carries "authorization: Bearer <token>"; the cache decides who it is.
export function startServer(port = 8080) {
  return createServer((req, res) => {
    const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    const session = sessionCache.get(token);
    if (!session) {
      res.writeHead(401).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ userId: session.userId }));
  }).listen(port);
}
