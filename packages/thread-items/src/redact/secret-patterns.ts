/**
 * The shapes of secret that `redactSecrets` looks for: each a kind (what a reader is told instead
 * of the value) and a finder written from the issuer's documented format. A shape matches the
 * secret alone (a prefix the issuer fixed, then the length and alphabet it documents), so that text
 * around it, and look-alikes such as hashes, UUIDs and `blob:sha256:` refs, are left alone.
 *
 * Every finder reads a text in one forward pass: a thread item is up to 16 MiB of text a client
 * chose, and a pattern that scans ahead from every position (a lazy `[\s\S]*?` to a footer, a
 * lookahead over a run, a lookbehind over a name) took seconds per 100 KB of its own prefix
 * repeated. The three shapes that need context (a PEM block, a header, an assignment) find their
 * context first and then read the secret at its end, resuming after it. Every repetition is
 * bounded (a secret of the shapes below is at most 16 KiB; a JWT's parts, an assignment's value):
 * an unbounded one over a run of megabytes overflowed the pattern engine's stack (`RangeError`).
 */

/** Where a secret is in a text, in UTF-16 code units. */
export interface SecretSpan {
  start: number;
  end: number;
}

interface SecretShape {
  kind: string;
  find(text: string): Iterable<SecretSpan>;
}

/** Not a letter, digit or a token's own punctuation: where a token may start or end. */
const EDGE_BEFORE = "(?<![A-Za-z0-9_\\-])";
const EDGE_AFTER = "(?![A-Za-z0-9_\\-])";
const token = (body: string) => new RegExp(`${EDGE_BEFORE}${body}${EDGE_AFTER}`, "g");

/** A shape found by one global pattern: the whole match is the secret. */
const byPattern = (kind: string, pattern: RegExp): SecretShape => ({
  kind,
  *find(text) {
    for (const match of text.matchAll(pattern)) {
      yield { start: match.index, end: match.index + match[0].length };
    }
  },
});

/**
 * A shape found as its context, then the secret read at the context's end (`value`, a sticky
 * pattern); the next search resumes after the value, taken or not, so no run is read twice.
 */
const afterContext = (
  kind: string,
  context: RegExp,
  value: RegExp,
  isSecret: (value: string) => boolean = () => true,
): SecretShape => ({
  kind,
  *find(text) {
    const contexts = new RegExp(context.source, context.flags);
    const values = new RegExp(value.source, value.flags);
    for (let found = contexts.exec(text); found !== null; found = contexts.exec(text)) {
      values.lastIndex = found.index + found[0].length;
      const secret = values.exec(text);
      if (secret === null) continue;
      if (isSecret(secret[0])) yield { start: secret.index, end: secret.index + secret[0].length };
      contexts.lastIndex = secret.index + secret[0].length;
    }
  },
});

/**
 * PEM private keys, every algorithm (RFC 7468 labels), header to footer: each header, then the
 * first footer after it. A header without a footer after it means no later header has one either.
 */
const privateKeys: SecretShape = {
  kind: "private-key",
  *find(text) {
    const headers = /-----BEGIN (?:[A-Z0-9]{1,32} ){0,8}PRIVATE KEY-----/g;
    const footers = /-----END (?:[A-Z0-9]{1,32} ){0,8}PRIVATE KEY-----/g;
    for (let header = headers.exec(text); header !== null; header = headers.exec(text)) {
      footers.lastIndex = header.index + header[0].length;
      const footer = footers.exec(text);
      if (footer === null) return;
      yield { start: header.index, end: footers.lastIndex };
      headers.lastIndex = footers.lastIndex;
    }
  },
};

/**
 * Names a `.env` line, a shell export or a config key gives a secret (`GITHUB_TOKEN`,
 * `aws_secret_access_key`, `"apiKey"`, `DB_PASSWORD`), in any case, and what assigns it. The
 * name must end with the word, so a setting about one (`MAX_TOKENS`, `TOKEN_LIMIT`) is not taken
 * for it: the word is followed by the assignment at once.
 */
const SECRET_ASSIGNMENT =
  /(?:api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret|secret|token|password|passwd|pwd|credentials?)["']?\s{0,256}[=:]\s{0,256}["']?/gi;

/**
 * The value of such an assignment that is a secret: 8 or more characters of a token's alphabet
 * with at least one letter and one digit, so that `true`, `4096`, `changeme` and `${VAR}` are not.
 */
const ASSIGNED_VALUE = /[A-Za-z0-9_\-+/=.:@]{8,16384}/y;
const hasLetterAndDigit = (value: string) => /[A-Za-z]/.test(value) && /[0-9]/.test(value);

export const SECRET_SHAPES: readonly SecretShape[] = [
  // PEM private keys, every algorithm (RFC 7468 labels), header to footer.
  privateKeys,
  // AWS access key ids: a four-letter prefix of the key's kind, then 16 of base32's alphabet (AWS IAM docs).
  byPattern("aws-access-key-id", token("(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z2-7]{16}")),
  // GitHub tokens: ghp_/gho_/ghu_/ghs_/ghr_ and 36 characters; fine-grained github_pat_ (GitHub's token format post, 2021).
  byPattern("github-token", token("(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{22,255})")),
  // GitLab personal access tokens (glpat- and 20 characters).
  byPattern("gitlab-token", token("glpat-[A-Za-z0-9_\\-]{20}")),
  // Anthropic API keys (sk-ant-<kind>NN-…), before OpenAI's looser sk- shapes.
  byPattern("anthropic-api-key", token("sk-ant-[a-z]+\\d{2}-[A-Za-z0-9_\\-]{80,4096}")),
  // OpenAI keys: project, service-account and admin keys, and the legacy sk-…T3BlbkFJ… ones.
  byPattern(
    "openai-api-key",
    token("sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\\-]{40,4096}|sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"),
  ),
  // Slack tokens: xoxb- (bot), xoxp- (user), xoxa-, xoxr-, xoxs- and their dash-separated numbers.
  byPattern("slack-token", token("xox[abprs]-[0-9]{8,64}-[0-9A-Za-z\\-]{8,4096}")),
  // Stripe secret and restricted keys, live and test.
  byPattern("stripe-key", token("(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,4096}")),
  // Google API keys: AIza and 35 characters.
  byPattern("google-api-key", token("AIza[0-9A-Za-z_\\-]{35}")),
  // npm access tokens: npm_ and 36 characters.
  byPattern("npm-token", token("npm_[A-Za-z0-9]{36}")),
  // Stowage's own API keys (`stw_<id>_<secret>`, @stowage/tenancy's default prefix).
  byPattern("stowage-api-key", token("stw_[A-Za-z0-9_\\-]{12}_[A-Za-z0-9_\\-]{43}")),
  // JSON Web Tokens: three base64url parts, the first two JSON objects ("eyJ" is `{"`).
  byPattern(
    "jwt",
    token("eyJ[A-Za-z0-9_\\-]{8,16384}\\.eyJ[A-Za-z0-9_\\-]{8,16384}\\.[A-Za-z0-9_\\-]{16,16384}"),
  ),
  // An Authorization header's credentials (Bearer or Basic), whatever issued them.
  afterContext(
    "authorization-header",
    /\bauthorization:\s{0,256}(?:bearer|basic)\s{1,256}/gi,
    /[A-Za-z0-9_\-+/=.~]{16,16384}/y,
  ),
  // `.env` lines, shell exports and YAML/JSON-ish `NAME: value`, quoted or not.
  afterContext("env-assignment", SECRET_ASSIGNMENT, ASSIGNED_VALUE, hasLetterAndDigit),
];
