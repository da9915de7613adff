import { sha256Hex } from "@stowage/core";

/** Longest encoded name kept readable in a key segment; longer ones are named by their SHA-256. */
const MAX_ENCODED_NAME = 200;

/**
 * A name (namespace, channel, version, task id: any string) as one key segment: `n` and its UTF-8
 * in base64url (only letters, digits, `-` and `_`, so no backend reads it as anything but a name),
 * or `h` and its SHA-256 when that would be longer than 200 characters. The record holds the name.
 */
export function nameSegment(name: string): string {
  const encoded = Buffer.from(name, "utf8").toString("base64url");
  return encoded.length <= MAX_ENCODED_NAME ? `n${encoded}` : `h${sha256Hex(name)}`;
}

const INVERTED = "fedcba9876543210";
const HEX = "0123456789abcdef";

/**
 * A checkpoint id as a key segment that sorts newest first: its UTF-8 in hex with every digit
 * inverted (f for 0 … 0 for f), then `~`, which sorts after every digit, so that a longer id sorts
 * before its own prefix. A listing, which goes in ascending key order, then starts at the newest
 * checkpoint: `getTuple` without an id lists one key.
 */
export function idSegment(id: string): string {
  const hex = Buffer.from(id, "utf8").toString("hex");
  let inverted = "";
  for (let i = 0; i < hex.length; i++) inverted += INVERTED[HEX.indexOf(hex[i]!)];
  return `${inverted}~`;
}

/** The checkpoint id of an {@link idSegment}, or undefined when `segment` is not one. */
export function idOfSegment(segment: string): string | undefined {
  if (!/^[0-9a-f]*~$/.test(segment) || segment.length % 2 !== 1 || segment.length < 3) return undefined;
  let hex = "";
  for (let i = 0; i < segment.length - 1; i++) hex += HEX[INVERTED.indexOf(segment[i]!)];
  return Buffer.from(hex, "hex").toString("utf8");
}

/** Where one store's records are, below its prefix (see `createObjectCheckpointSaver`). */
export interface CheckpointKeys {
  prefix: string;
}

export const threadDirectory = ({ prefix }: CheckpointKeys, threadId: string) => `${prefix}${threadId}/`;

export const checkpointsDirectory = (keys: CheckpointKeys, threadId: string, ns: string) =>
  `${threadDirectory(keys, threadId)}c/${nameSegment(ns)}/`;

export const checkpointKey = (keys: CheckpointKeys, threadId: string, ns: string, id: string) =>
  checkpointsDirectory(keys, threadId, ns) + idSegment(id);

export const valueKey = (
  keys: CheckpointKeys,
  threadId: string,
  ns: string,
  channel: string,
  version: string,
) => `${threadDirectory(keys, threadId)}v/${nameSegment(ns)}/${nameSegment(channel)}/${nameSegment(version)}`;

export const writesDirectory = (keys: CheckpointKeys, threadId: string, ns: string, id: string) =>
  `${threadDirectory(keys, threadId)}w/${nameSegment(ns)}/${idSegment(id)}/`;

export const writeKey = (
  keys: CheckpointKeys,
  threadId: string,
  ns: string,
  id: string,
  taskId: string,
  idx: number,
) => `${writesDirectory(keys, threadId, ns, id)}${nameSegment(taskId)}/${idx}`;

/** A listed key of a checkpoint, split: `<threadId>/c/<ns segment>/<id segment>` below the prefix. */
export function parseCheckpointKey(
  keys: CheckpointKeys,
  key: string,
): { threadId: string; nsSegment: string; id: string } | undefined {
  const parts = key.slice(keys.prefix.length).split("/");
  if (parts.length !== 4 || parts[1] !== "c") return undefined;
  const id = idOfSegment(parts[3]!);
  return id === undefined ? undefined : { threadId: parts[0]!, nsSegment: parts[2]!, id };
}
