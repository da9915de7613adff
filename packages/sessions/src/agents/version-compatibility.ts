import { StowageError } from "@stowage/core";
import { type AgentVersion, compareAgentVersions, parseAgentVersion } from "./agent-version.js";
import type { SessionAgent } from "./session-agent.js";

/** Versions from `from` (inclusive) to `below` (exclusive); an open end when absent. */
export interface AgentVersionRange {
  from?: string;
  below?: string;
}

/**
 * When a session written by one CLI version cannot be resumed by another:
 * - `major-differs`: the two versions' major numbers differ (either way);
 * - `ranges`: captured within `captured` and installed within `installed`.
 */
export type AgentVersionRule =
  | { kind: "major-differs" }
  | { kind: "ranges"; captured: AgentVersionRange; installed: AgentVersionRange };

/** One row of the table: a rule, and where the difference of formats is known from. */
export interface AgentVersionIncompatibility {
  rule: AgentVersionRule;
  /** A changelog line, an issue, or a real transcript observed: why the rule is there. */
  source: string;
}

/**
 * Per agent, the pairs of versions (captured, installed) whose session formats are known to
 * differ: a restore across them is refused (CONFLICT, `AGENT_VERSION_MISMATCH`). Any other
 * difference is restored with a warning. None of the three agents versions its session format
 * apart from the CLI, and no break between two releases of the same major version is known to
 * this package: each table holds the one rule that a major version is the publisher's own mark
 * of a breaking change (semver). Observed with the real CLIs (`test/agent-versions.int.test.ts`):
 * Claude Code 2.1.330 resumes real transcripts of 2.0.76 and 2.1.4, and Codex 0.169.0 a real
 * rollout of 0.125.0, the earlier conversation reaching the model, so versions a minor apart are
 * restored with a warning, not refused. A row for a real break (ranges of captured and installed
 * versions) goes here with its source once one is known.
 */
export const AGENT_VERSION_INCOMPATIBILITIES: Readonly<
  Record<SessionAgent, readonly AgentVersionIncompatibility[]>
> = {
  // The transcript is Claude Code's internal format, unversioned apart from each entry's
  // `version` (the CLI's, which Claude Code writes on every entry).
  "claude-code": [
    {
      rule: { kind: "major-differs" },
      source:
        "Claude Code's transcript has no format version of its own; a major version is its publisher's mark of a breaking change",
    },
  ],
  // Codex is still 0.x and bumps the minor version every release: the rollout format changed
  // within 0.x (openai/codex#3214, Sept 2025: the `session_meta` first line and `RolloutItem`
  // lines; rollouts from before it record no `cli_version`, so they are unknown and unchecked).
  // Refusing every 0.x minor would refuse every release; a 1.0 would be the publisher's mark.
  codex: [
    {
      rule: { kind: "major-differs" },
      source:
        "Codex's rollout records `session_meta.payload.cli_version` since openai/codex#3214; no break within 0.x is known for rollouts that record it, a new major version is refused",
    },
  ],
  // OpenCode's export is its session as `opencode export` prints it (`info.version`), read back
  // by `opencode import`: the storage under it (JSON files, then SQLite) is not in the archive.
  opencode: [
    {
      rule: { kind: "major-differs" },
      source:
        "OpenCode's export has no format version of its own (`info.version` is the CLI's); a major version is its publisher's mark of a breaking change",
    },
  ],
};

function inRange(version: AgentVersion, range: AgentVersionRange): boolean {
  const from = range.from === undefined ? undefined : parseAgentVersion(range.from);
  const below = range.below === undefined ? undefined : parseAgentVersion(range.below);
  return (
    (!from || compareAgentVersions(version, from) >= 0) &&
    (!below || compareAgentVersions(version, below) < 0)
  );
}

function ruleApplies(rule: AgentVersionRule, captured: AgentVersion, installed: AgentVersion): boolean {
  if (rule.kind === "major-differs") return captured.major !== installed.major;
  return inRange(captured, rule.captured) && inRange(installed, rule.installed);
}

/** What comparing a session's version with the installed CLI's gave. */
export type AgentVersionCheck =
  /** One of the two is not known (an old archive, no `--version`, a version that is not one): nothing compared. */
  | { verdict: "unknown" }
  | { verdict: "same"; version: string }
  /** Different, and not known to be incompatible: restored, with this warning. */
  | { verdict: "differs"; captured: string; installed: string; warning: string };

/**
 * Compares the version a session was captured with and the installed CLI's, by the agent's
 * table ({@link AGENT_VERSION_INCOMPATIBILITIES}, or `table` in tests). Throws CONFLICT (reason
 * `AGENT_VERSION_MISMATCH`, details `{ agent, captured, installed }`) when a row says the
 * formats differ. Either version unknown or not a version (see `parseAgentVersion`): no check.
 */
export function checkAgentVersion(
  agent: SessionAgent,
  capturedVersion: unknown,
  installedVersion: unknown,
  table: readonly AgentVersionIncompatibility[] = AGENT_VERSION_INCOMPATIBILITIES[agent],
): AgentVersionCheck {
  const captured = parseAgentVersion(capturedVersion);
  const installed = parseAgentVersion(installedVersion);
  if (!captured || !installed) return { verdict: "unknown" };
  if (compareAgentVersions(captured, installed) === 0) return { verdict: "same", version: installed.text };
  const row = table.find(({ rule }) => ruleApplies(rule, captured, installed));
  if (row) {
    throw new StowageError(
      "CONFLICT",
      `the ${agent} session was captured with version ${captured.text}, and the installed CLI is ${installed.text}: their session formats differ (${row.source}); restore it with a ${agent} CLI of version ${captured.major}.x`,
      {
        reason: "AGENT_VERSION_MISMATCH",
        details: { agent, captured: captured.text, installed: installed.text },
      },
    );
  }
  const older = compareAgentVersions(installed, captured) < 0;
  return {
    verdict: "differs",
    captured: captured.text,
    installed: installed.text,
    warning: `the ${agent} session was captured with version ${captured.text}, the installed CLI is ${installed.text}${older ? " (older)" : ""}: not known to be incompatible, restored; if resuming fails, use version ${captured.text}`,
  };
}
