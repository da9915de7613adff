// A Notifier shared by processes on one machine, for the cross-process tests: a hub on a Unix
// socket that sends every published message to every connected process, the way PostgreSQL's
// NOTIFY reaches every LISTEN session (the publisher's own included).
import { createConnection, createServer, type Socket } from "node:net";
import { assertNotification, type Notifier } from "@stowage/core";

interface Frame {
  topic: string;
  message: string;
}

/** Calls `onFrame` with each newline-terminated JSON frame arriving on `socket`. */
function readFrames(socket: Socket, onFrame: (line: string) => void): void {
  let pending = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf("\n"); end !== -1; end = pending.indexOf("\n")) {
      onFrame(pending.slice(0, end));
      pending = pending.slice(end + 1);
    }
  });
}

/** Starts the hub at `path`; `close` disconnects every process. */
export async function startNotifierHub(path: string): Promise<{ close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket)).on("error", () => socket.destroy());
    readFrames(socket, (line) => {
      for (const peer of sockets) peer.write(`${line}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(path, resolve));
  return {
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A notifier connected to the hub at `path`. */
export async function connectSocketNotifier(path: string): Promise<Notifier> {
  const socket = createConnection(path);
  await new Promise<void>((resolve, reject) => socket.once("error", reject).once("connect", resolve));
  const listeners = new Map<string, Set<(message: string) => void>>();
  readFrames(socket, (line) => {
    const { topic, message } = JSON.parse(line) as Frame;
    for (const listener of [...(listeners.get(topic) ?? [])]) {
      try {
        listener(message);
      } catch {
        // One broken subscriber must not stop the others.
      }
    }
  });
  const notifier: Notifier = {
    async publish(topic, message) {
      assertNotification(topic, message);
      await new Promise<void>((resolve, reject) =>
        socket.write(`${JSON.stringify({ topic, message } satisfies Frame)}\n`, (err) =>
          err ? reject(err) : resolve(),
        ),
      );
    },
    async subscribe(topic, listener) {
      assertNotification(topic);
      const set = listeners.get(topic) ?? new Set();
      listeners.set(topic, set);
      set.add(listener);
      return async () => {
        set.delete(listener);
      };
    },
    async close() {
      listeners.clear();
      await new Promise<void>((resolve) => socket.end(resolve));
    },
    [Symbol.asyncDispose]: () => notifier.close(),
  };
  return notifier;
}
