import { applyEdits, modify, type ParseError, parse as parseJsonc } from "jsonc-parser";
import { parse as parseToml, stringify as stringifyToml } from "smol-toml";
import { SECRET_NAME, type WithoutSecrets } from "./configuration-layout.js";

/**
 * Maps whose every entry is a secret or may be one: HTTP headers sent to an MCP server or a
 * model provider (`Authorization`, `X-Api-Key`). Codex's `http_headers`, OpenCode's `headers`.
 */
const HEADER_MAPS: ReadonlySet<string> = new Set(["headers", "http_headers"]);
/**
 * Maps of environment variables or query parameters, whose entries with a secret-looking name are
 * left out: Codex's MCP `env`, `shell_environment_policy.set`, providers' `query_params`;
 * OpenCode's MCP `environment`.
 */
const ENV_MAPS: ReadonlySet<string> = new Set(["env", "environment", "set", "query_params"]);
/**
 * Fields that hold a secret literally (not the name of a variable holding it, like Codex's
 * `env_key` or `bearer_token_env_var`): OpenCode's provider `options.apiKey` and MCP
 * `oauth.clientSecret`, Codex's `experimental_bearer_token` (providers), `bearer_token` (MCP
 * servers, refused by recent versions but still read by older ones), `auth_bearer_token`.
 */
const SECRET_FIELDS: ReadonlySet<string> = new Set([
  "apiKey",
  "api_key",
  "bearer_token",
  "experimental_bearer_token",
  "auth_bearer_token",
  "clientSecret",
  "client_secret",
]);
/** Deeper nesting is refused rather than walked: no configuration file nests this deep. */
const MAX_DEPTH = 64;

type Tree = Record<string, unknown>;
const isTree = (value: unknown): value is Tree =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The key paths of every secret in `tree`, outermost first; null when it nests too deep. */
function secretPaths(tree: Tree): (string | number)[][] | null {
  const found: (string | number)[][] = [];
  const walk = (node: unknown, path: (string | number)[]): boolean => {
    if (path.length > MAX_DEPTH) return false;
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((value, index) => [index, value])
      : isTree(node)
        ? Object.entries(node)
        : [];
    for (const [key, value] of entries) {
      const at = [...path, key];
      if (typeof key === "string" && HEADER_MAPS.has(key) && isTree(value)) {
        for (const name of Object.keys(value)) found.push([...at, name]);
      } else if (typeof key === "string" && ENV_MAPS.has(key) && isTree(value)) {
        for (const name of Object.keys(value)) if (SECRET_NAME.test(name)) found.push([...at, name]);
      } else if (typeof key === "string" && SECRET_FIELDS.has(key) && typeof value === "string") {
        found.push(at);
      } else if (!walk(value, at)) return false;
    }
    return true;
  };
  return walk(tree, []) ? found : null;
}

function decodeText(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

const TOO_DEEP = `nested deeper than ${MAX_DEPTH} levels, so its secrets cannot be told apart`;

/**
 * A TOML configuration file (Codex's `config.toml`) without its secrets (see `secretPaths`), read
 * with smol-toml. A file with none is returned as it was; one with some is written again by
 * smol-toml without them (its comments and layout are not kept).
 */
export function withoutTomlSecrets(bytes: Uint8Array): WithoutSecrets {
  const text = decodeText(bytes);
  let tree: Tree;
  try {
    if (text === undefined) throw new Error("not UTF-8");
    tree = parseToml(text) as Tree;
  } catch {
    return { refused: "not TOML, so its secrets cannot be left out" };
  }
  const leftOut = removeSecrets(tree);
  if (leftOut === null) return { refused: TOO_DEEP };
  if (leftOut.length === 0) return { bytes, leftOut };
  return { bytes: new TextEncoder().encode(`${stringifyToml(tree)}\n`), leftOut };
}

/**
 * Removes every secret (see `secretPaths`) from `tree` in place and names each, as
 * `mcp_servers.tiny.env.TINY_API_KEY`; null (nothing removed) when it nests too deep to tell.
 */
export function removeSecrets(tree: Record<string, unknown>): string[] | null {
  const paths = secretPaths(tree);
  if (paths === null) return null;
  for (const path of paths) {
    // Always an object's field (a secret is a named entry), reached through objects and arrays.
    const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Tree)[key], tree);
    delete (parent as Tree)[path.at(-1)!];
  }
  return paths.map(label);
}

/**
 * A JSON or JSONC configuration file (OpenCode's `opencode.json(c)`) without its secrets (see
 * `secretPaths`), read with jsonc-parser. A file with none is returned as it was; from one with
 * some each secret is cut out by jsonc-parser's edits, the rest (comments, layout) kept.
 */
export function withoutJsoncSecrets(bytes: Uint8Array): WithoutSecrets {
  let text = decodeText(bytes);
  const errors: ParseError[] = [];
  let tree: unknown;
  try {
    if (text !== undefined) tree = parseJsonc(text, errors, { allowTrailingComma: true });
  } catch {
    // jsonc-parser recurses per nesting level: a hostile file can exhaust the stack.
    return { refused: TOO_DEEP };
  }
  if (text === undefined || errors.length > 0 || !isTree(tree)) {
    return { refused: "not a JSON object, so its secrets cannot be left out" };
  }
  const paths = secretPaths(tree);
  if (paths === null) return { refused: TOO_DEEP };
  if (paths.length === 0) return { bytes, leftOut: [] };
  for (const path of paths) {
    text = applyEdits(
      text,
      modify(text, path, undefined, { formattingOptions: { insertSpaces: true, tabSize: 2 } }),
    );
  }
  return { bytes: new TextEncoder().encode(text), leftOut: paths.map(label) };
}

const label = (path: (string | number)[]) => path.join(".");
