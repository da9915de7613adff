import type { StowageConnection } from "./database.js";

/** What a LISTEN session reports. */
export interface ListenHandlers {
  /** A notification's payload on the session's channel. */
  onMessage(payload: string): void;
  /** The session's connection was lost (the server restarted, the network dropped). */
  onLost(err: unknown): void;
}

/** A dedicated connection LISTENing on one channel. */
export interface ListenSession {
  /** Stops listening and closes the dedicated connection; `onLost` is not called for it. */
  close(): Promise<void>;
}

/** Opens a LISTEN session beside a connection's pool (node-postgres) or on its database (PGlite). */
export type OpenListenSession = (channel: string, handlers: ListenHandlers) => Promise<ListenSession>;

// Kept beside the connection rather than on it: a node-postgres listener needs the connection
// string, which must not become a property anyone can log.
const openers = new WeakMap<StowageConnection, OpenListenSession>();

/** Records how LISTEN sessions are opened for a connection that `connectPostgres`/`connectEmbedded` made. */
export function registerListenSessions(connection: StowageConnection, open: OpenListenSession): void {
  openers.set(connection, open);
}

/** How to open LISTEN sessions for `connection`, or undefined for a connection Stowage did not make. */
export function listenSessionsOf(connection: StowageConnection): OpenListenSession | undefined {
  return openers.get(connection);
}
