/**
 * The shapes of secret that `redactSecrets` looks for: each a kind (what a reader is told instead
 * of the value) and a pattern written from the issuer's documented format. A pattern matches the
 * secret alone (a prefix the issuer fixed, then the length and alphabet it documents), so that text
 * around it, and look-alikes such as hashes, UUIDs and `blob:sha256:` refs, are left alone.
 * `value` names the capture group that is the secret where the match also holds its context.
 */
interface SecretPattern {
  kind: string;
  pattern: RegExp;
  value?: "secret";
}

/** Not a letter, digit or a token's own punctuation: where a token may start or end. */
const EDGE_BEFORE = "(?<![A-Za-z0-9_\\-])";
const EDGE_AFTER = "(?![A-Za-z0-9_\\-])";
const token = (body: string) => new RegExp(`${EDGE_BEFORE}${body}${EDGE_AFTER}`, "g");

/**
 * Names a `.env` line, a shell export or a config key gives a secret (`GITHUB_TOKEN`,
 * `aws_secret_access_key`, `"apiKey"`, `DB_PASSWORD`), in any case. The name must end with the
 * word, so a setting about one (`MAX_TOKENS`, `TOKEN_LIMIT`) is not taken for it.
 */
const SECRET_NAME =
  "\\b[A-Za-z0-9_\\-]*?(?:api[_\\-]?key|access[_\\-]?key|private[_\\-]?key|client[_\\-]?secret|secret|token|password|passwd|pwd|credentials?)";

/**
 * The value of such an assignment that is a secret: 8 or more characters of a token's alphabet
 * with at least one letter and one digit, so that `true`, `4096`, `changeme` and `${VAR}` are not.
 */
const VALUE_CHARACTER = "[A-Za-z0-9_\\-+/=.:@]";
const SECRET_VALUE = `(?=${VALUE_CHARACTER}*[A-Za-z])(?=${VALUE_CHARACTER}*[0-9])${VALUE_CHARACTER}{8,}`;

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // PEM private keys, every algorithm (RFC 7468 labels), header to footer.
  {
    kind: "private-key",
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/g,
  },
  // AWS access key ids: a four-letter prefix of the key's kind, then 16 of base32's alphabet (AWS IAM docs).
  { kind: "aws-access-key-id", pattern: token("(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z2-7]{16}") },
  // GitHub tokens: ghp_/gho_/ghu_/ghs_/ghr_ and 36 characters; fine-grained github_pat_ (GitHub's token format post, 2021).
  { kind: "github-token", pattern: token("(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,255})") },
  // GitLab personal access tokens (glpat- and 20 characters).
  { kind: "gitlab-token", pattern: token("glpat-[A-Za-z0-9_\\-]{20}") },
  // Anthropic API keys (sk-ant-<kind>NN-…), before OpenAI's looser sk- shapes.
  { kind: "anthropic-api-key", pattern: token("sk-ant-[a-z]+\\d{2}-[A-Za-z0-9_\\-]{80,}") },
  // OpenAI keys: project, service-account and admin keys, and the legacy sk-…T3BlbkFJ… ones.
  {
    kind: "openai-api-key",
    pattern: token(
      "sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\\-]{40,}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
    ),
  },
  // Slack tokens: xoxb- (bot), xoxp- (user), xoxa-, xoxr-, xoxs- and their dash-separated numbers.
  { kind: "slack-token", pattern: token("xox[abprs]-[0-9]{8,}-[0-9A-Za-z\\-]{8,}") },
  // Stripe secret and restricted keys, live and test.
  { kind: "stripe-key", pattern: token("(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,}") },
  // Google API keys: AIza and 35 characters.
  { kind: "google-api-key", pattern: token("AIza[0-9A-Za-z_\\-]{35}") },
  // npm access tokens: npm_ and 36 characters.
  { kind: "npm-token", pattern: token("npm_[A-Za-z0-9]{36}") },
  // Stowage's own API keys (`stw_<id>_<secret>`, @stowage/tenancy's default prefix).
  { kind: "stowage-api-key", pattern: token("stw_[A-Za-z0-9_\\-]{12}_[A-Za-z0-9_\\-]{43}") },
  // JSON Web Tokens: three base64url parts, the first two JSON objects ("eyJ" is `{"`).
  { kind: "jwt", pattern: token("eyJ[A-Za-z0-9_\\-]{8,}\\.eyJ[A-Za-z0-9_\\-]{8,}\\.[A-Za-z0-9_\\-]{16,}") },
  // An Authorization header's credentials (Bearer or Basic), whatever issued them.
  {
    kind: "authorization-header",
    pattern: /(?<=\bauthorization:\s*(?:bearer|basic)\s+)(?<secret>[A-Za-z0-9_\-+/=.~]{16,})/gi,
    value: "secret",
  },
  // `.env` lines, shell exports and YAML/JSON-ish `NAME: value`, quoted or not.
  {
    kind: "env-assignment",
    pattern: new RegExp(`(?<=${SECRET_NAME}["']?\\s*[=:]\\s*["']?)(?<secret>${SECRET_VALUE})`, "gi"),
    value: "secret",
  },
];
