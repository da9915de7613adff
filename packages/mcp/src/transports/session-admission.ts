/** One open MCP session, as the admission of a new one sees it. */
export interface HeldSession {
  readonly id: string;
  /** The principal that opened it. */
  readonly owner: string;
  /** When its last request came or was answered, or its last notification stream closed. */
  readonly lastUsed: number;
  /** Its requests being answered (a POST from its arrival until its answer is sent). */
  readonly requests: number;
  /** Its GET notification streams open. */
  readonly streams: number;
}

/** The caps a new session is admitted under. */
export interface AdmissionLimits {
  /** Most sessions of all owners together. */
  maxSessions: number;
  /** Most sessions of one owner. */
  maxPerOwner: number;
}

/**
 * What to do with a new session of an owner: admit it, after closing `close` when that is set; or
 * refuse it because the owner is at its own cap (`limit` = the per-owner cap) or holds its fair
 * share of a table with no session to spare (`limit` = the fair share).
 */
export type Admission =
  | { admitted: true; close?: string }
  | { admitted: false; cap: "owner" | "fair-share"; limit: number };

/** In use: a request is being answered, or a client listens on its notification stream. */
export function isBusy(session: HeldSession): boolean {
  return session.requests > 0 || session.streams > 0;
}

/** The session of `list` that comes first in `order`, or undefined. */
function firstBy(list: readonly HeldSession[], order: (a: HeldSession, b: HeldSession) => number) {
  let first: HeldSession | undefined;
  for (const session of list) if (first === undefined || order(session, first) < 0) first = session;
  return first;
}

const leastRecentlyUsed = (a: HeldSession, b: HeldSession) => a.lastUsed - b.lastUsed;

/**
 * A busy session to close for an owner under its fair share: one whose client only listens before
 * one answering a request (a stream is opened again; a request would be cut), least recently used
 * first.
 */
const cheapestBusy = (a: HeldSession, b: HeldSession) =>
  Number(a.requests > 0) - Number(b.requests > 0) || leastRecentlyUsed(a, b);

/**
 * Of the other owners holding more than `floor` sessions, the one holding the most, and its
 * session that comes first in `order` among those `eligible` (ties between owners: the session
 * that comes first).
 */
function fromTheFullest(
  byOwner: ReadonlyMap<string, HeldSession[]>,
  count: (owner: string) => number,
  requester: string,
  floor: number,
  eligible: (session: HeldSession) => boolean,
  order: (a: HeldSession, b: HeldSession) => number,
): HeldSession | undefined {
  let chosen: HeldSession | undefined;
  let chosenCount = 0;
  for (const [owner, list] of byOwner) {
    const held = count(owner);
    if (owner === requester || held <= floor) continue;
    const candidate = firstBy(list.filter(eligible), order);
    if (candidate === undefined) continue;
    if (
      chosen === undefined ||
      held > chosenCount ||
      (held === chosenCount && order(candidate, chosen) < 0)
    ) {
      chosen = candidate;
      chosenCount = held;
    }
  }
  return chosen;
}

/**
 * Whether `owner` may open one more session, and which session makes room. Sessions being opened
 * (`opening`, per owner) count as held and are never closed. In this order:
 *
 * 1. An owner at `maxPerOwner` gets its own least recently used idle session closed; when every
 *    one of its sessions is busy it is refused. Nobody else's session ever makes room for it.
 * 2. Under `maxSessions` in all, it is admitted.
 * 3. A full table closes the least recently used idle session of the owner holding the most,
 *    among those holding more than the requester: idle sessions are spent on whoever holds more.
 * 4. Else the requester's own least recently used idle session.
 * 5. Else, when the requester holds less than its fair share (`maxSessions` split evenly between
 *    the owners holding sessions, it included), a busy session of the owner holding the most among
 *    those over their share (one only listening before one answering a request). Such an owner
 *    always exists when the table is full, so an owner under its share is refused only while every
 *    session of those owners is still being opened.
 * 6. Else it is refused: it holds its share, and nobody's busy session is closed for it.
 *
 * A busy session is closed only for an owner under its fair share, of an owner over it, so a busy
 * place never passes back and forth between two owners; idle places go to whoever asks, from whoever
 * holds more.
 */
export function admit(
  owner: string,
  sessions: Iterable<HeldSession>,
  opening: ReadonlyMap<string, number>,
  limits: AdmissionLimits,
): Admission {
  const byOwner = new Map<string, HeldSession[]>();
  let total = 0;
  for (const session of sessions) {
    const list = byOwner.get(session.owner);
    if (list) list.push(session);
    else byOwner.set(session.owner, [session]);
    total++;
  }
  for (const being of opening.values()) total += being;
  const count = (who: string) => (byOwner.get(who)?.length ?? 0) + (opening.get(who) ?? 0);
  const idle = (session: HeldSession) => !isBusy(session);
  const mine = count(owner);
  const ownIdle = firstBy((byOwner.get(owner) ?? []).filter(idle), leastRecentlyUsed);

  if (mine >= limits.maxPerOwner) {
    return ownIdle
      ? { admitted: true, close: ownIdle.id }
      : { admitted: false, cap: "owner", limit: limits.maxPerOwner };
  }
  if (total < limits.maxSessions) return { admitted: true };
  const spare = fromTheFullest(byOwner, count, owner, mine, idle, leastRecentlyUsed) ?? ownIdle;
  if (spare) return { admitted: true, close: spare.id };
  const owners = new Set([...byOwner.keys(), ...opening.keys(), owner]).size;
  const fairShare = Math.floor(limits.maxSessions / owners);
  if (mine < fairShare) {
    const busy = fromTheFullest(byOwner, count, owner, fairShare, isBusy, cheapestBusy);
    if (busy) return { admitted: true, close: busy.id };
  }
  return { admitted: false, cap: "fair-share", limit: fairShare };
}
