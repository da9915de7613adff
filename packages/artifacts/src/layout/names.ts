import { describeValue, StowageError } from "@stowage/core";

/** Largest artifact id or agent-output index: the largest integer a JavaScript number holds exactly. */
export const MAX_ARTIFACT_ID = Number.MAX_SAFE_INTEGER;
/** Longest tool type kept in an artifact file name (`<id>.<toolType>.log`) after sanitizing. */
export const MAX_TOOL_TYPE_LENGTH = 64;
/** Tool type used when nothing of the given one survives sanitizing. */
const FALLBACK_TOOL_TYPE = "tool";
/** Longest requested id kept in an agent output id (`<index>-<requestedId>`) after sanitizing. */
const MAX_AGENT_NAME_LENGTH = 64;
/** Requested id used when nothing of the given one survives sanitizing. */
const FALLBACK_AGENT_NAME = "agent";
/** Longest agent output id, nesting included, so that `<id>.md` and its claim fit a 255-byte file name. */
export const MAX_AGENT_OUTPUT_ID_LENGTH = 200;
/** Suffix of a tool output still being written; the file is renamed without it once complete. */
export const PARTIAL_SUFFIX = ".partial";
/** Extension of tool output artifacts. */
const ARTIFACT_EXTENSION = ".log";
/** Extension of agent (subagent) outputs. */
export const AGENT_OUTPUT_EXTENSION = ".md";

const UNSAFE_NAME_CHARACTERS = /[^A-Za-z0-9_-]+/g;
const EDGE_UNDERSCORES = /^_+|_+$/g;
const CANONICAL_INTEGER = /^(?:0|[1-9][0-9]{0,15})$/;
// `<id>.<toolType>.log`: the tool type is whatever another tool wrote (`9.mcp.server.log`), dots
// included; only control characters rule a name out (they would reach listings and messages).
const ARTIFACT_FILE = /^(0|[1-9][0-9]{0,15})\.([^\u0000-\u001f\u007f]+)\.log(\.partial)?$/;
const AGENT_OUTPUT_ID = /^(?:0|[1-9][0-9]{0,15})-[A-Za-z0-9_-]+(?:\.(?:0|[1-9][0-9]{0,15})-[A-Za-z0-9_-]+)*$/;

function sanitizeName(value: unknown, maxLength: number, fallback: string): string {
  if (typeof value !== "string") return fallback;
  // Cut before replacing: a multi-megabyte name must not cost a multi-megabyte regex pass.
  const cleaned = value
    .slice(0, maxLength * 8)
    .replace(UNSAFE_NAME_CHARACTERS, "_")
    .replace(EDGE_UNDERSCORES, "")
    .slice(0, maxLength);
  return cleaned.length > 0 ? cleaned : fallback;
}

/**
 * The tool type as it appears in `<id>.<toolType>.log`: every run of characters outside
 * `[A-Za-z0-9_-]` becomes `_`, edge underscores are dropped, the result is cut to
 * {@link MAX_TOOL_TYPE_LENGTH}, and {@link FALLBACK_TOOL_TYPE} replaces an empty result. Tool
 * names come from MCP servers and extensions, so they may hold `/`, `..` or NUL.
 */
export function sanitizeToolType(toolType: unknown): string {
  return sanitizeName(toolType, MAX_TOOL_TYPE_LENGTH, FALLBACK_TOOL_TYPE);
}

/** The requested id of an agent output, sanitized like {@link sanitizeToolType} (so it never holds a `.`). */
export function sanitizeAgentName(requestedId: unknown): string {
  return sanitizeName(requestedId, MAX_AGENT_NAME_LENGTH, FALLBACK_AGENT_NAME);
}

/** Parses a canonical non-negative integer id (`"0"`, `"17"`); undefined for anything else. */
export function parseIdNumber(value: unknown): number | undefined {
  if (typeof value === "number") {
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  }
  if (typeof value !== "string" || !CANONICAL_INTEGER.test(value)) return undefined;
  const id = Number(value);
  return id <= MAX_ARTIFACT_ID ? id : undefined;
}

/** Throws INVALID_INPUT unless `value` is an artifact id; returns it in canonical string form. */
export function assertArtifactId(value: unknown): string {
  const id = parseIdNumber(value);
  if (id === undefined) {
    throw new StowageError(
      "INVALID_INPUT",
      `artifact:// ID must be numeric (a non-negative integer without leading zeros, at most ${MAX_ARTIFACT_ID}), got: ${describeValue(value)}`,
      { reason: "INVALID_ARTIFACT_ID" },
    );
  }
  return String(id);
}

/** Why `value` is not an agent output id (`0-Name`, `0-Parent.1-Child`), or undefined when it is one. */
export function agentOutputIdProblem(value: unknown): string | undefined {
  if (typeof value !== "string") return "must be a string";
  if (value.length > MAX_AGENT_OUTPUT_ID_LENGTH) {
    return `must be at most ${MAX_AGENT_OUTPUT_ID_LENGTH} characters`;
  }
  if (!AGENT_OUTPUT_ID.test(value)) {
    return "must be <index>-<name>, nested as <index>-<name>.<index>-<name>, with names of [A-Za-z0-9_-]";
  }
  for (const segment of value.split(".")) {
    if (Number(segment.slice(0, segment.indexOf("-"))) > MAX_ARTIFACT_ID) {
      return `must have indexes of at most ${MAX_ARTIFACT_ID}`;
    }
  }
  return undefined;
}

/** Throws INVALID_INPUT unless `value` is an agent output id. */
export function assertAgentOutputId(value: unknown, what = "agent:// ID"): string {
  const problem = agentOutputIdProblem(value);
  if (problem) {
    throw new StowageError("INVALID_INPUT", `${what} ${problem}, got: ${describeValue(value)}`, {
      reason: "INVALID_AGENT_OUTPUT_ID",
    });
  }
  return value as string;
}

export interface ArtifactFileName {
  id: number;
  toolType: string;
  /** False for `<id>.<toolType>.log.partial`, a tool output still being written. */
  complete: boolean;
}

/** `<id>.<toolType>.log`, the file name of a complete tool output. */
export function artifactFileName(id: number, toolType: string): string {
  return `${id}.${toolType}${ARTIFACT_EXTENSION}`;
}

/**
 * Parses an artifact file name, `<id>.<toolType>.log` or its `.partial`, exactly: the id is
 * canonical, the tool type anything without control characters (dots included, as other tools
 * write them: `9.mcp.server.log`); undefined for any other file.
 */
export function parseArtifactFileName(name: string): ArtifactFileName | undefined {
  const match = ARTIFACT_FILE.exec(name);
  if (!match) return undefined;
  const id = Number(match[1]);
  if (id > MAX_ARTIFACT_ID) return undefined;
  return { id, toolType: match[2]!, complete: match[3] === undefined };
}

/** The output id of an agent output file name (`<id>.md`); undefined for any other file. */
export function parseAgentOutputFileName(name: string): string | undefined {
  if (!name.endsWith(AGENT_OUTPUT_EXTENSION)) return undefined;
  const id = name.slice(0, -AGENT_OUTPUT_EXTENSION.length);
  return agentOutputIdProblem(id) === undefined ? id : undefined;
}
