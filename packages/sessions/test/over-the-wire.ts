import { type CapturedSession, fromTransport, type TransportedSession, toTransport } from "../src/index.js";

/** The session as a container hands it over: through the JSON transport, as the HTTP API carries it. */
export function overTheWire(captured: CapturedSession): TransportedSession {
  return fromTransport(JSON.parse(JSON.stringify(toTransport(captured))));
}
