// Session cache: token -> { userId, expiresAt }. A token stays valid until it expires or is invalidated.
const sessions = new Map();

export const sessionCache = {
  put(token, userId, ttlMs) {
    sessions.set(token, { userId, expiresAt: Date.now() + ttlMs });
  },
  get(token) {
    const session = sessions.get(token);
    if (!session || session.expiresAt < Date.now()) {
      sessions.delete(token);
      return undefined;
    }
    return session;
  },
  /** Drop every session of a user. Call it whenever the user's credentials or account change. */
  invalidate(userId) {
    for (const [token, session] of sessions) if (session.userId === userId) sessions.delete(token);
  },
};
