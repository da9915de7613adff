/**
 * An agent CLI's version as its sessions record it (Claude Code's `version`, Codex's
 * `cli_version`, OpenCode's export `info.version`) and as `<cli> --version` prints it:
 * `MAJOR.MINOR.PATCH`, an optional `-prerelease` (Codex's `0.128.0-alpha.1`) and `+build`.
 * Anything else (not a string, longer than {@link MAX_AGENT_VERSION_LENGTH}, control
 * characters, not this shape) is no version at all: unknown, never an error, so a hostile
 * transcript or manifest can neither fail a capture or restore nor put its text in a message.
 */
export interface AgentVersion {
  major: number;
  minor: number;
  patch: number;
  /** The dot-separated identifiers after `-`, empty for a release. */
  prerelease: string[];
  /** The version as written, without a leading `v` (at most {@link MAX_AGENT_VERSION_LENGTH} characters). */
  text: string;
}

/** Longest version string taken; real ones are under 20 characters. */
export const MAX_AGENT_VERSION_LENGTH = 64;

// Numbers of at most 9 digits stay exact integers; identifiers are semver's characters only.
const VERSION_PATTERN =
  /^v?(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** The version `value` spells, or undefined when it spells none (see {@link AgentVersion}). */
export function parseAgentVersion(value: unknown): AgentVersion | undefined {
  if (typeof value !== "string" || value.length > MAX_AGENT_VERSION_LENGTH + 1) return undefined;
  const match = VERSION_PATTERN.exec(value);
  if (!match) return undefined;
  const text = value.startsWith("v") ? value.slice(1) : value;
  if (text.length > MAX_AGENT_VERSION_LENGTH) return undefined;
  return {
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    prerelease: match[4] === undefined ? [] : match[4].split("."),
    text,
  };
}

function compareIdentifiers(a: string, b: string): number {
  const numericA = /^\d+$/.test(a);
  const numericB = /^\d+$/.test(b);
  if (numericA && numericB) return Math.sign(Number(a) - Number(b));
  if (numericA !== numericB) return numericA ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Semver precedence: negative when `a` is older than `b`, 0 when equal (build ignored), positive when newer. */
export function compareAgentVersions(a: AgentVersion, b: AgentVersion): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return Math.sign(core);
  // A prerelease comes before its release.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return Math.sign(b.prerelease.length - a.prerelease.length);
  }
  for (let i = 0; i < Math.min(a.prerelease.length, b.prerelease.length); i++) {
    const order = compareIdentifiers(a.prerelease[i]!, b.prerelease[i]!);
    if (order !== 0) return order;
  }
  return Math.sign(a.prerelease.length - b.prerelease.length);
}

/** The newer of two versions, either possibly unknown. */
export function newerAgentVersion(
  a: AgentVersion | undefined,
  b: AgentVersion | undefined,
): AgentVersion | undefined {
  if (!a) return b;
  if (!b) return a;
  return compareAgentVersions(b, a) > 0 ? b : a;
}

/** Most of `<cli> --version`'s output read for a version. */
const MAX_VERSION_OUTPUT_CHARS = 4096;

/**
 * The version in what `<cli> --version` printed: its first word that is a version, e.g.
 * `2.1.330 (Claude Code)`, `codex-cli 0.169.0`, `1.18.33`. Undefined when there is none.
 */
export function agentVersionFromCliOutput(output: unknown): AgentVersion | undefined {
  if (typeof output !== "string") return undefined;
  for (const word of output.slice(0, MAX_VERSION_OUTPUT_CHARS).split(/\s+/)) {
    const version = parseAgentVersion(word);
    if (version) return version;
  }
  return undefined;
}
