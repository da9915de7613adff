import type { DirectoryAccess } from "../layout/directory-access.js";
import { readDirectoryNames } from "../layout/listing.js";
import { parseAgentOutputFileName, parseArtifactFileName, parseIdNumber } from "../layout/names.js";
import { ClaimRegistry } from "./claims.js";
import { SequenceAllocator } from "./sequence-allocator.js";

const ARTIFACT_CLAIM_PREFIX = "artifact.";
const AGENT_CLAIM_PREFIX = "agent.";

/** Highest number among claims named `<prefix><n>`, or -1. */
function highestClaim(claims: readonly string[], prefix: string): number {
  let highest = -1;
  for (const name of claims) {
    if (!name.startsWith(prefix)) continue;
    const n = parseIdNumber(name.slice(prefix.length));
    if (n !== undefined && n > highest) highest = n;
  }
  return highest;
}

/** Highest index directly under `parentPrefix` ("" for top level) among agent output ids, or -1. */
function highestAgentIndex(ids: readonly string[], parentPrefix: string): number {
  const lead = parentPrefix ? `${parentPrefix}.` : "";
  let highest = -1;
  for (const id of ids) {
    if (!id.startsWith(lead)) continue;
    const rest = id.slice(lead.length);
    const n = parseIdNumber(rest.slice(0, rest.indexOf("-")));
    if (n !== undefined && n > highest) highest = n;
  }
  return highest;
}

/**
 * The id spaces of one artifacts directory: artifact ids (claims `artifact.<n>`) and, per parent
 * prefix, agent output indexes (claims `agent.[<prefix>.]<n>`). Each continues after the highest
 * number found in file names and claims.
 */
export class SessionIds {
  readonly #access: DirectoryAccess;
  readonly #claims: ClaimRegistry;
  readonly #artifactIds: SequenceAllocator;
  readonly #agentIndexes = new Map<string, SequenceAllocator>();

  constructor(access: DirectoryAccess) {
    this.#access = access;
    this.#claims = new ClaimRegistry(access);
    this.#artifactIds = new SequenceAllocator(this.#claims, {
      what: "artifact id",
      claimName: (n) => `${ARTIFACT_CLAIM_PREFIX}${n}`,
      highestInUse: async () => {
        let highest = highestClaim(await this.#claims.list(), ARTIFACT_CLAIM_PREFIX);
        for (const name of await this.#names("scan artifacts")) {
          const parsed = parseArtifactFileName(name);
          if (parsed && parsed.id > highest) highest = parsed.id;
        }
        return highest;
      },
    });
  }

  /** The names in the artifacts directory; none when it does not exist yet. */
  async #names(context: string): Promise<string[]> {
    return (
      (await this.#access.use(false, async (path) => (await readDirectoryNames(path, context)) ?? [])) ?? []
    );
  }

  nextArtifactId(signal?: AbortSignal): Promise<number> {
    return this.#artifactIds.allocate(signal);
  }

  /** The next index under `parentPrefix` (already validated; "" for top level). */
  nextAgentIndex(parentPrefix: string, signal?: AbortSignal): Promise<number> {
    let allocator = this.#agentIndexes.get(parentPrefix);
    if (!allocator) {
      const claimPrefix = `${AGENT_CLAIM_PREFIX}${parentPrefix ? `${parentPrefix}.` : ""}`;
      allocator = new SequenceAllocator(this.#claims, {
        what: "agent output index",
        claimName: (n) => `${claimPrefix}${n}`,
        highestInUse: async () => {
          const names = await this.#names("scan agent outputs");
          const ids = names.map(parseAgentOutputFileName).filter((id): id is string => id !== undefined);
          return Math.max(
            highestClaim(await this.#claims.list(), claimPrefix),
            highestAgentIndex(ids, parentPrefix),
          );
        },
      });
      this.#agentIndexes.set(parentPrefix, allocator);
    }
    return allocator.allocate(signal);
  }
}
